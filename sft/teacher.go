package sft

import (
	"context"
	"fmt"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/record"
)

// Stages of the teacher's calls, as the LLM layer meters them.
const (
	StageIdeas    = "sft-ideas"
	StageOpenings = "sft-openings"
	StageTrace    = "sft-trace"
)

// Teacher writes the SFT data of an instance: its K idea cards, the pool
// of opening sentences of a run, and the hindsight trace. LLMTeacher
// asks a model; Heuristic works offline.
type Teacher interface {
	// Model names the teacher on every row ("heuristic" for Heuristic).
	Model() string
	// PromptVersions are the versions of the prompts the teacher uses,
	// recorded on the rows and in the dataset card.
	PromptVersions() PromptVersions
	// Ideas proposes in.NumIdeas idea cards, most promising first, from
	// the model input alone. The cards passed the gate's answer check;
	// a content failure is a *RejectError.
	Ideas(ctx context.Context, in *Input) (*Ideas, error)
	// Openings returns n new opening sentences, none equal to one in used
	// (the openings of the run so far, oldest first).
	Openings(ctx context.Context, n int, used []string) (*Openings, error)
	// Trace writes the first-person exploration that arrives at cards,
	// beginning with opening. feedback, when set, says why the previous
	// trace was rejected.
	Trace(ctx context.Context, in *Input, cards []record.Card, opening, feedback string) (*Trace, error)
}

// PromptVersions are the prompt versions of one teacher, by call.
type PromptVersions struct {
	Ideas    string `json:"ideas"`
	Openings string `json:"openings"`
	Trace    string `json:"trace"`
}

// Input is what a teacher may know of an instance: the model input and
// the documents it renders. The gold card is not part of it, so no teacher
// can see it.
type Input struct {
	InstanceID string
	// Prompt is the model input asking for NumIdeas ideas: the instance's
	// stored prompt verbatim, or the same template rendered for another K.
	// An LLM teacher gets exactly this as its user turn.
	Prompt   string
	NumIdeas int
	// Documents are the numbered source cards Prompt shows, for a teacher
	// that works on them without a model.
	Documents []record.PromptDocument
}

// Call is what one teacher answer cost.
type Call struct {
	Usage  llm.Usage
	Cached bool
	// Attempts counts the answers asked for: 2 when the first was sent
	// back with the reason it failed.
	Attempts int
}

// Ideas are a teacher's cards for an instance.
type Ideas struct {
	Cards []record.Card
	Call
}

// Openings are new opening sentences.
type Openings struct {
	Sentences []string
	Call
}

// Trace is a hindsight thinking trace.
type Trace struct {
	Text string
	Call
}

// Reasons a row is rejected beyond the gate's (see package gate).
const (
	ReasonTraceInvalid   = "trace_invalid"   // the trace failed its check twice
	ReasonTeacherInvalid = "teacher_invalid" // an empty, refused or truncated answer
	ReasonTeacherError   = "teacher_error"   // the endpoint failed after its retries
	ReasonOpening        = "opening_invalid" // no opening sentence could be drawn
	ReasonTooLong        = "too_long"        // prompt + completion over the token limit
)

// RejectError is a teacher answer that cannot become a row: it failed the
// gate or its check after the one retry with the reason.
type RejectError struct {
	Stage    string // StageIdeas, StageOpenings or StageTrace
	Reason   string // a gate reason or one of the Reason constants
	Detail   string
	Attempts int
	Raw      string // the last answer, for inspection
}

func (e *RejectError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Stage, e.Reason, e.Detail)
}
