package app

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/record"
)

// cutWorld writes what a store holds of papers, for the estimate of the
// knowledge cut: histories, pages and what was found without HTML.
type cutWorld struct {
	t   *testing.T
	ctx context.Context
	a   *App
}

func day(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d.Add(12 * time.Hour)
}

// history stores a paper's history: the dates of v1, v2, ...
func (w cutWorld) history(key string, dates ...string) {
	v := record.PaperVersions{ID: key, From: record.VersionsFromGetRecord, AsOf: time.Now().UTC()}
	for i, d := range dates {
		v.Versions = append(v.Versions, record.PaperVersion{Version: i + 1, Date: day(d)})
	}
	if _, err := record.PaperVersionSets.Put(w.ctx, w.a.Store, key, &v, nil); err != nil {
		w.t.Fatal(err)
	}
}

// page stores the Document of version v (0: a page that does not say)
// under item, as served by source.
func (w cutWorld) page(item string, v int, source string) {
	id := strings.TrimSuffix(item, "v"+strconv.Itoa(record.ItemVersion(item)))
	if record.ItemVersion(item) == 0 && v > 0 {
		id += "v" + strconv.Itoa(v)
	} else if v > 0 {
		id = item
	}
	meta := map[string]string{"source": source}
	if v > 0 {
		meta["version"] = strconv.Itoa(v)
	}
	if _, err := record.RawPages.Put(w.ctx, w.a.Store, item, []byte("<html></html>"), meta); err != nil {
		w.t.Fatal(err)
	}
	if _, err := record.Documents.Put(w.ctx, w.a.Store, item, &record.Document{ID: id}, meta); err != nil {
		w.t.Fatal(err)
	}
}

// noHTML records item as found without HTML now.
func (w cutWorld) noHTML(item string) {
	m := record.NoHTML{CheckedAt: time.Now().UTC().Format(time.RFC3339), Reason: "test"}
	if _, err := record.NoHTMLs.Put(w.ctx, w.a.Store, item, &m, nil); err != nil {
		w.t.Fatal(err)
	}
}

// target stores a classified target citing sources (arXiv IDs), with
// sources not on arXiv up to record.MinSources.
func (w cutWorld) target(key string, sources ...string) {
	g := record.Graph{TargetID: key}
	sel := record.Selections{TargetID: key}
	for i := range max(len(sources), record.MinSources) {
		ref := fmt.Sprintf("b%d", i)
		e := record.Edge{TargetID: key, RefKey: &ref}
		if i < len(sources) {
			e.ArxivID = &sources[i]
		}
		g.Edges = append(g.Edges, e)
		sel.Selections = append(sel.Selections, record.Selection{TargetID: key, RefKey: ref, Role: record.RoleSource})
	}
	if _, err := record.Graphs.Put(w.ctx, w.a.Store, key, &g, nil); err != nil {
		w.t.Fatal(err)
	}
	if _, err := record.SelectionSets.Put(w.ctx, w.a.Store, key, &sel, nil); err != nil {
		w.t.Fatal(err)
	}
}

// cutApp is an App whose knowledge cut takes its histories from the
// store and OAI-PMH (never asked: the estimate asks nothing).
func cutApp(t *testing.T, grobid bool) *App {
	t.Helper()
	cfg := Config{
		Version: "test", Store: t.TempDir(), Lock: true,
		Net: Net{ArxivBase: "http://127.0.0.1:9", Ar5ivBase: "http://127.0.0.1:9", ArxivInterval: time.Millisecond, Timeout: time.Second,
			MaxBody: 1 << 20, MissingTTL: time.Hour},
		S2:        S2{Base: "http://127.0.0.1:9", ArxivAPIBase: "http://127.0.0.1:9", Interval: time.Millisecond, PageLimit: 500},
		OAIBase:   "http://127.0.0.1:9/oai",
		Knowledge: Knowledge{Mode: knowledgecut.Flag, OAI: true},
		LLM:       LLM{Heuristic: true},
	}
	if grobid {
		cfg.PDF.GrobidBase = "http://127.0.0.1:9"
	}
	a, err := Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// cutCounts runs the estimate's count of the cut's reads over keys.
func cutCounts(t *testing.T, a *App, keys []string) *cutModel {
	t.Helper()
	e := &estimator{a: a, keys: keys, run: map[string]bool{}}
	for _, k := range keys {
		e.run[k] = true
	}
	if err := e.scan(t.Context()); err != nil {
		t.Fatal(err)
	}
	m := e.newCutModel()
	// As the stages' requests are counted: the targets' pages, the
	// sources', the pdfs stage's conversions.
	if _, err := m.pages(t.Context(), "fetch", pipeline.Request{Service: fetch.ServiceArxiv}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.pages(t.Context(), "sources", pipeline.Request{Service: fetch.ServiceArxiv, Count: pipeline.PerSource}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.pinnedPDFs(t.Context(), "pdfs"); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEstimateKnowledgeCut: with the histories known (stored), the
// estimate counts the reads of the knowledge cut by what the store holds:
// a target at v1 unless its v1 is stored or known to have no HTML; a
// source at its pinned version, apart from the version stored when that
// is another, once per version however many targets pin it, none for a
// source first published after the cutoff; the version served now when
// the pinned one has no HTML; with --grobid, the PDF of a version without
// HTML (arXiv's, converted by GROBID). What only a request can tell
// (whether arXiv has HTML for an older version) is taken at the rate the
// store's lookups of older versions show.
func TestEstimateKnowledgeCut(t *testing.T) {
	const (
		tgt, tgt2 = "2406.00001", "2501.00002"
		src       = "2301.00010" // v1 2023-01, v2 2024-01, v3 2024-09: pinned at v2 by tgt
	)
	srcHistory := []string{"2023-01-10", "2024-01-10", "2024-09-10"}
	for _, tc := range []struct {
		name                 string
		grobid               bool
		keys                 []string
		setup                func(w cutWorld)
		fetch, sources, pdfs pageCount
		wantNote             string
	}{
		{name: "target at v1 stored", keys: []string{tgt},
			setup: func(w cutWorld) {
				w.history(tgt, "2024-06-01", "2024-07-01")
				w.target(tgt)
				w.page(tgt, 1, record.SourceArxiv)
			}},
		{name: "revised target, the version served now stored", keys: []string{tgt},
			setup: func(w cutWorld) {
				w.history(tgt, "2024-06-01", "2024-07-01")
				w.target(tgt)
				w.page(tgt, 2, record.SourceArxiv)
			},
			fetch: pageCount{arxiv: 1}, wantNote: "1 targets read at v1 and 0 sources at their pinned version (no source's pin known): over reading each paper as served now, +1 arXiv (+1.00 per target)"},
		{name: "revised target whose v1 is known to have no HTML", keys: []string{tgt},
			setup: func(w cutWorld) {
				w.history(tgt, "2024-06-01", "2024-07-01")
				w.target(tgt)
				w.page(tgt, 2, record.SourceArxiv)
				w.noHTML(record.VersionItem(tgt, 1))
			},
			wantNote: "nothing more is asked"},
		{name: "target arXiv has no HTML for, ar5iv's page stored", keys: []string{tgt},
			// html/IDv1 is asked (and has none); the page stored stands.
			setup: func(w cutWorld) { w.history(tgt, "2024-06-01"); w.target(tgt); w.page(tgt, 0, record.SourceAr5iv) },
			fetch: pageCount{arxiv: 1}},
		{name: "target, nothing stored", keys: []string{tgt},
			setup: func(w cutWorld) { w.history(tgt, "2024-06-01", "2024-07-01"); w.target(tgt) },
			fetch: pageCount{arxiv: 1}},
		{name: "source pinned before the version served now, which is stored", keys: []string{tgt},
			setup: func(w cutWorld) {
				w.history(tgt, "2024-06-01")
				w.page(tgt, 1, record.SourceArxiv)
				w.target(tgt, src)
				w.history(src, srcHistory...)
				w.page(src, 3, record.SourceArxiv)
			},
			sources: pageCount{arxiv: 1}, wantNote: "1 sources at their pinned version (the pins of 1 sources known"},
		{name: "source pinned at the version served now, stored", keys: []string{tgt},
			setup: func(w cutWorld) {
				w.history(tgt, "2024-06-01")
				w.page(tgt, 1, record.SourceArxiv)
				w.target(tgt, src)
				w.history(src, "2023-01-10")
				w.page(src, 1, record.SourceArxiv)
			}},
		{name: "source first published after the cutoff", keys: []string{tgt},
			setup: func(w cutWorld) {
				w.history(tgt, "2024-06-01")
				w.page(tgt, 1, record.SourceArxiv)
				w.target(tgt, src)
				w.history(src, "2024-09-10")
			}},
		{name: "two targets pin a source at two versions", keys: []string{tgt, tgt2},
			setup: func(w cutWorld) {
				w.history(tgt, "2024-06-01")
				w.history(tgt2, "2025-01-10")
				w.page(tgt, 1, record.SourceArxiv)
				w.page(tgt2, 1, record.SourceArxiv)
				w.target(tgt, src)
				w.target(tgt2, src)
				w.history(src, append(srcHistory, "2025-06-01")...)
			},
			sources: pageCount{arxiv: 2}},
		{name: "a pinned version known to have no HTML: the version served now", keys: []string{tgt},
			setup: func(w cutWorld) {
				w.history(tgt, "2024-06-01")
				w.page(tgt, 1, record.SourceArxiv)
				w.target(tgt, src)
				w.history(src, srcHistory...)
				w.noHTML(record.VersionItem(src, 2))
			},
			sources: pageCount{arxiv: 1}},
		{name: "a source that is a target, read at v1 first", keys: []string{tgt, tgt2},
			// tgt2 pins tgt at its v2, which its own fetch at v1 keeps
			// apart (the v2 stored now is replaced by v1): asked once.
			setup: func(w cutWorld) {
				w.history(tgt, "2024-06-01", "2024-07-01")
				w.history(tgt2, "2025-01-10")
				w.page(tgt, 2, record.SourceArxiv)
				w.page(tgt2, 1, record.SourceArxiv)
				w.target(tgt2, tgt)
				w.history("2201.00020", "2022-01-10", "2022-06-10")
				w.page("2201.00020", 2, record.SourceArxiv)
				w.page(record.VersionItem("2201.00020", 1), 1, record.SourceArxiv) // an older version looked up: has HTML
			},
			fetch: pageCount{arxiv: 1}},
		{name: "a target whose v1 a source's pin read apart", keys: []string{tgt, tgt2},
			// tgt2 pins tgt at its v1, read apart (the key holds v2):
			// tgt's fetch at v1 copies it, the pin's item holds it.
			setup: func(w cutWorld) {
				w.history(tgt, "2024-06-01", "2025-07-01")
				w.history(tgt2, "2025-01-10")
				w.page(tgt, 2, record.SourceArxiv)
				w.page(tgt2, 1, record.SourceArxiv)
				w.target(tgt2, tgt)
				w.page(record.VersionItem(tgt, 1), 1, record.SourceArxiv)
			}},
		{name: "older versions lacking HTML at the store's rate", keys: []string{tgt},
			setup: func(w cutWorld) {
				w.history(tgt, "2024-06-01")
				w.page(tgt, 1, record.SourceArxiv)
				w.target(tgt, src)
				w.history(src, srcHistory...)
				// Two older versions looked up: one had HTML, one not.
				for i, p := range []string{"2201.00020", "2202.00021"} {
					w.history(p, "2022-01-10", "2022-06-10")
					w.page(p, 2, record.SourceArxiv)
					if i == 0 {
						w.page(record.VersionItem(p, 1), 1, record.SourceArxiv)
					} else {
						w.noHTML(record.VersionItem(p, 1))
					}
				}
			},
			// html/IDv2, and half the time the version served now.
			sources: pageCount{arxiv: 1.5}, wantNote: "arXiv has no HTML for 1 of the 2 older versions"},
		{name: "grobid: the PDF of a v1 without HTML", grobid: true, keys: []string{tgt},
			setup: func(w cutWorld) {
				w.history(tgt, "2024-06-01", "2024-07-01")
				w.target(tgt)
				w.page(tgt, 2, record.SourceArxiv)
				w.noHTML(record.VersionItem(tgt, 1))
			},
			fetch: pageCount{arxiv: 1, grobid: 1}},
		{name: "grobid: the PDF of a pinned version without HTML", grobid: true, keys: []string{tgt},
			setup: func(w cutWorld) {
				w.history(tgt, "2024-06-01")
				w.page(tgt, 1, record.SourceArxiv)
				w.target(tgt, src)
				w.history(src, srcHistory...)
				w.page(src, 3, record.SourceArxiv)
				w.noHTML(record.VersionItem(src, 2))
			},
			pdfs: pageCount{arxiv: 1, grobid: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := cutApp(t, tc.grobid)
			tc.setup(cutWorld{t: t, ctx: t.Context(), a: a})
			m := cutCounts(t, a, tc.keys)
			for _, c := range []struct {
				stage     string
				got, want pageCount
			}{{"fetch", m.fetch, tc.fetch}, {"sources", m.sources, tc.sources}, {"pdfs", m.pdfs, tc.pdfs}} {
				if math.Abs(c.got.arxiv-c.want.arxiv)+math.Abs(c.got.ar5iv-c.want.ar5iv)+math.Abs(c.got.grobid-c.want.grobid) > 1e-9 {
					t.Errorf("%s: %+v, want %+v", c.stage, c.got, c.want)
				}
			}
			if tc.wantNote == "" {
				return
			}
			est, err := a.Estimate(t.Context(), tc.keys, EstimateOptions{Stages: []string{"fetch", "sources", "pdfs"}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(est.Notes, func(n string) bool { return strings.Contains(n, tc.wantNote) }) {
				t.Errorf("no note says %q:\n%s", tc.wantNote, strings.Join(est.Notes, "\n"))
			}
		})
	}
}
