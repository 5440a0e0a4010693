package sim_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/sim"
)

func TestRobots(t *testing.T) {
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 1, Targets: 3})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.Start(w, sim.Options{Robots: map[string]string{sim.Arxiv: sim.ArxivRobots(1500 * time.Millisecond)}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := get(s.URL(sim.Arxiv) + "/robots.txt")
	if status != 200 || !strings.Contains(body, "Crawl-delay: 1.5\n") || !strings.Contains(body, "Allow: /html\n") || !strings.Contains(body, "Disallow: /api\n") {
		t.Errorf("arxiv robots.txt: %d %q", status, body)
	}
	// The pages are still served; robots.txt counts as a request.
	if status, _ := get(s.URL(sim.Arxiv) + "/html/" + w.TargetIDs()[0]); status != 200 {
		t.Errorf("page behind the robots handler: %d", status)
	}
	if st := s.Service(sim.Arxiv).Stats(); st.Requests != 2 {
		t.Errorf("arxiv stats %+v, want 2 requests", st)
	}
	if status, _ := get(s.URL(sim.Ar5iv) + "/robots.txt"); status != 404 {
		t.Errorf("ar5iv without Options.Robots: robots.txt status %d, want 404", status)
	}
}

// TestRobotsFile: the file answers what it is set to, in front of a site,
// and counts what it answered.
func TestRobotsFile(t *testing.T) {
	f := sim.NoRobotsFile()
	srv := httptest.NewServer(sim.Wrap("site", f.In(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") }))))
	defer srv.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		name        string
		set         func()
		status      int
		ctype, body string
		location    string
	}{
		{"none", func() {}, 404, "text/html; charset=utf-8", "<html><body>Not Found</body></html>\n", ""},
		{"file", func() { f.Set(0, "User-agent: *\nDisallow: /x\n") }, 200, "text/plain; charset=utf-8", "User-agent: *\nDisallow: /x\n", ""},
		{"refused", func() { f.Set(403, "go away") }, 403, "text/plain; charset=utf-8", "go away", ""},
		{"unreachable", func() { f.Set(503, "") }, 503, "text/plain; charset=utf-8", "", ""},
		{"moved", func() { f.Redirect(http.StatusMovedPermanently, "https://www.example.org/robots.txt") }, 301, "", "", "https://www.example.org/robots.txt"},
	} {
		tc.set()
		resp, err := noRedirect.Get(srv.URL + "/robots.txt")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || tc.ctype != "" && resp.Header.Get("Content-Type") != tc.ctype || tc.location == "" && string(b) != tc.body || resp.Header.Get("Location") != tc.location {
			t.Errorf("%s: %d %q %q to %q", tc.name, resp.StatusCode, resp.Header.Get("Content-Type"), b, resp.Header.Get("Location"))
		}
	}
	resp, err := http.Get(srv.URL + "/html/x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "page" {
		t.Errorf("a page behind the file: %q", b)
	}
	if f.Asked() != 5 {
		t.Errorf("asked %d times, want 5", f.Asked())
	}
}
