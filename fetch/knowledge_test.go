package fetch_test

import (
	"context"
	"fmt"
	"github.com/groundwork/curate/internal/testutil"
	"slices"
	"testing"

	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
)

// versioned is a world whose arXiv serves every version's page: target
// 7's v1 has none.
func versioned(t *testing.T) *sim.World {
	t.Helper()
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 25, Targets: 30, Revisions: true, RevisedSource: []int{5}, LateSource: []int{6}, NoV1HTML: []int{7}})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func paths(calls []sim.Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Path)
	}
	return out
}

// TestFetchTargetAtV1: under the knowledge cut a target is fetched at v1
// (html/IDv1); one whose v1 has no HTML at the version served now, the
// missing v1 remembered apart from the paper, so a second run asks
// nothing.
func TestFetchTargetAtV1(t *testing.T) {
	w := versioned(t)
	ax, a5 := simtest.Serve(t, sim.Arxiv, w), simtest.Serve(t, sim.Ar5iv, w)
	f, st := newFetcher(t, ax, a5, 64<<20)
	stage := &fetch.Stage{Fetcher: f, AtV1: true}
	ctx := context.Background()
	revised := -1
	for i := range w.NumTargets() {
		if p := w.Target(i); p.Version > 1 && p.HTML == sim.HTMLArxiv && i != 7 {
			revised = i
			break
		}
	}
	for _, tc := range []struct {
		i       int
		version int
		calls   []string
	}{
		{revised, 1, []string{"/html/%sv1"}},
		{7, w.Target(7).Version, []string{"/html/%sv1", "/html/%s"}},
	} {
		p := w.Target(tc.i)
		ax.Reset()
		if out, err := stage.Do(ctx, p.ArxivID); err != nil || out != pipeline.Done {
			t.Fatalf("target %d: %s %v", tc.i, out, err)
		}
		var want []string
		for _, c := range tc.calls {
			want = append(want, fmt.Sprintf(c, p.ArxivID))
		}
		if got := paths(ax.Calls()); !slices.Equal(got, want) {
			t.Errorf("target %d: asked %v, want %v", tc.i, got, want)
		}
		doc, v, ok := f.Stored(ctx, p.ArxivID)
		if !ok || v != tc.version || record.DocVersion(doc) != tc.version {
			t.Errorf("target %d: stored version %d, want %d", tc.i, v, tc.version)
		}
		ax.Reset()
		if out, err := stage.Do(ctx, p.ArxivID); err != nil || out != pipeline.Reused || len(ax.Calls()) != 0 {
			t.Errorf("target %d again: %s %v, %d requests", tc.i, out, err, len(ax.Calls()))
		}
	}
	if _, ok, _ := record.NoHTMLs.Lookup(ctx, st, record.VersionItem(w.Target(7).ArxivID, 1)); !ok {
		t.Error("the missing v1 is not remembered")
	}
	if _, ok, _ := record.NoHTMLs.Lookup(ctx, st, w.Target(7).ArxivID); ok {
		t.Error("the paper is remembered as having no HTML")
	}
}

// TestSourcesPinned: the sources stage fetches a source revised after
// its target's cutoff at the pinned version, under that version's own
// item, and not the version served now; a pinned version without HTML
// falls back to the version served now; a source first published after
// the cutoff is not fetched; under off everything is fetched as served
// now.
func TestSourcesPinned(t *testing.T) {
	w := versioned(t)
	ax, a5 := simtest.Serve(t, sim.Arxiv, w), simtest.Serve(t, sim.Ar5iv, w)
	f, st := newFetcher(t, ax, a5, 64<<20)
	ctx := context.Background()
	// Papers of each kind from the world.
	var revised, noPinned, plain, late sim.Paper
	for j := range w.Config().Papers {
		p := w.Background(j)
		switch {
		case p.Version > 1 && p.HTML == sim.HTMLArxiv && revised.ArxivID == "":
			revised = p
		case p.Version > 1 && p.HTML == sim.HTMLAr5iv && noPinned.ArxivID == "":
			noPinned = p
		case p.Version == 1 && p.HTML == sim.HTMLArxiv && plain.ArxivID == "":
			plain = p
		}
	}
	late = w.Target(20)
	if revised.ArxivID == "" || noPinned.ArxivID == "" || plain.ArxivID == "" {
		t.Fatal("the world lacks a kind of source: pick another seed")
	}
	target := w.Target(10).ArxivID
	pin := func(p sim.Paper, v int, firstAfter bool) *record.Pin {
		return &record.Pin{Version: v, Latest: p.Version, Later: v < p.Version || firstAfter, FirstAfter: firstAfter}
	}
	srcs := []struct {
		p   sim.Paper
		pin *record.Pin
	}{{revised, pin(revised, 1, false)}, {noPinned, pin(noPinned, 1, false)}, {plain, pin(plain, 1, false)}, {late, pin(late, 0, true)}}
	g := record.Graph{TargetID: target}
	sel := record.Selections{TargetID: target}
	cut := record.KnowledgeCut{Target: target}
	for i, s := range srcs {
		k, id := fmt.Sprintf("bib.bib%d", i+1), s.p.ArxivID
		g.Edges = append(g.Edges, record.Edge{TargetID: target, RefKey: &k, ArxivID: &id})
		sel.Selections = append(sel.Selections, record.Selection{TargetID: target, RefKey: k, Role: record.RoleSource})
		cut.Sources = append(cut.Sources, record.SourcePin{RefKey: k, PaperPin: record.PaperPin{ArxivID: id, Pin: s.pin}})
	}
	record.Graphs.Put(ctx, st, target, &g, nil)
	record.SelectionSets.Put(ctx, st, target, &sel, nil)
	record.KnowledgeCuts.Put(ctx, st, target, &cut, nil)

	s := &fetch.Sources{Fetcher: f, Store: st, Mode: knowledgecut.Flag}
	if out, err := s.Do(ctx, target); err != nil || out != pipeline.Done {
		t.Fatalf("%s %v", out, err)
	}
	want := []string{"/html/" + revised.ArxivID + "v1", "/html/" + noPinned.ArxivID + "v1", "/html/" + noPinned.ArxivID, "/html/" + plain.ArxivID}
	if got := paths(ax.Calls()); !slices.Equal(got, want) {
		t.Errorf("arXiv asked %v, want %v", got, want)
	}
	if got := paths(a5.Calls()); !slices.Equal(got, []string{"/html/" + noPinned.ArxivID}) {
		t.Errorf("ar5iv asked %v", got)
	}
	item := record.VersionItem(revised.ArxivID, 1)
	if doc, ok, _ := record.Documents.Lookup(ctx, st, item); !ok || record.DocVersion(doc) != 1 {
		t.Errorf("pinned page under %s: %v", item, ok)
	}
	if testutil.Has(t)(record.Documents.Has(ctx, st, revised.ArxivID)) || testutil.Has(t)(record.Documents.Has(ctx, st, late.ArxivID)) {
		t.Error("the version served now of the pinned source, or the late source, was fetched")
	}
	if !testutil.Has(t)(record.Documents.Has(ctx, st, noPinned.ArxivID)) {
		t.Error("no fallback for the source whose pinned version has no HTML")
	}
	ax.Reset()
	a5.Reset()
	if out, err := s.Do(ctx, target); err != nil || out != pipeline.Reused || len(ax.Calls())+len(a5.Calls()) != 0 {
		t.Errorf("again: %s %v, asked %v %v", out, err, paths(ax.Calls()), paths(a5.Calls()))
	}

	s.Mode = knowledgecut.Off
	if _, err := s.Do(ctx, target); err != nil {
		t.Fatal(err)
	}
	for _, p := range []sim.Paper{revised, late} {
		if doc, ok, _ := record.Documents.Lookup(ctx, st, p.ArxivID); !ok || record.DocVersion(doc) != p.Version {
			t.Errorf("off: %s not fetched as served now", p.ArxivID)
		}
	}
}
