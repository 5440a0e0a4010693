package fetch_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
	"github.com/groundwork/curate/store"
)

const interval = 40 * time.Millisecond

// grantLog records the grants of the client's limiters (httpx.Config.
// OnGrant): the limiter's own schedule, which a slow scheduler cannot
// disturb the way it disturbs times taken after the grant.
type grantLog struct {
	mu sync.Mutex
	at map[string][]time.Time // service -> grant times, in order
}

func (l *grantLog) record(g httpx.Grant) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.at[g.Service] = append(l.at[g.Service], g.At)
}

func (l *grantLog) times(service string) []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.at[service]...)
}

// sites serves arxiv.org and ar5iv over one corpus a test fills.
func sites(t *testing.T) (ax, a5 *simtest.Server, c *sim.Corpus) {
	c = sim.NewCorpus()
	return simtest.Serve(t, sim.Arxiv, c), simtest.Serve(t, sim.Ar5iv, c), c
}

// oversized makes arXiv serve a LaTeXML-looking page of n bytes for id.
func oversized(t *testing.T, c *sim.Corpus, id string, n int) {
	t.Helper()
	page := []byte("<html><body>" + strings.Repeat("<p class=\"ltx_p\">padding</p>\n", n/29+1) + "</body></html>")
	if err := c.AddPage(sim.HTMLArxiv, id, page); err != nil {
		t.Fatal(err)
	}
}

func newFetcher(t *testing.T, ax, a5 *simtest.Server, maxBody int64) (*fetch.Fetcher, *store.Store) {
	f, st, _ := newFetcherLog(t, ax, a5, maxBody)
	return f, st
}

func newFetcherLog(t *testing.T, ax, a5 *simtest.Server, maxBody int64) (*fetch.Fetcher, *store.Store, *grantLog) {
	t.Helper()
	gl := &grantLog{at: map[string][]time.Time{}}
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	hc, err := httpx.New(httpx.Config{
		UserAgent:     httpx.UserAgent("test", "team@example.org"),
		RetryMax:      3,
		RetryWaitMin:  time.Millisecond,
		RetryWaitMax:  20 * time.Millisecond,
		MaxRetryAfter: 3 * time.Second,
		MaxBody:       maxBody,
		OnGrant:       gl.record,
	},
		httpx.ServiceConfig{Name: "arxiv", BaseURL: ax.URL, Interval: interval, MaxInFlight: 1},
		httpx.ServiceConfig{Name: "ar5iv", BaseURL: a5.URL, Interval: interval, MaxInFlight: 1},
	)
	if err != nil {
		t.Fatal(err)
	}
	axs, _ := hc.Service("arxiv")
	a5s, _ := hc.Service("ar5iv")
	return &fetch.Fetcher{Arxiv: axs, Ar5iv: a5s, Store: st}, st, gl
}

// TestFetchMisbehavingServers runs one fetch over papers whose servers
// misbehave in every way the sites do, and checks that every paper ends
// fetched or named with its reason, and nothing fetched is lost.
func TestFetchMisbehavingServers(t *testing.T) {
	ax, a5, c := sites(t)
	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2507.11127", "arxiv-2507.11127v1.html")
	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2510.11261v1", "arxiv-2510.11261v1.html")
	ax.Script("/html/2510.11261v1", sim.TooManyRequests, 2)
	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2510.14970", "arxiv-2510.14970v1.html")
	ax.Script("/html/2510.14970", sim.TooManyRequests.WithRetryAfter("1"), 1)
	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2509.15338", "arxiv-2509.15338v1.html")
	ax.Script("/html/2509.15338", sim.Unavailable, 2)
	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2510.11289", "arxiv-2510.11289v1.html")
	ax.Script("/html/2510.11289", sim.ResetConnection, 1)
	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2507.11538", "arxiv-2507.11538v1.html")
	ax.Script("/html/2507.11538", sim.TruncatedBody, 1)
	oversized(t, c, "2501.11120", 3<<20)
	ax.Script("/html/2510.14023", sim.RedirectTo("http://elsewhere.invalid/html/2510.14023"), sim.Forever)
	ax.Script("/html/2403.08275", sim.Unavailable, sim.Forever)
	// Not on arXiv: ar5iv has it, lacks it (hep-th/9901001: a 307, as for
	// any paper it lacks), or has a fatal conversion.
	simtest.AddFixturePage(t, c, sim.HTMLAr5iv, "1706.03762", "ar5iv-1706.03762.html")
	simtest.AddFixturePage(t, c, sim.HTMLAr5iv, "2408.11857", "ar5iv-2408.11857.html")

	f, st, grants := newFetcherLog(t, ax, a5, 2<<20)
	tests := []struct {
		id      string
		outcome string
		source  string
		errHas  string
	}{
		{"2507.11127", fetch.Fetched, record.SourceArxiv, ""},
		{"2510.11261v1", fetch.Fetched, record.SourceArxiv, ""}, // 429 twice, no Retry-After
		{"2510.14970", fetch.Fetched, record.SourceArxiv, ""},   // 429 with Retry-After
		{"2509.15338", fetch.Fetched, record.SourceArxiv, ""},   // 503 twice
		{"2510.11289", fetch.Fetched, record.SourceArxiv, ""},   // connection reset
		{"2507.11538", fetch.Fetched, record.SourceArxiv, ""},   // truncated transfer, then whole
		{"1706.03762", fetch.Fetched, record.SourceAr5iv, ""},   // arXiv 404 -> ar5iv
		{"2408.11857", fetch.Fetched, record.SourceAr5iv, ""},   // ar5iv fatal conversion page
		{"hep-th/9901001", fetch.Missing, "", "no HTML"},        // ar5iv 307 -> /abs
		{"2501.11120", fetch.Failed, "", "too large"},           // oversize body
		{"2510.14023", fetch.Failed, "", "elsewhere.invalid"},   // redirect off the configured hosts
		{"2403.08275", fetch.Failed, "", "503"},                 // 503 forever
		{"9999.99999", fetch.Failed, "", "month 99"},            // invalid ID named
	}
	var inputs []string
	for _, tt := range tests {
		inputs = append(inputs, tt.id)
	}
	results := f.All(context.Background(), inputs, 4, nil)
	for i, tt := range tests {
		r := results[i]
		if r.Outcome != tt.outcome || r.Source != tt.source && tt.outcome == fetch.Fetched {
			t.Errorf("%s: outcome %s from %q (err %v), want %s from %q", tt.id, r.Outcome, r.Source, r.Err, tt.outcome, tt.source)
		}
		switch {
		case tt.errHas == "" && r.Err != nil:
			t.Errorf("%s: unexpected error %v", tt.id, r.Err)
		case tt.errHas != "" && (r.Err == nil || !strings.Contains(r.Err.Error(), tt.errHas) || !strings.Contains(r.Err.Error(), strings.TrimSuffix(tt.id, "v1"))):
			t.Errorf("%s: error %v should name the paper and contain %q", tt.id, r.Err, tt.errHas)
		}
		if tt.outcome != fetch.Fetched {
			continue
		}
		// Both the raw page and the Document are in the store.
		doc, _, err := record.Documents.Get(context.Background(), st, r.ID)
		if err != nil {
			t.Errorf("%s: document not stored: %v", tt.id, err)
		} else if doc.Source != tt.source {
			t.Errorf("%s: document source %q, want %q", tt.id, doc.Source, tt.source)
		}
		raw, rec, err := record.RawPages.Get(context.Background(), st, r.ID)
		if err != nil || len(raw) == 0 || rec.Meta["source"] != tt.source {
			t.Errorf("%s: raw page not stored with its source: %v %v", tt.id, err, rec.Meta)
		}
	}
	if got := results[0].Doc; got == nil || got.ID != "2507.11127v1" || got.Title == nil || *got.Title != "Defining neurosymbolic AI" {
		t.Errorf("2507.11127: document %+v", got)
	}
	if d := results[7].Doc; d == nil || d.Conversion.Severity != record.SeverityFatal || !d.Conversion.Empty {
		t.Errorf("2408.11857: a fatal conversion must say so: %+v", d)
	}
	if n := len(a5.CallsTo("/html/hep-th/9901001")); n != 1 {
		t.Errorf("ar5iv asked %d times for a paper it lacks, want 1 (a 307 is an answer)", n)
	}
	if n := len(ax.CallsTo("/html/2501.11120")); n != 1 {
		t.Errorf("oversized body requested %d times, want 1 (not retried)", n)
	}
	for _, h := range append(ax.Calls(), a5.Calls()...) {
		if !strings.Contains(h.UserAgent, "mailto:team@example.org") {
			t.Fatalf("User-Agent %q lacks the contact address", h.UserAgent)
		}
	}
	// The ledger names every failure.
	for i, tt := range tests {
		if tt.outcome == fetch.Fetched || results[i].ID == "" {
			continue
		}
		e, err := st.Status(context.Background(), results[i].ID, fetch.Name)
		if err != nil || e.Status != store.StatusFailed || e.Error == "" {
			t.Errorf("%s: ledger %+v, %v; want failed with the reason", tt.id, e, err)
		}
	}
	checkSchedule(t, "arxiv", grants.times("arxiv"), ax.Calls())
	checkSchedule(t, "ar5iv", grants.times("ar5iv"), a5.Calls())

	// A second run makes no request for the papers already stored.
	before := len(ax.Calls()) + len(a5.Calls())
	again := f.All(context.Background(), []string{"2507.11127", "1706.03762", "2510.11261"}, 2, nil)
	for _, r := range again {
		if r.Outcome != fetch.Stored || r.Doc == nil {
			t.Errorf("%s: second fetch outcome %s, want stored", r.Input, r.Outcome)
		}
	}
	if after := len(ax.Calls()) + len(a5.Calls()); after != before {
		t.Errorf("second run made %d requests, want 0", after-before)
	}
	// A versioned request for another version than the stored one fetches.
	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2507.11127v1", "arxiv-2507.11127v1.html")
	if r := f.Fetch(context.Background(), "2507.11127v1"); r.Outcome != fetch.Stored {
		t.Errorf("v1 stored: outcome %s, want stored", r.Outcome)
	}
	if r := f.Fetch(context.Background(), "2507.11127v2"); r.Outcome != fetch.Missing && r.Outcome != fetch.Failed {
		t.Errorf("v2 not stored and not served: outcome %s", r.Outcome)
	}
	// --refetch asks again.
	f.Refetch = true
	if r := f.Fetch(context.Background(), "2507.11127"); r.Outcome != fetch.Fetched {
		t.Errorf("refetch: outcome %s (%v)", r.Outcome, r.Err)
	}
}

// checkSchedule asserts the limiter's schedule for one site: grants never
// closer together than the interval, every request the site saw granted,
// and none arriving before its grant. These are bounds a loaded machine
// cannot break; arrival gaps it can.
func checkSchedule(t *testing.T, site string, granted []time.Time, hits []sim.Call) {
	t.Helper()
	if len(granted) < 2 {
		t.Fatalf("%s: %d requests granted, spacing not measured", site, len(granted))
	}
	for i := 1; i < len(granted); i++ {
		if gap := granted[i].Sub(granted[i-1]); gap < interval {
			t.Errorf("%s: grants %d and %d only %v apart, limiter allows %v", site, i-1, i, gap, interval)
		}
	}
	if len(hits) > len(granted) {
		t.Fatalf("%s saw %d requests but the limiter granted only %d", site, len(hits), len(granted))
	}
	// Hits are in order of arrival, so the k-th cannot precede the k-th grant.
	for k, h := range hits {
		if h.Start.Before(granted[k]) {
			t.Errorf("%s: request %d (%s) arrived before its grant", site, k, h.Path)
		}
	}
}

func TestFetchDuplicatesOnce(t *testing.T) {
	ax, a5, c := sites(t)
	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2507.11127", "arxiv-2507.11127v1.html")
	f, _ := newFetcher(t, ax, a5, 0)
	res := f.All(context.Background(), []string{"2507.11127", "arXiv:2507.11127", " 2507.11127 "}, 3, nil)
	if n := len(ax.Calls()); n != 1 {
		t.Errorf("one paper asked three times made %d requests, want 1", n)
	}
	for _, r := range res {
		if r.Outcome != fetch.Fetched {
			t.Errorf("%q: %s %v", r.Input, r.Outcome, r.Err)
		}
	}
}

func TestFetchWrongPage(t *testing.T) {
	// A mirror serving another paper's page must not be stored as this one.
	ax, a5, c := sites(t)
	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2401.00001", "arxiv-2507.11127v1.html")
	f, st := newFetcher(t, ax, a5, 0)
	r := f.Fetch(context.Background(), "2401.00001")
	if r.Outcome != fetch.Failed || r.Err == nil || !strings.Contains(r.Err.Error(), "2507.11127v1") {
		t.Fatalf("outcome %s, err %v; want a failure naming the page's paper", r.Outcome, r.Err)
	}
	if _, _, err := record.Documents.Get(context.Background(), st, "2401.00001"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("wrong page stored as a document: %v", err)
	}
	// The raw page is kept for inspection.
	if _, _, err := record.RawPages.Get(context.Background(), st, "2401.00001"); err != nil {
		t.Errorf("raw page not kept: %v", err)
	}
}

func TestFetchRemembersMissing(t *testing.T) {
	ax, a5, _ := sites(t)
	f, _ := newFetcher(t, ax, a5, 0)
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	f.Now = func() time.Time { return now }
	if r := f.Fetch(context.Background(), "hep-th/9901001"); r.Outcome != fetch.Missing {
		t.Fatalf("outcome %s, want missing", r.Outcome)
	}
	asked := len(ax.Calls()) + len(a5.Calls())
	now = now.Add(24 * time.Hour) // the next night: not asked again
	if r := f.Fetch(context.Background(), "hep-th/9901001"); r.Outcome != fetch.Missing || !errors.Is(r.Err, fetch.ErrNoHTML) {
		t.Errorf("remembered: outcome %s, err %v", r.Outcome, r.Err)
	}
	if n := len(ax.Calls()) + len(a5.Calls()); n != asked {
		t.Errorf("a paper known to have no HTML was asked again the next day (%d requests)", n-asked)
	}
	now = now.Add(8 * 24 * time.Hour) // a week later: asked again
	f.Fetch(context.Background(), "hep-th/9901001")
	if n := len(ax.Calls()) + len(a5.Calls()); n == asked {
		t.Errorf("not asked again after the missing TTL")
	}
}

func TestFetchConcurrentSamePaper(t *testing.T) {
	ax, a5, c := sites(t)
	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2507.11127", "arxiv-2507.11127v1.html")
	f, _ := newFetcher(t, ax, a5, 0)
	var wg sync.WaitGroup
	outcomes := make([]string, 6)
	for i := range outcomes {
		wg.Go(func() { outcomes[i] = f.Fetch(context.Background(), "2507.11127").Outcome })
	}
	wg.Wait()
	if n := len(ax.Calls()); n != 1 {
		t.Errorf("six concurrent fetches of one paper made %d requests, want 1", n)
	}
	fetched := 0
	for _, o := range outcomes {
		if o == fetch.Fetched {
			fetched++
		} else if o != fetch.Stored {
			t.Errorf("outcome %s", o)
		}
	}
	if fetched != 1 {
		t.Errorf("%d fetched, want 1 (the others find it stored)", fetched)
	}
}

func TestFetchReparsesStoredPage(t *testing.T) {
	// A crash after the raw page was stored but before its Document: the
	// next fetch parses the stored page and asks nothing.
	ax, a5, _ := sites(t)
	f, st := newFetcher(t, ax, a5, 0)
	page, err := os.ReadFile(filepath.Join(fixtures.Dir(t, "arxiv-html"), "arxiv-2507.11127v1.html"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := record.RawPages.Put(context.Background(), st, "2507.11127", page, map[string]string{"source": "arxiv", "url": "https://arxiv.org/html/2507.11127"}); err != nil {
		t.Fatal(err)
	}
	r := f.Fetch(context.Background(), "2507.11127")
	if r.Outcome != fetch.Stored || r.Doc == nil || r.Doc.ID != "2507.11127v1" {
		t.Fatalf("outcome %s, doc %v, err %v", r.Outcome, r.Doc != nil, r.Err)
	}
	if n := len(ax.Calls()) + len(a5.Calls()); n != 0 {
		t.Errorf("%d requests for a paper whose page was stored", n)
	}
}
