package app

import "errors"

// The kinds of failure a command maps to its exit status, in one place
// (cmd/curate's exitCode): wrap one of them, with a message naming the
// input and what is allowed.
var (
	// ErrUsage: bad input (a flag, an ID, a file). Exit 2, before anything
	// is requested or written.
	ErrUsage = errors.New("usage")
	// ErrCannotRun: the command could not do its work (the store is locked
	// by another run, is not curate's, is absent; the disk is full; an
	// output is being published by another process, or holds files
	// curate cannot keep). Exit 2; nothing is published. cmd/curate maps
	// any error a full disk caused to exit 2 too, wherever it struck.
	ErrCannotRun = errors.New("cannot run")
	// ErrIncomplete: the run finished, but some targets failed, were held
	// back as suspect or lack their metadata; each is listed. Exit 1; what
	// the run did is published.
	ErrIncomplete = errors.New("incomplete")
	// ErrInterrupted: the run was stopped (Ctrl-C). Exit 130; nothing is
	// published; the same command resumes.
	ErrInterrupted = errors.New("interrupted")
	// ErrPending: the run ended with work waiting on LLM answers in a
	// provider's batch (batch mode): the targets are listed, their
	// requests are submitted (or queued again by the next run), and the
	// same command run again later collects them. Exit 75 (EX_TEMPFAIL:
	// try again later); what the run finished is published.
	ErrPending = errors.New("pending")
)

// Fail returns err as an error of kind (ErrCannotRun, ErrIncomplete,
// ErrInterrupted): errors.Is finds both, and the message is err's alone.
func Fail(kind, err error) error { return &kindError{kind: kind, err: err} }

type kindError struct{ kind, err error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }
