package refresh

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/demo"
	"github.com/groundwork/curate/sim/simtest"
)

// oaiRepository is the simulated OAI-PMH repository holding the given
// papers as new on day created.
func oaiRepository(t *testing.T, ids []string, created string) *simtest.Server {
	t.Helper()
	day, err := time.Parse(time.DateOnly, created)
	if err != nil {
		t.Fatal(err)
	}
	c := sim.NewCorpus()
	for _, id := range ids {
		m := sim.OAIMeta{ID: id, Datestamp: day, Created: day, Authors: []string{"J. Doe"}, Title: "T", Categories: []string{"cs.CL", "cs.LG"}, Abstract: "A."}
		c.AddOAIRecord("arXiv", m.Record("arXiv"))
	}
	return simtest.Serve(t, sim.OAIPMH, c)
}

// TestRefresh publishes versions as targets arrive from the targets file
// and from the OAI-PMH feed, and publishes nothing when nothing changed.
func TestRefresh(t *testing.T) {
	srv, err := demo.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ids := demo.TargetIDs()
	dir := t.TempDir()
	out := filepath.Join(dir, "published")
	base := []string{"refresh", "--store", filepath.Join(dir, "store"), "--out", out,
		"--arxiv-base", srv.URL(sim.Arxiv), "--ar5iv-base", srv.URL(sim.Ar5iv), "--arxiv-interval", "1ms",
		"--s2-base", srv.URL(sim.S2), "--arxiv-api-base", srv.URL(sim.ArxivAPI), "--s2-interval", "1ms"}
	env := map[string]string{"SOURCE_DATE_EPOCH": "1767225600"}

	// 1. Four targets from the file.
	code, _, stderr := clitest.Run(t, env, append(base, "--targets", clitest.WriteTargets(t, ids[:4]))...)
	if code != 0 {
		t.Fatalf("first refresh: exit %d\n%s", code, stderr)
	}
	first := readChangelog(t, out)
	if len(first.Added) == 0 || len(first.Removed)+len(first.Changed) != 0 || first.Previous != "" {
		t.Errorf("first changelog %+v", first)
	}

	// 2. Nothing new: no version published.
	code, stdout, stderr := clitest.Run(t, env, append(base, "--targets", clitest.WriteTargets(t, ids[:4]))...)
	if code != 0 || !strings.Contains(stdout, "stays the latest version") {
		t.Errorf("second refresh: exit %d\n%s", code, stderr)
	}
	if v := readChangelog(t, out); v.Version != first.Version {
		t.Errorf("latest moved to %s although nothing changed", v.Version)
	}

	// 3. Two more papers from the OAI-PMH feed.
	oai := oaiRepository(t, ids[4:], "2026-11-29")
	code, _, stderr = clitest.Run(t, env, append(base, "--targets", clitest.WriteTargets(t, ids[:4]), "--oai-base", oai.URL+sim.OAIPath, "--oai-set", "cs", "--oai-since", "2026-11-28")...)
	if code != 0 {
		t.Fatalf("harvesting refresh: exit %d\n%s", code, stderr)
	}
	third := readChangelog(t, out)
	if len(oai.Calls()) == 0 || third.Previous != first.Version || len(third.Added) == 0 {
		t.Errorf("harvest: %d OAI requests, changelog %+v", len(oai.Calls()), third)
	}
	for _, want := range ids[4:] {
		if !strings.Contains(strings.Join(third.Added, " "), want) {
			t.Errorf("harvested %s not added: %+v", want, third.Added)
		}
	}
	if code, out, _ := clitest.Run(t, nil, "dataset", "--check", filepath.Join(out, "latest")); code != 0 {
		t.Errorf("latest fails its check: %s", out)
	}
	// The harvested targets stay known to later refreshes.
	code, stdout, stderr = clitest.Run(t, env, append(base, "--targets", clitest.WriteTargets(t, ids[:4]))...)
	if code != 0 || !strings.Contains(stdout, "stays the latest version") {
		t.Errorf("refresh after the harvest: exit %d\n%s", code, stderr)
	}
}

func readChangelog(t *testing.T, out string) app.Changelog {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, "latest", "changelog.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c app.Changelog
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRefreshNothingToPublish: a night on which every target fails
// publishes no version: latest stays, the refresh says why and exits 1.
func TestRefreshNothingToPublish(t *testing.T) {
	srv, err := demo.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "published")
	base := []string{"refresh", "--store", filepath.Join(dir, "store"), "--out", out,
		"--arxiv-base", srv.URL(sim.Arxiv), "--ar5iv-base", srv.URL(sim.Ar5iv), "--arxiv-interval", "1ms",
		"--s2-base", srv.URL(sim.S2), "--arxiv-api-base", srv.URL(sim.ArxivAPI), "--s2-interval", "1ms", "--retries", "0"}
	env := map[string]string{"SOURCE_DATE_EPOCH": "1767225600"}
	if code, _, stderr := clitest.Run(t, env, append(base, "--targets", clitest.WriteTargets(t, demo.TargetIDs()[:2]))...); code != 0 {
		t.Fatalf("first refresh: exit %d\n%s", code, stderr)
	}
	first := readChangelog(t, out)
	code, stdout, stderr := clitest.Run(t, env, append(base, "--targets", clitest.WriteTargets(t, []string{"2101.00001", "2101.00002"}))...)
	if code != 1 || !strings.Contains(stdout+stderr, "no instance to publish") {
		t.Errorf("a night of failures: exit %d, want 1 saying why\n%s%s", code, stdout, stderr)
	}
	if v := readChangelog(t, out); v.Version != first.Version {
		t.Errorf("latest moved to %s (every target failed)", v.Version)
	}
}
