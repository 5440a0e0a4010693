package fetch_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
	"github.com/groundwork/curate/store"
)

// citeAsSource stores what the sources stage reads of target: its
// sources, of which paper p, pinned at version v, is the one on arXiv.
func citeAsSource(t *testing.T, st *store.Store, target string, p sim.Paper, v int) *record.Pin {
	t.Helper()
	ctx := context.Background()
	pin := &record.Pin{Version: v, Latest: p.Version, Later: v < p.Version}
	k, id := "bib.bib1", p.ArxivID
	g := record.Graph{TargetID: target, Edges: []record.Edge{{TargetID: target, RefKey: &k, ArxivID: &id}}}
	sel := record.Selections{TargetID: target, Selections: []record.Selection{{TargetID: target, RefKey: k, Role: record.RoleSource}}}
	cut := record.KnowledgeCut{Target: target, Sources: []record.SourcePin{{RefKey: k, PaperPin: record.PaperPin{ArxivID: id, Pin: pin}}}}
	// Sources without an arXiv ID make up the least number of sources a
	// target needs: they ask nothing of arXiv.
	for i := 2; i <= record.MinSources; i++ {
		k, title := fmt.Sprintf("bib.bib%d", i), fmt.Sprintf("A paper off arXiv %d", i)
		g.Edges = append(g.Edges, record.Edge{TargetID: target, RefKey: &k, Title: &title})
		sel.Selections = append(sel.Selections, record.Selection{TargetID: target, RefKey: k, Role: record.RoleSource})
	}
	for _, err := range []error{
		put(record.Graphs.Put(ctx, st, target, &g, nil)),
		put(record.SelectionSets.Put(ctx, st, target, &sel, nil)),
		put(record.KnowledgeCuts.Put(ctx, st, target, &cut, nil)),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return pin
}

func put[T any](_ T, err error) error { return err }

// TestPinnedSourceAnyOrder: paper P is a target (read at v1) and a
// source of target T2 pinned at some version, and the store holds P at
// its latest version (built with the cut off, or fetched as served
// now). Whichever of P's fetch and T2's sources runs first, the version
// P's source card is written from is the pinned one, P's key holds its
// v1, and arXiv is asked the same pages. Both orders are run explicitly
// (with more fetch workers either may come first), then both at once
// (issue 25; before the fix, the sources stage read the later version
// under P's key and P's fetch then replaced it with v1, or P's fetch
// replaced the later version first and it was asked again; a source
// pinned at v1 read apart was asked again by P's fetch).
func TestPinnedSourceAnyOrder(t *testing.T) {
	w := versioned(t)
	p := w.Target(6)
	if p.Version < 3 || p.HTML != sim.HTMLArxiv {
		t.Fatalf("target 6 is at v%d (%s): the world gives no case, pick another", p.Version, p.HTML)
	}
	t2 := w.Target(10).ArxivID
	for _, tc := range []struct {
		name string
		pin  int
		asks []string // arXiv's pages asked by the two, in any order
	}{
		{"pinned at the stored version", p.Version, []string{"/html/%sv1"}},
		{"pinned between", 2, []string{"/html/%sv1", "/html/%sv2"}},
		{"pinned at v1", 1, []string{"/html/%sv1"}},
		// arXiv is known to have no HTML for v2: the version served now
		// (v3) is the fallback, also kept apart from the target's v1.
		{"pinned without HTML", 2, []string{"/html/%sv1"}},
	} {
		for _, order := range []string{"target first", "sources first", "at once"} {
			t.Run(tc.name+"/"+order, func(t *testing.T) {
				ax, a5 := simtest.Serve(t, sim.Arxiv, w), simtest.Serve(t, sim.Ar5iv, w)
				f, st := newFetcher(t, ax, a5, 64<<20)
				ctx := context.Background()
				if r := f.Fetch(ctx, p.ArxivID); r.Outcome != fetch.Fetched || record.DocVersion(r.Doc) != p.Version {
					t.Fatalf("storing the version served now: %s v%d %v", r.Outcome, record.DocVersion(r.Doc), r.Err)
				}
				pin := citeAsSource(t, st, t2, p, tc.pin)
				read := tc.pin
				if strings.Contains(tc.name, "without HTML") {
					m := record.NoHTML{CheckedAt: time.Now().UTC().Format(time.RFC3339), Reason: "test"}
					if _, err := record.NoHTMLs.Put(ctx, st, record.VersionItem(p.ArxivID, tc.pin), &m, nil); err != nil {
						t.Fatal(err)
					}
					read = p.Version
				}
				ax.Reset()
				a5.Reset()

				target := func() {
					if _, err := (&fetch.Stage{Fetcher: f, AtV1: true}).Do(ctx, p.ArxivID); err != nil {
						t.Errorf("target: %v", err)
					}
				}
				sources := func() {
					if out, err := (&fetch.Sources{Fetcher: f, Store: st, Mode: knowledgecut.Flag}).Do(ctx, t2); err != nil || out == pipeline.Skipped {
						t.Errorf("sources of T2: %s %v", out, err)
					}
				}
				switch order {
				case "target first":
					target()
					sources()
				case "sources first":
					sources()
					target()
				default:
					// Both at once, as two workers meet them: the paper's
					// lock orders them one way or the other.
					var wg sync.WaitGroup
					wg.Go(target)
					wg.Go(sources)
					wg.Wait()
				}
				if t.Failed() {
					return
				}

				want := map[string]int{}
				for _, a := range tc.asks {
					want[fmt.Sprintf(a, p.ArxivID)]++
				}
				got := map[string]int{}
				for _, c := range paths(ax.Calls()) {
					got[c]++
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("arXiv asked %v, want %v", got, want)
				}
				if n := len(a5.Calls()); n != 0 {
					t.Errorf("ar5iv asked %d times", n)
				}
				if _, v, _ := f.Stored(ctx, p.ArxivID); v != 1 {
					t.Errorf("P's key holds v%d, want its v1 (it is a target)", v)
				}
				// The text summarize cards the source from: the first
				// item of ReadItems holding a Document.
				from, v := "", 0
				for _, it := range knowledgecut.ReadItems(knowledgecut.Flag, p.ArxivID, pin) {
					if doc, ok, _ := record.Documents.Lookup(ctx, st, it); ok {
						from, v = it, record.DocVersion(doc)
						break
					}
				}
				if v != read {
					t.Errorf("the source is read from %s at v%d, want v%d", from, v, read)
				}

				// Again, in either order: nothing asked.
				ax.Reset()
				target()
				sources()
				if n := len(ax.Calls()); n != 0 {
					t.Errorf("again: arXiv asked %v", paths(ax.Calls()))
				}
			})
		}
	}
}
