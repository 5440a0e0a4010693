package ideas

// End-to-end tests of the idea-evaluation data (issue 25's tuples,
// post-knowledge and innoeval export), on the simulated world with the
// LLM and on the demo with the heuristic backend.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// innoevalEstimate is what an estimate's JSON says of each stage.
type innoevalEstimate struct {
	Services []struct {
		Name     string `json:"service"`
		Requests int    `json:"requests"`
	} `json:"services"`
	Stages []struct {
		Stage    string         `json:"stage"`
		Calls    int            `json:"llm_calls"`
		Requests map[string]int `json:"requests"`
	} `json:"stages"`
}

func (e innoevalEstimate) calls(stage string) int {
	for _, s := range e.Stages {
		if s.Stage == stage {
			return s.Calls
		}
	}
	return 0
}

func (e innoevalEstimate) requests(stage, service string) int {
	for _, s := range e.Stages {
		if s.Stage == stage {
			return s.Requests[service]
		}
	}
	return 0
}

func (e innoevalEstimate) service(name string) int {
	n := 0
	for _, s := range e.Services {
		if s.Name == name {
			n += s.Requests
		}
	}
	return n
}

// TestE2EInnoEvalSim: on the simulated world with the model, the
// estimate counts, before the run, one tuples request per target (as
// many as classify's) and, with --post-knowledge, one more Semantic
// Scholar request per target; the run makes them; a run with the flag
// over a finished store asks Semantic Scholar once per target and the
// model nothing, and the next asks nothing at all. The export holds every
// instance once, test targets in the test file only, each idea complete
// with every quote in the target's text, and post-knowledge dated after
// the cutoff.
func TestE2EInnoEvalSim(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	s := clitest.Sim(t, sim.WorldConfig{Seed: 25, Targets: 12}, sim.Options{})
	work := t.TempDir()
	storeDir := filepath.Join(work, "store")
	targets := filepath.Join(work, "targets.txt")
	if err := os.WriteFile(targets, s.World.TargetsFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	n := len(s.World.TargetIDs())
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}
	flags := append([]string{"--store", storeDir, "--targets", targets, "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--retries", "1", "--price", sim.Model + "=1/2"}, s.Flags()...)
	estimate := func(extra ...string) innoevalEstimate {
		t.Helper()
		code, out, stderr := clitest.Run(t, env, append(append([]string{"estimate", "--json"}, flags...), extra...)...)
		if code != 0 {
			t.Fatalf("estimate %q: exit %d\n%s", extra, code, stderr)
		}
		var e innoevalEstimate
		if err := json.Unmarshal([]byte(out), &e); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return e
	}
	run := func(extra ...string) string {
		t.Helper()
		s.Reset()
		code, _, stderr := clitest.Run(t, env, append(append([]string{"run", "--out", filepath.Join(work, "ds")}, flags...), extra...)...)
		if code != 0 {
			t.Fatalf("run %q: exit %d\n%s", extra, code, stderr)
		}
		return stderr
	}

	// Before the run: the tuples stage's request per target, and with the
	// flag the citations request per target.
	plain, with := estimate(), estimate("--post-knowledge", "3")
	if s.Requests() != 0 {
		t.Fatalf("the estimates made %d requests", s.Requests())
	}
	if got := plain.calls("tuples"); got != n || got != plain.calls("classify") {
		t.Errorf("estimate: %d tuples calls, %d classify calls, want one each per target (%d)", got, plain.calls("classify"), n)
	}
	if got := with.requests("post-knowledge", sim.S2); got != n || plain.requests("post-knowledge", sim.S2) != 0 {
		t.Errorf("estimate: %d post-knowledge requests with the flag, %d without, want %d and 0", got, plain.requests("post-knowledge", sim.S2), n)
	}
	if d := with.service(sim.S2) - plain.service(sim.S2); d != n {
		t.Errorf("estimate: the flag adds %d Semantic Scholar requests, want one per target (%d)", d, n)
	}

	first := run()
	llmCalls := s.Stats()[sim.LLM].Requests
	// The run's LLM usage line of the stage: its calls.
	tupleCalls := -1
	for line := range strings.Lines(first) {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "tuples" && f[1] == sim.Model {
			tupleCalls = innoevalAtoi(f[2])
		}
	}
	if tupleCalls != n {
		t.Errorf("the run made %d tuples calls, want one per target (%d):\n%s", tupleCalls, n, first)
	}
	st := innoevalStore(t, storeDir)
	tupled, _ := record.IdeaTupleSets.Items(t.Context(), st)
	st.Close()
	if len(tupled) == 0 || len(tupled) > n {
		t.Fatalf("%d idea tuples stored for %d targets", len(tupled), n)
	}

	// The flag over a finished store: only the citations, one request a
	// target (a page each), and the estimate said so.
	again := estimate("--post-knowledge", "3")
	if again.calls("tuples") != n-len(tupled) || again.requests("post-knowledge", sim.S2) != n {
		t.Errorf("estimate after the run: %d tuples calls (want %d), %d post-knowledge requests (want %d)",
			again.calls("tuples"), n-len(tupled), again.requests("post-knowledge", sim.S2), n)
	}
	run("--post-knowledge", "3")
	stats := s.Stats()
	t.Logf("%d targets: estimate %d tuples calls, %d classify calls, +%d S2 requests with the flag; first run %d LLM requests, %d tuples stored; with the flag %d S2 and %d LLM requests",
		n, plain.calls("tuples"), plain.calls("classify"), with.service(sim.S2)-plain.service(sim.S2), llmCalls, len(tupled), stats[sim.S2].Requests, stats[sim.LLM].Requests)
	if stats[sim.LLM].Requests != 0 || stats[sim.S2].Requests != n {
		t.Errorf("run with --post-knowledge over a finished store: %d LLM requests (first run %d), %d S2 requests, want 0 and one per target",
			stats[sim.LLM].Requests, llmCalls, stats[sim.S2].Requests)
	}
	run("--post-knowledge", "3")
	if got := s.Requests(); got != 0 {
		t.Errorf("a second run with everything stored made %d requests: %+v", got, s.Stats())
	}

	rows := exportInnoEval(t, filepath.Join(work, "ds"), filepath.Join(work, "ie"))
	checkInnoEvalRows(t, storeDir, filepath.Join(work, "ds"), rows, 3)
	post := 0
	for _, r := range rows {
		post += len(r.PostKnowledge)
	}
	t.Logf("%d rows exported, %d post-knowledge papers", len(rows), post)
	if post == 0 {
		t.Error("no exported instance has post-knowledge: the world's later targets cite earlier ones")
	}
}

// TestE2EInnoEvalDemo: the demo (heuristic backend) gains the idea
// column, every exported idea is complete with its quotes in the target's
// text, post-knowledge is empty without the flag, and a second demo run
// reuses every tuple.
func TestE2EInnoEvalDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo")
	}
	dir := t.TempDir()
	storeDir, ds := filepath.Join(dir, "store"), filepath.Join(dir, "ds")
	code, _, stderr := clitest.Run(t, nil, "demo", "--store", storeDir, "--out", ds)
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "tuples") {
		t.Errorf("the demo's stage table has no tuples stage:\n%s", stderr)
	}
	card, err := os.ReadFile(filepath.Join(ds, dataset.ReadmeFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  - name: idea\n", "  - name: post_knowledge\n", "claims dropped for a quote not in the paper", "ideas made by the heuristic backend"} {
		if !strings.Contains(string(card), want) {
			t.Errorf("the dataset card lacks %q", want)
		}
	}
	rows := exportInnoEval(t, ds, filepath.Join(dir, "ie"))
	checkInnoEvalRows(t, storeDir, ds, rows, 0)

	code, _, stderr = clitest.Run(t, nil, "demo", "--store", storeDir, "--out", ds)
	if code != 0 {
		t.Fatalf("second demo: exit %d\n%s", code, stderr)
	}
	reused := false
	for line := range strings.Lines(stderr) {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "tuples" && f[1] != "heuristic" {
			reused = f[1] == "0" && f[2] != "0" // done, reused
			if !reused {
				t.Errorf("second demo run: %s (want every tuple reused)", strings.TrimSpace(line))
			}
		}
	}
	if !reused {
		t.Errorf("the second demo run's stage table has no tuples line reusing its tuples:\n%s", stderr)
	}
}

// exportInnoEval exports ds as innoeval in Parquet and JSONL and returns
// the JSONL rows, checking that both encodings hold the same instances.
func exportInnoEval(t *testing.T, ds, out string) []dataset.InnoEvalRow {
	t.Helper()
	var rows []dataset.InnoEvalRow
	ids := map[string]map[string]string{}
	for _, enc := range []string{"parquet", "jsonl"} {
		dir := out + "-" + enc
		code, stdout, stderr := clitest.Run(t, nil, "export", "--format", "innoeval", "--encoding", enc, "--out", dir, ds)
		if code != 0 {
			t.Fatalf("export innoeval %s: exit %d\n%s", enc, code, stderr)
		}
		if !strings.Contains(stdout, "how idea evaluators use them") {
			t.Errorf("export's output: %s", stdout)
		}
		ids[enc] = map[string]string{}
		for _, split := range []string{"train", "validation", "test"} {
			path := filepath.Join(dir, split+"."+enc)
			if enc == "parquet" {
				got, err := innoevalParquet(path)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range got {
					ids[enc][r.InstanceID] = split
				}
				continue
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for line := range strings.Lines(string(b)) {
				var r dataset.InnoEvalRow
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				if r.Split != split {
					t.Errorf("%s in %s has split %q", r.InstanceID, path, r.Split)
				}
				if (split == "test") != (r.DatasetSplit == "test") {
					t.Errorf("%s (dataset split %s) is in %s", r.InstanceID, r.DatasetSplit, path)
				}
				ids[enc][r.InstanceID] = split
				rows = append(rows, r)
			}
		}
	}
	if len(ids["parquet"]) != len(ids["jsonl"]) || len(rows) == 0 {
		t.Errorf("%d Parquet and %d JSONL rows", len(ids["parquet"]), len(ids["jsonl"]))
	}
	for id, split := range ids["jsonl"] {
		if ids["parquet"][id] != split {
			t.Errorf("%s: %s in JSONL, %q in Parquet", id, split, ids["parquet"][id])
		}
	}
	return rows
}

// parquetRows reads an export file's rows.
func innoevalParquet(path string) ([]dataset.InnoEvalRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return parquet.Read[dataset.InnoEvalRow](f, fi.Size())
}

// checkInnoEvalRows holds the exported rows to the acceptance:
// one per instance of the dataset; each idea with the six fields and a
// claim in each required one, every quote (a method's steps' too) in the
// target's text as stored; at most n post-knowledge papers, each dated
// after the row's cutoff; the pre-knowledge the instance's sources.
func checkInnoEvalRows(t *testing.T, storeDir, ds string, rows []dataset.InnoEvalRow, n int) {
	t.Helper()
	pub, err := dataset.ReadDataset(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(pub.Instances) {
		t.Errorf("%d rows exported of %d instances", len(rows), len(pub.Instances))
	}
	sources := map[string]int{}
	for _, in := range pub.Instances {
		sources[in.InstanceID] = len(in.Sources)
	}
	st := innoevalStore(t, storeDir)
	defer st.Close()
	for _, r := range rows {
		doc, _, err := record.Documents.Get(t.Context(), st, r.InstanceID)
		if err != nil {
			t.Fatalf("%s: %v", r.InstanceID, err)
		}
		text := innoevalCollapse(latexml.FullText(doc))
		for _, m := range doc.Mentions {
			text += "\n" + innoevalCollapse(m.Sentence)
		}
		for _, f := range record.TupleFields {
			claims := r.Idea.Claims(f)
			if record.TupleRequired(f) && len(claims) == 0 {
				t.Errorf("%s: no claim in %s", r.InstanceID, f)
			}
			if f == record.TupleMethods {
				for _, m := range r.Idea.Methods {
					claims = append(claims, m.Steps...)
				}
			}
			for _, c := range claims {
				if c.Claim == "" || !strings.Contains(text, innoevalCollapse(c.Quote)) {
					t.Errorf("%s %s: quote %q not in the target's text (claim %q)", r.InstanceID, f, c.Quote, c.Claim)
				}
			}
		}
		if r.KnowledgeCutoff == "" || len(r.PostKnowledge) > n || len(r.PreKnowledge) != sources[r.InstanceID] {
			t.Errorf("%s: cutoff %q, %d post-knowledge papers (at most %d), %d pre-knowledge (sources %d)",
				r.InstanceID, r.KnowledgeCutoff, len(r.PostKnowledge), n, len(r.PreKnowledge), sources[r.InstanceID])
		}
		for _, p := range r.PostKnowledge {
			if !(p.Date > r.KnowledgeCutoff || p.Date == "" && p.Year > 0 && p.Year > innoevalAtoi(r.KnowledgeCutoff[:4])) || p.PaperID == "" || p.Title == "" {
				t.Errorf("%s (cutoff %s): post-knowledge %+v not dated after it", r.InstanceID, r.KnowledgeCutoff, p)
			}
		}
	}
}

func innoevalCollapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func innoevalAtoi(s string) int {
	n := 0
	for _, c := range s {
		n = 10*n + int(c-'0')
	}
	return n
}

func innoevalStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.OpenReadOnly(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
