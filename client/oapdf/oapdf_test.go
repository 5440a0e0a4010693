package oapdf

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/robots"
	"github.com/groundwork/curate/sim"
)

var pdfBody = []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n")

// hostPDFs are the files every fake host serves pdfBody at.
var hostPDFs = []string{"/P19-1285.pdf", "/P19-1.pdf", "/D17-1230.pdf", "/anthology/P19-1285.pdf", "/anthology/open/P19-1285.pdf",
	"/private/x.pdf", "/x.pdf", "/y.pdf", "/a.pdf", "/b.pdf", "/secret.pdf"}

// fakeHost is the simulated PDF host on a loopback address: a
// sim.PDFSite behind its sim.RobotsFile (none at first) and a sim.Service
// that logs what it is asked.
type fakeHost struct {
	srv    *httptest.Server
	addr   netip.AddrPort
	site   *sim.PDFSite
	robots *sim.RobotsFile
	svc    *sim.Service
}

// startHost starts a fake host listening on ip (127.0.0.1, 127.0.0.2,
// ::1); it skips the test when the address cannot be bound.
func startHost(t *testing.T, ip string) *fakeHost {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	h := &fakeHost{site: sim.NewPDFSite(), robots: sim.NoRobotsFile()}
	for _, p := range hostPDFs {
		h.site.Put(p, pdfBody)
	}
	h.svc = sim.Wrap(sim.PDFHost, h.robots.In(h.site))
	h.srv = httptest.NewUnstartedServer(h.svc)
	h.srv.Listener.Close()
	h.srv.Listener = ln
	h.srv.Start()
	t.Cleanup(h.srv.Close)
	h.addr = netip.MustParseAddrPort(ln.Addr().String())
	return h
}

// paths returns the paths asked for, robots.txt apart, in order.
func (h *fakeHost) paths() []string {
	var out []string
	for _, c := range h.svc.Calls() {
		if c.Path != sim.RobotsPath {
			out = append(out, c.Path)
		}
	}
	return out
}

func (h *fakeHost) count() int { return len(h.paths()) }

// testNet is the network a test's fetcher sees: host names mapped to
// addresses, and the one address (the main fake's) that may be dialled
// besides public ones.
type testNet struct {
	mu      sync.Mutex
	names   map[string][]netip.Addr
	lookups map[string]int
	permit  netip.Addr
}

func (n *testNet) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lookups[host]++
	if a, ok := n.names[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (n *testNet) allow(a netip.Addr) bool { return a == n.permit || PublicAddr(a) }

func (n *testNet) lookupsOf(host string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lookups[host]
}

// env is a fetcher whose allow-list names the test's hosts at the main
// fake's port.
type env struct {
	main *fakeHost
	net  *testNet
	f    *Fetcher
	port string
}

func newEnv(t *testing.T, cfg Config, names map[string][]netip.Addr) *env {
	t.Helper()
	return newEnvOn(t, startHost(t, "127.0.0.1"), cfg, names)
}

// newEnvOn is newEnv over a running fake.
func newEnvOn(t *testing.T, main *fakeHost, cfg Config, names map[string][]netip.Addr) *env {
	t.Helper()
	port := strconv.Itoa(int(main.addr.Port()))
	tn := &testNet{names: map[string][]netip.Addr{}, lookups: map[string]int{}, permit: main.addr.Addr()}
	tn.names["aclanthology.org"] = []netip.Addr{main.addr.Addr()}
	tn.names["www.aclweb.org"] = []netip.Addr{main.addr.Addr()}
	for k, v := range names {
		tn.names[k] = v
	}
	if cfg.Hosts == nil {
		cfg.Hosts = []string{"aclanthology.org:" + port, "www.aclweb.org:" + port}
		for k := range names {
			cfg.Hosts = append(cfg.Hosts, k+":"+port)
		}
	}
	cfg.UserAgent = httpx.UserAgent("test", "")
	cfg.Interval = cmpDur(cfg.Interval, time.Millisecond)
	cfg.RetryMax = cmpInt(cfg.RetryMax, -1)
	cfg.RetryWaitMin, cfg.RetryWaitMax = time.Millisecond, 2*time.Millisecond
	cfg.Resolve, cfg.AllowAddr = tn.resolve, tn.allow
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &env{main: main, net: tn, f: f, port: port}
}

func cmpDur(a, b time.Duration) time.Duration {
	if a != 0 {
		return a
	}
	return b
}

func cmpInt(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// at is the URL of path on an allowed host name at the fakes' port.
func (e *env) at(host, path string) string { return "http://" + host + ":" + e.port + path }

func TestFetch(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	pdf, err := e.f.Fetch(context.Background(), e.at("aclanthology.org", "/P19-1285.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pdf.Body, pdfBody) || pdf.ContentType != "application/pdf" || len(pdf.SHA256) != 64 || pdf.FinalURL != e.at("aclanthology.org", "/P19-1285.pdf") {
		t.Errorf("got %+v", pdf)
	}
	if e.main.count() != 1 {
		t.Errorf("%d requests, want 1", e.main.count())
	}
}

func TestRedirectBetweenAllowedHosts(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	e.main.site.Redirect("/anthology/D17-1230.pdf", e.at("aclanthology.org", "/D17-1230.pdf"), http.StatusMovedPermanently)
	pdf, err := e.f.Fetch(context.Background(), e.at("www.aclweb.org", "/anthology/D17-1230.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if pdf.FinalURL != e.at("aclanthology.org", "/D17-1230.pdf") {
		t.Errorf("final url %q", pdf.FinalURL)
	}
}

// TestRedirectWithCredentials: a redirect to user:pass@ an allowed host
// is followed without them: no Basic auth is sent, and the URL the PDF is
// stored under does not keep them.
func TestRedirectWithCredentials(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	u, _ := url.Parse(e.at("aclanthology.org", "/P19-1.pdf"))
	u.User = url.UserPassword("someone", "hunter2")
	e.main.site.Redirect("/redirect", u.String(), http.StatusFound)
	pdf, err := e.f.Fetch(context.Background(), e.at("www.aclweb.org", "/redirect"))
	if err != nil {
		t.Fatal(err)
	}
	if c := e.main.svc.CallsTo("/P19-1.pdf"); len(c) != 1 || c[0].Auth {
		t.Errorf("the redirect's credentials were sent: %+v", c)
	}
	if pdf.FinalURL != e.at("aclanthology.org", "/P19-1.pdf") {
		t.Errorf("final url %q", pdf.FinalURL)
	}
}

// TestSSRF: URLs and redirects that lead to loopback, private, link-local
// or unlisted hosts are never fetched; the fakes count what reaches them.
func TestSSRF(t *testing.T) {
	inner := startHost(t, "127.0.0.2") // an "internal" service
	innerURL := "http://" + inner.addr.String() + "/secret.pdf"
	var v6 *fakeHost
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		ln.Close()
		v6 = startHost(t, "::1")
	}

	names := map[string][]netip.Addr{
		"internal.test": {inner.addr.Addr()},
		"private.test":  {netip.MustParseAddr("10.0.0.1")},
		"metadata.test": {netip.MustParseAddr("169.254.169.254")},
		"v6loop.test":   {netip.MustParseAddr("::1")},
		"mapped.test":   {netip.MustParseAddr("::ffff:127.0.0.2")},
		"zero.test":     {netip.MustParseAddr("0.0.0.0")},
		"cgnat.test":    {netip.MustParseAddr("100.64.0.1")},
	}
	e := newEnv(t, Config{}, names)
	ctx := context.Background()

	cases := []struct {
		name     string
		url      string
		redirect string // where /redirect points
		want     error
	}{
		{"url to 127.0.0.1", "http://" + e.main.addr.String() + "/x.pdf", "", ErrURL},
		{"url to 127.0.0.2", innerURL, "", ErrURL},
		{"url to 10.x", "http://10.0.0.1/x.pdf", "", ErrURL},
		{"url to the metadata service", "http://169.254.169.254/latest/meta-data/", "", ErrURL},
		{"url to [::1]", "http://[::1]:" + e.port + "/x.pdf", "", ErrURL},
		{"url to a decimal ip", "http://2130706433/x.pdf", "", ErrHostNotAllowed},
		{"url to a host not allowed", "https://evil.example.org/x.pdf", "", ErrHostNotAllowed},
		{"allowed host on another port", "http://aclanthology.org:1/x.pdf", "", ErrHostNotAllowed},
		{"file url", "file:///etc/passwd", "", ErrURL},
		{"ftp url", "ftp://aclanthology.org/x.pdf", "", ErrURL},
		{"credentials", "http://user:pw@aclanthology.org:" + e.port + "/x.pdf", "", ErrURL},
		{"relative url", "/x.pdf", "", ErrURL},
		{"allowed name resolving to loopback", e.at("internal.test", "/x.pdf"), "", ErrForbiddenAddress},
		{"allowed name resolving to 10.x", e.at("private.test", "/x.pdf"), "", ErrForbiddenAddress},
		{"allowed name resolving to 169.254.169.254", e.at("metadata.test", "/x.pdf"), "", ErrForbiddenAddress},
		{"allowed name resolving to ::1", e.at("v6loop.test", "/x.pdf"), "", ErrForbiddenAddress},
		{"allowed name resolving to ::ffff:127.0.0.2", e.at("mapped.test", "/x.pdf"), "", ErrForbiddenAddress},
		{"allowed name resolving to 0.0.0.0", e.at("zero.test", "/x.pdf"), "", ErrForbiddenAddress},
		{"allowed name resolving to carrier-grade NAT", e.at("cgnat.test", "/x.pdf"), "", ErrForbiddenAddress},
		{"redirect to 127.0.0.2", e.at("aclanthology.org", "/redirect"), innerURL, ErrHostNotAllowed},
		{"redirect to 169.254.169.254", e.at("aclanthology.org", "/redirect"), "http://169.254.169.254/latest/meta-data/", ErrHostNotAllowed},
		{"redirect to [::1]", e.at("aclanthology.org", "/redirect"), "http://[::1]:" + e.port + "/x.pdf", ErrHostNotAllowed},
		{"redirect to a host not allowed", e.at("aclanthology.org", "/redirect"), "https://evil.example.org/x.pdf", ErrHostNotAllowed},
		{"redirect to an allowed name resolving to loopback", e.at("aclanthology.org", "/redirect"), e.at("internal.test", "/x.pdf"), ErrForbiddenAddress},
		{"redirect to an allowed name resolving to 10.x", e.at("aclanthology.org", "/redirect"), e.at("private.test", "/x.pdf"), ErrForbiddenAddress},
		{"redirect to file", e.at("aclanthology.org", "/redirect"), "file:///etc/passwd", ErrHostNotAllowed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.main.site.Redirect("/redirect", c.redirect, http.StatusFound)
			before := e.main.count()
			pdf, err := e.f.Fetch(ctx, c.url)
			if !errors.Is(err, c.want) || pdf != nil {
				t.Errorf("Fetch = %v, %v; want error %v", pdf, err, c.want)
			}
			if c.want == ErrForbiddenAddress && !errors.Is(err, httpx.ErrPolicy) {
				t.Errorf("%v does not wrap httpx.ErrPolicy (it would be retried)", err)
			}
			// Only the redirecting page itself may reach the main fake.
			wantMain := 0
			if c.redirect != "" {
				wantMain = 1
			}
			if got := e.main.count() - before; got != wantMain {
				t.Errorf("main fake got %d requests, want %d", got, wantMain)
			}
		})
	}
	if n := inner.count(); n != 0 {
		t.Errorf("the internal service on 127.0.0.2 got %d requests", n)
	}
	if v6 != nil && v6.count() != 0 {
		t.Errorf("the service on [::1] got %d requests", v6.count())
	}
	if n := e.net.lookupsOf("evil.example.org"); n != 0 {
		t.Errorf("a host not on the allow-list was resolved %d times", n)
	}
}

// TestRebinding: a name that resolves to the permitted address once and
// to an internal one the next time is refused the second time, at dial.
func TestRebinding(t *testing.T) {
	inner := startHost(t, "127.0.0.2")
	e := newEnv(t, Config{}, map[string][]netip.Addr{"flip.test": nil})
	e.main.srv.Config.SetKeepAlivesEnabled(false) // the next fetch dials again
	e.net.names["flip.test"] = []netip.Addr{e.main.addr.Addr()}
	ctx := context.Background()
	if _, err := e.f.Fetch(ctx, e.at("flip.test", "/a.pdf")); err != nil {
		t.Fatalf("first fetch: %v", err)
	}
	e.net.mu.Lock()
	e.net.names["flip.test"] = []netip.Addr{inner.addr.Addr()} // the name now points inside
	e.net.mu.Unlock()
	if _, err := e.f.Fetch(ctx, e.at("flip.test", "/b.pdf")); !errors.Is(err, ErrForbiddenAddress) {
		t.Errorf("second fetch: %v, want ErrForbiddenAddress", err)
	}
	if inner.count() != 0 {
		t.Errorf("the internal service got %d requests", inner.count())
	}
}

func TestNotPDFAndTooLarge(t *testing.T) {
	big := append(append([]byte(nil), pdfBody...), bytes.Repeat([]byte("x"), 4096)...)
	e := newEnv(t, Config{MaxSize: 1024}, nil)
	site := e.main.site
	site.Set("/html", sim.LoginPage)
	site.Set("/html-as-pdf", sim.PDFAnswer{Body: []byte("<html><body>not a pdf</body></html>")})
	site.Set("/pdf-as-html", sim.PDFAnswer{ContentType: "text/html", Body: pdfBody})
	site.Set("/octet", sim.PDFAnswer{ContentType: "application/octet-stream", Body: pdfBody})
	site.Put("/big", big)
	site.Set("/big-chunked", sim.PDFAnswer{Body: big, Chunked: true})
	site.Set("/gone", sim.PDFAnswer{Status: http.StatusGone, ContentType: "text/plain", Body: []byte("gone\n")})
	ctx := context.Background()
	for path, want := range map[string]error{
		"/html": ErrNotPDF, "/html-as-pdf": ErrNotPDF, "/pdf-as-html": ErrNotPDF,
		"/big": ErrTooLarge, "/big-chunked": ErrTooLarge, "/gone": ErrStatus, "/octet": nil,
	} {
		pdf, err := e.f.Fetch(ctx, e.at("aclanthology.org", path))
		if !errors.Is(err, want) || (want == nil) != (pdf != nil) {
			t.Errorf("%s: got %v, %v; want %v", path, pdf != nil, err, want)
		}
	}
}

// TestRobots: a host's robots.txt is read once, through package robots,
// and obeyed for curate's product token; a file that refuses curate or
// cannot be read disallows the host, a missing one allows it.
func TestRobots(t *testing.T) {
	const rules = "User-agent: *\nDisallow: /private/\n\nUser-agent: curate\nDisallow: /anthology/\nAllow: /anthology/open/\n"
	for _, tc := range []struct {
		name    string
		status  int
		body    string
		allowed map[string]bool // path -> fetched
		// unreachable: a refusal wraps ErrRobotsUnreachable (it may pass)
		unreachable bool
	}{
		{"curate's group", 0, rules, map[string]bool{
			"/anthology/P19-1285.pdf": false, "/anthology/open/P19-1285.pdf": true,
			"/private/x.pdf": true, // the * group is not curate's
		}, false},
		{"404: no file", 404, "", map[string]bool{"/anthology/P19-1285.pdf": true, "/x.pdf": true}, false},
		// Not RFC 9309's MAY-crawl for 4xx: package robots reads a refusal
		// of the file as a refusal of curate (arXiv answers 403 to the
		// crawlers it blocks).
		{"403: curate refused", 403, "", map[string]bool{"/x.pdf": false}, false},
		// Unreachable (5xx or 429 after the retries): nothing is fetched.
		{"503: unreachable", 503, "down", map[string]bool{"/x.pdf": false, "/y.pdf": false}, true},
		{"429: unreachable", 429, "slow down", map[string]bool{"/x.pdf": false}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Config{}, nil)
			e.main.robots.Set(tc.status, tc.body)
			ctx := context.Background()
			var want []string
			for path, ok := range tc.allowed {
				_, err := e.f.Fetch(ctx, e.at("aclanthology.org", path))
				switch {
				case ok && err != nil:
					t.Errorf("%s: %v, want it fetched", path, err)
				case !ok && (!errors.Is(err, ErrRobots) || errors.Is(err, ErrRobotsUnreachable) != tc.unreachable):
					t.Errorf("%s: %v, want ErrRobots (unreachable: %v)", path, err, tc.unreachable)
				case ok:
					want = append(want, path)
				}
			}
			got := slices.Sorted(slices.Values(e.main.paths()))
			if slices.Sort(want); !slices.Equal(got, want) {
				t.Errorf("paths requested %q, want %q", got, want)
			}
			if n := e.main.robots.Asked(); n != 1 {
				t.Errorf("robots.txt asked %d times, want once", n)
			}
		})
	}
}

// TestRobotsOnRedirect: a redirect to another allowed host obeys that
// host's robots.txt; the hop is refused before it is sent.
func TestRobotsOnRedirect(t *testing.T) {
	e := newEnv(t, Config{}, nil)
	e.main.site.Redirect("/D17-1230.pdf", e.at("www.aclweb.org", "/private/D17-1230.pdf"), http.StatusFound)
	e.main.robots.Set(0, "User-agent: *\nDisallow: /private/\n")
	if _, err := e.f.Fetch(context.Background(), e.at("aclanthology.org", "/D17-1230.pdf")); !errors.Is(err, ErrRobots) {
		t.Errorf("redirect to a disallowed path: %v, want ErrRobots", err)
	}
	if got := strings.Join(e.main.paths(), " "); got != "/D17-1230.pdf" {
		t.Errorf("paths requested: %s, want only the first", got)
	}
}

// TestCrawlDelay: a host's Crawl-delay becomes its interval when longer
// than the configured one, before the first PDF request; a shorter one
// leaves the configured interval. Either is kept with httpx's margin.
func TestCrawlDelay(t *testing.T) {
	for _, tc := range []struct {
		name       string
		robots     string
		configured time.Duration
		want       time.Duration
	}{
		{"longer delay", "User-agent: *\nCrawl-delay: 0.05\n", time.Millisecond, httpx.Paced(50 * time.Millisecond)},
		{"curate's group", "User-agent: curate\nCrawl-delay: 0.04\n\nUser-agent: *\nCrawl-delay: 9\n", time.Millisecond, httpx.Paced(40 * time.Millisecond)},
		{"shorter delay", "User-agent: *\nCrawl-delay: 0.001\n", 30 * time.Millisecond, httpx.Paced(30 * time.Millisecond)},
		{"no delay", "User-agent: *\nDisallow: /private/\n", 2 * time.Millisecond, httpx.Paced(2 * time.Millisecond)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr, err := robots.New(robots.Config{UserAgent: httpx.UserAgent("test", "")})
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, Config{Interval: tc.configured, Robots: cr}, nil)
			e.main.robots.Set(0, tc.robots)
			svc := e.f.byHost["aclanthology.org:"+e.port]
			if d := svc.Interval(); d != httpx.Paced(tc.configured) {
				t.Fatalf("interval %s before the host was asked, want the configured %s", d, tc.configured)
			}
			for range 2 {
				if _, err := e.f.Fetch(context.Background(), e.at("aclanthology.org", "/P19-1285.pdf")); err != nil {
					t.Fatal(err)
				}
			}
			if d := svc.Interval(); d != tc.want {
				t.Errorf("interval %s, want %s", d, tc.want)
			}
			if p := cr.Paces(); len(p) != 1 || p[0].Interval != tc.want || p[0].Configured != tc.configured {
				t.Errorf("paces %+v, want one at %s", p, tc.want)
			}
			if s := svc.Stats(); s.Requests != 3 {
				t.Errorf("%d requests, want robots.txt and 2 PDFs", s.Requests)
			}
		})
	}
}

// TestRobotsCachedAcrossFetchers: two Fetchers (two runs) whose Checkers
// share a Cache read a host's robots.txt once while it is fresh.
func TestRobotsCachedAcrossFetchers(t *testing.T) {
	cache := robots.NewMemoryCache()
	main := startHost(t, "127.0.0.1")
	main.robots.Set(0, "User-agent: *\nDisallow: /private/\nCrawl-delay: 0.02\n")
	for run := range 2 {
		cr, err := robots.New(robots.Config{UserAgent: httpx.UserAgent("test", ""), Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		e := newEnvOn(t, main, Config{Robots: cr}, nil)
		if _, err := e.f.Fetch(context.Background(), e.at("aclanthology.org", "/P19-1285.pdf")); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if _, err := e.f.Fetch(context.Background(), e.at("aclanthology.org", "/private/x.pdf")); !errors.Is(err, ErrRobots) {
			t.Errorf("run %d: disallowed path: %v, want ErrRobots", run, err)
		}
		if d, want := e.f.byHost["aclanthology.org:"+e.port].Interval(), 20*time.Millisecond+httpx.Margin(20*time.Millisecond); d != want {
			t.Errorf("run %d: interval %s, want %s from the cached Crawl-delay", run, d, want)
		}
	}
	if n := main.robots.Asked(); n != 1 {
		t.Errorf("robots.txt asked %d times over two runs, want once", n)
	}
	if n := main.count(); n != 2 {
		t.Errorf("%d PDF requests, want 2", n)
	}
}

// TestIgnoreRobots: IgnoreRobots asks for no robots.txt.
func TestIgnoreRobots(t *testing.T) {
	e := newEnv(t, Config{IgnoreRobots: true}, nil)
	e.main.robots.Set(0, "User-agent: *\nDisallow: /\n")
	if _, err := e.f.Fetch(context.Background(), e.at("aclanthology.org", "/x.pdf")); err != nil {
		t.Fatal(err)
	}
	if n := e.main.robots.Asked(); n != 0 {
		t.Errorf("robots.txt asked %d times, want none", n)
	}
}

func TestControlRefusesAtConnect(t *testing.T) {
	d := newDialer(nil, nil)
	for addr, ok := range map[string]bool{
		"127.0.0.1:80": false, "10.1.2.3:443": false, "172.16.0.1:80": false, "192.168.1.1:80": false,
		"169.254.169.254:80": false, "[::1]:443": false, "[fe80::1]:80": false, "[fc00::1]:80": false,
		"0.0.0.0:80": false, "224.0.0.1:80": false, "[::ffff:10.0.0.1]:80": false, "[64:ff9b::a00:1]:80": false,
		"93.184.216.34:443": true, "[2606:4700::6810:84e5]:443": true,
	} {
		err := d.control("tcp", addr, nil)
		if (err == nil) != ok || err != nil && !errors.Is(err, ErrForbiddenAddress) {
			t.Errorf("control(%s) = %v, want allowed %v", addr, err, ok)
		}
	}
}

func TestNewValidates(t *testing.T) {
	for _, hosts := range [][]string{{}, {"127.0.0.1"}, {"[::1]"}, {"*.example.org"}, {"a/b"}, {"host:0"}, {"host:x"}} {
		if _, err := New(Config{UserAgent: "t", Hosts: hosts}); err == nil {
			t.Errorf("New accepted hosts %q", hosts)
		}
	}
	if _, err := New(Config{Hosts: []string{"aclanthology.org"}}); err == nil {
		t.Error("New accepted no user agent")
	}
	f, err := New(Config{UserAgent: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"https://aclanthology.org/P19-1285.pdf", "http://www.aclweb.org/anthology/D17-1230.pdf", "https://openreview.net/pdf?id=abc", "https://europepmc.org/articles/PMC1/pdf"} {
		if err := f.Check(u); err != nil {
			t.Errorf("default allow-list refuses %s: %v", u, err)
		}
	}
	if err := f.Check("http://yann.lecun.com/exdb/publis/pdf/jarrett-iccv-09.pdf"); !errors.Is(err, ErrHostNotAllowed) {
		t.Errorf("a personal page is allowed by default: %v", err)
	}
}

func TestPublicAddr(t *testing.T) {
	for s, want := range map[string]bool{
		"8.8.8.8": true, "1.1.1.1": true, "2001:4860:4860::8888": true,
		"127.0.0.1": false, "127.255.0.1": false, "10.0.0.1": false, "172.31.255.255": false, "192.168.0.1": false,
		"169.254.169.254": false, "100.64.0.1": false, "0.0.0.0": false, "255.255.255.255": false, "224.0.0.251": false,
		"::": false, "::1": false, "fe80::1": false, "fd00::1": false, "ff02::1": false, "::ffff:127.0.0.1": false,
		"64:ff9b::7f00:1": false, "2002:7f00:1::": false, "2001:db8::1": false, "198.18.0.1": false,
	} {
		if got := PublicAddr(netip.MustParseAddr(s)); got != want {
			t.Errorf("PublicAddr(%s) = %v, want %v", s, got, want)
		}
	}
}

func TestURLKey(t *testing.T) {
	for raw, want := range map[string]string{
		"https://AclAnthology.org/x": "aclanthology.org", "https://aclanthology.org:443/x": "aclanthology.org",
		"http://aclanthology.org:443/x": "aclanthology.org:443", "http://h:8080/": "h:8080",
	} {
		u, _ := url.Parse(raw)
		if got := urlKey(u); got != want {
			t.Errorf("urlKey(%s) = %q, want %q", raw, got, want)
		}
	}
}
