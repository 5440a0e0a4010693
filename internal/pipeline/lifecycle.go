package pipeline

import (
	"context"
	"errors"
)

// Ledger is where the lifecycle records how each stage last went for
// each item: a store's ledger (*store.Store has both methods).
type Ledger interface {
	// Begin marks item running in stage, counting no attempt: an item a
	// crash or an interrupt leaves running is redone by the next run.
	Begin(ctx context.Context, item, stage string) error
	// End records the status the work on item ended in (a Status
	// constant) and why, counting an attempt when the stage worked.
	End(ctx context.Context, item, stage, status, reason string, worked bool) error
}

// Ledger statuses an Entry ends in; package store keeps them.
const (
	StatusDone    = "done"    // done now, or the stored result reused
	StatusSkipped = "skipped" // not done, not a failure: too few sources, held back before the stage
	StatusSuspect = "suspect" // the stage's result is stored but held back as implausible
	StatusPending = "pending" // waits on work outside the run (an LLM batch)
	StatusFailed  = "failed"
)

// Entry is how a stage's work on an item ended, for the ledger.
type Entry struct {
	Status string // one of the Status constants
	Reason string // why, for every status but done
	// Worked says the stage worked on the item (asked a service, wrote a
	// result, or failed trying): the ledger counts an attempt. Reusing
	// stored work, or finding the answers of a batch still out, is none.
	Worked bool
}

// Lifecycle is the one life of a stage's work on an item, the same for
// every stage: marked running, done, then its end recorded. Reused work
// is no new attempt; a held item is suspect (the stage's own result is
// implausible) or skipped (held back before it); an item waiting on a
// batch is pending; a failure is recorded with its error and counts an
// attempt; work abandoned (ctx cancelled, or cut short by the first
// interrupt: an error wrapping context.Canceled) is left running, as a
// crash leaves it, for the next run to redo.
type Lifecycle struct {
	// Ledger records the entries; nil records nothing.
	Ledger Ledger
}

// Track does s's work on item under the lifecycle and returns what Do
// returned; an error from the ledger is returned when Do's was nil.
func (l *Lifecycle) Track(ctx context.Context, s Stage, item string) (string, error) {
	if l == nil || l.Ledger == nil {
		return s.Do(ctx, item)
	}
	name := s.Declare().Name
	if err := l.Ledger.Begin(ctx, item, name); err != nil {
		return "", err
	}
	outcome, err := s.Do(ctx, item)
	if Abandoned(ctx, err) {
		return outcome, err
	}
	// The ledger must say what happened even when ctx ends meanwhile.
	e := EntryOf(outcome, err)
	if lerr := l.Ledger.End(context.WithoutCancel(ctx), item, name, e.Status, e.Reason, e.Worked); lerr != nil && err == nil {
		return "", lerr
	}
	return outcome, err
}

// Step is the pipeline step of s under l, with workers goroutines (the
// declared default when 0).
func (l *Lifecycle) Step(s Stage, workers int) Step {
	d := s.Declare()
	if workers <= 0 {
		workers = d.Workers
	}
	return Step{Name: d.Name, Workers: max(workers, 1), Run: func(ctx context.Context, item string) (string, error) {
		return l.Track(ctx, s, item)
	}}
}

// Abandoned reports whether work that ended under ctx with err was
// abandoned rather than finished: the run was cancelled (the second
// interrupt) while it was in flight, or err is a cancellation (a request
// the first interrupt cut short rather than retry).
func Abandoned(ctx context.Context, err error) bool {
	return err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled))
}

// EntryOf is the ledger entry of a Do that returned outcome and err.
func EntryOf(outcome string, err error) Entry {
	var held *HeldError
	var wait *WaitingError
	worked := outcome == Done
	switch {
	case errors.As(err, &wait):
		return Entry{Status: StatusPending, Reason: wait.Reason, Worked: worked}
	case errors.As(err, &held) && held.Suspect:
		return Entry{Status: StatusSuspect, Reason: held.Reason, Worked: worked}
	case errors.As(err, &held):
		return Entry{Status: StatusSkipped, Reason: held.Reason, Worked: worked}
	case err != nil:
		// A failure counts an attempt unless the stage says it only
		// found an earlier one standing (Reused: nothing was asked).
		return Entry{Status: StatusFailed, Reason: err.Error(), Worked: outcome != Reused}
	case outcome == Skipped:
		return Entry{Status: StatusSkipped}
	}
	return Entry{Status: StatusDone, Worked: worked}
}
