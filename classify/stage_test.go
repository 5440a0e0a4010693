package classify

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

const handKey = "2601.00001"

// storedSelections reads the stored selections of key.
func storedSelections(t *testing.T, st *store.Store, key string) *record.Selections {
	t.Helper()
	s, _, err := record.SelectionSets.Get(t.Context(), st, key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// process runs s's Process for key as a run does, under the stage
// lifecycle over s.Store, so that the ledger says how it went.
func process(t *testing.T, s *Stage, key string) (*Result, error) {
	t.Helper()
	var res *Result
	var err error
	lc := &pipeline.Lifecycle{Ledger: s.Store}
	lc.Track(t.Context(), pipeline.Func{Decl: s.Declare(), Run: func(ctx context.Context, key string) (string, error) {
		res, err = s.Process(ctx, key)
		return s.outcome(res, err)
	}}, key)
	return res, err
}

func ledger(t *testing.T, st *store.Store, key string) store.Entry {
	t.Helper()
	e, err := st.Status(t.Context(), key, Name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestProcessHeuristic(t *testing.T) {
	st := openStore(t)
	doc, g := handPaper()
	putTarget(t, st, handKey, doc, g)
	meter := new(llm.Meter)
	stage := &Stage{Store: st, Meter: meter, Log: testLogger(t)}

	res, err := process(t, stage, handKey)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stored || res.Selections == nil || res.Failure != nil {
		t.Fatalf("result = %+v", res)
	}
	got := storedSelections(t, st, handKey)
	if got.TargetID != handKey || got.Model != "heuristic" || got.PromptVersion != "heuristic-v1" ||
		len(got.Selections) != handEdges || got.Sources != 2 || got.InputDigest == "" {
		t.Errorf("stored selections: %+v", got)
	}
	for _, s := range got.Selections {
		if s.TargetID != handKey || s.Model != "heuristic" || s.PromptVersion != "heuristic-v1" {
			t.Errorf("selection %+v", s)
		}
	}
	if e := ledger(t, st, handKey); e.Status != store.StatusDone || e.Attempts != 1 {
		t.Errorf("ledger = %+v", e)
	}

	// Nothing changed: the stored selections come back as they are.
	res, err = process(t, stage, handKey)
	if err != nil || !res.Stored || !res.Selections.CreatedAt.Equal(got.CreatedAt) {
		t.Fatalf("second run: stored=%v, err %v", res.Stored, err)
	}
	if c := meter.Tallies()[0].Calls; c != 1 {
		t.Errorf("heuristic ran %d times, want 1", c)
	}

	// Force classifies again.
	stage.Force = true
	if res, err = process(t, stage, handKey); err != nil || res.Stored {
		t.Fatalf("forced run: stored=%v, err %v", res.Stored, err)
	}
	stage.Force = false

	// A changed graph (a new edge) is classified again, one selection per
	// edge.
	g.Edges = append(g.Edges, record.Edge{TargetID: handKey, Intents: []string{}, Contexts: []string{}, Link: record.LinkNone})
	putTarget(t, st, handKey, doc, g)
	if res, err = process(t, stage, handKey); err != nil || res.Stored {
		t.Fatalf("run after a change: stored=%v, err %v", res.Stored, err)
	}
	if n := len(storedSelections(t, st, handKey).Selections); n != handEdges+1 {
		t.Errorf("%d selections after an edge was added, want %d", n, handEdges+1)
	}
	if k := res.Selections.Selections[handEdges].RefKey; k != "edge:11" {
		t.Errorf("ref key of an edge without keys = %q", k)
	}
}

func TestProcessMissingInput(t *testing.T) {
	st := openStore(t)
	stage := &Stage{Store: st}
	res, err := process(t, stage, "2601.00002")
	if err == nil || !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "classify 2601.00002: read document") {
		t.Fatalf("err = %v", err)
	}
	if res == nil || res.Selections != nil {
		t.Errorf("result = %+v", res)
	}
	if e := ledger(t, st, "2601.00002"); e.Status != store.StatusFailed || !strings.Contains(e.Error, "read document") {
		t.Errorf("ledger = %+v", e)
	}

	doc, _ := handPaper()
	if _, err := record.Documents.Put(t.Context(), st, "2601.00002", doc, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := process(t, stage, "2601.00002"); err == nil || !strings.Contains(err.Error(), "read reference graph") {
		t.Errorf("err = %v", err)
	}
}
