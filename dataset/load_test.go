package dataset

import (
	"context"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// putTarget stores t the way the citegraph, classify, summarize and fetch
// stages do.
func putTarget(t *testing.T, st *store.Store, key string, in TargetInputs, withSummary, withDoc bool) {
	t.Helper()
	ctx := context.Background()
	check := func(_ store.Hash, err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	check(record.Graphs.Put(ctx, st, key, &in.Graph, nil))
	check(record.SelectionSets.Put(ctx, st, key, &record.Selections{TargetID: key, Selections: in.Selections}, nil))
	if withSummary {
		res := record.Summary{Target: key, Gold: record.CardResult{Key: key, Card: in.Gold}}
		for _, s := range in.Sources {
			res.Sources = append(res.Sources, record.CardResult{Key: s.RefKey, Card: s.Card, TextLevel: s.TextLevel})
		}
		check(record.Summaries.Put(ctx, st, key, &res, nil))
	}
	if withDoc {
		// The target cites its last source first.
		keys := []string{"bib.bib3", "bib.bib1"}
		check(record.Documents.Put(ctx, st, key, &record.Document{ID: key, Mentions: []record.Mention{{RefKeys: keys[:1]}, {RefKeys: keys}}}, nil))
	}
}

func TestLoadTargets(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := makeTarget("2401.00001", "2024-01-01", "cs.CL", 3)
	b := makeTarget("2601.00002", "2026-01-05", "cs.CL", 4)
	c := makeTarget("2401.00003", "2024-01-01", "cs.CL", 3)
	putTarget(t, st, "2401.00001", a, true, true)
	putTarget(t, st, "2601.00002", b, true, false)
	putTarget(t, st, "2401.00003", c, false, false)

	targets, dropped, err := LoadTargets(ctx, st, nil, testWriters)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 2 || len(dropped) != 1 || dropped[0].Reason != DropIncomplete || dropped[0].TargetID != "2401.00003" {
		t.Fatalf("loaded %d, dropped %+v", len(targets), dropped)
	}
	r := mustBuild(t, targets, fixedOptions())
	if got := countSplits(r.Instances); got != (SplitCounts{Train: 1, Test: 1}) {
		t.Fatalf("counts %+v", got)
	}
	var order []string
	for _, s := range r.Instances[0].Sources {
		order = append(order, s.RefKey)
	}
	if want := "bib.bib3 bib.bib1 bib.bib2"; strings.Join(order, " ") != want {
		t.Errorf("source order %v, want %s (first mention, then bibliography)", order, want)
	}

	// Named targets, with versions and a bad ID.
	targets, dropped, err = LoadTargets(ctx, st, []string{"2601.00002v3", "nonsense", "2401.00009"}, testWriters)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 1 || len(dropped) != 2 || dropped[0].Reason != DropInvalidID || dropped[1].Reason != DropIncomplete {
		t.Errorf("loaded %d, dropped %+v", len(targets), dropped)
	}
}
