package dataset

import (
	"context"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/pipeline"
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

	targets, dropped, err := LoadTargets(ctx, st, nil, testInputs)
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
	targets, dropped, err = LoadTargets(ctx, st, []string{"2601.00002v3", "nonsense", "2401.00009"}, testInputs)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 1 || len(dropped) != 2 || dropped[0].Reason != DropInvalidID || dropped[1].Reason != DropIncomplete {
		t.Errorf("loaded %d, dropped %+v", len(targets), dropped)
	}
}

// A field a stage adds to every instance is read for every target: a
// target without its record is left out as that stage's unfinished work,
// and one whose stage last failed is left out as failed; the others carry
// the record to their instance.
func TestLoadTargetsFields(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	type tuple struct {
		Summary string `json:"summary"`
	}
	in := Inputs{Writers: Writers{"edges": "citegraph", "selections": "classify", "summary": "summarize", "tuple": "tuples"},
		Fields: []*pipeline.Field{pipeline.FieldOf[tuple]("idea", "tuple", "the idea")}}
	for i, k := range []string{"2401.00001", "2401.00002", "2401.00003"} {
		putTarget(t, st, k, makeTarget(k, "2024-01-01", "cs.CL", 3), true, false)
		if i < 2 {
			if _, err := st.PutJSON(ctx, k, "tuple", tuple{Summary: "idea of " + k}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.SetStatus(ctx, "2401.00002", "tuples", store.StatusFailed, "llm: status 500"); err != nil {
		t.Fatal(err)
	}
	targets, dropped, err := LoadTargets(ctx, st, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 1 || string(targets[0].Fields["idea"]) != `{"summary":"idea of 2401.00001"}` {
		t.Errorf("loaded %+v", targets)
	}
	want := map[string]string{"2401.00002": "the tuples stage failed: llm: status 500", "2401.00003": "no tuple record: run the tuples stage"}
	if len(dropped) != 2 {
		t.Fatalf("dropped %+v", dropped)
	}
	for _, d := range dropped {
		if d.Reason != DropIncomplete || d.Detail != want[d.TargetID] {
			t.Errorf("dropped %+v, want %q", d, want[d.TargetID])
		}
	}
	r := mustBuild(t, targets, fixedOptions())
	if len(r.Instances) != 1 || string(r.Instances[0].Fields["idea"]) != `{"summary":"idea of 2401.00001"}` {
		t.Errorf("instances %+v", r.Instances)
	}
}

// TestLoadTargetsFewSources: a target classify kept fewer than MinSources
// sources for is not summarized, nor given a tuple (summarize and tuples
// skip it, as recorded real pages showed: a model kept one or two sources
// of 2501.11120, 2507.11127 and others). It is dropped as too_few_sources,
// saying how many it has, not as incomplete with "run the summarize
// stage", which cannot help. A target with its sources and no summary is
// still incomplete.
func TestLoadTargetsFewSources(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	type tuple struct {
		Summary string `json:"summary"`
	}
	in := Inputs{Writers: Writers{"edges": "citegraph", "selections": "classify", "summary": "summarize", "tuple": "tuples"},
		Fields: []*pipeline.Field{pipeline.FieldOf[tuple]("idea", "tuple", "the idea")}}
	putTarget(t, st, "2401.00001", makeTarget("2401.00001", "2024-01-01", "cs.CL", 2), false, false)
	putTarget(t, st, "2401.00002", makeTarget("2401.00002", "2024-01-01", "cs.CL", 0), false, false)
	putTarget(t, st, "2401.00003", makeTarget("2401.00003", "2024-01-01", "cs.CL", 3), false, false)
	for _, k := range []string{"2401.00001", "2401.00002"} {
		for _, stage := range []string{"summarize", "tuples"} {
			if err := st.SetStatus(ctx, k, stage, store.StatusSkipped, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	targets, dropped, err := LoadTargets(ctx, st, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	r := mustBuild(t, targets, fixedOptions())
	dropped = append(dropped, r.Dropped...)
	want := map[string][2]string{
		"2401.00001": {DropFewSources, "2 sources"},
		"2401.00002": {DropFewSources, "0 sources"},
		"2401.00003": {DropIncomplete, "run the summarize stage"},
	}
	if len(dropped) != len(want) || len(r.Instances) != 0 {
		t.Fatalf("dropped %+v, %d instances", dropped, len(r.Instances))
	}
	for _, d := range dropped {
		w := want[d.TargetID]
		if d.Reason != w[0] || !strings.Contains(d.Detail, w[1]) || d.Reason == DropFewSources && strings.Contains(d.Detail, "run the") {
			t.Errorf("%s dropped as %s (%s), want %s (%s)", d.TargetID, d.Reason, d.Detail, w[0], w[1])
		}
	}
}
