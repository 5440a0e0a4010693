package knowledge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
)

// knowledgeWorld is the simulated world of the knowledge cut (issue 25):
// cited papers revised; target 5's and 8's first sources on arXiv revised
// two weeks after them (and citing them then: 5's has no page, so it is
// read from its abstract, as served now; 8's is read at its v1 page);
// target 6's v1 without HTML and
// its last version citing, as a source, a paper first published after
// its v1; target 7's v1 without HTML.
func knowledgeWorld() sim.WorldConfig {
	return sim.WorldConfig{Seed: 25, Targets: 30, Revisions: true, RevisedSource: []int{5, 8}, LateSource: []int{6}, NoV1HTML: []int{6, 7}}
}

// perService is the requests each service got since the last reset.
func perService(s *sim.Servers) map[string]int {
	out := map[string]int{}
	for _, name := range []string{sim.Arxiv, sim.Ar5iv, sim.S2, sim.ArxivAPI, sim.OAIPMH, sim.LLM} {
		out[name] = s.Service(name).Stats().Requests
	}
	return out
}

// knowledgeRows reads a published dataset's instances by target.
func knowledgeRows(t *testing.T, dir string) map[string]record.Instance {
	t.Helper()
	pub, err := dataset.ReadDataset(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]record.Instance{}
	for _, in := range pub.Instances {
		out[in.Target.ArxivID] = in
	}
	return out
}

// worldRead is what an instance must record of a source on arXiv: its
// last version on or before the cutoff when arXiv serves that version's
// page, else the version served now (ar5iv's, or the abstract's).
func worldRead(p sim.Paper, cutoff time.Time) (version int, date time.Time, revised, firstAfter bool) {
	if p.Published.Truncate(time.Second).After(cutoff) {
		return 0, time.Time{}, false, true
	}
	if p.HTML == sim.HTMLArxiv {
		for i, d := range p.Versions {
			if !d.Truncate(time.Second).After(cutoff) {
				version, date = i+1, d
			}
		}
		return version, date, false, false
	}
	latest := p.Versions[len(p.Versions)-1]
	return p.Version, latest, latest.Truncate(time.Second).After(cutoff), false
}

// TestE2EKnowledgeCut runs the world under --knowledge-cut off (today's
// reading), flag (the default), strict and flag from a metadata
// snapshot, and checks what each dataset records of the versions read
// against the world's histories: every instance's cutoff is its target's
// v1 date; a target whose v1 has no HTML is read at the version served
// now, and says so; a source revised after its target is read at its
// pinned version (html/IDvN) or, when that has no page, as served now
// and marked revised_after_cutoff (flag) or dropped (strict); a source
// first published after its target's v1 is never a source. The estimate
// says before the run, and the run shows, that requests per target rise
// by at most one per service used; strict passes --check, and fails it
// once a source dated after its cutoff is planted.
func TestE2EKnowledgeCut(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	s := clitest.Sim(t, knowledgeWorld(), sim.Options{})
	w := s.World
	work := t.TempDir()
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}
	fast := []string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn"}
	oai := []string{"--oai-versions", "--oai-base", s.URL(sim.OAIPMH) + sim.OAIPath, "--oai-harvest", "all"}
	run := func(name string, extra ...string) (map[string]int, string, string) {
		t.Helper()
		s.Reset()
		args := clitest.RunArgs(t, s, filepath.Join(work, name, "store"), filepath.Join(work, name, "ds"), append(fast, extra...)...)
		code, stdout, stderr := clitest.Run(t, env, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", name, code, stdout, stderr)
		}
		return perService(s), stdout, stderr
	}
	estimate := func(name string, extra ...string) map[string]int {
		t.Helper()
		s.Reset()
		args := clitest.RunArgs(t, s, filepath.Join(work, name, "store"), filepath.Join(work, name, "ds"), append(append(fast, "--dry-run", "--json", "--price", sim.Model+"=1/2"), extra...)...)
		code, stdout, stderr := clitest.Run(t, env, args...)
		if code != 0 || s.Requests() != 0 {
			t.Fatalf("estimate %s: exit %d, %d requests\n%s", name, code, s.Requests(), stderr)
		}
		var est struct {
			Services []struct {
				Name     string `json:"service"`
				Requests int    `json:"requests"`
			} `json:"services"`
		}
		if err := json.Unmarshal([]byte(stdout), &est); err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		out := map[string]int{}
		for _, x := range est.Services {
			out[x.Name] += x.Requests
		}
		return out
	}
	n := float64(w.NumTargets())
	risesAtMostOne := func(what string, before, after map[string]int) {
		t.Helper()
		for svc, a := range after {
			if rise := float64(a-before[svc]) / n; rise > 1 {
				t.Errorf("%s: %s rises by %.2f requests per target (%d → %d), more than one", what, svc, rise, before[svc], a)
			}
		}
	}

	// Before any run: what each mode would ask.
	estOff, estFlag := estimate("off", "--knowledge-cut", "off"), estimate("flag", oai...)
	if estFlag["oai-pmh"] == 0 || estOff["oai-pmh"] != 0 {
		t.Errorf("the estimates' OAI-PMH requests: off %d, flag %d", estOff["oai-pmh"], estFlag["oai-pmh"])
	}
	risesAtMostOne("estimate", estOff, estFlag)

	off, _, _ := run("off", "--knowledge-cut", "off")
	flag, _, _ := run("flag", oai...)
	if flag["oai-pmh"] != 1 {
		t.Errorf("flag: %d OAI-PMH requests, want the one page of the harvest", flag["oai-pmh"])
	}
	risesAtMostOne("run", off, flag)
	t.Logf("requests off %v, flag %v; estimated off %v, flag %v", off, flag, estOff, estFlag)

	rows := map[string]map[string]record.Instance{"off": knowledgeRows(t, filepath.Join(work, "off", "ds")), "flag": knowledgeRows(t, filepath.Join(work, "flag", "ds"))}
	seen := map[string]int{}
	for id, in := range rows["flag"] {
		tgt, _ := w.ByArxiv(id)
		cutoff := tgt.Published.Truncate(time.Second)
		if in.KnowledgeCutoff != cutoff.Format(time.DateOnly) {
			t.Errorf("%s: knowledge_cutoff %q, want its v1 date %s", id, in.KnowledgeCutoff, cutoff.Format(time.DateOnly))
		}
		if tgt.Index == 7 || tgt.Index == 6 {
			seen["target read later"]++
			if in.Target.Version != fmt.Sprintf("v%d", tgt.Version) || in.Target.VersionDate != tgt.Updated.Format(time.DateOnly) {
				t.Errorf("%s, whose v1 has no HTML: read as %s %s, want v%d %s", id, in.Target.Version, in.Target.VersionDate, tgt.Version, tgt.Updated.Format(time.DateOnly))
			}
		} else if tgt.HTML == sim.HTMLArxiv && in.Target.Version != "v1" {
			t.Errorf("%s: read at %s, want v1", id, in.Target.Version)
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
			case revised:
				seen["revised after, kept and marked"]++
			case v < p.Version:
				seen["pinned to an older version"]++
			}
		}
	}
	t6 := w.Target(6)
	for _, r := range w.References(&t6) {
		if r.Paper.Published.After(t6.Published) {
			for _, src := range rows["off"][t6.ArxivID].Sources {
				if src.ArxivID == r.Paper.ArxivID {
					seen["first published after, a source under off"]++
				}
			}
			for _, src := range rows["flag"][t6.ArxivID].Sources {
				if src.ArxivID == r.Paper.ArxivID {
					t.Errorf("flag: %s's source %s, first published after its v1, is a source", t6.ArxivID, src.ArxivID)
				}
			}
		}
	}
	for _, k := range []string{"target read later", "revised after, kept and marked", "pinned to an older version", "first published after, a source under off"} {
		if seen[k] == 0 {
			t.Errorf("the world gave no case of %q: pick another seed", k)
		}
	}
	card, _ := os.ReadFile(filepath.Join(work, "flag", "ds", dataset.ReadmeFile))
	if !strings.Contains(string(card), "Knowledge cut: `flag`") || strings.Contains(string(card), "first published after the cutoff 0,") {
		t.Errorf("the flag card's knowledge cut:\n%s", card)
	}
	for _, in := range rows["off"] {
		if in.KnowledgeCutoff != "" {
			t.Errorf("off: %s has a knowledge cutoff", in.Target.ArxivID)
			break
		}
	}

	// Strict on the flag run's store: nothing new is asked, and no kept
	// source is dated after its cutoff.
	s.Reset()
	strictOut := filepath.Join(work, "strict-ds")
	args := clitest.RunArgs(t, s, filepath.Join(work, "flag", "store"), strictOut, append(append(fast, oai...), "--knowledge-cut", "strict")...)
	if code, _, stderr := clitest.Run(t, env, args...); code != 0 {
		t.Fatalf("strict: exit %d\n%s", code, stderr)
	}
	if got := perService(s); got[sim.Arxiv]+got["oai-pmh"] != 0 {
		t.Errorf("strict after flag asked %v: %v", got, paths(s.Service(sim.Arxiv).Calls()))
	}
	strict := knowledgeRows(t, strictOut)
	kept := 0
	for id, in := range strict {
		for _, src := range in.Sources {
			if src.ArxivID == "" {
				continue
			}
			kept++
			if src.RevisedAfterCutoff || src.VersionDate == "" || src.VersionDate > in.KnowledgeCutoff {
				t.Errorf("strict: %s keeps %s %s dated %q (cutoff %s)", id, src.ArxivID, src.Version, src.VersionDate, in.KnowledgeCutoff)
			}
		}
	}
	if kept == 0 {
		t.Fatal("strict kept no source on arXiv")
	}
	if code, stdout, stderr := clitest.Run(t, nil, "dataset", "--check", strictOut); code != 0 {
		t.Fatalf("strict --check: exit %d\n%s%s", code, stdout, stderr)
	}
	plantAfterCutoff(t, strictOut)
	code, stdout, stderr := clitest.Run(t, nil, "dataset", "--check", strictOut)
	if code == 0 || !strings.Contains(stdout+stderr, "after the knowledge cutoff") {
		t.Errorf("--check of a planted source: exit %d\n%s%s", code, stdout, stderr)
	}

	// From a metadata snapshot: no OAI-PMH request, and the same
	// versions recorded.
	snap := filepath.Join(work, "arxiv-metadata.json")
	writeSnapshot(t, w, snap, "")
	snapReq, _, _ := run("snapshot", "--arxiv-metadata", snap)
	t.Logf("requests with a snapshot %v", snapReq)
	if snapReq["oai-pmh"] != 0 || snapReq[sim.ArxivAPI] != off[sim.ArxivAPI] {
		t.Errorf("with a snapshot: %d OAI-PMH requests, %d of the arXiv API (%d without the cut); want none for versions", snapReq["oai-pmh"], snapReq[sim.ArxivAPI], off[sim.ArxivAPI])
	}
	for id, in := range knowledgeRows(t, filepath.Join(work, "snapshot", "ds")) {
		want := rows["flag"][id]
		if in.KnowledgeCutoff != want.KnowledgeCutoff || !slices.EqualFunc(in.Sources, want.Sources, func(a, b record.InstanceSource) bool {
			return a.ArxivID == b.ArxivID && a.Version == b.Version && a.VersionDate == b.VersionDate && a.RevisedAfterCutoff == b.RevisedAfterCutoff
		}) {
			t.Errorf("%s: from the snapshot %+v, from OAI-PMH %+v", id, in.Sources, want.Sources)
		}
	}
}

// writeSnapshot writes a metadata snapshot of every paper of w on arXiv
// but skip.
func writeSnapshot(t *testing.T, w *sim.World, path, skip string) {
	t.Helper()
	var b strings.Builder
	add := func(p sim.Paper) {
		if p.ArxivID == "" || p.ArxivID == skip {
			return
		}
		var vs []map[string]string
		for i, d := range p.Versions {
			vs = append(vs, map[string]string{"version": fmt.Sprintf("v%d", i+1), "created": d.UTC().Format("Mon, 2 Jan 2006 15:04:05") + " GMT"})
		}
		line, _ := json.Marshal(map[string]any{"id": p.ArxivID, "title": p.Title, "versions": vs})
		b.Write(line)
		b.WriteByte('\n')
	}
	for i := range w.NumTargets() {
		add(w.Target(i))
	}
	for j := range w.Config().Papers {
		add(w.Background(j))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// plantAfterCutoff dates a kept source of the dataset in dir after its
// instance's cutoff and rewrites the manifest to match, as someone
// covering up an edit would.
func plantAfterCutoff(t *testing.T, dir string) {
	t.Helper()
	shards, _ := filepath.Glob(filepath.Join(dir, dataset.DataDir, "*.parquet"))
	planted := false
	for _, path := range shards {
		rows, err := dataset.ReadParquet(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			for j := range rows[i].Sources {
				if !planted && rows[i].Sources[j].ArxivID != "" {
					rows[i].Sources[j].VersionDate = "2099-01-01"
					planted = true
				}
			}
		}
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := dataset.WriteParquet(f, rows, ""); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if !planted {
		t.Fatal("no source to plant a date in")
	}
	mp := filepath.Join(dir, publish.ManifestFile)
	b, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	var m publish.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for i, f := range m.Files {
		body, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		m.Files[i].Size, m.Files[i].SHA256 = int64(len(body)), hex.EncodeToString(sum[:])
	}
	b, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(mp, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKnowledgeCutBadInputs: a --arxiv-metadata file that is no
// snapshot, a mode that is none, a request of OAI-PMH that
// --knowledge-cut off or --oai-versions=false rules out and an OAI-PMH
// base that is no URL are usage errors (exit 2) naming what is wrong,
// before any request; a paper missing from the snapshot is taken from
// the next source (a target's arXiv API entry, which the citegraph feed
// stored: no OAI-PMH request), and the log says so; a target whose
// snapshot line lacks v1 is warned of, naming the file's line, and read
// from the next source too.
func TestKnowledgeCutBadInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	s := clitest.Sim(t, sim.WorldConfig{Seed: 25, Targets: 6, Revisions: true}, sim.Options{})
	work := t.TempDir()
	notSnap := filepath.Join(work, "ids.txt")
	os.WriteFile(notSnap, []byte("2401.00001\n"), 0o644)
	zip := filepath.Join(work, "arxiv.zip")
	os.WriteFile(zip, []byte("PK\x03\x04 a zip"), 0o644)
	base := func(extra ...string) []string {
		return clitest.RunArgs(t, s, filepath.Join(work, "store"), filepath.Join(work, "ds"), append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms"}, extra...)...)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--arxiv-metadata", notSnap}, notSnap + ": not an arXiv metadata snapshot: line 1 is not a JSON object"},
		{[]string{"--arxiv-metadata", zip}, "zip archive"},
		{[]string{"--arxiv-metadata", filepath.Join(work, "absent.json")}, "no such file"},
		{[]string{"--knowledge-cut", "later"}, `--knowledge-cut "later": want strict, flag or off`},
		{[]string{"--oai-harvest", "cs", "--oai-versions=false"}, "--oai-harvest asks OAI-PMH, which --oai-versions=false rules out"},
		{[]string{"--oai-harvest", "cs", "--knowledge-cut", "off"}, "--oai-harvest harvests version histories for the knowledge cut, which --knowledge-cut off turns off"},
		{[]string{"--oai-versions", "--knowledge-cut", "off"}, "--knowledge-cut off turns off"},
		{[]string{"--oai-base", "oaipmh.arxiv.org/oai"}, `--oai-base "oaipmh.arxiv.org/oai": want an http or https URL`},
	} {
		s.Reset()
		code, _, stderr := clitest.Run(t, nil, base(tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || s.Requests() != 0 {
			t.Errorf("%v: exit %d, %d requests, want 2 and %q\n%s", tc.args, code, s.Requests(), tc.want, stderr)
		}
	}

	// A snapshot that lacks a paper: the next source, and said.
	w := s.World
	missing := w.Target(2).ArxivID
	snap := filepath.Join(work, "snapshot.json")
	writeSnapshot(t, w, snap, missing)
	s.Reset()
	code, stdout, stderr := clitest.Run(t, nil, base("--arxiv-metadata", snap, "--log", "info")...)
	if code != 0 {
		t.Fatalf("snapshot lacking %s: exit %d\n%s\n%s", missing, code, stdout, stderr)
	}
	if !strings.Contains(stderr, "not in the arXiv metadata snapshot; looking in the store, then asking arXiv") || !strings.Contains(stderr, missing) {
		t.Errorf("the fallback is not said:\n%s", stderr)
	}
	if n := s.Service(sim.OAIPMH).Stats().Requests; n != 0 {
		t.Errorf("%d OAI-PMH requests: the target's stored arXiv API entry gives its v1", n)
	}
	in, _ := clitest.Dataset(t, filepath.Join(work, "ds"))
	if !in[missing] {
		t.Errorf("%s, missing from the snapshot, is not in the dataset", missing)
	}

	// A target whose snapshot line lacks v1: warned of, named with the
	// file's line, and read from the next source.
	noV1 := filepath.Join(work, "nov1.json")
	writeSnapshot(t, w, noV1, missing)
	f, _ := os.OpenFile(noV1, os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, `{"id":%q,"versions":[{"version":"v2","created":"Mon, 1 Jan 2024 10:00:00 GMT"}]}`+"\n", missing)
	f.Close()
	code, stdout, stderr = clitest.Run(t, nil, append(base("--arxiv-metadata", noV1, "--log", "warn"), "--store", filepath.Join(work, "store2"), "--out", filepath.Join(work, "ds2"))...)
	if code != 0 || !strings.Contains(stderr, "the version list has no v1") || !strings.Contains(stderr, noV1+" line") || !strings.Contains(stderr, missing) {
		t.Errorf("a target without v1 in the snapshot: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if rows := knowledgeRows(t, filepath.Join(work, "ds2")); rows[missing].KnowledgeCutoff != w.Target(2).Published.Format(time.DateOnly) {
		t.Errorf("%s: knowledge_cutoff %q, want its v1 date from the arXiv API", missing, rows[missing].KnowledgeCutoff)
	}
}

func paths(calls []sim.Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Path)
	}
	return out
}

// TestE2EKnowledgeCutGrobid: with --grobid, a target whose v1 has no
// HTML is read from the PDF of its v1, and a source whose pinned version
// has no page from that version's PDF: both at the version of the
// cutoff, none marked revised_after_cutoff for want of a page.
func TestE2EKnowledgeCutGrobid(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	s := clitest.Sim(t, knowledgeWorld(), sim.Options{})
	w := s.World
	work := t.TempDir()
	args := clitest.RunArgs(t, s, filepath.Join(work, "store"), filepath.Join(work, "ds"), "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn",
		"--oai-versions", "--oai-base", s.URL(sim.OAIPMH)+sim.OAIPath, "--oai-harvest", "all", "--grobid", s.URL(sim.GrobidService))
	code, stdout, stderr := clitest.Run(t, map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	rows := knowledgeRows(t, filepath.Join(work, "ds"))
	for _, i := range []int{6, 7} {
		tgt := w.Target(i)
		in, ok := rows[tgt.ArxivID]
		if !ok {
			t.Errorf("target %d is not in the dataset", i)
			continue
		}
		if in.Target.Version != "v1" || in.Target.VersionDate != in.KnowledgeCutoff {
			t.Errorf("target %d (v1 without HTML) read at %s %s, want v1 from its PDF", i, in.Target.Version, in.Target.VersionDate)
		}
	}
	t5 := w.Target(5)
	var revised sim.Paper
	for _, r := range w.References(&t5) {
		if r.Role == sim.RoleSource && r.Paper.ArxivID != "" && !r.Paper.IsTarget() {
			revised = w.Background(r.Paper.Index)
			break
		}
	}
	found := false
	for _, src := range rows[t5.ArxivID].Sources {
		if src.ArxivID != revised.ArxivID {
			continue
		}
		found = true
		if src.Version != "v1" || src.RevisedAfterCutoff || src.TextLevel != record.TextPDF {
			t.Errorf("target 5's revised source without a page: %s %s revised %v, text %s; want v1 from its PDF", src.Version, src.VersionDate, src.RevisedAfterCutoff, src.TextLevel)
		}
	}
	if !found {
		t.Errorf("target 5's revised source %s is not in its instance", revised.ArxivID)
	}
}
