package classify

import (
	"context"
	"errors"
	"fmt"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
)

// Declare is the classify stage's row of the stage table.
func (s *Stage) Declare() pipeline.Decl {
	return pipeline.Decl{
		Name: Name, About: "which references are sources, with verified quotes", Workers: 4,
		Reads:  []string{record.Documents.Name(), record.Graphs.Name()},
		Writes: []string{record.SelectionSets.Name(), record.ClassifyFailures.Name()},
		Requests: []pipeline.Request{{Service: llm.DefaultService,
			LLM: &pipeline.Tokens{Shared: true, Text: s.budget(), PerReferenceInput: taskPerReference, PerReference: answerPerReference,
				WritesPaper: true, Sample: func(refs, text int) (any, error) { return SampleRequest(refs, text) }}}},
	}
}

// Tokens of a classify request besides the paper's text and the shared
// prompt, for estimates: a reference in the task (its title, Semantic
// Scholar's line, its mentions), and in the answer.
const (
	taskPerReference   = 35
	answerPerReference = 40
)

// Do classifies one target's references; an implausible classification
// holds the target back unless suspects are included.
func (s *Stage) Do(ctx context.Context, key string) (string, error) {
	return s.outcome(s.Process(ctx, key))
}

// outcome is Do's account of what Process returned.
func (s *Stage) outcome(r *Result, err error) (string, error) {
	var pe *llm.PendingError
	switch {
	case errors.As(err, &pe) && pe.Batch == "":
		return "", pipeline.Wait("its LLM request is queued for the next batch")
	case errors.As(err, &pe):
		return "", pipeline.Wait(fmt.Sprintf("its LLM request is %s in batch %s", pe.State, pe.Batch))
	case err != nil:
		return "", err
	}
	outcome := pipeline.Done
	if r.Stored {
		outcome = pipeline.Reused
	}
	if sus := r.Selections.Suspect; len(sus) > 0 && !s.IncludeSuspect {
		return outcome, pipeline.Suspect(sus...)
	}
	return outcome, nil
}
