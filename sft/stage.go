package sft

import (
	"context"
	"fmt"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
)

// Name is the sft stage's name.
const Name = "sft"

// Stage is the sft stage as a row of the table of stages whose item is
// not a target: its item is the directory the SFT rows are written to.
type Stage struct {
	// Instances reads the published dataset's instances (reading a
	// dataset is the composition's part: a stage imports no other).
	Instances func(ctx context.Context) ([]record.Instance, error)
	Options   Options
	Write     WriteOptions

	// Result is what Do generated (nil before).
	Result *Result
}

func (s *Stage) Declare() pipeline.Decl {
	return pipeline.Decl{Name: Name, About: "SFT hindsight traces over a published dataset: teacher ideas, traces, schema gate",
		Writes:   []string{record.SFTRejects.Name()},
		Requests: []pipeline.Request{{Service: llm.DefaultService}}}
}

// Do generates the SFT rows of the dataset's instances and writes them to
// out, unless the run was stopped (nothing is written: a re-run resumes
// from the LLM cache) or instances still wait on batches (their wait is
// the error, after the rest is written).
func (s *Stage) Do(ctx context.Context, out string) (string, error) {
	ins, err := s.Instances(ctx)
	if err != nil {
		return "", fmt.Errorf("sft: %w", err)
	}
	if s.Result, err = Generate(ctx, ins, s.Options); err != nil {
		return "", err
	}
	if s.Result.Stopped {
		return "", fmt.Errorf("sft: stopped before the end; nothing written: %w", context.Canceled)
	}
	if err := Write(ctx, out, s.Result, s.Write); err != nil {
		return "", err
	}
	if n := len(s.Result.Pending); n > 0 {
		return pipeline.Done, pipeline.Wait(fmt.Sprintf("%d instances wait on teacher answers in LLM batches", n))
	}
	return pipeline.Done, nil
}
