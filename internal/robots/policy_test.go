package robots_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/robots"
	"github.com/groundwork/curate/sim"
)

var ua = httpx.UserAgent("test", "team@example.org")

// site is a host serving the simulated robots.txt in front of pages that
// answer "page", behind a sim.Service that logs every request.
type site struct {
	*httptest.Server
	robots *sim.RobotsFile
	svc    *sim.Service
}

func newSite(t *testing.T, status int, body string) *site {
	f := sim.NewRobotsFile(status, body)
	svc := sim.Wrap("site", f.In(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "page") })))
	s := &site{Server: httptest.NewServer(svc), robots: f, svc: svc}
	t.Cleanup(s.Close)
	return s
}

func (s *site) set(status int, body string) { s.robots.Set(status, body) }

// asked counts the robots.txt requests, pages the others.
func (s *site) asked() int { return s.robots.Asked() }
func (s *site) pages() int { return len(s.svc.Calls()) - s.robots.Asked() }

func service(t *testing.T, base string, interval time.Duration) *httpx.Service {
	t.Helper()
	c, err := httpx.New(httpx.Config{UserAgent: ua, RetryMax: 2, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond},
		httpx.ServiceConfig{Name: "arxiv", BaseURL: base, Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.Service("arxiv")
	return s
}

// clock is a settable time for TTL tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func checker(t *testing.T, cfg robots.Config) *robots.Checker {
	t.Helper()
	if cfg.UserAgent == "" {
		cfg.UserAgent = ua
	}
	c, err := robots.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPolicyByStatus(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		kind    string
		allowed bool // for /html/x
		reason  string
	}{
		{"file", 200, "User-agent: *\nDisallow: /html\n", robots.KindRules, false, "group *"},
		{"file for curate", 200, "User-agent: *\nDisallow: /\n\nUser-agent: curate\nAllow: /\n", robots.KindRules, true, "group curate"},
		{"404 allows all", 404, "not found", robots.KindAllowAll, true, "404"},
		{"410 allows all", 410, "", robots.KindAllowAll, true, "410"},
		{"403 disallows all", 403, "go away", robots.KindDisallowAll, false, "403"},
		{"401 disallows all", 401, "", robots.KindDisallowAll, false, "401"},
		{"503 disallows all", 503, "", robots.KindDisallowAll, false, "unreachable"},
		{"500 disallows all", 500, "", robots.KindDisallowAll, false, "unreachable"},
		{"429 disallows all", 429, "", robots.KindDisallowAll, false, "unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, tt.status, tt.body)
			c := checker(t, robots.Config{})
			pol, err := c.Policy(context.Background(), service(t, s.URL, 0))
			if err != nil {
				t.Fatal(err)
			}
			if ok, _ := pol.Allowed("/html/x"); pol.Kind != tt.kind || ok != tt.allowed || !strings.Contains(pol.Reason, tt.reason) {
				t.Errorf("policy %s (%q), /html/x allowed %v; want %s, %v, reason with %q", pol.Kind, pol.Reason, ok, tt.kind, tt.allowed, tt.reason)
			}
			if ok, _ := pol.Allowed("/robots.txt"); !ok {
				t.Errorf("robots.txt itself disallowed")
			}
			if pol.URL != s.URL+"/robots.txt" {
				t.Errorf("URL %q", pol.URL)
			}
		})
	}

	t.Run("unreachable host", func(t *testing.T) {
		s := newSite(t, 200, "")
		base := s.URL
		s.Close()
		pol, err := checker(t, robots.Config{}).Policy(context.Background(), service(t, base, 0))
		if err != nil {
			t.Fatal(err)
		}
		if pol.Kind != robots.KindDisallowAll || !strings.Contains(pol.Reason, "unreachable") {
			t.Errorf("policy %s %q, want disallow-all naming the failure", pol.Kind, pol.Reason)
		}
	})
}

// TestFetchedOnce: one robots.txt request per host, however many policy
// look-ups and guarded requests; a Cache shared with the next run spares
// it the request while fresh; a stale copy is fetched again.
func TestFetchedOnce(t *testing.T) {
	s := newSite(t, 200, "User-agent: *\nDisallow: /api\nCrawl-delay: 0.01\n")
	clk := &clock{now: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	cache := robots.NewMemoryCache()
	svc := service(t, s.URL, 0)
	ctx := context.Background()

	c := checker(t, robots.Config{Cache: cache, Now: clk.Now})
	if _, err := c.Apply(ctx, svc, 0, false); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := c.Policy(ctx, svc); err != nil {
				t.Error(err)
			}
			if _, err := svc.Get(ctx, "/html/2401.00001", nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := s.asked(); n != 1 {
		t.Errorf("robots.txt asked %d times in one run, want 1", n)
	}
	if d := svc.Interval(); d != 10*time.Millisecond+httpx.Margin(10*time.Millisecond) {
		t.Errorf("interval %s, want the 10ms Crawl-delay and its margin", d)
	}

	// The next run, an hour later, reads the cache.
	clk.add(time.Hour)
	c2 := checker(t, robots.Config{Cache: cache, Now: clk.Now})
	if _, err := c2.Apply(ctx, svc, 0, false); err != nil {
		t.Fatal(err)
	}
	if n := s.asked(); n != 1 {
		t.Errorf("robots.txt asked %d times after a fresh cached copy, want 1", n)
	}

	// A day later the file is stale: the guard fetches it again before the
	// next page, and its new rules apply at once.
	s.set(200, "User-agent: *\nDisallow: /html\n")
	clk.add(24 * time.Hour)
	_, err := svc.Get(ctx, "/html/2401.00002", nil)
	if !errors.Is(err, robots.ErrDisallowed) {
		t.Errorf("after the refetch: err = %v, want ErrDisallowed under the new rules", err)
	}
	if n := s.asked(); n != 2 {
		t.Errorf("robots.txt asked %d times after it went stale, want 2", n)
	}
	if d := svc.Interval(); d != 0 {
		t.Errorf("interval %s after the new file dropped its Crawl-delay, want the configured 0", d)
	}
	if e, ok, _ := cache.Load(ctx, s.URL+"/robots.txt"); !ok || !e.Fetched.Equal(clk.Now()) || !strings.Contains(string(e.Body), "/html") {
		t.Errorf("cache holds %+v, want the new file", e)
	}
}

func TestGuard(t *testing.T) {
	s := newSite(t, 200, "User-agent: *\nAllow: /html\nDisallow: /api\nDisallow: /*?download=\n")
	svc := service(t, s.URL, 0)
	c := checker(t, robots.Config{})
	ctx := context.Background()
	if _, err := c.Apply(ctx, svc, 0, false); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		"/html/2401.00001":     true,
		"/abs/2401.00001":      true,
		"/api/query?id_list=1": false,
		"/html/x?download=1":   false,
	} {
		_, err := svc.Get(ctx, path, nil)
		if want && err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if !want {
			if !errors.Is(err, robots.ErrDisallowed) || !strings.Contains(err.Error(), "curate") || !strings.Contains(err.Error(), "Disallow:") {
				t.Errorf("%s: err = %v, want ErrDisallowed naming the agent and the rule", path, err)
			}
		}
	}
	if n := s.pages(); n != 2 {
		t.Errorf("%d page requests reached the server, want the 2 allowed", n)
	}
}

func TestStaleCopyStandsIn(t *testing.T) {
	s := newSite(t, 200, "User-agent: *\nDisallow: /api\nCrawl-delay: 4\n")
	clk := &clock{now: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	cache := robots.NewMemoryCache()
	ctx := context.Background()
	svc := service(t, s.URL, 0)
	if _, err := checker(t, robots.Config{Cache: cache, Now: clk.Now}).Policy(ctx, svc); err != nil {
		t.Fatal(err)
	}

	// Two days later the host fails: the cached copy stands in.
	s.set(503, "")
	clk.add(48 * time.Hour)
	c := checker(t, robots.Config{Cache: cache, Now: clk.Now, RetryUnreachable: time.Minute})
	pol, err := c.Policy(ctx, svc)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := pol.CrawlDelay(); pol.Kind != robots.KindRules || !pol.Stale || d != 4*time.Second || !strings.Contains(pol.Reason, "unreachable") {
		t.Errorf("policy %+v, want the stale copy's rules", pol)
	}
	asked := s.asked()
	// Asked again only after RetryUnreachable.
	if _, err := c.Policy(ctx, svc); err != nil || s.asked() != asked {
		t.Errorf("asked again before the retry time (%v)", err)
	}
	s.set(200, "User-agent: *\nCrawl-delay: 2\n")
	clk.add(time.Minute)
	pol, _ = c.Policy(ctx, svc)
	if d, _ := pol.CrawlDelay(); pol.Stale || d != 2*time.Second {
		t.Errorf("after recovery: %+v", pol)
	}

	// Past MaxStale the copy no longer counts: nothing is allowed.
	s.set(503, "")
	clk.add(40 * 24 * time.Hour)
	c = checker(t, robots.Config{Cache: cache, Now: clk.Now})
	pol, _ = c.Policy(ctx, svc)
	if pol.Kind != robots.KindDisallowAll {
		t.Errorf("40-day-old copy used: %+v", pol)
	}
}

func TestEffectiveInterval(t *testing.T) {
	s := newSite(t, 200, "User-agent: *\nCrawl-delay: 15\n")
	ctx := context.Background()
	tests := []struct {
		name       string
		configured time.Duration
		override   bool
		want       time.Duration
		source     string
		warn       bool
	}{
		{"crawl delay longer", 3 * time.Second, false, 15*time.Second + 250*time.Millisecond, robots.SourceCrawlDelay, false},
		{"configured the delay", 15 * time.Second, false, 15*time.Second + 250*time.Millisecond, robots.SourceCrawlDelay, false},
		{"configured longer", 20 * time.Second, false, 20*time.Second + 250*time.Millisecond, robots.SourceConfigured, false},
		{"override", time.Second, true, time.Second + 20*time.Millisecond, robots.SourceOverride, true},
		{"override not needed", 20 * time.Second, true, 20*time.Second + 250*time.Millisecond, robots.SourceConfigured, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			c := checker(t, robots.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			svc := service(t, s.URL, tt.configured)
			for range 2 {
				pace, err := c.Apply(ctx, svc, tt.configured, tt.override)
				if err != nil {
					t.Fatal(err)
				}
				if pace.Interval != tt.want || pace.Source != tt.source || pace.Configured != tt.configured || pace.CrawlDelay != 15*time.Second {
					t.Errorf("pace %+v, want %s from %s", pace, tt.want, tt.source)
				}
			}
			if svc.Interval() != tt.want {
				t.Errorf("service interval %s, want %s", svc.Interval(), tt.want)
			}
			if n := strings.Count(logs.String(), "going faster than robots.txt asks"); n != map[bool]int{true: 1, false: 0}[tt.warn] {
				t.Errorf("override warned %d times, want %v once:\n%s", n, tt.warn, logs.String())
			}
			paces := c.Paces()
			if len(paces) != 1 || paces[0].Interval != tt.want || !strings.Contains(paces[0].String(), paces[0].Host) {
				t.Errorf("Paces() = %+v", paces)
			}
			js, err := json.Marshal(paces[0])
			if err != nil || !strings.Contains(string(js), `"source":"`+tt.source+`"`) || !strings.Contains(string(js), `"crawl_delay_seconds":15`) {
				t.Errorf("json %s, %v", js, err)
			}
		})
	}

	// No Crawl-delay: the configured interval, and the reason says why.
	s2 := newSite(t, 404, "")
	pace, err := checker(t, robots.Config{}).Apply(ctx, service(t, s2.URL, 0), 3*time.Second, false)
	if err != nil || pace.Interval != 3*time.Second+60*time.Millisecond || pace.Source != robots.SourceConfigured || pace.HasDelay || !strings.Contains(pace.String(), "404") {
		t.Errorf("no robots.txt: %v %+v", err, pace)
	}
}

// TestSimulatedArxiv runs page requests against the simulated arXiv with
// its robots.txt: the robots.txt Crawl-delay spaces every request,
// robots.txt's own included, and disallowed paths are never sent.
func TestSimulatedArxiv(t *testing.T) {
	const delay = 30 * time.Millisecond
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 3, Targets: 6})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.Start(w, sim.Options{Robots: map[string]string{sim.Arxiv: sim.ArxivRobots(delay), sim.Ar5iv: sim.Ar5ivRobots}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var mu sync.Mutex
	var grants []time.Time
	hc, err := httpx.New(httpx.Config{UserAgent: ua, OnGrant: func(g httpx.Grant) {
		if g.Service == sim.Arxiv {
			mu.Lock()
			grants = append(grants, g.At)
			mu.Unlock()
		}
	}}, httpx.ServiceConfig{Name: sim.Arxiv, BaseURL: srv.URL(sim.Arxiv), Interval: time.Millisecond},
		httpx.ServiceConfig{Name: sim.Ar5iv, BaseURL: srv.URL(sim.Ar5iv), Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ax, _ := hc.Service(sim.Arxiv)
	a5, _ := hc.Service(sim.Ar5iv)
	c := checker(t, robots.Config{})
	ctx := context.Background()
	pace, err := c.Apply(ctx, ax, time.Millisecond, false)
	if err != nil {
		t.Fatal(err)
	}
	if pace.Interval != delay+httpx.Margin(delay) || pace.Source != robots.SourceCrawlDelay {
		t.Fatalf("arxiv pace %+v, want the simulated Crawl-delay %s", pace, delay)
	}
	if pace, err := c.Apply(ctx, a5, time.Millisecond, false); err != nil || pace.Interval != httpx.Paced(time.Millisecond) || pace.HasDelay {
		t.Fatalf("ar5iv pace %+v %v, want the configured interval", pace, err)
	}
	var wg sync.WaitGroup
	for _, id := range w.TargetIDs() {
		wg.Go(func() {
			if _, err := ax.Get(ctx, "/html/"+id, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, p := range []string{"/api/query?id_list=2401.00001", "/e-print/2401.00001"} {
		if _, err := ax.Get(ctx, p, nil); !errors.Is(err, robots.ErrDisallowed) {
			t.Errorf("%s: err %v, want ErrDisallowed", p, err)
		}
	}
	if _, err := a5.Get(ctx, "/log/2401.00001", nil); !errors.Is(err, robots.ErrDisallowed) {
		t.Errorf("ar5iv /log: err %v, want ErrDisallowed", err)
	}

	calls := srv.Service(sim.Arxiv).Calls()
	if len(calls) != 1+len(w.TargetIDs()) || calls[0].Key != "GET /robots.txt" {
		t.Errorf("arxiv saw %d calls (first %q), want robots.txt then %d pages", len(calls), calls[0].Key, len(w.TargetIDs()))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(grants) != len(calls) {
		t.Fatalf("%d grants for %d calls", len(grants), len(calls))
	}
	// From the robots.txt request on, every request waits the Crawl-delay:
	// the first page too, though robots.txt itself went at the configured
	// interval, before the delay was known.
	for i := 1; i < len(grants); i++ {
		if g := grants[i].Sub(grants[i-1]); g < delay {
			t.Errorf("arxiv grants %d and %d %s apart, under the Crawl-delay %s", i-1, i, g, delay)
		}
	}
}

func TestNewChecker(t *testing.T) {
	for _, cfg := range []robots.Config{{UserAgent: ""}, {UserAgent: "/1.0"}, {UserAgent: "curate", TTL: -time.Second}} {
		if _, err := robots.New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

// TestGuardReadsOnFirstRequest: Guard asks nothing until the host is
// asked; the first request reads the file once, sets the interval from
// its Crawl-delay before it is sent and obeys its rules; a second Checker
// over the same Cache asks again for nothing.
func TestGuardReadsOnFirstRequest(t *testing.T) {
	s := newSite(t, 200, "User-agent: *\nDisallow: /private/\nCrawl-delay: 0.02\n")
	cache := robots.NewMemoryCache()
	ctx := context.Background()
	const configured = 5 * time.Millisecond
	delay := 20 * time.Millisecond

	for run := range 2 {
		svc := service(t, s.URL, configured)
		c := checker(t, robots.Config{Cache: cache})
		c.Guard(svc, configured, false)
		if n := s.asked(); n != run {
			t.Fatalf("run %d: Guard asked robots.txt (%d requests in all), want no request before the host is asked", run, n)
		}
		if p := c.Paces(); len(p) != 0 {
			t.Errorf("run %d: paces %+v before any request, want none", run, p)
		}
		if _, err := svc.Get(ctx, "/open/a.pdf", nil); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if d := svc.Interval(); d != delay+httpx.Margin(delay) {
			t.Errorf("run %d: interval %s, want the 20ms Crawl-delay and its margin", run, d)
		}
		p := c.Paces()
		if len(p) != 1 || p[0].Source != robots.SourceCrawlDelay || p[0].Configured != configured {
			t.Errorf("run %d: paces %+v, want one from the Crawl-delay", run, p)
		}
		if _, err := svc.Get(ctx, "/private/b.pdf", nil); !errors.Is(err, robots.ErrDisallowed) {
			t.Errorf("run %d: disallowed path: err = %v, want ErrDisallowed", run, err)
		}
		if n := s.asked(); n != 1 {
			t.Errorf("run %d: robots.txt asked %d times in all, want once (the second run reads the cache)", run, n)
		}
	}
	if n := s.pages(); n != 2 {
		t.Errorf("%d page requests reached the server, want the 2 allowed", n)
	}
}

// TestGuardByScheme: a Guard reads the robots.txt of the request's
// scheme, so an https service asked for an http URL on its host reads
// the http file (RFC 9309 scopes a file to scheme and authority).
func TestGuardByScheme(t *testing.T) {
	s := newSite(t, 200, "User-agent: *\nDisallow: /x\n")
	u := strings.Replace(s.URL, "http://", "https://", 1)
	svc := service(t, u, 0)
	c := checker(t, robots.Config{})
	c.Guard(svc, 0, false)
	if _, err := svc.Get(context.Background(), s.URL+"/x/1.pdf", nil); !errors.Is(err, robots.ErrDisallowed) {
		t.Errorf("err = %v, want ErrDisallowed from the http robots.txt", err)
	}
	if n := s.asked(); n != 1 {
		t.Errorf("http robots.txt asked %d times, want 1", n)
	}
}

// TestFileURL: the file of a host is one whichever way its service's base
// writes the host (a default port, case), so a copy cached for one is the
// copy of the other.
func TestFileURL(t *testing.T) {
	for base, want := range map[string]string{
		"https://arxiv.org":          "https://arxiv.org/robots.txt",
		"https://arxiv.org:443/abs/": "https://arxiv.org/robots.txt",
		"https://ArXiv.org/":         "https://arxiv.org/robots.txt",
		"http://127.0.0.1:8080/x":    "http://127.0.0.1:8080/robots.txt",
	} {
		hc, err := httpx.New(httpx.Config{UserAgent: ua}, httpx.ServiceConfig{Name: "s", BaseURL: base})
		if err != nil {
			t.Fatal(err)
		}
		svc, _ := hc.Service("s")
		if got := robots.FileURL(svc); got != want {
			t.Errorf("FileURL(%s) = %s, want %s", base, got, want)
		}
	}
}
