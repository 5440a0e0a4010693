package crawl

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/sim"
)

// TestE2EEstimate: `curate estimate` and `curate run --dry-run` make no
// request and write nothing; after a pilot run of some targets, the
// estimate for all of them counts the requests the run then makes (S2 and
// the arXiv API exactly up to the batches' timing, pages from the pilot's
// averages), paced by the stored robots.txt's Crawl-delay.
func TestE2EEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	s := clitest.Sim(t, sim.WorldConfig{Seed: 9, Targets: 40}, sim.Options{Robots: map[string]string{
		sim.Arxiv: sim.ArxivRobots(20 * time.Millisecond), sim.Ar5iv: sim.Ar5ivRobots}})
	work := t.TempDir()
	all := filepath.Join(work, "all.txt")
	pilot := filepath.Join(work, "pilot.txt")
	ids := s.World.TargetIDs()
	os.WriteFile(all, []byte(strings.Join(ids, "\n")), 0o644)
	os.WriteFile(pilot, []byte(strings.Join(ids[:12], "\n")), 0o644)
	flags := append([]string{"--store", work + "/store", "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--retries", "1", "--price", sim.Model + "=1/2"}, s.Flags()...)
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}

	// Nothing yet: the estimate creates no store and asks nothing.
	fresh := filepath.Join(work, "fresh")
	code, out, stderr := clitest.Run(t, env, append([]string{"estimate", "--targets", all, "--json"}, append(flags, "--store", fresh)...)...)
	if code != 0 {
		t.Fatalf("estimate: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("estimate created the store")
	}
	if n := s.Requests(); n != 0 {
		t.Fatalf("estimate made %d requests", n)
	}
	if !json.Valid([]byte(out)) {
		t.Fatalf("estimate --json printed no JSON:\n%s", out)
	}

	code, _, stderr = clitest.Run(t, env, append([]string{"run", "--targets", pilot, "--out", work + "/dataset"}, flags...)...)
	if code != 0 {
		t.Fatalf("pilot: exit %d\n%s", code, stderr)
	}
	s.Reset()
	code, out, stderr = clitest.Run(t, env, append([]string{"run", "--dry-run", "--json", "--targets", all, "--out", work + "/dataset"}, flags...)...)
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, stderr)
	}
	if n := s.Requests(); n != 0 {
		t.Fatalf("dry run made %d requests", n)
	}
	var est struct {
		Services []struct {
			Name     string `json:"service"`
			Requests int    `json:"requests"`
			Source   string `json:"interval_source"`
			Interval struct {
				Seconds float64 `json:"seconds"`
			} `json:"interval"`
		} `json:"services"`
		Stages []struct {
			Stage string `json:"stage"`
			Calls int    `json:"llm_calls"`
		} `json:"stages"`
		Cost *float64 `json:"cost_usd"`
	}
	if err := json.Unmarshal([]byte(out), &est); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	code, _, stderr = clitest.Run(t, env, append([]string{"run", "--targets", all, "--out", work + "/dataset"}, flags...)...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	actual := s.Stats()
	got := map[string]int{}
	for _, se := range est.Services {
		got[se.Name] = se.Requests
		if want := 20*time.Millisecond + httpx.Margin(20*time.Millisecond); se.Name == sim.Arxiv && (se.Source != "crawl-delay" || math.Abs(se.Interval.Seconds-want.Seconds()) > 1e-9) {
			t.Errorf("arxiv paced at %vs from %q, want the stored Crawl-delay of 20ms and its margin", se.Interval.Seconds, se.Source)
		}
	}
	// The arXiv API: the citegraph feed's lookups exactly, and the
	// versions stage's, one per target not classified yet, at most (the
	// knowledge cut is on by default; a target whose sources' histories
	// are all held asks none).
	if a, unclassified := actual[sim.ArxivAPI].Requests, len(ids)-12; got[sim.ArxivAPI] < a || got[sim.ArxivAPI] > a+unclassified {
		t.Errorf("arXiv API: estimated %d requests, made %d (at most %d more for the %d targets not classified yet)", got[sim.ArxivAPI], a, unclassified, unclassified)
	}
	// S2: the targets' records, one references request each, the fill
	// batches (how many depends on when targets wait for theirs).
	if d := got[sim.S2] - actual[sim.S2].Requests; d < -2 || d > 2 {
		t.Errorf("S2: estimated %d requests, made %d", got[sim.S2], actual[sim.S2].Requests)
	}
	for _, name := range []string{sim.Arxiv, sim.LLM} {
		want := actual[name].Requests
		g := got[name]
		if name == sim.LLM {
			g = 0
			for _, st := range est.Stages {
				g += st.Calls
			}
		}
		if r := float64(g) / float64(want); r < 0.6 || r > 1.5 {
			t.Errorf("%s: estimated %d, made %d", name, g, want)
		}
	}
	if est.Cost == nil || *est.Cost <= 0 {
		t.Errorf("no cost estimated with a price given: %v", est.Cost)
	}
}
