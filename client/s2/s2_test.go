package s2_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/testutil"
	"github.com/groundwork/curate/sim"
)

// hit is one request as the fake server saw it.
type hit = testutil.Request

// offsetLimit returns the offset and limit a references request asked.
func offsetLimit(t *testing.T, h hit) (int, int) {
	t.Helper()
	o, err1 := strconv.Atoi(h.Query.Get("offset"))
	l, err2 := strconv.Atoi(h.Query.Get("limit"))
	if err1 != nil || err2 != nil {
		t.Fatalf("request %s lacks a numeric offset or limit", h.URI)
	}
	return o, l
}

// newFake starts a recording stand-in for Semantic Scholar answering with
// handle, which gets the 1-based number of the request. A test scripts
// each answer; what S2 refuses is sim.S2Refuse's.
func newFake(t *testing.T, handle func(w http.ResponseWriter, h hit, n int)) *testutil.Server {
	t.Helper()
	return testutil.NewServer(t, func(w http.ResponseWriter, h hit) { handle(w, h, h.N) })
}

// refuse answers what S2 refuses in h, as sim's S2 does, and reports
// whether it did.
func refuse(w http.ResponseWriter, h hit) bool {
	return sim.S2Refuse(w, h.Method, h.Path, h.Query, h.Body)
}

func s2Error(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	testutil.WriteJSON(w, status, b)
}

// tooManyRequests answers as S2's gateway does: the recorded 429 had this
// body and no Retry-After.
func tooManyRequests(w http.ResponseWriter, retryAfter string) {
	kv := []string{"x-amzn-errortype", "TooManyRequestsException", "x-cache", "Error from cloudfront"}
	if retryAfter != "" {
		kv = append(kv, "Retry-After", retryAfter)
	}
	testutil.WriteJSON(w, http.StatusTooManyRequests, []byte(sim.S2TooManyBody), kv...)
}

type setup struct {
	key      string
	interval time.Duration // default: effectively unlimited
	opts     s2.Options
	logs     io.Writer // default: the test log
	retryMax int       // default 3
}

// newClient builds an s2 Client on a real httpx stack pointing at base,
// with tiny backoff so retries cost milliseconds.
func newClient(t *testing.T, base string, su setup) (*s2.Client, *httpx.Service) {
	t.Helper()
	logs := su.logs
	if logs == nil {
		logs = t.Output()
	}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	hc, err := httpx.New(httpx.Config{
		UserAgent:    httpx.UserAgent("test", "test@example.org"),
		RetryMax:     cmpOr(su.retryMax, 3),
		RetryWaitMin: time.Millisecond,
		RetryWaitMax: 10 * time.Millisecond,
		Logger:       log,
	}, s2.ServiceConfig(base, su.key, cmpOr(su.interval, time.Microsecond)))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := hc.Service(s2.ServiceName)
	if err != nil {
		t.Fatal(err)
	}
	opts := su.opts
	if opts.Logger == nil {
		opts.Logger = log
	}
	c, err := s2.New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, svc
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// synthPage builds a references page of n resolved edges numbered from
// offset, with next when given.
func synthPage(offset, n int, next *int) []byte {
	type cited struct {
		PaperID string `json:"paperId"`
		Title   string `json:"title"`
	}
	type edge struct {
		Contexts   []string `json:"contexts"`
		Intents    []string `json:"intents"`
		CitedPaper cited    `json:"citedPaper"`
	}
	page := struct {
		Offset int    `json:"offset"`
		Next   *int   `json:"next,omitempty"`
		Data   []edge `json:"data"`
	}{Offset: offset, Next: next, Data: []edge{}}
	for i := offset; i < offset+n; i++ {
		page.Data = append(page.Data, edge{Contexts: []string{}, Intents: []string{}, CitedPaper: cited{PaperID: fmt.Sprintf("p%05d", i), Title: fmt.Sprintf("Paper %d", i)}})
	}
	b, _ := json.Marshal(page)
	return b
}

func ptr[T any](v T) *T { return &v }

func TestServiceConfig(t *testing.T) {
	tests := []struct {
		name, base, key string
		interval        time.Duration
		wantBase        string
		wantInterval    time.Duration
	}{
		{"defaults without key", "", "", 0, s2.DefaultBaseURL, 5 * time.Second},
		{"defaults with key", "", "sk-key-123", 0, s2.DefaultBaseURL, time.Second},
		{"explicit", "http://localhost:8080", "sk-key-123", 1500 * time.Millisecond, "http://localhost:8080", 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := s2.ServiceConfig(tt.base, tt.key, tt.interval)
			if sc.Name != s2.ServiceName || sc.BaseURL != tt.wantBase || sc.Interval != tt.wantInterval {
				t.Errorf("got name %q base %q interval %s, want %q %q %s", sc.Name, sc.BaseURL, sc.Interval, s2.ServiceName, tt.wantBase, tt.wantInterval)
			}
			if got := sc.Header.Get("X-Api-Key"); got != tt.key {
				t.Errorf("x-api-key header = %q, want %q", got, tt.key)
			}
			if tt.key == "" && len(sc.Header) != 0 {
				t.Errorf("keyless config has headers %v", sc.Header)
			}
		})
	}
}

func TestNewPageLimit(t *testing.T) {
	hc, err := httpx.New(httpx.Config{UserAgent: "test"}, s2.ServiceConfig("http://127.0.0.1:1", "", time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := hc.Service(s2.ServiceName)
	for _, limit := range []int{-1, 1001, 5000} {
		if _, err := s2.New(svc, s2.Options{PageLimit: limit}); err == nil {
			t.Errorf("New accepted page limit %d", limit)
		}
	}
	if _, err := s2.New(nil, s2.Options{}); err == nil {
		t.Error("New accepted a nil service")
	}

	// The limit sent on the wire: the default, and the configured one.
	for _, tt := range []struct{ opt, want int }{{0, s2.DefaultPageLimit}, {1, 1}, {1000, 1000}} {
		srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
			testutil.WriteJSON(w, 200, synthPage(0, 1, nil))
		})
		c, _ := newClient(t, srv.URL, setup{opts: s2.Options{PageLimit: tt.opt}})
		if _, err := c.References(context.Background(), "CorpusId:1"); err != nil {
			t.Fatal(err)
		}
		if _, l := offsetLimit(t, srv.Requests()[0]); l != tt.want {
			t.Errorf("PageLimit %d: sent limit %d, want %d", tt.opt, l, tt.want)
		}
	}
}

func TestArxivPaperID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"2401.00001", "ARXIV:2401.00001"},
		{"2401.00001v3", "ARXIV:2401.00001"},
		{"arXiv:0704.0001v1", "ARXIV:0704.0001"},
		{"hep-th/9901001v2", "ARXIV:hep-th/9901001"},
		{"math.GT/0309136", "ARXIV:math/0309136"},
		{"not an id", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := s2.ArxivPaperID(tt.in); got != tt.want {
			t.Errorf("ArxivPaperID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDOIPaperID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"10.18653/v1/N18-3011", "DOI:10.18653/v1/N18-3011"},
		{" https://doi.org/10.1101/2024.04.01.587366 ", "DOI:10.1101/2024.04.01.587366"},
		{"doi:10.2139/ssrn.2250500", "DOI:10.2139/ssrn.2250500"},
		{"http://dx.doi.org/10.1000/xyz", "DOI:10.1000/xyz"},
		{"", ""},
		{"doi:", ""},
	}
	for _, tt := range tests {
		if got := s2.DOIPaperID(tt.in); got != tt.want {
			t.Errorf("DOIPaperID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPaperIDOnTheWire(t *testing.T) {
	tests := []struct {
		id      string
		wantURI string // path part of the request line; "" to check the decoded path only
	}{
		{"CorpusID:1033682", "/graph/v1/paper/CorpusID:1033682/references"},
		{"10.2139/ssrn.2250500", "/graph/v1/paper/10.2139/ssrn.2250500/references"},
		{"DOI:10.1093/mind/lix.236.433", "/graph/v1/paper/DOI:10.1093/mind/lix.236.433/references"},
		{"ARXIV:hep-th/9901001", "/graph/v1/paper/ARXIV:hep-th/9901001/references"},
		{s2.ArxivPaperID("2312.07559v2"), "/graph/v1/paper/ARXIV:2312.07559/references"},
		{"649def34f8be52c8b66281af98ae884c09aef38b", "/graph/v1/paper/649def34f8be52c8b66281af98ae884c09aef38b/references"},
		{"DOI:10.1000/a;b?c d#e", "/graph/v1/paper/DOI:10.1000/a%3Bb%3Fc%20d%23e/references"},
		{"DOI:10.1002/(SICI)1097-4636(199706)35:4<483::AID-JBM6>3.0.CO;2-A", ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
				testutil.WriteJSON(w, 200, synthPage(0, 1, nil))
			})
			c, _ := newClient(t, srv.URL, setup{})
			if _, err := c.References(context.Background(), tt.id); err != nil {
				t.Fatal(err)
			}
			h := srv.Requests()[0]
			if want := "/graph/v1/paper/" + tt.id + "/references"; h.Path != want {
				t.Errorf("decoded path %q, want %q", h.Path, want)
			}
			uri, rawQuery, _ := strings.Cut(h.URI, "?")
			if tt.wantURI != "" && uri != tt.wantURI {
				t.Errorf("request path %q, want %q", uri, tt.wantURI)
			}
			// Field lists go out with plain commas, as in the recorded requests.
			if want := "fields=" + s2.ReferenceFields + "&"; !strings.HasPrefix(rawQuery, want) {
				t.Errorf("query %q, want it to start with %q", rawQuery, want)
			}
		})
	}

	for _, id := range []string{"", "10.1000//x", "DOI:10.1000/./x", "a/../b", "x/"} {
		srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) { testutil.WriteJSON(w, 200, synthPage(0, 1, nil)) })
		c, _ := newClient(t, srv.URL, setup{})
		if _, err := c.References(context.Background(), id); err == nil {
			t.Errorf("References(%q) succeeded, want an invalid id error", id)
		}
		if _, err := c.Paper(context.Background(), id); err == nil {
			t.Errorf("Paper(%q) succeeded, want an invalid id error", id)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("id %q: %d requests sent, want none", id, n)
		}
	}
}

func TestReferencesElided(t *testing.T) {
	body := readTestdata(t, "references_elided.json")
	var want struct {
		CitingPaperInfo struct {
			OpenAccessPdf struct{ Disclaimer string }
		}
	}
	if err := json.Unmarshal(body, &want); err != nil || want.CitingPaperInfo.OpenAccessPdf.Disclaimer == "" {
		t.Fatalf("testdata has no disclaimer: %v", err)
	}
	tests := []struct {
		name, body, disclaimer string
	}{
		{"with disclaimer", string(body), want.CitingPaperInfo.OpenAccessPdf.Disclaimer},
		{"without citingPaperInfo", `{"offset": 0, "data": null}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) { testutil.WriteJSON(w, 200, []byte(tt.body)) })
			c, _ := newClient(t, srv.URL, setup{})
			list, err := c.References(context.Background(), "DOI:10.1073/pnas.0611396104")
			if err != nil {
				t.Fatal(err)
			}
			if !list.Elided || list.Complete() {
				t.Errorf("Elided = %v, Complete = %v; want an elided, incomplete list", list.Elided, list.Complete())
			}
			if list.Disclaimer != tt.disclaimer {
				t.Errorf("Disclaimer = %q, want %q", list.Disclaimer, tt.disclaimer)
			}
			if list.Edges != nil {
				t.Errorf("elided list has edges %v", list.Edges)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

func TestReferencesMalformed(t *testing.T) {
	tests := []struct{ name, body string }{
		{"no data", `{"offset": 0}`},
		{"not json", `<html>gateway error</html>`},
		{"data not a list", `{"offset": 0, "data": {"citedPaper": {}}}`},
		{"bad corpus id", `{"offset": 0, "data": [{"citedPaper": {"paperId": "x", "externalIds": {"CorpusId": "twelve"}}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) { testutil.WriteJSON(w, 200, []byte(tt.body)) })
			c, _ := newClient(t, srv.URL, setup{})
			_, err := c.References(context.Background(), "CorpusId:42")
			if err == nil || !strings.Contains(err.Error(), "CorpusId:42") {
				t.Errorf("err = %v, want a decode error naming the paper", err)
			}
		})
	}
}

func TestReferencesEmptyPage(t *testing.T) {
	tests := []struct {
		name      string
		pages     map[int]string // offset -> body
		wantEdges int
		wantEmpty bool
		wantHits  int
	}{
		{
			name:      "empty page that still has next",
			pages:     map[int]string{0: string(synthPage(0, 2, ptr(2))), 2: `{"offset": 2, "next": 4, "data": []}`},
			wantEdges: 2, wantEmpty: true, wantHits: 2,
		},
		{
			name:      "empty page without next (s2-folks#117)",
			pages:     map[int]string{0: string(synthPage(0, 2, ptr(2))), 2: `{"offset": 2, "data": []}`},
			wantEdges: 2, wantEmpty: true, wantHits: 2,
		},
		{
			name:      "paper without references",
			pages:     map[int]string{0: `{"offset": 0, "data": []}`},
			wantEdges: 0, wantEmpty: false, wantHits: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
				if refuse(w, h) {
					return
				}
				offset, _ := offsetLimit(t, h)
				body, ok := tt.pages[offset]
				if !ok {
					t.Errorf("unexpected request at offset %d", offset)
					body = `{"offset": 99, "data": []}`
				}
				testutil.WriteJSON(w, 200, []byte(body))
			})
			c, _ := newClient(t, srv.URL, setup{opts: s2.Options{PageLimit: 2}})
			list, err := c.References(context.Background(), "CorpusId:7")
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Edges) != tt.wantEdges || list.EmptyPage != tt.wantEmpty || list.Complete() == tt.wantEmpty {
				t.Errorf("edges %d, EmptyPage %v, Complete %v; want %d edges, EmptyPage %v", len(list.Edges), list.EmptyPage, list.Complete(), tt.wantEdges, tt.wantEmpty)
			}
			if list.Elided {
				t.Error("an empty page is not an elided list")
			}
			if n := len(srv.Requests()); n != tt.wantHits {
				t.Errorf("%d requests, want %d", n, tt.wantHits)
			}
		})
	}
}

func TestReferencesNextDoesNotAdvance(t *testing.T) {
	srv := newFake(t, func(w http.ResponseWriter, h hit, n int) {
		if refuse(w, h) {
			return
		}
		offset, limit := offsetLimit(t, h)
		if n > 5 {
			t.Error("client keeps asking for the same page")
		}
		testutil.WriteJSON(w, 200, synthPage(offset, limit, ptr(offset)))
	})
	c, _ := newClient(t, srv.URL, setup{opts: s2.Options{PageLimit: 3}})
	if _, err := c.References(context.Background(), "CorpusId:7"); err == nil || !strings.Contains(err.Error(), "does not advance") {
		t.Errorf("err = %v, want a next-does-not-advance error", err)
	}
}

// TestReferencesCap runs against a server whose list never ends: every page
// is full and names a next page. The client must stay inside the window.
func TestReferencesCap(t *testing.T) {
	for _, limit := range []int{1000, 500, 333} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
				if refuse(w, h) {
					return
				}
				offset, limit := offsetLimit(t, h)
				testutil.WriteJSON(w, 200, synthPage(offset, limit, ptr(offset+limit)))
			})
			c, _ := newClient(t, srv.URL, setup{opts: s2.Options{PageLimit: limit}})
			list, err := c.References(context.Background(), "CorpusId:1")
			if err != nil {
				t.Fatal(err)
			}
			if !list.Capped || list.Complete() {
				t.Errorf("Capped = %v, Complete = %v, want a capped list", list.Capped, list.Complete())
			}
			if len(list.Edges) != 9999 {
				t.Errorf("got %d edges, want the 9999 the window allows", len(list.Edges))
			}
			for i, e := range list.Edges {
				if want := fmt.Sprintf("p%05d", i); e.CitedPaper.PaperID != want {
					t.Fatalf("edge %d is %q, want %q: pages joined out of order", i, e.CitedPaper.PaperID, want)
				}
			}
			hits := srv.Requests()
			if list.Pages != len(hits) {
				t.Errorf("Pages = %d, server saw %d", list.Pages, len(hits))
			}
			for _, h := range hits {
				o, l := offsetLimit(t, h)
				if o+l >= 10000 || l > 1000 || l > limit || l < 1 {
					t.Errorf("request offset %d limit %d breaks the paging rules", o, l)
				}
			}
			if o, l := offsetLimit(t, hits[len(hits)-1]); o+l != 9999 {
				t.Errorf("last request offset %d limit %d, want it to end at 9999", o, l)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	ok := synthPage(0, 1, nil)
	tests := []struct {
		name      string
		respond   func(w http.ResponseWriter, n int)
		wantHits  int
		wantErr   int           // status of the *httpx.StatusError expected, 0 for success
		wantGapGE time.Duration // lower bound of the gap before the last request
	}{
		{
			name: "429 without Retry-After, then success",
			respond: func(w http.ResponseWriter, n int) {
				if n <= 2 {
					tooManyRequests(w, "")
					return
				}
				testutil.WriteJSON(w, 200, ok)
			},
			wantHits: 3,
		},
		{
			name: "429 with Retry-After, then success",
			respond: func(w http.ResponseWriter, n int) {
				if n == 1 {
					tooManyRequests(w, "1")
					return
				}
				testutil.WriteJSON(w, 200, ok)
			},
			wantHits: 2, wantGapGE: time.Second,
		},
		{
			name: "503, then success",
			respond: func(w http.ResponseWriter, n int) {
				if n == 1 {
					testutil.WriteJSON(w, http.StatusServiceUnavailable, []byte(`{"message": "Service Unavailable"}`))
					return
				}
				testutil.WriteJSON(w, 200, ok)
			},
			wantHits: 2,
		},
		{
			name:     "429 until the retries run out",
			respond:  func(w http.ResponseWriter, _ int) { tooManyRequests(w, "") },
			wantHits: 4, wantErr: http.StatusTooManyRequests,
		},
		{
			name: "504 until the retries run out",
			respond: func(w http.ResponseWriter, _ int) {
				testutil.WriteJSON(w, http.StatusGatewayTimeout, []byte(`{"message": "Endpoint request timed out"}`))
			},
			wantHits: 4, wantErr: http.StatusGatewayTimeout,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, func(w http.ResponseWriter, _ hit, n int) { tt.respond(w, n) })
			c, _ := newClient(t, srv.URL, setup{retryMax: 3})
			list, err := c.References(context.Background(), "CorpusId:5")
			hits := srv.Requests()
			if len(hits) != tt.wantHits {
				t.Errorf("server saw %d attempts, want %d", len(hits), tt.wantHits)
			}
			if tt.wantErr == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if len(list.Edges) != 1 || list.Edges[0].CitedPaper.PaperID != "p00000" {
					t.Errorf("edges after retries: %+v", list.Edges)
				}
			} else {
				var se *httpx.StatusError
				if !errors.As(err, &se) || se.Status != tt.wantErr {
					t.Fatalf("err = %v, want a *httpx.StatusError with status %d", err, tt.wantErr)
				}
				if se.Attempts != tt.wantHits {
					t.Errorf("StatusError.Attempts = %d, want %d", se.Attempts, tt.wantHits)
				}
				if !strings.Contains(err.Error(), "CorpusId:5") {
					t.Errorf("error %q does not name the paper", err)
				}
			}
			if tt.wantGapGE > 0 && len(hits) >= 2 {
				if gap := hits[len(hits)-1].At.Sub(hits[len(hits)-2].At); gap < tt.wantGapGE {
					t.Errorf("retry came %s after the 429, want >= %s (Retry-After)", gap, tt.wantGapGE)
				}
			}
		})
	}
}

func TestForbidden(t *testing.T) {
	srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
		testutil.WriteJSON(w, http.StatusForbidden, []byte(`{"message":"Forbidden"}`))
	})
	c, _ := newClient(t, srv.URL, setup{key: "sk-wrong-key-000"})
	calls := map[string]func() error{
		"references": func() error { _, err := c.References(context.Background(), "CorpusId:1"); return err },
		"paper":      func() error { _, err := c.Paper(context.Background(), "CorpusId:1"); return err },
		"batch":      func() error { _, err := c.Batch(context.Background(), []string{"CorpusId:1"}); return err },
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, s2.ErrForbidden) || !strings.Contains(fmt.Sprint(err), "s2 rejected the api key") {
			t.Errorf("%s: err = %v, want ErrForbidden saying the key was rejected", name, err)
		}
		var e *s2.Error
		if !errors.As(err, &e) || e.Status != http.StatusForbidden || e.Op != name {
			t.Errorf("%s: err = %#v, want an *s2.Error with status 403 and op %q", name, e, name)
		}
	}
	if n := len(srv.Requests()); n != len(calls) {
		t.Errorf("%d requests, want %d: a 403 must not be retried", n, len(calls))
	}
}

// TestAPIKeySecrecy plants a key and looks for it in everything the client
// emits: every log line of httpx and s2 at debug level, and every error,
// including a server that echoes the key back in its error bodies.
func TestAPIKeySecrecy(t *testing.T) {
	const key = "sk-PLANTED-s2-key-7f3a"
	srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
		if got := h.Header.Get("X-Api-Key"); got != key {
			t.Errorf("request %s carried x-api-key %q, want the configured key", h.URI, got)
		}
		switch {
		case strings.Contains(h.Path, "ok"):
			testutil.WriteJSON(w, 200, synthPage(0, 3, nil))
		case strings.Contains(h.Path, "elided"):
			testutil.WriteJSON(w, 200, readTestdata(t, "references_elided.json"))
		case strings.Contains(h.Path, "missing"):
			s2Error(w, 404, "Paper with id "+strings.TrimPrefix(h.Path, "/graph/v1/paper/")+" not found")
		case strings.Contains(h.Path, "forbidden"):
			testutil.WriteJSON(w, 403, []byte(`{"message":"Forbidden: invalid key `+h.Header.Get("X-Api-Key")+`"}`))
		case strings.Contains(h.Path, "throttled"):
			testutil.WriteJSON(w, 429, []byte(`{"message":"Too Many Requests for `+h.Header.Get("X-Api-Key")+`"}`))
		default:
			s2Error(w, 400, "Unrecognized or unsupported fields: [unknown]")
		}
	})
	logs := &testutil.SyncBuffer{}
	c, _ := newClient(t, srv.URL, setup{key: key, logs: logs})
	ctx := context.Background()

	var errs []error
	for _, id := range []string{"CorpusId:ok", "CorpusId:elided", "CorpusId:missing", "CorpusId:forbidden", "CorpusId:throttled", "CorpusId:bad"} {
		_, err := c.References(ctx, id)
		errs = append(errs, err)
		_, err = c.Paper(ctx, id)
		errs = append(errs, err)
	}
	nerr := 0
	for _, err := range errs {
		if err == nil {
			continue
		}
		nerr++
		if strings.Contains(err.Error(), key) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), key) {
			t.Errorf("error leaks the key: %v", err)
		}
		var se *httpx.StatusError
		if errors.As(err, &se) && bytes.Contains(se.Body, []byte(key)) {
			t.Errorf("StatusError body leaks the key: %q", se.Body)
		}
	}
	if nerr < 8 {
		t.Errorf("only %d calls failed; the test meant to exercise the error paths", nerr)
	}
	out := logs.String()
	if !strings.Contains(out, "http attempt") || !strings.Contains(out, "elided") {
		t.Fatalf("log capture is not working; got:\n%s", out)
	}
	if strings.Contains(out, key) {
		t.Errorf("logs leak the key:\n%s", out)
	}
}

func TestRequestSpacing(t *testing.T) {
	const interval = 100 * time.Millisecond
	// Arrival times include transport latency, which differs between the
	// first request (new connection) and the rest; the client spaces
	// request starts exactly.
	const tolerance = 10 * time.Millisecond
	srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
		if !strings.HasSuffix(h.Path, "/references") {
			testutil.WriteJSON(w, 200, []byte(`{"paperId": "abc", "title": "T"}`))
			return
		}
		if refuse(w, h) {
			return
		}
		offset, _ := offsetLimit(t, h)
		var next *int
		if offset < 3 {
			next = ptr(offset + 1)
		}
		testutil.WriteJSON(w, 200, synthPage(offset, 1, next))
	})
	c, _ := newClient(t, srv.URL, setup{key: "sk-spacing-key", interval: interval, opts: s2.Options{PageLimit: 1}})
	list, err := c.References(context.Background(), "CorpusId:3")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Paper(context.Background(), "CorpusId:3"); err != nil {
		t.Fatal(err)
	}
	hits := srv.Requests()
	if len(list.Edges) != 4 || len(hits) != 5 {
		t.Fatalf("%d edges over %d requests, want 4 edges and 5 requests", len(list.Edges), len(hits))
	}
	for i := 1; i < len(hits); i++ {
		if gap := hits[i].At.Sub(hits[i-1].At); gap < interval-tolerance {
			t.Errorf("gap before request %d = %s, want >= %s", i+1, gap, interval)
		}
	}
}

func TestBatchChunking(t *testing.T) {
	const n = 1201
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "CorpusId:" + strconv.Itoa(100000+i)
	}
	unknown := func(id string) bool { return strings.HasSuffix(id, "7") }
	srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
		if h.Method != http.MethodPost || h.Path != "/graph/v1/paper/batch" {
			s2Error(w, 404, "no such endpoint")
			return
		}
		if refuse(w, h) {
			return
		}
		var req struct{ IDs []string }
		if err := json.Unmarshal(h.Body, &req); err != nil || len(req.IDs) == 0 {
			s2Error(w, 400, "Body must be a JSON object with ids")
			return
		}
		if len(req.IDs) > 500 {
			s2Error(w, 400, "=500 IDs may be requested at a time")
			return
		}
		out := make([]any, len(req.IDs))
		for i, id := range req.IDs {
			if !unknown(id) {
				out[i] = map[string]any{"paperId": "p-" + id, "title": "Title of " + id}
			}
		}
		b, _ := json.Marshal(out)
		testutil.WriteJSON(w, 200, b)
	})
	c, _ := newClient(t, srv.URL, setup{})
	papers, err := c.Batch(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	hits := srv.Requests()
	var sizes []int
	var sent []string
	for _, h := range hits {
		var req struct{ IDs []string }
		json.Unmarshal(h.Body, &req)
		sizes = append(sizes, len(req.IDs))
		sent = append(sent, req.IDs...)
		if ct := h.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q, want application/json", ct)
		}
		if h.Query.Get("fields") != s2.PaperFields {
			t.Errorf("fields %q, want the default PaperFields", h.Query.Get("fields"))
		}
	}
	if !slices.Equal(sizes, []int{500, 500, 201}) {
		t.Errorf("POST sizes %v, want [500 500 201]", sizes)
	}
	if !slices.Equal(sent, ids) {
		t.Error("ids were not sent once each, in input order")
	}
	if len(papers) != n {
		t.Fatalf("%d results for %d ids", len(papers), n)
	}
	nulls := 0
	for i, p := range papers {
		switch {
		case unknown(ids[i]):
			nulls++
			if p != nil {
				t.Errorf("result %d for unknown id %s = %+v, want nil", i, ids[i], p)
			}
		case p == nil || p.PaperID != "p-"+ids[i]:
			t.Errorf("result %d = %+v, want the paper of %s", i, p, ids[i])
		}
	}
	if nulls == 0 {
		t.Error("test data has no unknown ids")
	}

	if got, err := c.Batch(context.Background(), nil); err != nil || len(got) != 0 {
		t.Errorf("Batch(nil) = %v, %v; want an empty result", got, err)
	}
	if len(srv.Requests()) != len(hits) {
		t.Error("Batch(nil) sent a request")
	}
}

func TestBatchMisaligned(t *testing.T) {
	srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
		testutil.WriteJSON(w, 200, []byte(`[{"paperId": "abc", "title": "only one"}]`))
	})
	c, _ := newClient(t, srv.URL, setup{})
	_, err := c.Batch(context.Background(), []string{"CorpusId:1", "CorpusId:2"}, "title")
	if err == nil || !strings.Contains(err.Error(), "1 results for 2 ids") {
		t.Errorf("err = %v, want a misalignment error", err)
	}
	if got := srv.Requests()[0].Query.Get("fields"); got != "title" {
		t.Errorf("fields = %q, want the requested %q", got, "title")
	}
}

// TestExternalIDs: S2's mixed-type externalIds object reaches the paper
// the client returns whole (a number where a string is expected made a
// string, unknown keys kept), and is stored so that nothing is lost.
func TestExternalIDs(t *testing.T) {
	raw := readTestdata(t, "external_ids.json")
	var gen map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&gen); err != nil {
		t.Fatal(err)
	}
	var answer atomic.Value // the paper the fake answers with
	answer.Store([]byte(`{"paperId": "abc", "externalIds": ` + string(raw) + `}`))
	srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
		testutil.WriteJSON(w, 200, answer.Load().([]byte))
	})
	c, _ := newClient(t, srv.URL, setup{})
	p, err := c.Paper(context.Background(), "CorpusId:1", "externalIds")
	if err != nil {
		t.Fatal(err)
	}
	x := p.ExternalIDs
	wantCorpus, _ := gen["CorpusId"].(json.Number).Int64()
	if x.CorpusID == nil || *x.CorpusID != wantCorpus {
		t.Errorf("CorpusID = %v, want %d", x.CorpusID, wantCorpus)
	}
	for key, got := range map[string]string{
		"ArXiv": x.ArXiv, "DOI": x.DOI, "DBLP": x.DBLP, "MAG": x.MAG, "ACL": x.ACL,
		"PubMed": x.PubMed, "PubMedCentral": x.PubMedCentral,
	} {
		if want := fmt.Sprint(gen[key]); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if len(x.Other) != 2 || x.Other["OpenAlex"] == nil || x.Other["Future"] == nil {
		t.Errorf("Other = %v, want the two unknown keys", x.Other)
	}

	// Stored, it keeps everything, the unknown keys included.
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	dec = json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	gen["MAG"] = fmt.Sprint(gen["MAG"]) // the one value normalised to a string
	if fmt.Sprint(back) != fmt.Sprint(gen) {
		t.Errorf("round trip\n got %v\nwant %v", back, gen)
	}

	for _, tt := range []struct {
		ids  string
		want *int64
		err  bool
	}{
		{ids: `{"CorpusId": "215416146"}`, want: ptr(int64(215416146))},
		{ids: `{"CorpusId": "x1"}`, err: true},
		{ids: `{"CorpusId": 1.5}`, err: true},
		{ids: `{"DOI": true}`, err: true},
		{ids: `[]`, err: true},
	} {
		answer.Store([]byte(`{"paperId": "abc", "externalIds": ` + tt.ids + `}`))
		p, err := c.Paper(context.Background(), "CorpusId:1", "externalIds")
		switch {
		case tt.err && err == nil:
			t.Errorf("externalIds %s decoded as %+v, want an error", tt.ids, p.ExternalIDs)
		case !tt.err && (err != nil || p.ExternalIDs.CorpusID == nil || *p.ExternalIDs.CorpusID != *tt.want):
			t.Errorf("externalIds %s: %+v, %v; want CorpusId %d", tt.ids, p, err, *tt.want)
		}
	}
}
