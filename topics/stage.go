package topics

import (
	"context"
	"fmt"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
)

// Name is the topics stage's name.
const Name = "topics"

// Stage is the topics stage as a row of the table of stages whose item is
// not a target: its item is the directory the topics are written to.
type Stage struct {
	Builder *Builder
	// Seeds are the seed papers (nil: every target of the store); Graphs
	// builds the graphs the store lacks.
	Seeds  []string
	Graphs BuildGraphs
	// Passes runs a build again while its LLM tags wait on batches that
	// may be collected (the composition root's batch machinery); nil
	// builds once. It returns the items still waiting.
	Passes  func(ctx context.Context, pass func(context.Context) (waiting int, err error)) (int, error)
	Options Options
	Write   WriteOptions

	// Result is what Do built (nil before).
	Result *Result
}

func (r *Stage) Declare() pipeline.Decl {
	return pipeline.Decl{Name: Name, About: "topic corpora: shared background-paper sets from influential-citation overlap",
		Reads:    []string{record.Graphs.Name(), record.S2References.Name()},
		Optional: []string{record.CardIndex.Name(), "card:*"},
		Requests: []pipeline.Request{{Service: llm.DefaultService}}}
}

// Do builds the topics of the seeds and writes them to out. Topics whose
// tag still waits on an LLM batch are not written: the wait is the error.
func (r *Stage) Do(ctx context.Context, out string) (string, error) {
	graphs, excluded, err := LoadGraphs(ctx, r.Builder.Store, r.Seeds, r.Graphs)
	if err != nil {
		return "", err
	}
	pass := func(ctx context.Context) (int, error) {
		var err error
		if r.Result, err = r.Builder.Build(ctx, graphs, excluded, r.Options); err != nil {
			return 0, err
		}
		return len(r.Result.Pending), nil
	}
	waiting := 0
	if r.Passes == nil {
		waiting, err = pass(ctx)
	} else {
		waiting, err = r.Passes(ctx, pass)
	}
	switch {
	case err != nil:
		return "", err
	case waiting > 0:
		return "", pipeline.Wait(fmt.Sprintf("%d of %d selected topics wait on their LLM tag", waiting, len(r.Result.Topics)))
	}
	if err := Write(ctx, out, r.Result, r.Write); err != nil {
		return "", err
	}
	return pipeline.Done, nil
}
