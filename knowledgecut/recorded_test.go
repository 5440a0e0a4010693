package knowledgecut_test

// The knowledge cut on recorded real pages (../shared/fixtures/arxiv-html,
// read at test time, skipped without), served by the simulated arXiv and
// ar5iv: a target read at html/IDv1 from its real v1 page while a later
// version is served, a target whose v1 has no HTML read as ar5iv serves
// it, sources pinned to the version of the target's cutoff, a pinned
// version without a page, and a source first published after the cutoff.

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"github.com/groundwork/curate/internal/testutil"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
	"github.com/groundwork/curate/store"
)

// revisionMark is the sentence a later version built from a recorded v1
// page adds to its abstract: text the reader at v1 must not see.
const revisionMark = "In a revision made after the first version, the authors discuss concurrent work."

// revised returns the recorded v1 page of id (a versionless arXiv ID) as
// its version v would be served: every "IDv1" of the page (its base
// href, its links) made "IDvN", and revisionMark opening the abstract.
func revised(t *testing.T, v1 []byte, id string, v int) []byte {
	t.Helper()
	page := bytes.ReplaceAll(v1, []byte(id+"v1"), []byte(fmt.Sprintf("%sv%d", id, v)))
	abs := bytes.Index(page, []byte(`class="ltx_abstract"`))
	p := bytes.Index(page[max(abs, 0):], []byte(`<p class="ltx_p"`))
	if abs < 0 || p < 0 {
		t.Fatalf("%s: no abstract paragraph to revise", id)
	}
	at := abs + p + bytes.IndexByte(page[abs+p:], '>') + 1
	return slices.Concat(page[:at], []byte(revisionMark+" "), page[at:])
}

func dayOf(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return d.Add(17 * time.Hour)
}

func hist(t *testing.T, id string, dates ...string) record.PaperVersions {
	t.Helper()
	v := record.PaperVersions{ID: id}
	for i, d := range dates {
		v.Versions = append(v.Versions, record.PaperVersion{Version: i + 1, Date: dayOf(t, d)})
	}
	return v
}

func paths(calls []sim.Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Path)
	}
	return out
}

// TestRecordedKnowledgeCut: target 2510.14970, whose v2 arXiv serves now,
// is read from its real v1 page (html/2510.14970v1, one request; the
// text has no word of v2); 1706.03762, whose v1 arXiv has no HTML for,
// is read from ar5iv's page, the missing v1 remembered apart from the
// paper. Of 2510.14970's sources, 2507.11127 (revised after the cutoff)
// is read from its real v1 page under its version item, not the version
// served now; 2509.15338, whose pinned v1 arXiv no longer serves, falls
// back to the version served now and is marked (flag) or dropped
// (strict); 2507.11538 (the recorded page cut short, never revised) is
// read as served; 2512.00001, first published after the cutoff, is never
// asked for. A second pass asks nothing.
func TestRecordedKnowledgeCut(t *testing.T) {
	c := sim.NewCorpus()
	ax, a5 := simtest.Serve(t, sim.Arxiv, c), simtest.Serve(t, sim.Ar5iv, c)
	page := func(site, id, file string) []byte {
		t.Helper()
		b := simtest.ArxivFixture(t, file)
		if err := c.AddPage(site, id, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	add := func(id string, b []byte) {
		t.Helper()
		if err := c.AddPage(sim.HTMLArxiv, id, b); err != nil {
			t.Fatal(err)
		}
	}
	const target, noV1 = "2510.14970", "1706.03762"
	const pinned, gone, plain, late = "2507.11127", "2509.15338", "2507.11538", "2512.00001"
	add(target+"v2", revised(t, page(sim.HTMLArxiv, target+"v1", "arxiv-2510.14970v1.html"), target, 2))
	add(pinned+"v3", revised(t, page(sim.HTMLArxiv, pinned+"v1", "arxiv-2507.11127v1.html"), pinned, 3))
	// arXiv serves 2509.15338's v2 alone: its v1 page is gone.
	add(gone+"v2", revised(t, simtest.ArxivFixture(t, "arxiv-2509.15338v1.html"), gone, 2))
	page(sim.HTMLArxiv, plain+"v1", "arxiv-2507.11538v1.html")
	page(sim.HTMLAr5iv, noV1, "ar5iv-1706.03762.html")

	histories := map[string]record.PaperVersions{
		target: hist(t, target, "2025-10-16", "2026-01-20"),
		noV1:   hist(t, noV1, "2017-06-12", "2017-12-06"),
		pinned: hist(t, pinned, "2025-07-15", "2025-11-03", "2026-02-01"),
		gone:   hist(t, gone, "2025-09-18", "2025-12-01"),
		plain:  hist(t, plain, "2025-07-15"),
		late:   hist(t, late, "2025-12-02"),
	}

	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	hc, err := httpx.New(httpx.Config{UserAgent: httpx.UserAgent("test", "team@example.org"), RetryMax: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond},
		httpx.ServiceConfig{Name: fetch.ServiceArxiv, BaseURL: ax.URL, Interval: time.Millisecond, MaxInFlight: 1},
		httpx.ServiceConfig{Name: fetch.ServiceAr5iv, BaseURL: a5.URL, Interval: time.Millisecond, MaxInFlight: 1})
	if err != nil {
		t.Fatal(err)
	}
	axs, _ := hc.Service(fetch.ServiceArxiv)
	a5s, _ := hc.Service(fetch.ServiceAr5iv)
	f := &fetch.Fetcher{Arxiv: axs, Ar5iv: a5s, Store: st}

	// The targets, each at v1 where arXiv has its page.
	stage := &fetch.Stage{Fetcher: f, AtV1: true}
	for _, tc := range []struct {
		id      string
		calls   []string
		ar5iv   int
		version int
		title   string
	}{
		{target, []string{"/html/" + target + "v1"}, 0, 1, "Biology-informed neural networks learn nonlinear representations from omics data to improve genomic prediction and interpretability"},
		{noV1, []string{"/html/" + noV1 + "v1", "/html/" + noV1}, 1, 0, "Attention Is All You Need"},
	} {
		ax.Reset()
		a5.Reset()
		if out, err := stage.Do(ctx, tc.id); err != nil || out != pipeline.Done {
			t.Fatalf("%s: %s %v", tc.id, out, err)
		}
		if got := paths(ax.Calls()); !slices.Equal(got, tc.calls) || len(a5.Calls()) != tc.ar5iv {
			t.Errorf("%s: arXiv asked %v, ar5iv %d times; want %v and %d", tc.id, got, len(a5.Calls()), tc.calls, tc.ar5iv)
		}
		doc, v, ok := f.Stored(ctx, tc.id)
		if !ok || v != tc.version || doc.Title == nil || *doc.Title != tc.title || strings.Contains(doc.Abstract+doc.FullText, revisionMark) {
			t.Errorf("%s: stored version %d (%v), title %v, revised text %v", tc.id, v, ok, doc.Title, ok && strings.Contains(doc.Abstract+doc.FullText, revisionMark))
		}
		// What the instance records of its target: v1, or the version
		// served now when v1 had no page, and that it was revised.
		pin, err := knowledgecut.PinTarget(histories[tc.id])
		if err != nil || pin.Version != 1 || pin.Latest != 2 || !pin.Later {
			t.Fatalf("%s: target pin %+v %v", tc.id, pin, err)
		}
	}
	if _, ok, _ := record.NoHTMLs.Lookup(ctx, st, record.VersionItem(noV1, 1)); !ok {
		t.Error("1706.03762's v1 without HTML is not remembered")
	}
	if _, ok, _ := record.NoHTMLs.Lookup(ctx, st, noV1); ok {
		t.Error("1706.03762 is remembered as having no HTML at all")
	}

	// The sources, pinned at the target's cutoff by the rule.
	cutoff, err := knowledgecut.Cutoff(histories[target])
	if err != nil {
		t.Fatal(err)
	}
	g := record.Graph{TargetID: target}
	sel := record.Selections{TargetID: target}
	cut := record.KnowledgeCut{Target: target, Cutoff: cutoff}
	pins := map[string]record.Pin{}
	for i, id := range []string{pinned, gone, plain, late} {
		pin, err := knowledgecut.PinAt(histories[id], cutoff)
		if err != nil {
			t.Fatal(err)
		}
		pins[id] = pin
		k, arxivID := fmt.Sprintf("bib.bib%d", i+1), id
		g.Edges = append(g.Edges, record.Edge{TargetID: target, RefKey: &k, ArxivID: &arxivID})
		sel.Selections = append(sel.Selections, record.Selection{TargetID: target, RefKey: k, Role: record.RoleSource})
		cut.Sources = append(cut.Sources, record.SourcePin{RefKey: k, PaperPin: record.PaperPin{ArxivID: id, Pin: &pin, Versions: histories[id].Versions}})
	}
	for id, want := range map[string]record.Pin{
		pinned: {Version: 1, Latest: 3, Later: true}, gone: {Version: 1, Latest: 2, Later: true},
		plain: {Version: 1, Latest: 1}, late: {Latest: 1, Later: true, FirstAfter: true},
	} {
		if p := pins[id]; p.Version != want.Version || p.Latest != want.Latest || p.Later != want.Later || p.FirstAfter != want.FirstAfter {
			t.Errorf("%s pinned %+v, want %+v", id, p, want)
		}
	}
	for _, put := range []func() error{
		func() error { _, err := record.Graphs.Put(ctx, st, target, &g, nil); return err },
		func() error { _, err := record.SelectionSets.Put(ctx, st, target, &sel, nil); return err },
		func() error { _, err := record.KnowledgeCuts.Put(ctx, st, target, &cut, nil); return err },
	} {
		if err := put(); err != nil {
			t.Fatal(err)
		}
	}
	ax.Reset()
	a5.Reset()
	sources := &fetch.Sources{Fetcher: f, Store: st, Mode: knowledgecut.Flag}
	if out, err := sources.Do(ctx, target); err != nil || out != pipeline.Done {
		t.Fatalf("sources: %s %v", out, err)
	}
	wantCalls := []string{"/html/" + pinned + "v1", "/html/" + gone + "v1", "/html/" + gone, "/html/" + plain}
	if got := paths(ax.Calls()); !slices.Equal(got, wantCalls) || len(a5.Calls()) != 0 {
		t.Errorf("arXiv asked %v (ar5iv %v), want %v", got, paths(a5.Calls()), wantCalls)
	}

	// What each source was read at, as the instance records it, under
	// flag and strict.
	for _, tc := range []struct {
		id       string
		version  int
		revised  bool
		strictOK bool
	}{
		{pinned, 1, false, true},
		{gone, 2, true, false},
		{plain, 1, false, true},
	} {
		pin := pins[tc.id]
		var doc *record.Document
		for _, item := range knowledgecut.ReadItems(knowledgecut.Flag, tc.id, &pin) {
			if d, ok, _ := record.Documents.Lookup(ctx, st, item); ok {
				doc = d
				break
			}
		}
		if doc == nil {
			t.Errorf("%s: no page stored where the dataset reads it", tc.id)
			continue
		}
		// A page that does not say its version is the one served now.
		used := cmp.Or(record.DocVersion(doc), pin.Latest)
		read, err := knowledgecut.ReadAt(histories[tc.id], used, cutoff)
		if err != nil || read.Version != tc.version || read.RevisedAfterCutoff != tc.revised || read.VersionDate.After(cutoff) == tc.strictOK {
			t.Errorf("%s: read %+v %v, want v%d revised %v", tc.id, read, err, tc.version, tc.revised)
		}
		if strings.Contains(doc.Abstract, revisionMark) != tc.revised {
			t.Errorf("%s: the text read has the later version's sentence: %v, want %v", tc.id, !tc.revised, tc.revised)
		}
		if d := knowledgecut.Decide(knowledgecut.Flag, pin, read); !d.Keep || d.Read.RevisedAfterCutoff != tc.revised {
			t.Errorf("%s: flag decides %+v", tc.id, d)
		}
		if d := knowledgecut.Decide(knowledgecut.Strict, pin, read); d.Keep != tc.strictOK || !tc.strictOK && d.Dropped != knowledgecut.DroppedAfterCutoff {
			t.Errorf("%s: strict decides %+v", tc.id, d)
		}
		if err := knowledgecut.Check(knowledgecut.Strict, cutoff, read.VersionDate); (err == nil) != tc.strictOK {
			t.Errorf("%s: strict check %v", tc.id, err)
		}
	}
	if testutil.Has(t)(record.Documents.Has(ctx, st, pinned)) || testutil.Has(t)(record.Documents.Has(ctx, st, late)) {
		t.Error("the version served now of the pinned source, or the late source, was fetched")
	}
	if d := knowledgecut.Decide(knowledgecut.Flag, pins[late], knowledgecut.Read{}); d.Keep || d.Dropped != knowledgecut.DroppedFirstAfter {
		t.Errorf("the late source: %+v", d)
	}

	ax.Reset()
	a5.Reset()
	if out, err := sources.Do(ctx, target); err != nil || out != pipeline.Reused || len(ax.Calls())+len(a5.Calls()) != 0 {
		t.Errorf("again: %s %v, asked %v %v", out, err, paths(ax.Calls()), paths(a5.Calls()))
	}
}
