package pairs

import (
	"context"
	"fmt"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
)

// Name is the pairs stage's name.
const Name = "pairs"

// Stage is the pairs stage as a row of the table of stages whose item is
// not a target: its item is the directory the pairs are written to.
type Stage struct {
	Store    Records
	Rewriter Rewriter
	// Passes runs a build again while its rewrites wait on batches that
	// may be collected; nil builds once. It returns the items still
	// waiting.
	Passes  func(ctx context.Context, pass func(context.Context) (waiting int, err error)) (int, error)
	Options Options
	Write   WriteOptions

	// Result is what Do built (nil before).
	Result *Result
}

func (r *Stage) Declare() pipeline.Decl {
	return pipeline.Decl{Name: Name, About: "the impact judge's validation pairs: training targets of clearly different uptake, as idea-only summaries",
		Reads:    []string{record.Graphs.Name(), record.S2Papers.Name(), record.Summaries.Name()},
		Requests: []pipeline.Request{{Service: llm.DefaultService}}}
}

// Do builds the pairs and writes them to out. Until every rewrite is in,
// the set is not known: a rewrite waiting on a batch is the error, and
// nothing is written.
func (r *Stage) Do(ctx context.Context, out string) (string, error) {
	pass := func(ctx context.Context) (int, error) {
		var err error
		if r.Result, err = Build(ctx, r.Store, r.Rewriter, r.Options); err != nil {
			return 0, err
		}
		return len(r.Result.Pending), nil
	}
	waiting, err := 0, error(nil)
	if r.Passes == nil {
		waiting, err = pass(ctx)
	} else {
		waiting, err = r.Passes(ctx, pass)
	}
	switch {
	case err != nil:
		return "", err
	case waiting > 0:
		return "", pipeline.Wait(fmt.Sprintf("%d rewrites wait on LLM answers", waiting))
	}
	if err := Write(ctx, out, r.Result, r.Write); err != nil {
		return "", err
	}
	return pipeline.Done, nil
}
