package refresh

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/demo"
	"github.com/groundwork/curate/sim/simtest"
)

// TestRefreshLicences: a licence learned after a version was published
// publishes a new version whose card counts it (and whose changelog says
// so), a refresh with nothing new publishes nothing and asks nothing, and
// a harvest records the licences of the papers it brings without asking
// for them.
func TestRefreshLicences(t *testing.T) {
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
		"--s2-base", srv.URL(sim.S2), "--arxiv-api-base", srv.URL(sim.ArxivAPI), "--s2-interval", "1ms",
		"--targets", clitest.WriteTargets(t, ids[:4])}
	env := map[string]string{"SOURCE_DATE_EPOCH": "1767225600"}
	latest := filepath.Join(out, "latest")

	if code, _, stderr := clitest.Run(t, env, base...); code != 0 {
		t.Fatalf("first refresh: exit %d\n%s", code, stderr)
	}
	first := readChangelog(t, out)
	in, _ := clitest.Dataset(t, latest)
	if c := readCard(t, latest); !strings.Contains(c, fmt.Sprintf("The licence of the %d target papers is not recorded", len(in))) {
		t.Errorf("first card:\n%s", c)
	}

	// The repository knows three of the four targets.
	day := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	c := sim.NewCorpus()
	lic := map[string]string{ids[0]: licCCBy, ids[1]: licCCBy, ids[2]: licArxivNE}
	for id, l := range lic {
		m := sim.OAIMeta{ID: id, Datestamp: day, Created: day.AddDate(-1, 0, 0), Title: "T", Abstract: "A.", Categories: []string{"cs.CL"}, License: l}
		c.AddOAIRecord("arXiv", m.Record("arXiv"))
	}
	oai := simtest.Serve(t, sim.OAIPMH, c)
	withLicences := append(slices.Clone(base), "--licenses", "--oai-base", oai.URL+sim.OAIPath)
	code, stdout, stderr := clitest.Run(t, env, withLicences...)
	if code != 0 || !strings.Contains(stdout, "published") {
		t.Fatalf("refresh --licenses: exit %d\n%s\n%s", code, stdout, stderr)
	}
	second := readChangelog(t, out)
	var wantChanged []string
	for id := range in {
		if _, ok := lic[id]; ok {
			wantChanged = append(wantChanged, id)
		}
	}
	slices.Sort(wantChanged)
	if second.Previous != first.Version || len(second.Added)+len(second.Removed)+len(second.Changed) != 0 || !slices.Equal(second.Licenses, wantChanged) {
		t.Errorf("changelog %+v, want only the licences of %v", second, wantChanged)
	}
	rows, _ := wantMix(in, lic)
	card := readCard(t, latest)
	for _, row := range rows {
		if !strings.Contains(card, row+"\n") {
			t.Errorf("card lacks %q:\n%s", row, card)
		}
	}

	// Nothing new: no request (the unknown target is not asked again), no
	// version.
	oai.Reset()
	code, stdout, _ = clitest.Run(t, env, withLicences...)
	if code != 0 || !strings.Contains(stdout, "stays the latest version") || len(oai.Calls()) != 0 {
		t.Errorf("refresh with nothing new: exit %d, %d requests\n%s", code, len(oai.Calls()), stdout)
	}

	// A harvest brings two papers with their licences: no GetRecord.
	for _, id := range ids[4:6] {
		m := sim.OAIMeta{ID: id, Datestamp: day, Created: day, Title: "T", Abstract: "A.", Categories: []string{"cs.CL"}, License: licCCBy}
		c.AddOAIRecord("arXiv", m.Record("arXiv"))
		lic[id] = licCCBy
	}
	oai.Reset()
	code, stdout, stderr = clitest.Run(t, env, append(slices.Clone(withLicences), "--oai-set", "cs", "--oai-since", "2026-11-28")...)
	if code != 0 || !strings.Contains(stderr, "2 licences recorded") {
		t.Fatalf("harvesting refresh: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, call := range oai.Calls() {
		if v := call.Query().Get("verb"); v == "GetRecord" {
			t.Errorf("a harvested paper's licence was asked for: %v", call.Query())
		}
	}
	in, _ = clitest.Dataset(t, latest)
	rows, _ = wantMix(in, lic)
	card = readCard(t, latest)
	for _, row := range rows {
		if !strings.Contains(card, row+"\n") {
			t.Errorf("after the harvest, card lacks %q:\n%s", row, card)
		}
	}
}
