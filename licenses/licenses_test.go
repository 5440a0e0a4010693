package licenses_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/licenses"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
	"github.com/groundwork/curate/store"
)

const (
	ccBy    = "http://creativecommons.org/licenses/by/4.0/"
	arxivNE = "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
)

// repository is a simulated OAI-PMH repository with papers of several
// licences, one naming none and one deleted. It does not know
// 2603.00009.
func repository(t *testing.T) *simtest.Server {
	t.Helper()
	c := sim.NewCorpus()
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for _, m := range []sim.OAIMeta{
		{ID: "2603.00001", License: ccBy},
		{ID: "2603.00002", License: arxivNE},
		{ID: "2603.00003"},
		{ID: "2603.00004", Deleted: true},
		{ID: "2603.00005", License: ccBy},
		{ID: "2603.00006", License: arxivNE},
	} {
		m.Datestamp, m.Created, m.Title, m.Abstract, m.Categories = day, day, "T", "A.", []string{"cs.CL"}
		c.AddOAIRecord("arXiv", m.Record("arXiv"))
	}
	return simtest.Serve(t, sim.OAIPMH, c)
}

// grants records the OAI service's limiter decisions.
type grants struct {
	mu   sync.Mutex
	list []httpx.Grant
}

func (g *grants) add(x httpx.Grant) { g.mu.Lock(); g.list = append(g.list, x); g.mu.Unlock() }

func (g *grants) all() []httpx.Grant {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]httpx.Grant(nil), g.list...)
}

// lookup returns a Lookup over a new store and srv, its requests paced
// interval apart by the OAI service's limiter, whose grants are recorded.
func lookup(t *testing.T, srv *simtest.Server, interval time.Duration) (*licenses.Lookup, *store.Store, *grants) {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	g := &grants{}
	hc, err := httpx.New(httpx.Config{UserAgent: "licenses-test", RetryMax: -1, OnGrant: g.add},
		oaipmh.ServiceConfig(srv.URL+sim.OAIPath, interval))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := hc.Service(oaipmh.ServiceName)
	c, err := oaipmh.New(svc, oaipmh.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	return &licenses.Lookup{Store: st, OAI: c, Now: func() time.Time { return at }}, st, g
}

// asked returns the identifiers the repository was asked for, in order.
func asked(srv *simtest.Server) []string {
	var out []string
	for _, c := range srv.Calls() {
		out = append(out, c.Query().Get("identifier"))
	}
	return out
}

// TestLookup records each paper's answer, one request a paper, paced by
// the OAI service's limiter, and a second lookup asks nothing: neither a
// recorded licence, nor a record naming none, nor a paper not found.
func TestLookup(t *testing.T) {
	srv := repository(t)
	const interval = 20 * time.Millisecond
	l, st, g := lookup(t, srv, interval)
	ctx := context.Background()
	// One paper recorded before: no request for it.
	if _, err := licenses.Put(ctx, st, "2603.00006", record.PaperLicense{Found: true, License: arxivNE, Source: record.LicenseFromOAIPMH}); err != nil {
		t.Fatal(err)
	}
	ids := []string{"2603.00001", "2603.00002", "2603.00003", "2603.00004", "2603.00009", "2603.00006"}
	var seen []licenses.Result
	sum, err := l.Run(ctx, ids, licenses.Options{OnPaper: func(r licenses.Result) { seen = append(seen, r) }})
	if err != nil {
		t.Fatal(err)
	}
	want := &licenses.Summary{Papers: 6, Stored: 1, Recorded: 4, Missing: 1, Requests: 5}
	if sum.Papers != want.Papers || sum.Stored != want.Stored || sum.Recorded != want.Recorded || sum.Missing != want.Missing || sum.Failed != 0 || sum.Requests != want.Requests || sum.Stopped != "" {
		t.Errorf("summary %+v, want %+v", sum, want)
	}
	if len(seen) != len(ids) {
		t.Errorf("OnPaper saw %d papers, want %d", len(seen), len(ids))
	}
	wantStored := map[string]record.PaperLicense{
		"2603.00001": {Found: true, License: ccBy},
		"2603.00002": {Found: true, License: arxivNE},
		"2603.00003": {Found: true},
		"2603.00004": {Found: true, Deleted: true},
		"2603.00009": {},
		"2603.00006": {Found: true, License: arxivNE},
	}
	for id, w := range wantStored {
		got, ok, err := record.PaperLicenses.Lookup(ctx, st, id)
		if err != nil || !ok {
			t.Errorf("%s: no licence stored (%v)", id, err)
			continue
		}
		if got.Found != w.Found || got.License != w.License || got.Deleted != w.Deleted || got.Source != record.LicenseFromOAIPMH {
			t.Errorf("%s: stored %+v, want %+v from oai-pmh", id, got, w)
		}
		if id != "2603.00006" && got.CheckedAt != "2026-07-01T12:00:00Z" {
			t.Errorf("%s: checked at %q", id, got.CheckedAt)
		}
	}

	// Paced: one grant per request, by the OAI service's limiter, each at
	// least the interval after the one before (the limiter's own times).
	gs := g.all()
	if len(gs) != sum.Requests || len(srv.Calls()) != sum.Requests {
		t.Fatalf("%d grants, %d requests served, want %d", len(gs), len(srv.Calls()), sum.Requests)
	}
	for i, x := range gs {
		if x.Service != oaipmh.ServiceName || x.Interval != httpx.Paced(interval) {
			t.Errorf("grant %d: %+v, want the %s limiter at %s and its margin", i, x, oaipmh.ServiceName, interval)
		}
		if i > 0 && x.At.Sub(gs[i-1].At) < interval {
			t.Errorf("grant %d %s after the one before, want at least %s", i, x.At.Sub(gs[i-1].At), interval)
		}
	}

	// Again: nothing to ask.
	srv.Reset()
	if p, err := l.Pending(ctx, ids, licenses.Options{}); err != nil || len(p) != 0 {
		t.Errorf("pending %v, %v; want none", p, err)
	}
	sum, err = l.Run(ctx, ids, licenses.Options{})
	if err != nil || sum.Requests != 0 || sum.Stored != len(ids) || len(srv.Calls()) != 0 {
		t.Errorf("second lookup: %+v, %v, %d requests; want all stored, none asked", sum, err, len(srv.Calls()))
	}
	// Rechecking the missing asks about the one paper not found, and
	// never about the record that names no licence.
	sum, err = l.Run(ctx, ids, licenses.Options{RecheckMissing: true})
	if got := asked(srv); err != nil || sum.Requests != 1 || len(got) != 1 || got[0] != "oai:arXiv.org:2603.00009" {
		t.Errorf("recheck: %+v, %v, asked %v; want only oai:arXiv.org:2603.00009", sum, err, got)
	}
}

// TestLookupResumes: a lookup interrupted part way keeps every answer it
// had, and the next one asks only about the rest; no paper is asked about
// twice.
func TestLookupResumes(t *testing.T) {
	srv := repository(t)
	l, _, _ := lookup(t, srv, time.Millisecond)
	ids := []string{"2603.00001", "2603.00002", "2603.00003", "2603.00005", "2603.00006"}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	sum, err := l.Run(ctx, ids, licenses.Options{OnPaper: func(licenses.Result) {
		if n++; n == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || sum.Recorded != 2 || sum.Stopped != "interrupted" {
		t.Fatalf("interrupted lookup: %+v, %v; want 2 recorded, then canceled", sum, err)
	}
	pending, err := l.Pending(context.Background(), ids, licenses.Options{})
	if err != nil || len(pending) != 3 || pending[0] != "2603.00003" {
		t.Fatalf("pending after the interruption %v, %v; want the last three", pending, err)
	}
	sum, err = l.Run(context.Background(), ids, licenses.Options{})
	if err != nil || sum.Stored != 2 || sum.Recorded != 3 || sum.Requests != 3 {
		t.Errorf("resumed lookup: %+v, %v; want 2 stored, 3 asked", sum, err)
	}
	got := asked(srv)
	once := map[string]bool{}
	for _, id := range got {
		if once[id] {
			t.Errorf("%s asked about twice", id)
		}
		once[id] = true
	}
	if len(got) != len(ids) {
		t.Errorf("%d requests over both lookups, want %d (one a paper)", len(got), len(ids))
	}
}

// TestLookupFailures: a failed request stores nothing (the next lookup
// asks again) and the lookup goes on; requests failing in a row stop it.
func TestLookupFailures(t *testing.T) {
	srv := repository(t)
	failing := map[string]bool{"oai:arXiv.org:2603.00002": true}
	var mu sync.Mutex
	srv.Intercept(func(w http.ResponseWriter, r *http.Request, c sim.Call) bool {
		mu.Lock()
		defer mu.Unlock()
		if failing[c.Query().Get("identifier")] || failing["*"] {
			// An OAI-PMH error in a 200 body, as the protocol reports one.
			w.Header().Set("Content-Type", "text/xml")
			w.Write([]byte(`<?xml version="1.0"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2026-07-01T00:00:00Z</responseDate>` +
				`<request>https://oaipmh.arxiv.org/oai</request><error code="badArgument">Parameters provided did not match expected.</error></OAI-PMH>`))
			return true
		}
		return false
	})
	l, st, _ := lookup(t, srv, time.Millisecond)
	ctx := context.Background()
	ids := []string{"2603.00001", "2603.00002", "2603.00003"}
	sum, err := l.Run(ctx, ids, licenses.Options{})
	if err != nil || sum.Recorded != 2 || sum.Failed != 1 || len(sum.Failures) != 1 || sum.Failures[0].ID != "2603.00002" {
		t.Fatalf("lookup with a failure: %+v, %v", sum, err)
	}
	if has, err := record.PaperLicenses.Has(ctx, st, "2603.00002"); has || err != nil {
		t.Error("a failed paper has a licence record")
	}
	if p, _ := l.Pending(ctx, ids, licenses.Options{}); len(p) != 1 || p[0] != "2603.00002" {
		t.Errorf("pending %v, want the failed paper", p)
	}

	mu.Lock()
	failing["*"] = true
	mu.Unlock()
	srv.Reset()
	more := []string{"2603.00002", "2603.00004", "2603.00005", "2603.00006", "2603.00009"}
	sum, err = l.Run(ctx, more, licenses.Options{MaxFailuresInARow: 3})
	if !errors.Is(err, licenses.ErrTooManyFailures) || sum.Requests != 3 || len(srv.Calls()) != 3 || sum.Stopped == "" {
		t.Errorf("a failing repository: %+v, %v, %d requests; want a stop after 3", sum, err, len(srv.Calls()))
	}
}

// TestPut rewrites a licence only when the answer changed.
func TestPut(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	first := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	rec := oaipmh.Record{ID: "2603.00001", Meta: &oaipmh.ArxivMeta{ID: "2603.00001", License: ccBy}}
	for i, tc := range []struct {
		rec   oaipmh.Record
		at    time.Time
		wrote bool
	}{
		{rec, first, true},
		{rec, first.AddDate(0, 0, 1), false}, // the same answer a day later
		{oaipmh.Record{ID: "2603.00001", Meta: &oaipmh.ArxivMeta{ID: "2603.00001", License: arxivNE}}, first.AddDate(0, 0, 2), true},
		{oaipmh.Record{ID: "2603.00001", Deleted: true}, first.AddDate(0, 0, 3), true},
	} {
		wrote, err := licenses.Put(ctx, st, "2603.00001", licenses.FromRecord(tc.rec, tc.at))
		if err != nil || wrote != tc.wrote {
			t.Errorf("put %d: wrote %v, %v; want %v", i, wrote, err, tc.wrote)
		}
	}
	got, _, _ := record.PaperLicenses.Get(ctx, st, "2603.00001")
	if !got.Found || !got.Deleted || got.License != "" || got.CheckedAt != "2026-07-04T00:00:00Z" {
		t.Errorf("stored %+v", got)
	}
}

// TestLookupStop: Stop is read before each request, not watched: closed
// before the lookup, no request goes out; closed once the first paper is
// done (from OnPaper, so with no goroutine in between), exactly one did,
// and the answer it brought is stored. A watcher goroutine cancelling a
// context let one more request out when it ran late (app's
// TestLookupLicenses, under load).
func TestLookupStop(t *testing.T) {
	srv := repository(t)
	ids := []string{"2603.00001", "2603.00002", "2603.00003"}

	l, _, _ := lookup(t, srv, time.Millisecond)
	stop := make(chan struct{})
	close(stop)
	l.Stop = stop
	sum, err := l.Run(context.Background(), ids, licenses.Options{})
	if !errors.Is(err, context.Canceled) || sum.Requests != 0 || len(srv.Calls()) != 0 || sum.Stopped != "interrupted" {
		t.Errorf("stopped before: %+v, %v, %d requests; want none", sum, err, len(srv.Calls()))
	}

	srv.Reset()
	l, st, _ := lookup(t, srv, time.Millisecond)
	stop = make(chan struct{})
	l.Stop = stop
	sum, err = l.Run(context.Background(), ids, licenses.Options{OnPaper: func(licenses.Result) {
		select {
		case <-stop:
		default:
			close(stop)
		}
	}})
	if !errors.Is(err, context.Canceled) || sum.Requests != 1 || len(srv.Calls()) != 1 || sum.Recorded != 1 {
		t.Errorf("stopped after the first: %+v, %v, %d requests; want one", sum, err, len(srv.Calls()))
	}
	if _, ok, _ := record.PaperLicenses.Lookup(context.Background(), st, ids[0]); !ok {
		t.Error("the first paper's answer was not stored")
	}
}
