package oaipmh_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
)

// token2 is the resumption token of the first page of csQuery, in the
// form of arXiv's 2025 server: its query, percent-encoded (as
// testdata/listrecords_1.xml has it too). The client must send it back
// exactly as received, so it arrives decoded once.
const token2 = "verb%3DListRecords%26metadataPrefix%3DarXiv%26from%3D2026-03-03%26set%3Dcs%26skip%3D3"

// hit is one request as the repository saw it.
type hit = sim.Call

// fakeOAI is the simulated arXiv OAI-PMH repository (package sim) holding
// the records of testdata pages, in pages of three. before, when set, may
// answer a request itself (a page or an error the test scripts) and
// return true; n counts requests from 1.
type fakeOAI struct {
	*simtest.Server
	before func(w http.ResponseWriter, r *http.Request, h hit, n int) bool
}

// newFake holds the records of listrecords_{1,2,3}.xml (six, in format
// arXiv, of set cs, one deleted) and arxivraw.xml (two, in arXivRaw).
func newFake(t *testing.T) *fakeOAI {
	return newFakeWith(t, "listrecords_1.xml", "listrecords_2.xml", "listrecords_3.xml", "arxivraw.xml")
}

func newFakeWith(t *testing.T, files ...string) *fakeOAI {
	t.Helper()
	c := sim.NewCorpus()
	for _, f := range files {
		if err := c.AddOAIPage(readTestdata(t, f)); err != nil {
			t.Fatal(err)
		}
	}
	f := &fakeOAI{Server: simtest.ServeOptions(t, sim.OAIPMH, c, sim.Options{OAIPageSize: 3})}
	f.Intercept(func(w http.ResponseWriter, r *http.Request, h sim.Call) bool {
		return f.before != nil && f.before(w, r, h, h.Seq+1)
	})
	return f
}

// serve answers with a testdata file.
func serve(t *testing.T, w http.ResponseWriter, file string) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.Write(readTestdata(t, file))
}

func (f *fakeOAI) recorded() []hit { return f.Calls() }

func readTestdata(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Error(err)
	}
	return b
}

// newClient returns a client for the fake's /oai with requests interval
// apart (effectively unlimited when 0) and quick retries.
func newClient(t *testing.T, srv *fakeOAI, interval time.Duration) *oaipmh.Client {
	t.Helper()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	if interval == 0 {
		interval = time.Microsecond
	}
	hc, err := httpx.New(httpx.Config{
		UserAgent:    httpx.UserAgent("test", "test@example.org"),
		RetryMax:     3,
		RetryWaitMin: time.Millisecond,
		RetryWaitMax: 10 * time.Millisecond,
		Logger:       log,
	}, oaipmh.ServiceConfig(srv.URL+sim.OAIPath, interval))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := hc.Service(oaipmh.ServiceName)
	if err != nil {
		t.Fatal(err)
	}
	c, err := oaipmh.New(svc, oaipmh.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// collect harvests q and returns the records fn saw.
func collect(t *testing.T, c *oaipmh.Client, q oaipmh.Query) ([]oaipmh.Record, oaipmh.Harvest, error) {
	t.Helper()
	var recs []oaipmh.Record
	h, err := c.ListRecords(context.Background(), q, func(r oaipmh.Record) error {
		recs = append(recs, r)
		return nil
	})
	return recs, h, err
}

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func instant(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// csQuery is the harvest the listrecords_*.xml pages answer: set cs since
// the previous harvest's response date.
var csQuery = oaipmh.Query{From: instant("2026-03-03T01:02:03Z"), Set: "cs"}

func TestServiceConfig(t *testing.T) {
	sc := oaipmh.ServiceConfig("", 0)
	if sc.Name != "oai-pmh" || sc.BaseURL != "https://oaipmh.arxiv.org/oai" || sc.Interval != 3*time.Second || sc.MaxInFlight != 1 {
		t.Errorf("defaults: %+v, want oai-pmh at oaipmh.arxiv.org/oai, 3s, one in flight", sc)
	}
	sc = oaipmh.ServiceConfig("http://localhost:9/oai", 5*time.Second)
	if sc.BaseURL != "http://localhost:9/oai" || sc.Interval != 5*time.Second || sc.MaxInFlight != 1 {
		t.Errorf("explicit: %+v", sc)
	}
	if _, err := oaipmh.New(nil, oaipmh.Options{}); err == nil {
		t.Error("New accepted a nil service")
	}
}

func TestListRecords(t *testing.T) {
	srv := newFake(t)
	c := newClient(t, srv, 0)
	recs, h, err := collect(t, c, csQuery)
	if err != nil {
		t.Fatal(err)
	}

	want := []oaipmh.Record{
		{
			Identifier: "oai:arXiv.org:2603.01234", ID: "2603.01234", Datestamp: day("2026-03-04"), Sets: []string{"cs"},
			Meta: &oaipmh.ArxivMeta{
				ID: "2603.01234", Created: day("2026-03-02"),
				Title:      "Grounded Ideation: Anticipating Research Ideas from Their Sources",
				Authors:    []string{"Dana Example", "Eli Sample Jr", "The Fixture Collaboration"},
				Categories: []string{"cs.CL", "cs.AI", "cs.LG"}, Primary: "cs.CL",
				Abstract: "We ask whether a model can anticipate a paper's idea from the papers it builds on. We build a test set from papers published after the model's cutoff.",
				DOI:      "10.9999/groundwork.2026.1", JournalRef: "Proc. Fixture Conf. 2026", Comments: "9 pages, 3 figures",
				License: "http://creativecommons.org/licenses/by/4.0/",
			},
		},
		{
			// Cross-listed: the primary category is the record's first,
			// whichever set the harvest asked for.
			Identifier: "oai:arXiv.org:2603.00987", ID: "2603.00987", Datestamp: day("2026-03-04"), Sets: []string{"cs", "stat"},
			Meta: &oaipmh.ArxivMeta{
				ID: "2603.00987", Created: day("2026-03-01"), Updated: day("2026-03-03"),
				Title: "Citation Intents at Scale", Authors: []string{"Fay Placeholder"},
				Categories: []string{"stat.ML", "cs.LG"}, Primary: "stat.ML",
				Abstract: "We label citation intents for a million citations.", Comments: "v2: new experiments",
			},
		},
		{Identifier: "oai:arXiv.org:2602.09999", ID: "2602.09999", Datestamp: day("2026-03-03"), Deleted: true, Sets: []string{"cs"}},
		{
			// Old-style id; in a 2026 harvest because its record changed,
			// while the paper dates from 1999.
			Identifier: "oai:arXiv.org:hep-th/9901001", ID: "hep-th/9901001", Datestamp: day("2026-03-04"), Sets: []string{"physics:hep-th", "cs"},
			Meta: &oaipmh.ArxivMeta{
				ID: "hep-th/9901001", Created: day("1999-01-04"),
				Title: "Boundary Terms for a Toy Brane World", Authors: []string{"A. N. Physicist"},
				Categories: []string{"hep-th", "cs.LG"}, Primary: "hep-th",
				Abstract: "We compute boundary terms for a toy brane world model. The computation is short and the result is simple.",
				Comments: "8 pages, LaTeX",
			},
		},
		{
			Identifier: "oai:arXiv.org:2603.00042", ID: "2603.00042", Datestamp: day("2026-03-03"), Sets: []string{"cs"},
			Meta: &oaipmh.ArxivMeta{
				ID: "2603.00042", Created: day("2026-03-02"),
				Title: "Planning with Fixtures", Authors: []string{"Gen Author"},
				Categories: []string{"cs.AI"}, Primary: "cs.AI",
				Abstract: "Fixtures plan themselves.", License: "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
			},
		},
		{
			Identifier: "oai:arXiv.org:2603.01500", ID: "2603.01500", Datestamp: day("2026-03-04"), Sets: []string{"cs", "math"},
			Meta: &oaipmh.ArxivMeta{
				ID: "2603.01500", Created: day("2026-03-03"),
				Title: "Knots & Graphs in a Test Fixture", Authors: []string{"B. Topologist", "C. Geometer"},
				Categories: []string{"math.GT", "cs.CG", "57M25"}, Primary: "math.GT",
				Abstract: "Every knot in this fixture is trivial.",
			},
		},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(recs[i], want[i]) {
			t.Errorf("record %d:\n got %+v %+v\nwant %+v %+v", i, recs[i], recs[i].Meta, want[i], want[i].Meta)
		}
	}
	wantH := oaipmh.Harvest{ResponseDate: instant(sim.OAIResponseDate), Records: 6, Deleted: 1, Pages: 2}
	if h != wantH {
		t.Errorf("harvest %+v, want %+v", h, wantH)
	}

	// The first request carries the query, day-granular; every later one
	// the previous page's token alone, each page asked for once.
	hits := srv.recorded()
	wantQ := []url.Values{
		{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}, "from": {"2026-03-03"}, "set": {"cs"}},
		{"verb": {"ListRecords"}, "resumptionToken": {token2}},
	}
	if len(hits) != len(wantQ) {
		t.Fatalf("%d requests, want %d", len(hits), len(wantQ))
	}
	for i, h := range hits {
		if h.Path != sim.OAIPath || !reflect.DeepEqual(h.Query(), wantQ[i]) {
			t.Errorf("request %d: %s?%v, want /oai?%v", i+1, h.Path, h.Query(), wantQ[i])
		}
	}
}

// TestFirstRequest checks the arguments of the first request: defaults,
// day granularity in UTC, every argument set.
func TestFirstRequest(t *testing.T) {
	est := time.FixedZone("EST", -5*3600)
	tests := []struct {
		name string
		q    oaipmh.Query
		want url.Values
	}{
		{"whole repository", oaipmh.Query{},
			url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}}},
		{"every argument", oaipmh.Query{From: day("2026-03-01"), Until: day("2026-03-02"), Set: "cs:cs:AI", MetadataPrefix: "oai_dc"},
			url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"oai_dc"}, "from": {"2026-03-01"}, "until": {"2026-03-02"}, "set": {"cs:cs:AI"}}},
		{"late evening in New York is the next day in UTC", oaipmh.Query{From: time.Date(2026, 3, 3, 21, 0, 0, 0, est), Set: "physics:hep-th"},
			url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}, "from": {"2026-03-04"}, "set": {"physics:hep-th"}}},
		{"one day", oaipmh.Query{From: instant("2026-03-03T08:00:00Z"), Until: instant("2026-03-03T02:00:00Z")},
			url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}, "from": {"2026-03-03"}, "until": {"2026-03-03"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t)
			srv.before = func(w http.ResponseWriter, _ *http.Request, _ hit, _ int) bool {
				serve(t, w, "norecordsmatch.xml")
				return true
			}
			c := newClient(t, srv, 0)
			if _, _, err := collect(t, c, tt.q); err != nil {
				t.Fatal(err)
			}
			hits := srv.recorded()
			if len(hits) != 1 || !reflect.DeepEqual(hits[0].Query(), tt.want) {
				t.Errorf("requests %v, want one with %v", hits, tt.want)
			}
		})
	}
}

func TestListRecordsInvalidQuery(t *testing.T) {
	srv := newFake(t)
	c := newClient(t, srv, 0)
	if _, _, err := collect(t, c, oaipmh.Query{From: day("2026-03-03"), Until: day("2026-03-02")}); err == nil || !strings.Contains(err.Error(), "until is before from") {
		t.Errorf("err = %v, want until before from refused", err)
	}
	if _, err := c.ListRecords(context.Background(), csQuery, nil); err == nil {
		t.Error("nil callback accepted")
	}
	if n := len(srv.recorded()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

// TestOAIErrors: errors come in the body of a 200 response. noRecordsMatch
// is an empty harvest; the others fail it with an *oaipmh.Error.
func TestOAIErrors(t *testing.T) {
	tests := []struct {
		name        string
		first       string // file answering the first request, if not the repository
		page2       string // file answering token2, if not the repository
		wantCode    string // "" for no error
		wantMessage string
		wantH       oaipmh.Harvest
	}{
		{name: "noRecordsMatch", first: "norecordsmatch.xml",
			wantH: oaipmh.Harvest{ResponseDate: instant("2026-03-08T01:02:03Z"), Pages: 1}},
		{name: "badResumptionToken", page2: "badresumptiontoken.xml",
			wantCode: "badResumptionToken", wantMessage: "invalid or expired",
			wantH: oaipmh.Harvest{ResponseDate: instant(sim.OAIResponseDate), Records: 3, Deleted: 1, Pages: 2}},
		{name: "badArgument", first: "badargument.xml",
			wantCode: "badArgument", wantMessage: "illegal syntax",
			wantH: oaipmh.Harvest{ResponseDate: instant("2026-03-05T01:02:03Z"), Pages: 1}},
		{name: "cannotDisseminateFormat", first: "cannotdisseminateformat.xml",
			wantCode: "cannotDisseminateFormat", wantMessage: "metadataPrefix argument is not supported",
			wantH: oaipmh.Harvest{ResponseDate: instant("2026-03-05T01:02:03Z"), Pages: 1}},
		{name: "noSetHierarchy", first: "nosethierarchy.xml",
			wantCode: "noSetHierarchy", wantMessage: "does not support sets",
			wantH: oaipmh.Harvest{ResponseDate: instant("2026-03-05T01:02:03Z"), Pages: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t)
			srv.before = func(w http.ResponseWriter, _ *http.Request, h hit, _ int) bool {
				file := tt.first
				if h.Query().Has("resumptionToken") {
					file = tt.page2
				}
				if file == "" {
					return false
				}
				serve(t, w, file)
				return true
			}
			c := newClient(t, srv, 0)
			recs, h, err := collect(t, c, csQuery)
			if h != tt.wantH || len(recs) != tt.wantH.Records {
				t.Errorf("harvest %+v with %d records, want %+v", h, len(recs), tt.wantH)
			}
			if tt.wantCode == "" {
				if err != nil {
					t.Errorf("err = %v, want none", err)
				}
				return
			}
			var oe *oaipmh.Error
			if !errors.As(err, &oe) || oe.Code != tt.wantCode {
				t.Fatalf("err = %v, want an *oaipmh.Error %s", err, tt.wantCode)
			}
			for _, s := range []string{"list records", tt.wantCode, tt.wantMessage, "page " + strconv.Itoa(tt.wantH.Pages)} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if got, want := errors.Is(err, oaipmh.ErrBadResumptionToken), tt.wantCode == "badResumptionToken"; got != want {
				t.Errorf("errors.Is(err, ErrBadResumptionToken) = %v, want %v", got, want)
			}
		})
	}
}

// TestFlowControl: OAI-PMH flow control is a 503 with Retry-After; the
// page is asked for again after the wait and the harvest goes on.
func TestFlowControl(t *testing.T) {
	srv := newFake(t)
	var refused atomic.Bool
	srv.before = func(w http.ResponseWriter, _ *http.Request, h hit, _ int) bool {
		if h.Query().Get("resumptionToken") == token2 && !refused.Swap(true) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}
	c := newClient(t, srv, 0)
	_, h, err := collect(t, c, csQuery)
	if err != nil {
		t.Fatal(err)
	}
	if h.Records != 6 || h.Pages != 2 {
		t.Errorf("harvest %+v, want 6 records on 2 pages", h)
	}
	hits := srv.recorded()
	if len(hits) != 3 {
		t.Fatalf("%d requests, want 3 (page 2 twice)", len(hits))
	}
	if hits[1].Query().Get("resumptionToken") != token2 || hits[2].Query().Get("resumptionToken") != token2 {
		t.Errorf("requests 2 and 3 are %v and %v, want page 2 twice", hits[1].Query(), hits[2].Query())
	}
	if gap := hits[2].Start.Sub(hits[1].Start); gap < time.Second {
		t.Errorf("page 2 asked again after %s, want >= 1s (Retry-After)", gap)
	}
}

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"not found", http.StatusNotFound, "<html><body>no such page</body></html>", "status 404"},
		{"html with 200", http.StatusOK, "<html><body>maintenance</body></html>", "parse oai-pmh response"},
		{"other namespace", http.StatusOK, `<OAI-PMH xmlns="http://www.openarchives.org/OAI/1.1/"><responseDate>2026-03-05T01:02:03Z</responseDate></OAI-PMH>`, "parse oai-pmh response"},
		{"neither records nor error", http.StatusOK, `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2026-03-05T01:02:03Z</responseDate></OAI-PMH>`, "neither ListRecords nor error"},
		{"no response date", http.StatusOK, `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords/></OAI-PMH>`, "responseDate"},
		{"oai error with 400", http.StatusBadRequest, string(readTestdata(t, "badargument.xml")), "status 400: oai-pmh error badArgument"},
		{"persistent 503", http.StatusServiceUnavailable, "busy", "status 503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t)
			srv.before = func(w http.ResponseWriter, _ *http.Request, _ hit, _ int) bool {
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
				return true
			}
			c := newClient(t, srv, 0)
			_, h, err := collect(t, c, csQuery)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), "list records metadataPrefix=arXiv from=2026-03-03 set=cs: page 1") {
				t.Errorf("error %q does not name the request", err)
			}
			if h.Records != 0 {
				t.Errorf("harvest %+v, want no records", h)
			}
			var se *httpx.StatusError
			if got := errors.As(err, &se); got != (tt.status == http.StatusServiceUnavailable) {
				t.Errorf("errors.As(*httpx.StatusError) = %v for status %d", got, tt.status)
			}
		})
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
	// Longer than the interval, so only the one-at-a-time rule keeps the
	// two callers' requests from overlapping.
	srv.SetLimits(sim.Limits{Latency: interval + interval/2})
	c := newClient(t, srv, interval)

	var wg sync.WaitGroup
	wg.Go(func() {
		if _, _, err := collect(t, c, csQuery); err != nil {
			t.Error(err)
		}
	})
	wg.Go(func() {
		if _, err := c.Identify(context.Background()); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()

	hits := srv.recorded()
	if len(hits) != 3 {
		t.Fatalf("%d requests, want 2 pages and an Identify", len(hits))
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

func TestArxivRaw(t *testing.T) {
	srv := newFake(t)
	c := newClient(t, srv, 0)
	recs, h, err := collect(t, c, oaipmh.Query{From: day("2026-03-03"), Set: "cs:cs:AI", MetadataPrefix: "arXivRaw"})
	if err != nil {
		t.Fatal(err)
	}
	want := []oaipmh.Record{
		{
			Identifier: "oai:arXiv.org:2603.01234", ID: "2603.01234", Datestamp: day("2026-03-04"), Sets: []string{"cs:cs:AI", "cs:cs:CL"},
			Meta: &oaipmh.ArxivMeta{
				ID: "2603.01234", Created: instant("2026-03-02T18:00:01Z"), Updated: instant("2026-03-04T09:30:00Z"),
				Title:      "Grounded Ideation: Anticipating Research Ideas from Their Sources",
				Authors:    []string{"Dana Example (Univ. of Fixtures, Testville)", "Eli Sample", "The Fixture Collaboration"},
				Categories: []string{"cs.CL", "cs.AI"}, Primary: "cs.CL",
				Abstract: "We ask whether a model can anticipate a paper's idea from the papers it builds on.",
				DOI:      "10.9999/groundwork.2026.1", Comments: "9 pages, 3 figures", License: "http://creativecommons.org/licenses/by/4.0/",
				Versions: []oaipmh.Version{{N: 1, Date: instant("2026-03-02T18:00:01Z")}, {N: 2, Date: instant("2026-03-04T09:30:00Z")}},
			},
		},
		{
			Identifier: "oai:arXiv.org:hep-th/9901001", ID: "hep-th/9901001", Datestamp: day("2026-03-04"), Sets: []string{"physics:hep-th", "cs:cs:AI"},
			Meta: &oaipmh.ArxivMeta{
				ID: "hep-th/9901001", Created: instant("1999-01-04T17:23:40Z"),
				Title: "Boundary Terms for a Toy Brane World", Authors: []string{"A. N. Physicist", "B. Brane"},
				Categories: []string{"hep-th", "cs.AI"}, Primary: "hep-th",
				Abstract: "We compute boundary terms.",
				Versions: []oaipmh.Version{{N: 1, Date: instant("1999-01-04T17:23:40Z")}},
			},
		},
	}
	if !reflect.DeepEqual(recs, want) {
		for i := range recs {
			t.Errorf("record %d: %+v %+v", i, recs[i], recs[i].Meta)
		}
		t.Errorf("want %+v %+v, %+v %+v", want[0], want[0].Meta, want[1], want[1].Meta)
	}
	if h.Records != 2 || h.Pages != 1 {
		t.Errorf("harvest %+v, want 2 records on 1 page", h)
	}
	if q := srv.recorded()[0].Query(); q.Get("metadataPrefix") != "arXivRaw" || q.Get("set") != "cs:cs:AI" {
		t.Errorf("query %v, want metadataPrefix=arXivRaw set=cs:cs:AI", q)
	}
}

// TestSkipped: a record that cannot be read is counted and logged, and the
// harvest goes on.
func TestSkipped(t *testing.T) {
	srv := newFakeWith(t, "skipped.xml")
	c := newClient(t, srv, 0)
	recs, h, err := collect(t, c, oaipmh.Query{From: day("2026-03-03")})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].ID != "2603.00001" || recs[0].Meta.Title != "Good" {
		t.Errorf("records %+v, want only 2603.00001", recs)
	}
	if want := (oaipmh.Harvest{ResponseDate: instant(sim.OAIResponseDate), Records: 1, Skipped: 2, Pages: 1}); h != want {
		t.Errorf("harvest %+v, want %+v", h, want)
	}
}

func TestCallbackError(t *testing.T) {
	srv := newFake(t)
	c := newClient(t, srv, 0)
	errStop := errors.New("store is full")
	var seen int
	h, err := c.ListRecords(context.Background(), csQuery, func(r oaipmh.Record) error {
		if seen++; seen == 2 {
			return errStop
		}
		return nil
	})
	if !errors.Is(err, errStop) {
		t.Fatalf("err = %v, want the callback's", err)
	}
	if !strings.Contains(err.Error(), "oai:arXiv.org:2603.00987") || !strings.Contains(err.Error(), "page 1") {
		t.Errorf("error %q does not name the record and page", err)
	}
	if h.Records != 1 || seen != 2 {
		t.Errorf("harvest %+v after %d calls, want 1 record accepted of 2 seen", h, seen)
	}
	if n := len(srv.recorded()); n != 1 {
		t.Errorf("%d requests, want 1: the harvest stops at the error", n)
	}
}

func TestCancel(t *testing.T) {
	tests := []struct {
		name     string
		inFn     bool // cancel from the callback at the first record; else while page 2 is in flight
		wantRecs int
		wantHits int
	}{
		{"in the callback", true, 1, 1},
		{"during a request", false, 3, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if !tt.inFn {
				srv.before = func(w http.ResponseWriter, r *http.Request, h hit, _ int) bool {
					if !h.Query().Has("resumptionToken") {
						return false
					}
					cancel()
					<-r.Context().Done() // the client hangs up
					return true
				}
			}
			c := newClient(t, srv, 0)
			var seen int
			start := time.Now()
			h, err := c.ListRecords(ctx, csQuery, func(oaipmh.Record) error {
				seen++
				if tt.inFn {
					cancel()
				}
				return nil
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if seen != tt.wantRecs || h.Records != tt.wantRecs {
				t.Errorf("%d records seen, harvest %+v; want %d", seen, h, tt.wantRecs)
			}
			if n := len(srv.recorded()); n != tt.wantHits {
				t.Errorf("%d requests, want %d", n, tt.wantHits)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s to stop", d)
			}
		})
	}
}

// TestRepeatedToken: a repository that hands back the token it was sent
// would keep a harvest asking forever.
func TestRepeatedToken(t *testing.T) {
	srv := newFake(t)
	srv.before = func(w http.ResponseWriter, _ *http.Request, h hit, _ int) bool {
		if !h.Query().Has("resumptionToken") {
			return false
		}
		serve(t, w, "listrecords_1.xml") // whose token is token2 again
		return true
	}
	c := newClient(t, srv, 0)
	_, _, err := collect(t, c, csQuery)
	if err == nil || !strings.Contains(err.Error(), "resumption token it was sent") {
		t.Errorf("err = %v, want the repeated token named", err)
	}
	if n := len(srv.recorded()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestIdentify(t *testing.T) {
	srv := newFake(t)
	c := newClient(t, srv, 0)
	got, err := c.Identify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := &oaipmh.Identity{
		RepositoryName: "arXiv", BaseURL: "https://oaipmh.arxiv.org/oai", ProtocolVersion: "2.0",
		AdminEmails: []string{"help@arxiv.org"}, EarliestDatestamp: day("2005-09-16"),
		DeletedRecord: "persistent", Granularity: "YYYY-MM-DD", ResponseDate: instant(sim.OAIResponseDate),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	hits := srv.recorded()
	if len(hits) != 1 || !reflect.DeepEqual(hits[0].Query(), url.Values{"verb": {"Identify"}}) {
		t.Errorf("requests %v, want one verb=Identify", hits)
	}

	srv.before = func(w http.ResponseWriter, _ *http.Request, _ hit, _ int) bool {
		w.Write(readTestdata(t, "badargument.xml"))
		return true
	}
	if _, err := c.Identify(context.Background()); err == nil || !strings.Contains(err.Error(), "identify: oai-pmh error badArgument") {
		t.Errorf("err = %v, want the OAI-PMH error", err)
	}
}
