package arxivapi_test

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
)

// fakeArxiv is the simulated export.arxiv.org/api/query (package sim)
// over a corpus of entries: id_list lookups (entries in date order, none
// for an unknown id, totalResults counting every id asked), searches with
// paging, and the API's limits and error feeds. before, when set, may
// answer a request itself (a misbehaviour the tests script) and return
// true; n counts requests from 1.
type fakeArxiv struct {
	*simtest.Server
	corpus *sim.Corpus
	before func(w http.ResponseWriter, h sim.Call, n int) bool
}

const searchQuery = "cat:cs.CL AND submittedDate:[202601010000 TO 202601312359]"

func newFake(t *testing.T) *fakeArxiv {
	t.Helper()
	c := sim.NewCorpus()
	f := &fakeArxiv{Server: simtest.Serve(t, sim.ArxivAPI, c), corpus: c}
	f.Intercept(func(w http.ResponseWriter, _ *http.Request, h sim.Call) bool {
		return f.before != nil && f.before(w, h, h.Seq+1)
	})
	return f
}

// recorded returns the requests received, in order.
func (f *fakeArxiv) recorded() []sim.Call { return f.Calls() }

// hold makes each request stay in flight for d.
func (f *fakeArxiv) hold(d time.Duration) { f.SetLimits(sim.Limits{Latency: d}) }

// add puts the entries of a testdata feed into the corpus.
func (f *fakeArxiv) add(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.corpus.AddFeed(b); err != nil {
		t.Fatal(err)
	}
}

// addEntry puts one entry into the corpus.
func (f *fakeArxiv) addEntry(t *testing.T, xml string) {
	t.Helper()
	if err := f.corpus.AddEntry(xml); err != nil {
		t.Fatal(err)
	}
}

type rawEntry struct{ id, xml string }

// testdataEntries reads the entries of a testdata feed as raw XML, keyed
// by canonical id; the test reads them without the package's types.
func testdataEntries(t *testing.T, file string) []rawEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Entries []struct {
			ID    string `xml:"id"`
			Inner string `xml:",innerxml"`
		} `xml:"entry"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var out []rawEntry
	for _, e := range doc.Entries {
		_, id, _ := strings.Cut(e.ID, "/abs/")
		out = append(out, rawEntry{id: arxiv.Normalize(id), xml: "<entry>" + e.Inner + "</entry>"})
	}
	return out
}

func feedXML(total, start int, entries []string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <link href="http://arxiv.org/api/query" rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query</title>
  <id>http://arxiv.org/api/fake</id>
  <updated>2026-11-30T00:00:00-05:00</updated>
`)
	fmt.Fprintf(&b, `  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">%d</opensearch:totalResults>
  <opensearch:startIndex xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">%d</opensearch:startIndex>
  <opensearch:itemsPerPage xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">%d</opensearch:itemsPerPage>
`, total, start, len(entries))
	for _, e := range entries {
		b.WriteString("  " + e + "\n")
	}
	b.WriteString("</feed>\n")
	return b.String()
}

func errorFeed(msg string) string {
	anchor := strings.ReplaceAll(msg, " ", "_")
	return feedXML(1, 0, []string{fmt.Sprintf(`<entry>
    <id>http://arxiv.org/api/errors#%s</id>
    <title>Error</title>
    <summary>%s</summary>
    <updated>2026-11-30T00:00:00-05:00</updated>
    <link href="http://arxiv.org/api/errors#%s" rel="alternate" type="text/html"/>
    <author><name>arXiv api core</name></author>
  </entry>`, anchor, msg, anchor)})
}

// genEntry is a minimal entry of the real shape for a generated id.
func genEntry(id string, day int) string {
	return fmt.Sprintf(`<entry>
    <id>http://arxiv.org/abs/%[1]sv1</id>
    <updated>2025-03-%02[2]dT10:00:00Z</updated>
    <published>2025-03-%02[2]dT10:00:00Z</published>
    <title>Generated paper %[1]s</title>
    <summary>Abstract of %[1]s.</summary>
    <author><name>Gen Author</name></author>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
  </entry>`, id, 1+day%28)
}

func writeFeed(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/atom+xml; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

type setup struct {
	interval time.Duration // default: effectively unlimited
	opts     arxivapi.Options
}

func newClient(t *testing.T, base string, su setup) *arxivapi.Client {
	t.Helper()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	interval := su.interval
	if interval == 0 {
		interval = time.Microsecond
	}
	hc, err := httpx.New(httpx.Config{
		UserAgent:    httpx.UserAgent("test", "test@example.org"),
		RetryMax:     3,
		RetryWaitMin: time.Millisecond,
		RetryWaitMax: 10 * time.Millisecond,
		Logger:       log,
	}, arxivapi.ServiceConfig(base, interval))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := hc.Service(arxivapi.ServiceName)
	if err != nil {
		t.Fatal(err)
	}
	opts := su.opts
	if opts.Logger == nil {
		opts.Logger = log
	}
	c, err := arxivapi.New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// sameEntry compares entries, times by instant.
func sameEntry(got, want record.ArxivEntry) bool {
	if !got.Published.Equal(want.Published) || !got.Updated.Equal(want.Updated) {
		return false
	}
	got.Published, got.Updated, want.Published, want.Updated = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return reflect.DeepEqual(got, want)
}

func TestServiceConfig(t *testing.T) {
	sc := arxivapi.ServiceConfig("", 0)
	if sc.Name != arxivapi.ServiceName || sc.BaseURL != "https://export.arxiv.org" || sc.Interval != 3*time.Second || sc.MaxInFlight != 1 {
		t.Errorf("defaults: %+v, want export.arxiv.org, 3s, one in flight", sc)
	}
	sc = arxivapi.ServiceConfig("http://localhost:9", 5*time.Second)
	if sc.BaseURL != "http://localhost:9" || sc.Interval != 5*time.Second || sc.MaxInFlight != 1 {
		t.Errorf("explicit: %+v", sc)
	}
}

func TestNewPageSize(t *testing.T) {
	hc, err := httpx.New(httpx.Config{UserAgent: "test"}, arxivapi.ServiceConfig("http://127.0.0.1:1", 0))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := hc.Service(arxivapi.ServiceName)
	for _, size := range []int{-1, 2001} {
		if _, err := arxivapi.New(svc, arxivapi.Options{PageSize: size}); err == nil {
			t.Errorf("New accepted page size %d", size)
		}
	}
	if _, err := arxivapi.New(nil, arxivapi.Options{}); err == nil {
		t.Error("New accepted a nil service")
	}
}

func TestLookup(t *testing.T) {
	srv := newFake(t)
	srv.add(t, "lookup.xml")
	c := newClient(t, srv.URL, setup{})

	// Versions, the arXiv: prefix, a subject class and a duplicate; one id
	// arXiv does not know.
	ids := []string{"2401.00001v1", "hep-th/9901001", "math.GT/0309136", "1501.99999", "arXiv:2401.00001"}
	got, err := c.Lookup(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}

	hits := srv.recorded()
	if len(hits) != 1 {
		t.Fatalf("%d requests, want 1", len(hits))
	}
	q := hits[0].Query()
	if q.Get("id_list") != "2401.00001,hep-th/9901001,math/0309136,1501.99999" || q.Get("max_results") != "4" {
		t.Errorf("id_list %q max_results %q, want the four versionless ids and 4", q.Get("id_list"), q.Get("max_results"))
	}

	want := map[string]record.ArxivEntry{
		"2401.00001": {
			ID: "2401.00001", Version: 2,
			Published: date("2024-01-02T09:00:01Z"), Updated: date("2024-02-15T12:30:00Z"),
			Title:           "Grounded Ideation: Anticipating Research Ideas from Their Sources",
			Authors:         []string{"Dana Example", "Eli Sample", "Fay Placeholder"},
			Abstract:        "We ask whether a model can anticipate a paper's idea from the papers it builds on. We build a test set from papers published after the model's cutoff.",
			PrimaryCategory: "cs.CL", Categories: []string{"cs.CL", "cs.AI", "cs.LG"},
			DOI: "10.9999/groundwork.2024.1", JournalRef: "Proc. Fixture Conf. 2024", Comment: "9 pages, 3 figures",
		},
		"hep-th/9901001": {
			ID: "hep-th/9901001", Version: 1,
			Published: date("1999-01-04T17:23:40Z"), Updated: date("1999-01-04T17:23:40Z"),
			Title:           "Boundary Terms for a Toy Brane World",
			Authors:         []string{"A. N. Physicist"},
			Abstract:        "We compute boundary terms for a toy brane world model. The computation is short and the result is simple.",
			PrimaryCategory: "hep-th", Categories: []string{"hep-th"},
			Comment: "8 pages, LaTeX",
		},
		"math/0309136": {
			ID: "math/0309136", Version: 2,
			Published: date("2003-09-08T14:02:11Z"), Updated: date("2004-01-10T08:15:00Z"),
			Title:           "Knots in a Test Fixture",
			Authors:         []string{"B. Topologist", "C. Geometer"},
			Abstract:        "Every knot in this fixture is trivial.",
			PrimaryCategory: "math.GT", Categories: []string{"math.GT", "math.AG", "57M25"},
			DOI: "10.9999/fixture.knots.2004", JournalRef: "J. Fixture Topol. 1 (2004) 1-12", Comment: "12 pages; v2: typos fixed",
		},
	}
	if len(got) != len(want) {
		t.Errorf("got %d entries %v, want %d", len(got), slices.Sorted(maps.Keys(got)), len(want))
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("%s missing", id)
			continue
		}
		if !sameEntry(g, w) {
			t.Errorf("%s:\n got %+v\nwant %+v", id, g, w)
		}
	}
	if _, ok := got["1501.99999"]; ok {
		t.Error("unknown id 1501.99999 has an entry")
	}
}

func TestLookupErrorFeed(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "error_incorrect_id.xml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		status  int
		wantErr bool
	}{
		{http.StatusOK, false},        // an error entry in a 200 feed: the id is missing
		{http.StatusBadRequest, true}, // a refused query: its explanation is the error
		{http.StatusNotFound, true},   // anything else that is not 200
		{http.StatusForbidden, true},  // arXiv blocks abusers with 403
		{http.StatusNotImplemented, true},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			srv := newFake(t)
			srv.before = func(w http.ResponseWriter, _ sim.Call, _ int) bool {
				writeFeed(w, tt.status, string(body))
				return true
			}
			c := newClient(t, srv.URL, setup{})
			got, err := c.Lookup(context.Background(), []string{"2401.00001"})
			if !tt.wantErr {
				if err != nil || len(got) != 0 {
					t.Errorf("got %v, %v; want no entries and no error", got, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %v, want an error", got)
			}
			for _, want := range []string{"2401.00001", strconv.Itoa(tt.status), "incorrect id format for 1234.5678"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestLookupChunks(t *testing.T) {
	srv := newFake(t)
	var ids, known []string
	for i := range 250 {
		id := fmt.Sprintf("2503.%05d", 10000+i)
		ids = append(ids, id)
		if i%10 != 3 { // every tenth paper unknown
			srv.addEntry(t, genEntry(id, i))
			known = append(known, id)
		}
	}
	c := newClient(t, srv.URL, setup{})
	got, err := c.Lookup(context.Background(), append(ids, ids[7]+"v3"))
	if err != nil {
		t.Fatal(err)
	}
	var sent []string
	var sizes []int
	for _, h := range srv.recorded() {
		list := strings.Split(h.Query().Get("id_list"), ",")
		sizes = append(sizes, len(list))
		sent = append(sent, list...)
		if h.Query().Get("max_results") != strconv.Itoa(len(list)) {
			t.Errorf("max_results %s for %d ids", h.Query().Get("max_results"), len(list))
		}
	}
	if !slices.Equal(sizes, []int{100, 100, 50}) {
		t.Errorf("chunk sizes %v, want [100 100 50]", sizes)
	}
	if !slices.Equal(sent, ids) {
		t.Error("ids not sent once each in input order")
	}
	if len(got) != len(known) {
		t.Errorf("%d entries, want %d", len(got), len(known))
	}
	for _, id := range known {
		if e, ok := got[id]; !ok || e.ID != id || e.Title != "Generated paper "+id {
			t.Errorf("%s: %+v", id, e)
		}
	}
}

func TestLookupInvalidID(t *testing.T) {
	srv := newFake(t)
	c := newClient(t, srv.URL, setup{})
	_, err := c.Lookup(context.Background(), []string{"2401.00001", "1234.5678"})
	if err == nil || !strings.Contains(err.Error(), "1234.5678") {
		t.Errorf("err = %v, want an error naming the bad id", err)
	}
	if n := len(srv.recorded()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
	got, err := c.Lookup(context.Background(), nil)
	if err != nil || len(got) != 0 || len(srv.recorded()) != 0 {
		t.Errorf("Lookup(nil) = %v, %v with %d requests; want nothing", got, err, len(srv.recorded()))
	}
}

func TestRetry(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		headers []string
	}{
		{"503 without Retry-After", http.StatusServiceUnavailable, nil},
		{"503 with Retry-After", http.StatusServiceUnavailable, []string{"Retry-After", "1"}},
		{"429", http.StatusTooManyRequests, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t)
			srv.add(t, "lookup.xml")
			srv.before = func(w http.ResponseWriter, _ sim.Call, n int) bool {
				if n > 1 {
					return false
				}
				for i := 0; i+1 < len(tt.headers); i += 2 {
					w.Header().Set(tt.headers[i], tt.headers[i+1])
				}
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(tt.status)
				io.WriteString(w, "<html><body>Service temporarily unavailable</body></html>")
				return true
			}
			c := newClient(t, srv.URL, setup{})
			got, err := c.Lookup(context.Background(), []string{"2401.00001"})
			if err != nil {
				t.Fatal(err)
			}
			if got["2401.00001"].Title == "" {
				t.Errorf("entry after retry: %+v", got)
			}
			hits := srv.recorded()
			if len(hits) != 2 {
				t.Fatalf("%d requests, want 2", len(hits))
			}
			if len(tt.headers) > 0 {
				if gap := hits[1].Start.Sub(hits[0].Start); gap < time.Second {
					t.Errorf("retry %s after the 503, want >= 1s (Retry-After)", gap)
				}
			}
		})
	}

	// Persistent 503: the caller gets the *httpx.StatusError.
	srv := newFake(t)
	srv.before = func(w http.ResponseWriter, _ sim.Call, _ int) bool {
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	}
	c := newClient(t, srv.URL, setup{})
	_, err := c.Search(context.Background(), searchQuery, 0, 0)
	var se *httpx.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusServiceUnavailable || se.Attempts != 4 {
		t.Errorf("err = %v, want a *httpx.StatusError 503 after 4 attempts", err)
	}
}

// TestPoliteness checks arXiv's terms at the server: requests at least the
// interval apart and never two at once, even from concurrent callers.
func TestPoliteness(t *testing.T) {
	const interval = 100 * time.Millisecond
	// Arrival times include transport latency, which differs between a new
	// connection and a reused one; the client spaces request starts.
	const tolerance = 10 * time.Millisecond
	srv := newFake(t)
	srv.add(t, "search_cs_CL_202601.xml")
	var ids []string
	for i := range 120 {
		id := fmt.Sprintf("2503.%05d", 20000+i)
		ids = append(ids, id)
		srv.addEntry(t, genEntry(id, i))
	}
	// Each request takes longer than the interval, so only the one-at-a-time
	// rule keeps two callers' requests from overlapping.
	srv.hold(interval + interval/2)
	c := newClient(t, srv.URL, setup{interval: interval, opts: arxivapi.Options{PageSize: 2}})

	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := c.Lookup(context.Background(), ids); err != nil {
			t.Error(err)
		}
	})
	wg.Go(func() {
		if _, err := c.Search(context.Background(), searchQuery, 0, 0); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()

	hits := srv.recorded()
	if len(hits) != 2+3 {
		t.Fatalf("%d requests, want 2 lookups and 3 search pages", len(hits))
	}
	for i := 1; i < len(hits); i++ {
		if gap := hits[i].Start.Sub(hits[i-1].Start); gap < interval-tolerance {
			t.Errorf("gap before request %d = %s, want >= %s", i+1, gap, interval)
		}
	}
	if m := srv.Stats().MaxInFlight; m != 1 {
		t.Errorf("%d requests in flight at once, want 1", m)
	}
}

func TestSearch(t *testing.T) {
	all := testdataEntries(t, "search_cs_CL_202601.xml")
	var allIDs []string
	for _, e := range all {
		allIDs = append(allIDs, e.id)
	}
	tests := []struct {
		name              string
		pageSize          int
		start, limit      int
		wantIDs           []string
		wantStarts, wantN []int // start and max_results of each request
	}{
		{"all in one page", 10, 0, 0, allIDs, []int{0}, []int{10}},
		{"pages of two", 2, 0, 0, allIDs, []int{0, 2, 4}, []int{2, 2, 1}},
		{"limit", 2, 0, 3, allIDs[:3], []int{0, 2}, []int{2, 1}},
		{"from start", 2, 3, 0, allIDs[3:], []int{3}, []int{2}},
		{"start and limit", 3, 1, 2, allIDs[1:3], []int{1}, []int{2}},
		{"start past the end", 2, 7, 0, nil, []int{7}, []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t)
			srv.add(t, "search_cs_CL_202601.xml")
			c := newClient(t, srv.URL, setup{opts: arxivapi.Options{PageSize: tt.pageSize}})
			res, err := c.Search(context.Background(), searchQuery, tt.start, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, e := range res.Entries {
				ids = append(ids, e.ID)
			}
			if !slices.Equal(ids, tt.wantIDs) {
				t.Errorf("entries %v, want %v", ids, tt.wantIDs)
			}
			if res.Total != len(all) || res.Capped || res.EmptyPage || res.Query != searchQuery {
				t.Errorf("result %+v, want total %d and no flags", res, len(all))
			}
			var starts, ns []int
			for _, h := range srv.recorded() {
				q := h.Query()
				if q.Get("search_query") != searchQuery || q.Get("sortBy") != "submittedDate" || q.Get("sortOrder") != "ascending" || q.Has("id_list") {
					t.Errorf("query %v", q)
				}
				s, _ := strconv.Atoi(q.Get("start"))
				n, _ := strconv.Atoi(q.Get("max_results"))
				starts, ns = append(starts, s), append(ns, n)
			}
			if !slices.Equal(starts, tt.wantStarts) || !slices.Equal(ns, tt.wantN) {
				t.Errorf("requests start %v max_results %v, want %v %v", starts, ns, tt.wantStarts, tt.wantN)
			}
		})
	}

	// The entries themselves: a cross-listed paper keeps its own primary
	// category; the date is v1's.
	srv := newFake(t)
	srv.add(t, "search_cs_CL_202601.xml")
	c := newClient(t, srv.URL, setup{})
	res, err := c.Search(context.Background(), searchQuery, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	cross := res.Entries[2]
	if cross.ID != "2601.01033" || cross.PrimaryCategory != "cs.LG" || !slices.Equal(cross.Categories, []string{"cs.LG", "cs.CL", "stat.ML"}) || len(cross.Authors) != 3 {
		t.Errorf("cross-listed entry %+v", cross)
	}
	if v2 := res.Entries[1]; v2.Version != 2 || !v2.Published.Equal(date("2026-01-03T16:40:00Z")) || v2.Title != "Citation Intents at Scale" {
		t.Errorf("revised entry %+v", v2)
	}
}

func TestSearchEmptyPages(t *testing.T) {
	tests := []struct {
		name      string
		empties   int // times the page at start=2 comes back empty
		wantIDs   int
		wantEmpty bool
		wantHits  int
	}{
		{"one empty page, then the page", 1, 5, false, 4},
		{"empty until the retries run out", 100, 2, true, 1 + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t)
			srv.add(t, "search_cs_CL_202601.xml")
			found := len(testdataEntries(t, "search_cs_CL_202601.xml"))
			var empties int
			srv.before = func(w http.ResponseWriter, h sim.Call, _ int) bool {
				if h.Query().Get("start") == "2" && empties < tt.empties {
					empties++
					writeFeed(w, http.StatusOK, feedXML(found, 2, nil))
					return true
				}
				return false
			}
			c := newClient(t, srv.URL, setup{opts: arxivapi.Options{PageSize: 2}})
			res, err := c.Search(context.Background(), searchQuery, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Entries) != tt.wantIDs || res.EmptyPage != tt.wantEmpty {
				t.Errorf("%d entries, EmptyPage %v; want %d, %v", len(res.Entries), res.EmptyPage, tt.wantIDs, tt.wantEmpty)
			}
			if n := len(srv.recorded()); n != tt.wantHits {
				t.Errorf("%d requests, want %d", n, tt.wantHits)
			}
		})
	}
}

// TestSearchShortPages: the API may return fewer entries than asked, and
// a result set that shifts between calls repeats an entry. The next page
// starts after the entries received; repeats are dropped.
func TestSearchShortPages(t *testing.T) {
	srv := newFake(t)
	srv.add(t, "search_cs_CL_202601.xml")
	want := testdataEntries(t, "search_cs_CL_202601.xml")
	var list []string
	for _, e := range want {
		list = append(list, e.xml)
	}
	list = slices.Insert(list, 2, list[1]) // e1 twice
	srv.before = func(w http.ResponseWriter, h sim.Call, _ int) bool {
		start, _ := strconv.Atoi(h.Query().Get("start"))
		writeFeed(w, http.StatusOK, feedXML(len(list), start, list[min(start, len(list)):min(start+1, len(list))]))
		return true
	}
	c := newClient(t, srv.URL, setup{opts: arxivapi.Options{PageSize: 3}})
	res, err := c.Search(context.Background(), searchQuery, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids, wantIDs []string
	for _, e := range res.Entries {
		ids = append(ids, e.ID)
	}
	for _, e := range want {
		wantIDs = append(wantIDs, e.id)
	}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("entries %v, want %v", ids, wantIDs)
	}
	if n := len(srv.recorded()); n != len(list) {
		t.Errorf("%d requests, want %d (one per entry of the list)", n, len(list))
	}
}

func TestSearchCap(t *testing.T) {
	srv := newFake(t)
	srv.before = func(w http.ResponseWriter, h sim.Call, _ int) bool {
		start, _ := strconv.Atoi(h.Query().Get("start"))
		n, _ := strconv.Atoi(h.Query().Get("max_results"))
		if start+n > 30000 {
			return false // the fake's own check answers 400
		}
		page := make([]string, n)
		for i := range page { // lean entries: 30,000 of them get parsed
			page[i] = fmt.Sprintf("<entry><id>http://arxiv.org/abs/2503.%05dv1</id><published>2025-03-01T10:00:00Z</published><title>t</title></entry>", start+i)
		}
		writeFeed(w, http.StatusOK, feedXML(45000, start, page))
		return true
	}
	c := newClient(t, srv.URL, setup{opts: arxivapi.Options{PageSize: 1700}})
	res, err := c.Search(context.Background(), "cat:cs.LG", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Capped || len(res.Entries) != 30000 || res.Total != 45000 {
		t.Errorf("Capped %v, %d entries, total %d; want capped at 30000 of 45000", res.Capped, len(res.Entries), res.Total)
	}
	for _, h := range srv.recorded() {
		start, _ := strconv.Atoi(h.Query().Get("start"))
		n, _ := strconv.Atoi(h.Query().Get("max_results"))
		if start+n > 30000 || n > 1700 {
			t.Errorf("request start %d max_results %d breaks the limits", start, n)
		}
	}
}

func TestSearchErrors(t *testing.T) {
	srv := newFake(t)
	srv.before = func(w http.ResponseWriter, h sim.Call, n int) bool {
		status := http.StatusBadRequest
		if n > 1 {
			status = http.StatusOK // some errors come in a 200 feed
		}
		writeFeed(w, status, errorFeed("start must be an integer"))
		return true
	}
	c := newClient(t, srv.URL, setup{})
	for range 2 {
		_, err := c.Search(context.Background(), searchQuery, 0, 0)
		if err == nil || !strings.Contains(err.Error(), "start must be an integer") {
			t.Errorf("err = %v, want the API's explanation", err)
		}
	}
	if _, err := c.Search(context.Background(), "", 0, 0); err == nil {
		t.Error("empty query accepted")
	}
	if _, err := c.Search(context.Background(), searchQuery, -1, 0); err == nil {
		t.Error("negative start accepted")
	}
}

func TestMalformedFeed(t *testing.T) {
	tests := []struct{ name, body string }{
		{"not xml", "<html><body>oops"},
		{"bad id", feedXML(1, 0, []string{`<entry><id>http://arxiv.org/abs/not-an-id</id><published>2024-01-01T00:00:00Z</published><title>x</title></entry>`})},
		{"bad date", feedXML(1, 0, []string{`<entry><id>http://arxiv.org/abs/2401.00001v1</id><published>yesterday</published><title>x</title></entry>`})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t)
			srv.before = func(w http.ResponseWriter, _ sim.Call, _ int) bool {
				writeFeed(w, http.StatusOK, tt.body)
				return true
			}
			c := newClient(t, srv.URL, setup{})
			if got, err := c.Lookup(context.Background(), []string{"2401.00001"}); err == nil {
				t.Errorf("got %v, want an error", got)
			}
		})
	}
}

func TestSubmittedBetween(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2026, 1, 31, 23, 59, 0, 0, time.UTC)
	if got, want := arxivapi.SubmittedBetween(from, to), "submittedDate:[202601010000 TO 202601312359]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Other zones are converted to GMT.
	est := time.FixedZone("EST", -5*3600)
	if got, want := arxivapi.SubmittedBetween(from.In(est), to.In(est)), "submittedDate:[202601010000 TO 202601312359]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestLookupSubjectClassInID: should arXiv ever write an old-style id with
// its subject class, the entry still lands under the canonical id.
func TestLookupSubjectClassInID(t *testing.T) {
	srv := newFake(t)
	srv.before = func(w http.ResponseWriter, _ sim.Call, _ int) bool {
		writeFeed(w, http.StatusOK, feedXML(1, 0, []string{`<entry><id>http://arxiv.org/abs/math.GT/0309136v3</id><published>2003-09-08T14:02:11Z</published><title>Knots</title></entry>`}))
		return true
	}
	c := newClient(t, srv.URL, setup{})
	got, err := c.Lookup(context.Background(), []string{"math/0309136"})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := got["math/0309136"]; !ok || e.ID != "math/0309136" || e.Version != 3 {
		t.Errorf("got %+v, want math/0309136 v3", got)
	}
}
