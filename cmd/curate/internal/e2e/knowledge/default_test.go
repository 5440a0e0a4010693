package knowledge

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
)

// defaultWorld is knowledgeWorld's shape on a seed whose sources include
// papers revised twice or more with their citing target's cutoff between
// their first and last versions (seed 25 has none).
func defaultWorld() sim.WorldConfig {
	c := knowledgeWorld()
	c.Seed = 8
	return c
}

// open reports whether p's arXiv API entry (v1's date, the latest
// version and its date) leaves its pin at cutoff open: versions between
// v1 and the latest, the cutoff strictly between their dates.
func open(p sim.Paper, cutoff time.Time) bool {
	v1, latest := p.Versions[0].Truncate(time.Second), p.Versions[len(p.Versions)-1].Truncate(time.Second)
	return p.Version >= 3 && v1.Before(cutoff) && cutoff.Before(latest)
}

// undecidable returns the papers on arXiv that some target of w cites as
// a source whose entry leaves the pin at the target's cutoff (its v1
// date) open: the papers only OAI-PMH can settle, and only those.
func undecidable(w *sim.World) map[string]bool {
	out := map[string]bool{}
	for i := range w.NumTargets() {
		t := w.Target(i)
		for _, r := range w.References(&t) {
			if r.Role != sim.RoleSource || r.Paper.ArxivID == "" {
				continue
			}
			if p, _ := w.ByArxiv(r.Paper.ArxivID); open(p, t.Published.Truncate(time.Second)) {
				out[p.ArxivID] = true
			}
		}
	}
	return out
}

// getRecords returns the papers OAI-PMH was asked for one by one, and
// the other verbs asked.
func getRecords(s *sim.Servers) (ids []string, other []string) {
	for _, c := range s.Service(sim.OAIPMH).Calls() {
		q := c.Query()
		if q.Get("verb") != "GetRecord" {
			other = append(other, q.Get("verb"))
			continue
		}
		ids = append(ids, strings.TrimPrefix(q.Get("identifier"), "oai:arXiv.org:"))
	}
	slices.Sort(ids)
	return ids, other
}

// TestE2EDefaultCut: a run given no knowledge flag applies the knowledge
// cut (flag): every instance has its target's v1 date as its cutoff and
// each source on arXiv is read as the world's histories say, the
// histories coming from the arXiv API's entries (v1's date, the latest
// version and its date) and, only for a paper whose entry cannot settle
// the pin (v3 or later, the cutoff strictly between its v1 and latest
// dates), one OAI-PMH GetRecord: none for a paper with one or two
// versions, no harvest. With --oai-versions=false nothing is asked of
// OAI-PMH: those papers are left unpinned (read as served now, marked
// when that is dated after the cutoff) and the others read as before.
func TestE2EDefaultCut(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	s := clitest.Sim(t, defaultWorld(), sim.Options{})
	w := s.World
	work := t.TempDir()
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}
	fast := []string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn"}
	run := func(name string, extra ...string) map[string]int {
		t.Helper()
		s.Reset()
		args := clitest.RunArgs(t, s, filepath.Join(work, name, "store"), filepath.Join(work, name, "ds"), append(fast, extra...)...)
		code, stdout, stderr := clitest.Run(t, env, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", name, code, stdout, stderr)
		}
		return perService(s)
	}

	// The estimate before the run counts the versions stage's requests
	// of the arXiv API (one lookup per target, at most) and of OAI-PMH.
	s.Reset()
	args := clitest.RunArgs(t, s, filepath.Join(work, "default", "store"), filepath.Join(work, "default", "ds"), append(fast, "--dry-run", "--json", "--price", sim.Model+"=1/2")...)
	code, stdout, stderr := clitest.Run(t, env, args...)
	if code != 0 || s.Requests() != 0 {
		t.Fatalf("estimate: exit %d, %d requests\n%s", code, s.Requests(), stderr)
	}
	var est struct {
		Services []struct {
			Name     string `json:"service"`
			Requests int    `json:"requests"`
		} `json:"services"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(stdout), &est); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	estimated := map[string]int{}
	for _, x := range est.Services {
		estimated[x.Name] += x.Requests
	}

	def := run("default")
	t.Logf("estimated %v", estimated)
	if n := w.NumTargets(); estimated[sim.ArxivAPI] < def[sim.ArxivAPI] || estimated[sim.ArxivAPI] > 1+n {
		t.Errorf("arXiv API: estimated %d, made %d; want at least that and at most the feed's one and one per target (%d)", estimated[sim.ArxivAPI], def[sim.ArxivAPI], 1+n)
	}
	if estimated[sim.OAIPMH] == 0 || !slices.ContainsFunc(est.Notes, func(n string) bool { return strings.Contains(n, "GetRecord") }) {
		t.Errorf("OAI-PMH: estimated %d requests, notes %q; want some, and the assumption said", estimated[sim.OAIPMH], est.Notes)
	}
	asked, other := getRecords(s)
	want := undecidable(w)
	t.Logf("default run: requests %v; GetRecord for %d papers", def, len(asked))
	if len(other) > 0 {
		t.Errorf("the default run asked OAI-PMH %v besides GetRecord", other)
	}
	for _, id := range asked {
		if p, _ := w.ByArxiv(id); p.Version < 3 {
			t.Errorf("GetRecord for %s, which has %d version(s): its arXiv API entry settles it", id, p.Version)
		}
	}
	if wantIDs := sortedKeys(want); !slices.Equal(asked, wantIDs) {
		t.Errorf("GetRecord asked for %v, want the papers whose entry cannot settle the pin %v", asked, wantIDs)
	}
	if len(want) == 0 {
		t.Error("the world has no paper whose entry leaves its pin open: pick another seed")
	}
	if def[sim.ArxivAPI] == 0 {
		t.Error("the arXiv API was not asked")
	}

	rows := knowledgeRows(t, filepath.Join(work, "default", "ds"))
	if len(rows) == 0 {
		t.Fatal("the default run published no instance")
	}
	seen := map[string]int{}
	for id, in := range rows {
		tgt, _ := w.ByArxiv(id)
		cutoff := tgt.Published.Truncate(time.Second)
		if in.KnowledgeCutoff != cutoff.Format(time.DateOnly) {
			t.Errorf("%s: knowledge_cutoff %q, want its v1 date %s", id, in.KnowledgeCutoff, cutoff.Format(time.DateOnly))
		}
		for _, src := range in.Sources {
			p, ok := w.ByArxiv(src.ArxivID)
			if src.ArxivID == "" || !ok {
				continue
			}
			v, date, revised, firstAfter := worldRead(p, cutoff)
			switch {
			case firstAfter:
				t.Errorf("%s: source %s first published after the cutoff", id, src.ArxivID)
			case src.Version != fmt.Sprintf("v%d", v) || src.VersionDate != date.Format(time.DateOnly) || src.RevisedAfterCutoff != revised:
				t.Errorf("%s: source %s read as %s %s revised %v; want v%d %s revised %v (versions %v, HTML %q)",
					id, src.ArxivID, src.Version, src.VersionDate, src.RevisedAfterCutoff, v, date.Format(time.DateOnly), revised, p.Versions, p.HTML)
			case open(p, cutoff) && v < p.Version:
				// Settled by GetRecord, at a version the entry does not
				// name.
				seen["pinned between v1 and the latest"]++
			}
		}
	}
	for _, k := range []string{"pinned between v1 and the latest"} {
		if seen[k] == 0 {
			t.Errorf("the world gave no case of %q: pick another seed", k)
		}
	}
	card, _ := os.ReadFile(filepath.Join(work, "default", "ds", dataset.ReadmeFile))
	if !strings.Contains(string(card), "Knowledge cut: `flag`") {
		t.Errorf("the default card's knowledge cut:\n%s", card)
	}

	// OAI-PMH never asked: the papers only it could settle are left
	// unpinned, the others read as in the default run.
	noOAI := run("no-oai", "--oai-versions=false")
	if noOAI[sim.OAIPMH] != 0 {
		t.Errorf("--oai-versions=false: %d OAI-PMH requests", noOAI[sim.OAIPMH])
	}
	t.Logf("--oai-versions=false: requests %v", noOAI)
	unpinned := 0
	for id, in := range knowledgeRows(t, filepath.Join(work, "no-oai", "ds")) {
		if in.KnowledgeCutoff != rows[id].KnowledgeCutoff {
			t.Errorf("%s: cutoff %q without OAI-PMH, %q with", id, in.KnowledgeCutoff, rows[id].KnowledgeCutoff)
		}
		tgt, _ := w.ByArxiv(id)
		for _, src := range in.Sources {
			p, ok := w.ByArxiv(src.ArxivID)
			if src.ArxivID == "" || !ok {
				continue
			}
			if !open(p, tgt.Published.Truncate(time.Second)) {
				if i := slices.IndexFunc(rows[id].Sources, func(x record.InstanceSource) bool { return x.RefKey == src.RefKey }); i < 0 ||
					rows[id].Sources[i].Version != src.Version || rows[id].Sources[i].VersionDate != src.VersionDate {
					t.Errorf("%s: source %s read as %s %s without OAI-PMH, differently with it", id, src.ArxivID, src.Version, src.VersionDate)
				}
				continue
			}
			unpinned++
			if src.VersionDate != "" && (src.Version != fmt.Sprintf("v%d", p.Version) || !src.RevisedAfterCutoff) {
				t.Errorf("%s: source %s, whose pin only OAI-PMH settles, read as %s %s revised %v; want unpinned: undated, or the version served now marked revised_after_cutoff",
					id, src.ArxivID, src.Version, src.VersionDate, src.RevisedAfterCutoff)
			}
		}
	}
	if unpinned == 0 {
		t.Error("no source left unpinned without OAI-PMH")
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
