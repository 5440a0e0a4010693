package citegraph

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/groundwork/curate/internal/testutil"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// s2Log records what a Runner asked Semantic Scholar, from the client's
// side: batch bodies carry the IDs the simulated service does not log.
type s2Log struct {
	mu         sync.Mutex
	references []string   // target IDs whose references were asked
	papers     []string   // single-paper lookups
	targets    [][]string // batches of targets' own records (ARXIV: IDs)
	fills      [][]string // batches of cited papers
	// onReference, when set, is called with the count of references
	// requests so far, before each is sent.
	onReference func(n int)
}

func (l *s2Log) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/robots.txt") || !strings.Contains(r.URL.Path, "/graph/v1/") {
		return http.DefaultTransport.RoundTrip(r)
	}
	rest := strings.TrimPrefix(r.URL.Path, "/graph/v1/paper/")
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	l.mu.Lock()
	switch {
	case rest == "batch":
		var b struct{ IDs []string }
		json.Unmarshal(body, &b)
		if len(b.IDs) > 0 && strings.HasPrefix(b.IDs[0], "ARXIV:") {
			l.targets = append(l.targets, b.IDs)
		} else {
			l.fills = append(l.fills, b.IDs)
		}
	case strings.HasSuffix(rest, "/references"):
		l.references = append(l.references, strings.TrimSuffix(rest, "/references"))
		if l.onReference != nil {
			l.onReference(len(l.references))
		}
	default:
		l.papers = append(l.papers, rest)
	}
	l.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (l *s2Log) requests() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.references) + len(l.papers) + len(l.targets) + len(l.fills)
}

// feedEnv is a store with the Documents of a simulated world's targets
// and Runners over its simulated Semantic Scholar and arXiv API.
type feedEnv struct {
	t     *testing.T
	world *sim.World
	srv   *sim.Servers
	store *store.Store
	keys  []string
}

func newFeedEnv(t *testing.T, cfg sim.WorldConfig) *feedEnv {
	t.Helper()
	targets := cfg.Targets
	w, err := sim.NewWorld(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.Start(w, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &feedEnv{t: t, world: w, srv: srv, store: st}
	for i := range targets {
		p := w.Target(i)
		if p.HTML == sim.HTMLNone {
			continue
		}
		doc, err := fetch.Parse(w.Page(&p, p.HTML), mustID(t, p.ArxivID), p.HTML, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := record.Documents.Put(context.Background(), st, p.ArxivID, doc, nil); err != nil {
			t.Fatal(err)
		}
		e.keys = append(e.keys, p.ArxivID)
	}
	return e
}

func (e *feedEnv) runner(flushAfter int) (*Runner, *s2Log) {
	e.t.Helper()
	l := &s2Log{}
	hc, err := httpx.New(httpx.Config{UserAgent: httpx.UserAgent("test", ""), RetryMax: 2, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond, Transport: l},
		s2.ServiceConfig(e.srv.URL(sim.S2), "", time.Millisecond), arxivapi.ServiceConfig(e.srv.URL(sim.ArxivAPI), time.Millisecond))
	if err != nil {
		e.t.Fatal(err)
	}
	s2svc, _ := hc.Service(s2.ServiceName)
	apisvc, _ := hc.Service(arxivapi.ServiceName)
	sc, err := s2.New(s2svc, s2.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	ac, err := arxivapi.New(apisvc, arxivapi.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	return &Runner{Store: e.store, S2: sc, ArxivAPI: ac, FlushAfter: flushAfter}, l
}

// TestFeedFewestRequests: over a run, Semantic Scholar is asked for the
// targets' records in one batch, each target's references once, and the
// fields edges lack in batches shared across targets, each paper once;
// the graphs have every field the batches gave. A second run asks
// nothing; targets added later are not asked about papers answered
// before.
func TestFeedFewestRequests(t *testing.T) {
	e := newFeedEnv(t, sim.WorldConfig{Seed: 3, Targets: 90, Withheld: []int{2}})
	first, later := e.keys[:60], e.keys[60:]
	const flushAfter = 16
	r, l := e.runner(flushAfter)
	results := r.All(context.Background(), first, 8, nil)
	for _, res := range results {
		if res.Err != nil || res.Graph == nil || !res.Requests {
			t.Fatalf("%s: %+v", res.Key, res)
		}
	}
	if len(l.papers) != 0 || len(l.targets) != 1 || len(l.targets[0]) != len(first) {
		t.Errorf("target records: %d single lookups, batches %v; want one batch of %d", len(l.papers), l.targets, len(first))
	}
	if slices.Sort(l.references); len(l.references) != len(first) || len(slices.Compact(slices.Clone(l.references))) != len(first) {
		t.Errorf("%d references requests for %d targets", len(l.references), len(first))
	}
	seen := map[string]bool{}
	for _, b := range l.fills {
		for _, id := range b {
			if seen[id] {
				t.Errorf("paper %s asked twice", id)
			}
			seen[id] = true
		}
	}
	// At most one batch per flushAfter targets walked, and the last.
	if n := len(l.fills); n == 0 || n > (len(first)+flushAfter-1)/flushAfter+1 {
		t.Errorf("%d fill batches for %d targets (flush after %d)", n, len(first), flushAfter)
	}
	// Every edge the references left without an abstract, S2 knowing the
	// paper, has the batch's.
	lacking := 0
	for _, res := range results {
		refs, _, err := record.S2References.Get(context.Background(), e.store, res.Key)
		if err != nil {
			t.Fatal(err)
		}
		if refs.List == nil {
			continue
		}
		noAbstract := map[string]bool{}
		for _, ed := range refs.List.Edges {
			if ed.CitedPaper.Abstract == nil && ed.CitedPaper.PaperID != "" {
				noAbstract[ed.CitedPaper.PaperID] = true
				lacking++
				if !seen[ed.CitedPaper.PaperID] {
					if filled, _, _ := record.S2Batches.Get(context.Background(), e.store, res.Key); (*filled)[ed.CitedPaper.PaperID] == nil {
						t.Errorf("%s: %s never asked for nor filled", res.Key, ed.CitedPaper.PaperID)
					}
				}
			}
		}
		for _, ed := range res.Graph.Edges {
			if ed.S2PaperID != nil && noAbstract[*ed.S2PaperID] && ed.Abstract == nil {
				t.Errorf("%s: edge %s lacks the batch's abstract", res.Key, *ed.S2PaperID)
			}
		}
	}
	if lacking == 0 {
		t.Fatal("no edge lacked an abstract: the batches go unchecked")
	}

	// Again: nothing is asked.
	r2, l2 := e.runner(flushAfter)
	for _, res := range r2.All(context.Background(), first, 8, nil) {
		if res.Err != nil || res.Requests {
			t.Errorf("second run %s: err %v, requests %v", res.Key, res.Err, res.Requests)
		}
	}
	if n := l2.requests(); n != 0 {
		t.Errorf("second run made %d S2 requests", n)
	}

	// Later targets citing papers answered before: not asked again.
	r3, l3 := e.runner(flushAfter)
	for _, res := range r3.All(context.Background(), e.keys, 8, nil) {
		if res.Err != nil {
			t.Errorf("%s: %v", res.Key, res.Err)
		}
	}
	if len(l3.references) != len(later) {
		t.Errorf("third run: %d references requests for %d new targets", len(l3.references), len(later))
	}
	again := 0
	for _, b := range l3.fills {
		for _, id := range b {
			if seen[id] {
				again++
			}
		}
	}
	if again > 0 {
		t.Errorf("third run asked %d papers answered by the first run again", again)
	}
}

// TestFeedBatchCap: cited papers of many targets are sent at most 500 a
// batch, and every one is asked.
func TestFeedBatchCap(t *testing.T) {
	e := newFeedEnv(t, sim.WorldConfig{Seed: 3, Targets: 150, Papers: 5000, RefsMin: 20, RefsMax: 30})
	r, l := e.runner(1 << 20) // only full batches and the last
	for _, res := range r.All(context.Background(), e.keys, 4, nil) {
		if res.Err != nil {
			t.Fatalf("%s: %v", res.Key, res.Err)
		}
	}
	total := 0
	for _, b := range l.fills {
		if len(b) > s2.MaxBatch {
			t.Errorf("batch of %d ids", len(b))
		}
		total += len(b)
	}
	if total <= s2.MaxBatch || len(l.fills) != (total+s2.MaxBatch-1)/s2.MaxBatch {
		t.Errorf("%d fill batches for %d ids, want full batches of %d and one more", len(l.fills), total, s2.MaxBatch)
	}
}

// TestFeedResumes: a run stopped part way keeps every answer it got; the
// next asks for none of them again.
func TestFeedResumes(t *testing.T) {
	e := newFeedEnv(t, sim.WorldConfig{Seed: 3, Targets: 40})
	r, l := e.runner(8)
	ctx, cancel := context.WithCancel(context.Background())
	l.onReference = func(n int) {
		if n == 12 {
			cancel() // a crash, as far as this run can tell
		}
	}
	r.All(ctx, e.keys, 2, nil)
	if len(l.references) == len(e.keys) {
		t.Fatal("the first run was not stopped part way")
	}
	// What the first run got answered is stored: none of it is asked again.
	asked := map[string]bool{}
	for _, k := range e.keys {
		if testutil.Has(t)(record.S2References.Has(context.Background(), e.store, k)) {
			asked[s2.ArxivPaperID(k)] = true
		}
	}
	if len(asked) == 0 {
		t.Fatal("the first run stored no references")
	}
	r2, l2 := e.runner(8)
	for _, res := range r2.All(context.Background(), e.keys, 2, nil) {
		if res.Err != nil {
			t.Errorf("%s: %v", res.Key, res.Err)
		}
	}
	for _, id := range l2.references {
		if asked[id] {
			t.Errorf("references of %s asked again", id)
		}
	}
	if len(l2.targets) != 0 {
		t.Errorf("targets' records asked again: %v", l2.targets)
	}
}

func mustID(t *testing.T, s string) arxiv.ID {
	t.Helper()
	id, err := arxiv.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
