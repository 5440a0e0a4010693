package citegraph

// Tests of the Runner against the simulated Semantic Scholar and arXiv API
// (package sim, over a corpus each test fills) and a temporary store
// holding Documents parsed from the recorded pages of
// ../shared/fixtures/arxiv-html.

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/testutil"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
	"github.com/groundwork/curate/store"
)

// testKey is the S2 API key of the tests: it must never reach the store,
// the logs or an error.
const testKey = "s2k-TEST-9f8e7d6c5b4a3928-secret"

// entryXML is an arXiv API entry for a paper: its latest version, the v1
// date (published), the latest version's date (updated) and its
// categories, primary first.
func entryXML(id string, version int, published, updated string, cats ...string) string {
	var c strings.Builder
	for _, cat := range cats {
		fmt.Fprintf(&c, "\n    <category term=%q scheme=\"http://arxiv.org/schemas/atom\"/>", cat)
	}
	return fmt.Sprintf(`<entry>
    <id>http://arxiv.org/abs/%[1]sv%[2]d</id>
    <updated>%[4]s</updated>
    <published>%[3]s</published>
    <title>Paper %[1]s as arXiv
  titles it</title>
    <summary>  The abstract of %[1]s.
</summary>
    <author><name>A. Author</name></author>
    <link href="http://arxiv.org/abs/%[1]sv%[2]d" rel="alternate" type="text/html"/>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term=%[5]q scheme="http://arxiv.org/schemas/atom"/>%[6]s
  </entry>`, id, version, published, updated, cats[0], c.String())
}

// parsed caches the Documents of fixture pages across tests.
var parsed sync.Map // file -> []byte (the Document as JSON)

// fixtureDocument returns the Document parsed from a recorded page, as
// the fetch stage would store it for key.
func fixtureDocument(t *testing.T, file, key string) *record.Document {
	t.Helper()
	b, ok := parsed.Load(file)
	if !ok {
		page, err := os.ReadFile(filepath.Join(fixtures.Dir(t, "arxiv-html"), file))
		if err != nil {
			t.Fatal(err)
		}
		id, err := arxiv.Parse(key)
		if err != nil {
			t.Fatal(err)
		}
		source := "arxiv"
		if strings.HasPrefix(file, "ar5iv-") {
			source = "ar5iv"
		}
		doc, err := fetch.Parse(page, id, source, "")
		if err != nil {
			t.Fatalf("parse %s: %v", file, err)
		}
		if b, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
		parsed.Store(file, b)
	}
	var doc record.Document
	if err := json.Unmarshal(b.([]byte), &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

// stageEnv is a store, the simulated services over one corpus and what
// the Runners log.
type stageEnv struct {
	t      *testing.T
	ctx    context.Context
	store  *store.Store
	corpus *sim.Corpus
	s2     *simtest.Server
	api    *simtest.Server
	logs   *testutil.SyncBuffer
}

func newStageEnv(t *testing.T) *stageEnv {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := sim.NewCorpus()
	e := &stageEnv{t: t, ctx: ctx, store: st, corpus: c, logs: &testutil.SyncBuffer{},
		s2: simtest.ServeOptions(t, sim.S2, c, sim.Options{S2Key: testKey}), api: simtest.Serve(t, sim.ArxivAPI, c)}
	return e
}

// batches returns the IDs the batch endpoint was asked for, split into
// targets' own records (ARXIV: IDs) and fills of what edges lack.
func (e *stageEnv) batches() (targets, fills []string) {
	for _, r := range e.s2.CallsTo(sim.S2BatchPath) {
		for _, id := range r.IDs {
			if strings.HasPrefix(id, "ARXIV:") {
				targets = append(targets, id)
			} else {
				fills = append(fills, id)
			}
		}
	}
	return targets, fills
}

// addEntry catalogs a paper in the arXiv API (see entryXML).
func (e *stageEnv) addEntry(id string, version int, published, updated string, cats ...string) {
	e.t.Helper()
	if err := e.corpus.AddEntry(entryXML(id, version, published, updated, cats...)); err != nil {
		e.t.Fatal(err)
	}
}

// apiQueries returns the id_list of each request to the arXiv API.
func (e *stageEnv) apiQueries() []string {
	var out []string
	for _, c := range e.api.Calls() {
		out = append(out, c.Query().Get("id_list"))
	}
	return out
}

// addPaper registers an S2 paper record.
func (e *stageEnv) addPaper(p any) {
	e.t.Helper()
	if _, err := e.corpus.AddS2Paper(p); err != nil {
		e.t.Fatal(err)
	}
}

// putDoc stores the Document of a fixture page as the fetch stage does,
// under key.
func (e *stageEnv) putDoc(key, file string) *record.Document {
	e.t.Helper()
	doc := fixtureDocument(e.t, file, key)
	if _, err := record.Documents.Put(e.ctx, e.store, key, doc, map[string]string{"source": doc.Source}); err != nil {
		e.t.Fatal(err)
	}
	if len(doc.References) == 0 {
		e.t.Fatalf("%s has no bibliography", file)
	}
	return doc
}

// runner returns a Runner on a fresh httpx client with tiny waits, S2
// pages of 500 and the given S2 key.
func (e *stageEnv) runner(key string, refresh bool) *Runner {
	e.t.Helper()
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	hc, err := httpx.New(httpx.Config{
		UserAgent:    httpx.UserAgent("test", "test@example.org"),
		RetryMax:     4,
		RetryWaitMin: time.Millisecond,
		RetryWaitMax: 10 * time.Millisecond,
		Logger:       log,
	}, s2.ServiceConfig(e.s2.URL, key, 2*time.Millisecond), arxivapi.ServiceConfig(e.api.URL, 2*time.Millisecond))
	if err != nil {
		e.t.Fatal(err)
	}
	s2svc, err := hc.Service(s2.ServiceName)
	if err != nil {
		e.t.Fatal(err)
	}
	apisvc, err := hc.Service(arxivapi.ServiceName)
	if err != nil {
		e.t.Fatal(err)
	}
	sc, err := s2.New(s2svc, s2.Options{PageLimit: 500, Logger: log})
	if err != nil {
		e.t.Fatal(err)
	}
	ac, err := arxivapi.New(apisvc, arxivapi.Options{Logger: log})
	if err != nil {
		e.t.Fatal(err)
	}
	return &Runner{Store: e.store, S2: sc, ArxivAPI: ac, Log: log, Refresh: refresh}
}

// run runs the stage for inputs with three workers.
func (e *stageEnv) run(r *Runner, inputs ...string) []Result {
	e.t.Helper()
	return r.All(e.ctx, inputs, 3, nil)
}

// graph returns the stored Graph of key and its blob.
func (e *stageEnv) graph(key string) (*record.Graph, store.Hash) {
	e.t.Helper()
	g, rec, err := record.Graphs.Get(e.ctx, e.store, key)
	if err != nil {
		e.t.Fatalf("stored graph of %s: %v", key, err)
	}
	return g, rec.Blob
}

// ledger returns the citegraph ledger entry of key.
func (e *stageEnv) ledger(key string) store.Entry {
	e.t.Helper()
	en, err := e.store.Status(e.ctx, key, Name)
	if err != nil {
		e.t.Fatalf("ledger of %s: %v", key, err)
	}
	return en
}

// requestsByOffset counts the reference requests of paper id by offset.
func (e *stageEnv) requestsByOffset(id string) map[int]int {
	n := map[int]int{}
	for _, r := range e.s2.CallsTo(sim.S2ReferencesPath(id)) {
		offset, _ := simtest.OffsetLimit(r)
		n[offset]++
	}
	return n
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStageLargeList: a target with 1,234 references is fetched in pages
// of 500, each page once; a second run makes no request and stores the
// same Graph; a changed bibliography is re-linked without a request.
func TestStageLargeList(t *testing.T) {
	t.Parallel()
	e := newStageEnv(t)
	const key = "1706.03762"
	const id = "ARXIV:" + key
	doc := e.putDoc(key, "ar5iv-1706.03762.html")
	e.addPaper(map[string]any{
		"paperId": strings.Repeat("20", 20), "corpusId": 13756489, "title": "Attention is All you Need",
		"externalIds": map[string]any{"ArXiv": key, "DBLP": "conf/nips/VaswaniSPUJGKP17", "MAG": "2963403868", "CorpusId": 13756489},
		"venue":       "Neural Information Processing Systems", "year": 2017, "citationCount": 150000, "referenceCount": 1234,
	})
	synth := simtest.Synth{Unresolved: 25, NullAbstract: 3}
	edges := simtest.AddSyntheticReferences(t, e.corpus, id, 1234, synth)
	e.addEntry(key, 7, "2017-06-12T17:57:34Z", "2023-08-02T00:41:18Z", "cs.CL", "cs.LG")

	res := e.run(e.runner(testKey, false), key)[0]
	if res.Err != nil || res.Graph == nil || !res.Requests {
		t.Fatalf("result %+v", res)
	}
	for off, n := range e.requestsByOffset(id) {
		if n != 1 {
			t.Errorf("page at offset %d fetched %d times", off, n)
		}
	}
	if got := e.requestsByOffset(id); len(got) != 3 || got[0] != 1 || got[500] != 1 || got[1000] != 1 {
		t.Errorf("pages fetched by offset %v, want offsets 0, 500 and 1000 once each", got)
	}
	for _, r := range e.s2.Calls() {
		if r.Status != http.StatusOK || !r.Keyed {
			t.Errorf("%s %s answered %d (keyed %v)", r.Method, r.Path, r.Status, r.Keyed)
		}
		if r.Path == sim.S2BatchPath && len(r.IDs) > s2.MaxBatch {
			t.Errorf("batch of %d ids", len(r.IDs))
		}
	}

	// Which cited papers lack what the batch fills.
	type cited struct {
		PaperID         *string `json:"paperId"`
		Abstract        *string `json:"abstract"`
		PublicationDate *string `json:"publicationDate"`
	}
	var wantFill, nullAbstract []string
	resolved := map[string]bool{}
	for _, raw := range edges {
		var ed struct{ CitedPaper cited }
		if err := json.Unmarshal(raw, &ed); err != nil {
			t.Fatal(err)
		}
		p := ed.CitedPaper
		if p.PaperID == nil {
			continue
		}
		resolved[*p.PaperID] = true
		if p.Abstract == nil || p.PublicationDate == nil {
			wantFill = append(wantFill, *p.PaperID)
		}
		if p.Abstract == nil {
			nullAbstract = append(nullAbstract, *p.PaperID)
		}
	}
	targets, asked := e.batches()
	if !slices.Equal(targets, []string{id}) {
		t.Errorf("target records asked %v, want %s once", targets, id)
	}
	if n := len(e.s2.CallsTo(sim.S2PaperPath(id))); n != 0 {
		t.Errorf("target record asked %d times on its own, want it in a batch", n)
	}
	slices.Sort(asked)
	slices.Sort(wantFill)
	if !slices.Equal(asked, wantFill) {
		t.Errorf("batch asked for %d ids, want the %d lacking an abstract or date", len(asked), len(wantFill))
	}

	g := res.Graph
	if g.S2Status != record.S2OK || g.Report.S2Edges != 1234 || g.Report.Unresolved != 1234/25 {
		t.Errorf("status %q, %d S2 edges (%d unresolved); want ok, 1234 (49)", g.S2Status, g.Report.S2Edges, g.Report.Unresolved)
	}
	if g.Report.Bibliography != len(doc.References) || len(g.Edges) != g.Report.Bibliography+g.Report.S2Only {
		t.Errorf("%d edges for %d entries and %d S2-only edges", len(g.Edges), g.Report.Bibliography, g.Report.S2Only)
	}
	seen := map[string]int{}
	abstracts := map[string]string{}
	unresolvedKept := 0
	for _, ed := range g.Edges {
		if ed.S2PaperID != nil {
			seen[*ed.S2PaperID]++
			if ed.Abstract != nil {
				abstracts[*ed.S2PaperID] = *ed.Abstract
			}
		} else if ed.RefKey == nil {
			unresolvedKept++
			if ed.Title == nil || !strings.HasPrefix(*ed.Title, "J Doe ") {
				t.Errorf("unresolved edge without its raw title: %+v", ed)
			}
		}
	}
	if len(seen) != len(resolved) {
		t.Errorf("%d cited papers in the graph, want %d", len(seen), len(resolved))
	}
	for p, n := range seen {
		if n != 1 || !resolved[p] {
			t.Errorf("paper %s: %d edges (known %v)", p, n, resolved[p])
		}
	}
	if unresolvedKept != 1234/25 {
		t.Errorf("%d unresolved edges kept, want 49", unresolvedKept)
	}
	if len(nullAbstract) == 0 {
		t.Fatal("no edge lacks an abstract; the batch fill goes unchecked")
	}
	for _, p := range nullAbstract {
		if !strings.HasPrefix(abstracts[p], "We study problem ") {
			t.Errorf("edge %s: abstract %q, want the batch's", p, abstracts[p])
		}
	}
	m := g.Meta
	if m.Published != "2017-06-12" || m.Sources["published"] != "arxiv-api" || m.PrimaryCategory != "cs.CL" ||
		!slices.Equal(m.Categories, []string{"cs.CL", "cs.LG"}) || m.S2PaperID != strings.Repeat("20", 20) || m.Year != 2017 {
		t.Errorf("meta %+v", m)
	}
	stored, hash := e.graph(key)
	if !bytes.Equal(mustJSON(t, stored), mustJSON(t, g)) {
		t.Error("stored graph differs from the result")
	}
	if en := e.ledger(key); en.Status != store.StatusDone {
		t.Errorf("ledger %+v", en)
	}
	if n := len(e.apiQueries()); n != 1 {
		t.Errorf("%d arXiv API requests, want 1", n)
	}

	// Again: nothing is asked and the same Graph is stored.
	e.s2.Reset()
	e.api.Reset()
	again := e.run(e.runner(testKey, false), key)[0]
	if again.Err != nil || again.Requests {
		t.Fatalf("second run: %+v", again)
	}
	if n, m := len(e.s2.Calls()), len(e.apiQueries()); n != 0 || m != 0 {
		t.Errorf("second run made %d S2 and %d arXiv API requests, want none", n, m)
	}
	if !bytes.Equal(mustJSON(t, again.Graph), mustJSON(t, g)) {
		t.Error("second run built another graph")
	}
	if _, h := e.graph(key); h != hash {
		t.Errorf("second run stored blob %s, want %s", h, hash)
	}

	// A changed linker input (here the bibliography) is linked again from
	// the stored responses.
	doc.References = doc.References[10:]
	if _, err := record.Documents.Put(e.ctx, e.store, key, doc, nil); err != nil {
		t.Fatal(err)
	}
	relinked := e.run(e.runner(testKey, false), key)[0]
	if relinked.Err != nil || relinked.Requests || len(e.s2.Calls()) != 0 || len(e.apiQueries()) != 0 {
		t.Fatalf("re-link made requests: %+v, %d S2, %d arXiv API", relinked, len(e.s2.Calls()), len(e.apiQueries()))
	}
	if r := relinked.Graph.Report; r.Bibliography != len(doc.References) || r.S2Edges != 1234 {
		t.Errorf("re-linked report %+v", r)
	}
	if _, h := e.graph(key); h == hash {
		t.Error("the re-linked graph was not stored")
	}

	// Refresh asks again, each page once.
	e.run(e.runner(testKey, true), key)
	if got := e.requestsByOffset(id); len(got) != 3 || got[0] != 1 || got[500] != 1 || got[1000] != 1 {
		t.Errorf("refresh fetched pages %v", got)
	}
}

// TestStageDuplicateInputs: one paper named several ways is processed
// once, its pages fetched once.
func TestStageDuplicateInputs(t *testing.T) {
	t.Parallel()
	e := newStageEnv(t)
	const key = "1706.03762"
	e.putDoc(key, "ar5iv-1706.03762.html")
	simtest.AddSyntheticReferences(t, e.corpus, "ARXIV:"+key, 1100, simtest.Synth{})
	inputs := []string{key, "1706.03762v5", "arXiv:1706.03762", "not-an-id"}
	var mu sync.Mutex
	done := map[string]int{}
	res := e.runner(testKey, false).All(e.ctx, inputs, 3, func(r Result) {
		mu.Lock()
		defer mu.Unlock()
		done[r.Input]++
	})
	if got := e.requestsByOffset("ARXIV:" + key); len(got) != 3 || got[0] != 1 || got[500] != 1 || got[1000] != 1 {
		t.Errorf("pages fetched by offset %v, want each once", got)
	}
	if targets, _ := e.batches(); !slices.Equal(targets, []string{"ARXIV:" + key}) {
		t.Errorf("target records asked %v, want ARXIV:%s once", targets, key)
	}
	for i, r := range res[:3] {
		if r.Input != inputs[i] || r.Key != key || r.Err != nil || r.Graph == nil || r.Graph.Report.S2Edges != 1100 {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	if res[3].Err == nil {
		t.Errorf("invalid input: %+v", res[3])
	}
	for _, in := range inputs {
		if done[in] != 1 {
			t.Errorf("onDone called %d times for %q, want once", done[in], in)
		}
	}
}

// TestStageFallbacks: a withheld list, an unknown paper and unresolved
// references all end in an honest edge list, in one run.
func TestStageFallbacks(t *testing.T) {
	t.Parallel()
	e := newStageEnv(t)
	const (
		withheld   = "2509.15338"
		unknown    = "2510.14970"
		unresolved = "1301.3781"
		disclaimer = "Notice: The following paper fields have been elided by the publisher: {'references'}. Paper or abstract available at https://doi.org/10.0000/test"
	)
	docs := map[string]*record.Document{
		withheld:   e.putDoc(withheld, "arxiv-2509.15338v1.html"),
		unknown:    e.putDoc(unknown, "arxiv-2510.14970v1.html"),
		unresolved: e.putDoc(unresolved, "ar5iv-1301.3781.html"),
	}
	simtest.Withhold(e.corpus, "ARXIV:"+withheld, disclaimer)
	recorded := simtest.LoadRecordedReferences(t, e.corpus)
	e.corpus.AliasS2(simtest.RecordedReferencesID, "ARXIV:"+unresolved)
	var rawTitles []string // the titles S2 gives its unresolved references
	for _, raw := range recorded {
		var ed struct {
			CitedPaper struct {
				PaperID *string `json:"paperId"`
				Title   string  `json:"title"`
			} `json:"citedPaper"`
		}
		if err := json.Unmarshal(raw, &ed); err != nil {
			t.Fatal(err)
		}
		if ed.CitedPaper.PaperID == nil {
			rawTitles = append(rawTitles, ed.CitedPaper.Title)
		}
	}

	results := e.run(e.runner(testKey, false), withheld, unknown, unresolved)
	byKey := map[string]Result{}
	for _, r := range results {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Input, r.Err)
		}
		byKey[r.Key] = r
		if en := e.ledger(r.Key); en.Status != store.StatusDone {
			t.Errorf("%s: ledger %+v", r.Key, en)
		}
	}

	// Withheld: the bibliography, never zero references.
	g := byKey[withheld].Graph
	if g.S2Status != record.S2Withheld || g.Disclaimer != disclaimer {
		t.Errorf("withheld: status %q disclaimer %q", g.S2Status, g.Disclaimer)
	}
	if n := len(docs[withheld].References); len(g.Edges) != n || n == 0 || g.Report.Bibliography != n || g.Report.S2Edges != 0 {
		t.Errorf("withheld: %d edges for %d entries", len(g.Edges), n)
	}
	for _, ed := range g.Edges {
		if ed.RefKey == nil || ed.S2PaperID != nil || ed.Link != record.LinkNone {
			t.Errorf("withheld: edge %+v is not a bibliography entry", ed)
			break
		}
	}
	if got := e.requestsByOffset("ARXIV:" + withheld); len(got) != 1 || got[0] != 1 {
		t.Errorf("withheld: pages fetched %v, want offset 0 once", got)
	}
	if refs, rec, err := record.S2References.Get(e.ctx, e.store, withheld); err != nil || rec.Meta["status"] != record.S2Withheld || !refs.List.Elided {
		t.Errorf("withheld: stored references %+v, %v", refs, err)
	}

	// Unknown: recorded as not found, edges from the bibliography, and no
	// reference list asked for.
	g = byKey[unknown].Graph
	if g.S2Status != record.S2Missing || len(g.Edges) != len(docs[unknown].References) || g.Report.S2Edges != 0 {
		t.Errorf("unknown: status %q, %d edges for %d entries", g.S2Status, len(g.Edges), len(docs[unknown].References))
	}
	if targets, _ := e.batches(); !slices.Contains(targets, "ARXIV:"+unknown) || len(targets) != 3 {
		t.Errorf("unknown: target records asked %v, want all three in a batch", targets)
	}
	if s2p, ok, err := record.S2Papers.Lookup(e.ctx, e.store, unknown); err != nil || !ok || s2p.Found {
		t.Errorf("unknown: stored record %+v %v %v, want found false (the batch's null)", s2p, ok, err)
	}
	if n := len(e.s2.CallsTo(sim.S2ReferencesPath("ARXIV:" + unknown))); n != 0 {
		t.Errorf("unknown: %d reference requests", n)
	}

	// Unresolved references are edges too, under S2's raw titles.
	g = byKey[unresolved].Graph
	if g.S2Status != record.S2OK || g.Report.S2Edges != 156 || g.Report.Unresolved != 9 || len(rawTitles) != 9 {
		t.Errorf("unresolved: status %q, %d S2 edges, %d unresolved (%d recorded)", g.S2Status, g.Report.S2Edges, g.Report.Unresolved, len(rawTitles))
	}
	kept := 0
	for _, ed := range g.Edges {
		switch {
		case ed.S2PaperID != nil:
		case ed.RefKey == nil: // S2-only and unresolved
			kept++
			if ed.Title == nil || !slices.Contains(rawTitles, *ed.Title) {
				t.Errorf("unresolved edge %+v lost its title", ed)
			}
		case ed.Link != record.LinkNone: // unresolved, linked to an entry
			kept++
		}
	}
	if kept != 9 {
		t.Errorf("%d unresolved edges kept, want 9", kept)
	}
	if len(g.Edges) != g.Report.Bibliography+g.Report.S2Only {
		t.Errorf("%d edges, want %d entries + %d S2-only", len(g.Edges), g.Report.Bibliography, g.Report.S2Only)
	}
}

// TestStageRateLimited: a target whose requests meet three 429s ends
// correct; one whose 429s never stop is a named failure in the Result and
// the ledger; the others are unaffected, and a later run completes it.
func TestStageRateLimited(t *testing.T) {
	t.Parallel()
	e := newStageEnv(t)
	const (
		retried = "2507.11127"
		blocked = "2510.14970"
		calm    = "2509.15338"
	)
	e.putDoc(retried, "arxiv-2507.11127v1.html")
	e.putDoc(blocked, "arxiv-2510.14970v1.html")
	e.putDoc(calm, "arxiv-2509.15338v1.html")
	for k, n := range map[string]int{retried: 30, blocked: 10, calm: 12} {
		simtest.AddSyntheticReferences(t, e.corpus, "ARXIV:"+k, n, simtest.Synth{Unresolved: 7, NullAbstract: 2})
	}
	e.s2.Script(sim.S2ReferencesPath("ARXIV:"+retried), sim.TooManyRequests, 3)
	e.s2.Script(sim.S2ReferencesPath("ARXIV:"+blocked), sim.TooManyRequests.WithRetryAfter("0"), sim.Forever)
	e.s2.Script(sim.S2BatchPath, sim.TooManyRequests, 2)

	results := e.run(e.runner(testKey, false), retried, blocked, calm)
	if r := results[0]; r.Err != nil || r.Graph.Report.S2Edges != 30 || r.Graph.S2Status != record.S2OK {
		t.Errorf("retried: %+v", r)
	}
	var statuses []int
	for _, r := range e.s2.CallsTo(sim.S2ReferencesPath("ARXIV:" + retried)) {
		statuses = append(statuses, r.Status)
	}
	if !slices.Equal(statuses, []int{429, 429, 429, 200}) {
		t.Errorf("retried: statuses %v", statuses)
	}

	r := results[1]
	var se *httpx.StatusError
	if r.Err == nil || r.Graph != nil || !errors.As(r.Err, &se) || se.Status != http.StatusTooManyRequests {
		t.Fatalf("blocked: %+v, want a 429 failure", r)
	}
	if !strings.Contains(r.Err.Error(), blocked) {
		t.Errorf("blocked: error %q does not name the target", r.Err)
	}
	if en := e.ledger(blocked); en.Status != store.StatusFailed || !strings.Contains(en.Error, blocked) || !strings.Contains(en.Error, "429") {
		t.Errorf("blocked: ledger %+v", en)
	}
	if _, _, err := record.Graphs.Get(e.ctx, e.store, blocked); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("blocked: a graph was stored (%v)", err)
	}
	if n := len(e.s2.CallsTo(sim.S2ReferencesPath("ARXIV:" + blocked))); n != 5 {
		t.Errorf("blocked: %d attempts, want 5 (RetryMax 4)", n)
	}

	if r := results[2]; r.Err != nil || r.Graph.Report.S2Edges != 12 {
		t.Errorf("calm: %+v", r)
	}
	for _, k := range []string{retried, calm} {
		if en := e.ledger(k); en.Status != store.StatusDone {
			t.Errorf("%s: ledger %+v", k, en)
		}
	}

	// The 429s stop: the next run completes the blocked target and asks
	// nothing for the others.
	e.s2.Unscript(sim.S2ReferencesPath("ARXIV:" + blocked))
	e.s2.Reset()
	results = e.run(e.runner(testKey, false), retried, blocked, calm)
	for _, r := range results {
		if r.Err != nil || r.Requests != (r.Key == blocked) {
			t.Errorf("second run %s: err %v, requests %v", r.Key, r.Err, r.Requests)
		}
	}
	for _, r := range e.s2.Calls() {
		if !strings.Contains(r.Path, blocked) && r.Path != sim.S2BatchPath {
			t.Errorf("second run asked %s", r.Path)
		}
	}
	if en := e.ledger(blocked); en.Status != store.StatusDone || en.Error != "" || en.Attempts != 2 {
		t.Errorf("blocked after the 429s: ledger %+v", en)
	}
}

// TestStageTargetMetadata: the v1 date and categories come from the arXiv
// API; a paper the API lacks is dated by its ID.
func TestStageTargetMetadata(t *testing.T) {
	t.Parallel()
	e := newStageEnv(t)
	const listed, unlisted = "2507.11127", "2509.15338"
	e.putDoc(listed, "arxiv-2507.11127v1.html")
	e.putDoc(unlisted, "arxiv-2509.15338v1.html")
	// Version 3 was updated in August; v1 is what dates the paper.
	e.addEntry(listed, 3, "2025-07-15T09:12:00Z", "2025-08-20T10:00:00Z", "cs.AI", "cs.LG", "cs.LO")
	simtest.AddSyntheticReferences(t, e.corpus, "ARXIV:"+listed, 3, simtest.Synth{})
	simtest.AddSyntheticReferences(t, e.corpus, "ARXIV:"+unlisted, 3, simtest.Synth{})

	results := e.run(e.runner(testKey, false), listed, unlisted)
	m := results[0].Graph.Meta
	if m.Published != "2025-07-15" || m.Sources["published"] != "arxiv-api" || m.PrimaryCategory != "cs.AI" ||
		!slices.Equal(m.Categories, []string{"cs.AI", "cs.LG", "cs.LO"}) || m.Sources["categories"] != "arxiv-api" {
		t.Errorf("listed: meta %+v", m)
	}
	if m.Title == "" || m.Sources["title"] != "html" {
		t.Errorf("listed: title %q from %q, want the page's", m.Title, m.Sources["title"])
	}
	m = results[1].Graph.Meta
	if m.Published != "2025-09-01" || m.Sources["published"] != "arxiv-id" || m.PrimaryCategory != "" || m.Categories != nil {
		t.Errorf("unlisted: meta %+v", m)
	}
	// Both were asked in one lookup, and the answer is kept: arXiv is not
	// asked again about either.
	if q := e.apiQueries(); len(q) != 1 || !strings.Contains(q[0], listed) || !strings.Contains(q[0], unlisted) {
		t.Errorf("arXiv API requests %q", q)
	}
	if am, _, err := record.ArxivMetas.Get(e.ctx, e.store, unlisted); err != nil || am.Found {
		t.Errorf("unlisted: stored %+v, %v", am, err)
	}
	// The target's own S2 record is asked with the counts curate pairs
	// judges impact by.
	var asked []string
	for _, c := range e.s2.CallsTo(sim.S2BatchPath) {
		if len(c.IDs) == 0 || !strings.HasPrefix(c.IDs[0], "ARXIV:") {
			continue
		}
		asked = append(asked, c.IDs...)
		if f := c.Query().Get("fields"); !strings.Contains(f, "influentialCitationCount") || !strings.Contains(f, "citationCount") {
			t.Errorf("target records asked with fields %q", f)
		}
	}
	if !slices.Equal(asked, []string{"ARXIV:" + listed, "ARXIV:" + unlisted}) && !slices.Equal(asked, []string{"ARXIV:" + unlisted, "ARXIV:" + listed}) {
		t.Errorf("target records asked %v, want both once", asked)
	}
	e.api.Reset()
	e.run(e.runner(testKey, false), listed, unlisted)
	if q := e.apiQueries(); len(q) != 0 {
		t.Errorf("second run asked arXiv %q", q)
	}
}

// TestStageKeyNeverLeaks runs successes and failures with an API key and
// a wrong one, then looks for the keys in every stored blob (decompressed),
// every file of the store, the ledger, the logs and the errors.
func TestStageKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	e := newStageEnv(t)
	const wrongKey = "s2k-WRONG-0123456789abcdef-secret"
	keys := map[string]string{
		"2507.11127": "arxiv-2507.11127v1.html",
		"2509.15338": "arxiv-2509.15338v1.html",
		"2510.14970": "arxiv-2510.14970v1.html",
		"1706.03762": "ar5iv-1706.03762.html",
	}
	for k, f := range keys {
		e.putDoc(k, f)
	}
	simtest.AddSyntheticReferences(t, e.corpus, "ARXIV:2507.11127", 40, simtest.Synth{Unresolved: 5, NullAbstract: 2})
	simtest.Withhold(e.corpus, "ARXIV:2509.15338", "")
	simtest.AddSyntheticReferences(t, e.corpus, "ARXIV:1706.03762", 20, simtest.Synth{})
	e.s2.Script(sim.S2ReferencesPath("ARXIV:1706.03762"), sim.TooManyRequests, sim.Forever)
	e.addEntry("2507.11127", 1, "2025-07-15T09:12:00Z", "2025-07-15T09:12:00Z", "cs.AI")

	var errs []error
	for _, r := range e.run(e.runner(testKey, false), "2507.11127", "2509.15338", "2510.14970", "1706.03762") {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	if len(errs) != 1 {
		t.Fatalf("errors %v, want the one of 1706.03762", errs)
	}
	for _, r := range e.s2.Calls() {
		if !r.Keyed || r.Status == http.StatusForbidden {
			t.Fatalf("request %s sent without the key or refused it (%d)", r.Path, r.Status)
		}
	}
	// A wrong key: refused, and a named failure.
	e.s2.Unscript(sim.S2ReferencesPath("ARXIV:1706.03762"))
	r := e.run(e.runner(wrongKey, false), "1706.03762")[0]
	if !errors.Is(r.Err, s2.ErrForbidden) {
		t.Fatalf("wrong key: %v, want ErrForbidden", r.Err)
	}
	errs = append(errs, r.Err)

	secrets := []string{testKey, wrongKey}
	check := func(what, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s contains an API key", what)
			}
		}
	}
	blobs := 0
	err := filepath.WalkDir(e.store.Dir(), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		check(path, string(raw))
		if h, ok := strings.CutSuffix(d.Name(), ".zst"); ok {
			data, err := e.store.Blob(store.Hash(h))
			if err != nil {
				return err
			}
			blobs++
			check("blob "+h, string(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if blobs < 10 {
		t.Errorf("only %d blobs scanned", blobs)
	}
	for k := range keys {
		entries, err := e.store.Entries(e.ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			check("ledger error of "+k, en.Error)
		}
	}
	logs := e.logs.String()
	if !strings.Contains(logs, "http give up") {
		t.Error("the logs lack the failed requests; the scan proves little")
	}
	check("logs", logs)
	for _, err := range errs {
		check("error "+err.Error(), err.Error())
	}
}

// pairedEdges turns a pairing file into S2 reference edges in the real
// shape, with 40-hex paperIds, and the cited papers' records.
func pairedEdges(t *testing.T, pf pairFile, doc *record.Document) (edges, papers []json.RawMessage, ids map[string]string) {
	t.Helper()
	years := map[string]int{}
	for _, r := range doc.References {
		years[r.Key] = r.Year
	}
	ids = map[string]string{} // paperId of the file -> S2 paperId
	for i, pe := range pf.Edges {
		year := pe.Year
		if year == 0 {
			year = years[pe.Want]
		}
		p := map[string]any{"paperId": nil, "externalIds": nil, "corpusId": nil, "url": nil,
			"title": pe.Title, "abstract": nil, "venue": "", "year": year, "publicationDate": nil, "authors": []any{}}
		if pe.PaperID != "" {
			sum := sha1.Sum([]byte(pf.Page + "/" + pe.PaperID))
			pid := hex.EncodeToString(sum[:])
			ids[pe.PaperID] = pid
			x := map[string]any{"CorpusId": 1000 + i}
			if pe.Arxiv != "" {
				x["ArXiv"] = pe.Arxiv
			}
			if pe.DOI != "" {
				x["DOI"] = pe.DOI
			}
			p["paperId"], p["externalIds"], p["corpusId"] = pid, x, 1000+i
			p["url"] = "https://www.semanticscholar.org/paper/" + pid
			full := cloneMap(p)
			full["abstract"] = "Abstract of " + pe.Title + "."
			papers = append(papers, mustJSON(t, full))
		}
		edges = append(edges, mustJSON(t, map[string]any{
			"contexts": []string{}, "intents": []string{}, "contextsWithIntent": []any{}, "isInfluential": false, "citedPaper": p,
		}))
	}
	return edges, papers, ids
}

func cloneMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// TestStageLinkingRate serves the pairing files' edges as S2 would and runs
// the stage on the recorded pages: every pairing holds, and at least 95%
// of the edges carrying an arXiv ID or DOI that have a bibliography entry
// are linked. The rate per page is logged.
func TestStageLinkingRate(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("testdata", "pairs-*.json"))
	if len(files) < 2 {
		t.Fatalf("pairing files %v", files)
	}
	e := newStageEnv(t)
	type target struct {
		key string
		pf  pairFile
		ids map[string]string
	}
	var targets []target
	for _, f := range files {
		var pf pairFile
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &pf); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(pf.Page, "ar5iv-"), "arxiv-"), ".html")
		key := arxiv.Normalize(name)
		doc := e.putDoc(key, pf.Page)
		edges, papers, ids := pairedEdges(t, pf, doc)
		for _, p := range papers {
			e.addPaper(p)
		}
		if err := e.corpus.SetS2References("ARXIV:"+key, edges); err != nil {
			t.Fatal(err)
		}
		targets = append(targets, target{key, pf, ids})
	}
	var keys []string
	for _, tg := range targets {
		keys = append(keys, tg.key)
	}
	results := e.run(e.runner(testKey, false), keys...)
	for i, tg := range targets {
		res := results[i]
		if res.Err != nil {
			t.Errorf("%s: %v", tg.key, res.Err)
			continue
		}
		g := res.Graph
		got := map[string]string{} // S2 paperId -> ref key
		for _, ed := range g.Edges {
			if ed.S2PaperID != nil && ed.RefKey != nil {
				got[*ed.S2PaperID] = *ed.RefKey
			}
			if ed.S2PaperID != nil && (ed.Abstract == nil || !strings.HasPrefix(*ed.Abstract, "Abstract of ")) {
				t.Errorf("%s: edge %s lacks the batch's abstract", tg.key, *ed.S2PaperID)
			}
		}
		withID, withIDLinked := 0, 0
		for _, pe := range tg.pf.Edges {
			if pe.PaperID == "" {
				continue
			}
			if g := got[tg.ids[pe.PaperID]]; g != pe.Want {
				t.Errorf("%s: %q linked to %q, want %q", tg.key, pe.Title, g, pe.Want)
			}
			if (pe.Arxiv != "" || pe.DOI != "") && pe.Want != "" {
				withID++
				if got[tg.ids[pe.PaperID]] != "" {
					withIDLinked++
				}
			}
		}
		rep := g.Report
		rate := float64(withIDLinked) / float64(max(withID, 1))
		t.Logf("%s (%s): %d S2 edges, %d entries; linked %d = %.1f%% (arXiv ID %d, DOI %d, title %d); S2 edges with an ID %d/%d linked, %d/%d of those with an entry (%.1f%%); S2-only %d, bibliography-only %d, unresolved %d",
			tg.key, tg.pf.Page, rep.S2Edges, rep.Bibliography, rep.Linked(), 100*rep.Rate(), rep.ByArxivID, rep.ByDOI, rep.ByTitle,
			rep.WithIDLinked, rep.WithID, withIDLinked, withID, 100*rate, rep.S2Only, rep.BibOnly, rep.Unresolved)
		if withID == 0 || rate < 0.95 {
			t.Errorf("%s: %d of %d edges with an arXiv ID or DOI and a bibliography entry linked; want at least 95%%", tg.key, withIDLinked, withID)
		}
		if rep.S2Edges != len(tg.pf.Edges) || len(g.Edges) != rep.Bibliography+rep.S2Only {
			t.Errorf("%s: report %+v for %d edges", tg.key, rep, len(tg.pf.Edges))
		}
	}
}

// TestStageBatchFailureKeepsPages: when the batch fill fails for good the
// target fails by name, and the next run reuses the stored pages, asking
// only for the batch.
func TestStageBatchFailureKeepsPages(t *testing.T) {
	t.Parallel()
	e := newStageEnv(t)
	const key = "2509.15338"
	e.putDoc(key, "arxiv-2509.15338v1.html")
	simtest.AddSyntheticReferences(t, e.corpus, "ARXIV:"+key, 600, simtest.Synth{NullAbstract: 2})
	// Its own record was stored by an earlier run: the only batch is the
	// fill, and it fails for good.
	if _, err := record.S2Papers.Put(e.ctx, e.store, key, &record.S2Paper{Found: true, Paper: &record.ScholarPaper{PaperID: strings.Repeat("ab", 20)}}, nil); err != nil {
		t.Fatal(err)
	}
	e.s2.Script(sim.S2BatchPath, sim.TooManyRequests, sim.Forever)

	r := e.run(e.runner(testKey, false), key)[0]
	if r.Err == nil || !strings.Contains(r.Err.Error(), key) || !strings.Contains(r.Err.Error(), "batch") {
		t.Fatalf("result %+v, want a named batch failure", r)
	}
	if en := e.ledger(key); en.Status != store.StatusFailed || !strings.Contains(en.Error, key) {
		t.Errorf("ledger %+v", en)
	}
	e.s2.Unscript(sim.S2BatchPath)
	e.s2.Reset()
	r = e.run(e.runner(testKey, false), key)[0]
	if r.Err != nil || r.Graph.Report.S2Edges != 600 {
		t.Fatalf("second run: %+v", r)
	}
	for _, q := range e.s2.Calls() {
		if q.Path != sim.S2BatchPath {
			t.Errorf("second run asked %s?%s again", q.Path, q.RawQuery)
		}
	}
	for _, ed := range r.Graph.Edges {
		if ed.S2PaperID != nil && ed.Abstract == nil {
			t.Errorf("edge %s lacks its abstract", *ed.S2PaperID)
			break
		}
	}
}

// TestStageFetchesMissingDocument: a target whose Document is not stored
// is fetched through Runner.Fetch (a fetch.Fetcher on a fake arXiv).
func TestStageFetchesMissingDocument(t *testing.T) {
	t.Parallel()
	e := newStageEnv(t)
	const key = "2510.14970"
	pages := sim.NewCorpus()
	simtest.AddFixturePage(t, pages, sim.HTMLArxiv, key, "arxiv-2510.14970v1.html")
	site := simtest.Serve(t, sim.Arxiv, pages)
	hc, err := httpx.New(httpx.Config{UserAgent: httpx.UserAgent("test", "test@example.org"), RetryWaitMin: time.Millisecond, RetryWaitMax: 10 * time.Millisecond},
		httpx.ServiceConfig{Name: "arxiv", BaseURL: site.URL, Interval: time.Millisecond, MaxInFlight: 1})
	if err != nil {
		t.Fatal(err)
	}
	ax, _ := hc.Service("arxiv")
	f := &fetch.Fetcher{Arxiv: ax, Store: e.store}
	simtest.AddSyntheticReferences(t, e.corpus, "ARXIV:"+key, 8, simtest.Synth{})

	run := func() Result {
		r := e.runner(testKey, false)
		r.Fetch = func(ctx context.Context, id string) (*record.Document, error) {
			res := f.Fetch(ctx, id)
			return res.Doc, res.Err
		}
		return r.Process(e.ctx, key)
	}
	res := run()
	if res.Err != nil || res.Graph.Report.Bibliography == 0 || res.Graph.Report.S2Edges != 8 {
		t.Fatalf("result %+v", res)
	}
	if doc, _, err := record.Documents.Get(e.ctx, e.store, key); err != nil {
		t.Errorf("stored document: %v", err)
	} else if len(doc.References) != res.Graph.Report.Bibliography {
		t.Errorf("stored document: %d references, want %d", len(doc.References), res.Graph.Report.Bibliography)
	}
	if res = run(); res.Err != nil || len(site.Calls()) != 1 {
		t.Errorf("second run: %v, %d page requests in all", res.Err, len(site.Calls()))
	}
}

// TestStageBuildAsksNoMetadata checks that Build, the per-target step of a
// pipeline that looked up metadata for all targets beforehand, never asks
// the arXiv API itself, and dates a target without metadata by its ID.
func TestStageBuildAsksNoMetadata(t *testing.T) {
	t.Parallel()
	e := newStageEnv(t)
	const key = "2507.11127"
	e.putDoc(key, "arxiv-2507.11127v1.html")
	e.addEntry(key, 1, "2025-07-15T09:12:00Z", "2025-07-15T09:12:00Z", "cs.AI")
	simtest.AddSyntheticReferences(t, e.corpus, "ARXIV:"+key, 3, simtest.Synth{})
	r := e.runner(testKey, false)
	res := r.Build(e.ctx, key)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if q := e.apiQueries(); len(q) != 0 {
		t.Errorf("Build asked the arXiv API %q", q)
	}
	if m := res.Graph.Meta; m.Published != "2025-07-01" || m.Sources["published"] != "arxiv-id" {
		t.Errorf("meta %+v, want the date from the ID", m)
	}
	if err := r.LookupArxiv(e.ctx, []string{key}); err != nil {
		t.Fatal(err)
	}
	if m := r.Build(e.ctx, key).Graph.Meta; m.Published != "2025-07-15" {
		t.Errorf("after LookupArxiv: published %q, want the v1 date", m.Published)
	}
}

// TestStageWithoutS2: with no Semantic Scholar client the feed asks only
// the arXiv API, and edges come from the bibliography.
func TestStageWithoutS2(t *testing.T) {
	t.Parallel()
	e := newStageEnv(t)
	const key = "2507.11127"
	e.putDoc(key, "arxiv-2507.11127v1.html")
	r := e.runner(testKey, false)
	r.S2 = nil
	res := e.run(r, key)[0]
	if res.Err != nil || res.Graph == nil || res.Graph.S2Status != "skipped" || len(res.Graph.Edges) == 0 {
		t.Fatalf("without S2: %+v", res)
	}
	if n := len(e.s2.Calls()); n != 0 {
		t.Errorf("%d Semantic Scholar requests without a client", n)
	}
}

// A stored entry that cannot be read for another reason than its absence
// (here a closed store; in a run, a read the ledger refuses) is an error
// of the lookup, not a missing entry: nothing is asked, and the failure
// names the paper. Has read every error as absence, so a read error meant
// a silent request and a record rewritten without a word.
func TestLookupArxivReadError(t *testing.T) {
	t.Parallel()
	e := newStageEnv(t)
	const key = "2507.11127"
	e.addEntry(key, 1, "2025-07-15T09:12:00Z", "2025-07-15T09:12:00Z", "cs.AI")
	r := e.runner(testKey, false)
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	err := r.LookupArxiv(e.ctx, []string{key})
	if err == nil || !strings.Contains(err.Error(), key) {
		t.Errorf("LookupArxiv on an unreadable store: %v, want an error naming %s", err, key)
	}
	if q := e.apiQueries(); len(q) != 0 {
		t.Errorf("asked the arXiv API %q", q)
	}
}
