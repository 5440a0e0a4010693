package citegraph

import (
	"context"
	"fmt"

	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
)

// Row is the citegraph stage as a row of the stage table: Build over a
// run's targets, their Semantic Scholar records and the arXiv metadata
// asked ahead of it by the feed (see Runner.Feed).
type Row struct {
	*Runner
	// Drain, when closed, stops the feed walking more targets.
	Drain <-chan struct{}
	// Learn, when set, is told the arXiv IDs of each target's edges:
	// papers the run may ask for next (the archives index them).
	Learn func(ids ...string)
}

func (r *Row) Declare() pipeline.Decl {
	return pipeline.Decl{
		Name: Name, About: "Semantic Scholar reference edges joined to the bibliography, and the target's arXiv metadata", Workers: 4,
		Reads:  []string{record.Documents.Name()},
		Writes: []string{record.S2Papers.Name(), record.S2References.Name(), record.S2Batches.Name(), record.ArxivMetas.Name(), record.Graphs.Name()},
		Before: []string{"fetch"},
		Requests: []pipeline.Request{
			{Service: s2.ServiceName, Count: pipeline.Batched},
			{Service: arxivapi.ServiceName, Count: pipeline.Batched},
		},
	}
}

// Prepare starts the feed of the run's targets: their Semantic Scholar
// records and the fields their edges lack in batches of up to 500, their
// arXiv metadata 100 IDs a request. Its finish stops the feed and
// returns the arXiv metadata lookup's error.
func (r *Row) Prepare(ctx context.Context, keys []string) (func(context.Context) error, error) {
	stop := r.Feed(ctx, keys, r.Drain)
	return func(context.Context) error { return stop() }, nil
}

// Do builds one target's edges. Re-linking stored responses makes no
// request and counts as reused.
func (r *Row) Do(ctx context.Context, key string) (string, error) {
	res := r.Build(ctx, key)
	if res.Err == nil && r.Learn != nil {
		r.Learn(edgeIDs(res.Graph)...)
	}
	return outcome(res)
}

// outcome is a Build's result as the stage reports it.
func outcome(res Result) (string, error) {
	switch {
	case res.Err != nil:
		return "", res.Err
	case !res.Requests:
		return pipeline.Reused, nil
	}
	return pipeline.Done, nil
}

// edgeIDs lists the arXiv IDs of a Graph's edges.
func edgeIDs(g *record.Graph) []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, e := range g.Edges {
		if e.ArxivID != nil && *e.ArxivID != "" {
			out = append(out, *e.ArxivID)
		}
	}
	return out
}

// Report gives each target's edges and how they were linked, then the
// link rates over all (see pipeline.Reporter).
func (r *Row) Report(ctx context.Context, keys []string, _ map[string]pipeline.Event, _ int) pipeline.Report {
	var lines []string
	var sum record.LinkReport
	for _, k := range keys {
		g, ok, _ := record.Graphs.Lookup(ctx, r.Store, k)
		if !ok {
			continue
		}
		rep := g.Report
		sum.S2Edges += rep.S2Edges
		sum.ByArxivID += rep.ByArxivID
		sum.ByDOI += rep.ByDOI
		sum.ByTitle += rep.ByTitle
		lines = append(lines, fmt.Sprintf("%s\t%s\t%d edges\tlinked %d/%d (%.0f%%)\t%s\t%s", k, g.S2Status,
			len(g.Edges), rep.Linked(), rep.S2Edges, 100*rep.Rate(), g.Meta.Published, g.Meta.PrimaryCategory))
	}
	return pipeline.Report{Lines: lines, Total: fmt.Sprintf("curate citegraph: linked %d of %d S2 edges (%.1f%%: arXiv ID %d, DOI %d, title %d); store %s",
		sum.Linked(), sum.S2Edges, 100*sum.Rate(), sum.ByArxivID, sum.ByDOI, sum.ByTitle, r.Store.Dir())}
}
