package sim_test

import (
	"io"
	"net/http"
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
