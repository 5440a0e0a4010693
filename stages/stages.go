// Package stages is the concrete per-target pipeline: it wires the fetch,
// citegraph, classify and summarize stages into pipeline.Steps, and holds
// the glue between them (which references the summarize stage must card).
// Every command that runs a stage goes through these functions, so a stage
// run on its own and the same stage inside `curate run` are one code path.
package stages

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/groundwork/curate/arxiv"
	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/classify"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/pipeline"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
	"github.com/groundwork/curate/summarize"
)

// Names of the per-target stages, in pipeline order.
const (
	Fetch     = "fetch"
	Citegraph = "citegraph"
	Classify  = "classify"
	Summarize = "summarize"
)

// Order lists the per-target stages in the order they run.
var Order = []string{Fetch, Citegraph, Classify, Summarize}

// MinSources is the number of sources a target needs for an instance: the
// dataset drops targets with fewer (the recipe drops ≤ 2), so they are not
// summarized at all.
const MinSources = 3

// Set holds the configured stages. A nil stage cannot be run.
type Set struct {
	Store     *store.Store
	Fetcher   *fetch.Fetcher
	Citegraph *citegraph.Runner
	Classify  *classify.Stage
	Summarize *summarize.Stage
	// IncludeSuspect lets targets whose classification looks implausible
	// (classify.Plausibility) go on to summarize; by default they are held
	// back.
	IncludeSuspect bool
}

// Key returns the store key of a target given as an arXiv ID.
func Key(input string) (string, error) {
	id, err := arxiv.Parse(input)
	if err != nil {
		return "", err
	}
	return record.Key(id), nil
}

// RunFetch fetches one target.
func (s *Set) RunFetch(ctx context.Context, key string) (string, error) {
	r := s.Fetcher.Fetch(ctx, key)
	switch r.Outcome {
	case fetch.Fetched:
		return pipeline.Done, nil
	case fetch.Stored:
		return pipeline.Reused, nil
	}
	return "", r.Err
}

// RunCitegraph builds one target's edges. Re-linking stored responses
// makes no request and counts as reused. The arXiv metadata of all targets
// is looked up before the pipeline starts (Runner.LookupArxiv).
func (s *Set) RunCitegraph(ctx context.Context, key string) (string, error) {
	r := s.Citegraph.Build(ctx, key)
	if r.Err != nil {
		return "", r.Err
	}
	if !r.Requests {
		return pipeline.Reused, nil
	}
	return pipeline.Done, nil
}

// RunClassify classifies one target's references.
func (s *Set) RunClassify(ctx context.Context, key string) (string, error) {
	r, err := s.Classify.Process(ctx, key)
	if err != nil {
		return "", err
	}
	if r.Failure != nil {
		return "", fmt.Errorf("classify %s: %s", key, r.Failure.Reason)
	}
	if sus := r.Selections.Suspect; len(sus) > 0 && !s.IncludeSuspect {
		return "", pipeline.Hold(suspectReason(sus))
	}
	if r.Stored {
		return pipeline.Reused, nil
	}
	return pipeline.Done, nil
}

// RunSummarize writes the target's gold card and its sources' cards. A
// target with fewer than MinSources sources is skipped: it cannot become an
// instance, and carding it would only cost tokens.
func (s *Set) RunSummarize(ctx context.Context, key string) (string, error) {
	refs, suspect, err := sourceRefs(ctx, s.Store, key)
	if err != nil {
		return "", err
	}
	if len(suspect) > 0 && !s.IncludeSuspect {
		return "", pipeline.Hold(suspectReason(suspect))
	}
	if len(refs) < MinSources {
		return pipeline.Skipped, nil
	}
	r, err := s.Summarize.ProcessTarget(ctx, key, refs)
	if err != nil {
		return "", err
	}
	if r.Gold.Card == nil {
		return "", fmt.Errorf("summarize %s: no gold card: %s", key, r.Gold.Failure)
	}
	if r.Failed > 0 {
		// A source without a card would silently shrink the instance; the
		// next run retries the failed cards (the others are stored).
		var why []string
		for _, c := range r.Sources {
			if c.Card == nil && !c.Unsummarizable {
				why = append(why, c.Key+": "+c.Failure)
			}
		}
		return "", fmt.Errorf("summarize %s: %d cards failed: %s", key, r.Failed, strings.Join(why, "; "))
	}
	if r.Written == 0 {
		return pipeline.Reused, nil
	}
	return pipeline.Done, nil
}

// Steps returns the per-target pipeline steps for the named stages (all of
// Order when names is empty), with workers[name] goroutines each (1 when
// unset).
func (s *Set) Steps(names []string, workers map[string]int) ([]pipeline.Step, error) {
	if len(names) == 0 {
		names = Order
	}
	runs := map[string]func(context.Context, string) (string, error){
		Fetch: s.RunFetch, Citegraph: s.RunCitegraph, Classify: s.RunClassify, Summarize: s.RunSummarize,
	}
	ready := map[string]bool{
		Fetch: s.Fetcher != nil, Citegraph: s.Citegraph != nil, Classify: s.Classify != nil, Summarize: s.Summarize != nil,
	}
	var steps []pipeline.Step
	for _, n := range names {
		run, ok := runs[n]
		if !ok {
			return nil, fmt.Errorf("unknown stage %q (stages: %v)", n, Order)
		}
		if !ready[n] {
			return nil, fmt.Errorf("stage %q is not configured", n)
		}
		steps = append(steps, pipeline.Step{Name: n, Workers: max(workers[n], 1), Run: run})
	}
	return steps, nil
}

// suspectReason is the reason a suspect target is held back.
func suspectReason(reasons []string) string {
	return "suspect classification (" + strings.Join(reasons, "; ") + "); --include-suspect keeps it"
}

// SourceRefs returns the references the classify stage chose as sources of
// a target, as the summarize stage wants them, in edge order.
func SourceRefs(ctx context.Context, st *store.Store, key string) ([]summarize.SourceRef, error) {
	refs, _, err := sourceRefs(ctx, st, key)
	return refs, err
}

// sourceRefs is SourceRefs, with the reasons the selections are suspect.
func sourceRefs(ctx context.Context, st *store.Store, key string) ([]summarize.SourceRef, []string, error) {
	var g record.Graph
	if _, err := st.GetJSON(ctx, key, record.Graphs.Name(), &g); err != nil {
		return nil, nil, fmt.Errorf("sources of %s: no edges (run citegraph first): %w", key, err)
	}
	var sel record.Selections
	if _, err := st.GetJSON(ctx, key, record.SelectionSets.Name(), &sel); err != nil {
		return nil, nil, fmt.Errorf("sources of %s: no selections (run classify first): %w", key, err)
	}
	keys := record.RefKeys(g.Edges)
	edgeOf := make(map[string]*record.Edge, len(keys))
	for i, k := range keys {
		edgeOf[k] = &g.Edges[i]
	}
	var refs []summarize.SourceRef
	for _, s := range sel.Selections {
		if s.Role != record.RoleSource {
			continue
		}
		e := edgeOf[s.RefKey]
		if e == nil {
			return nil, nil, fmt.Errorf("sources of %s: selection %q names no edge: %w", key, s.RefKey, errStale)
		}
		refs = append(refs, summarize.SourceRef{
			Key: s.RefKey, ArxivID: deref(e.ArxivID), S2PaperID: deref(e.S2PaperID),
			Title: deref(e.Title), Abstract: deref(e.Abstract),
		})
	}
	return refs, sel.Suspect, nil
}

// errStale marks selections made for other edges than the stored ones.
var errStale = errors.New("selections are stale: classify again")

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
