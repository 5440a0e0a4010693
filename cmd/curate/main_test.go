package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/demo"
	"github.com/groundwork/curate/sim/simtest"
	"github.com/groundwork/curate/store"
)

// runCLI runs curate with args and the given environment and returns its
// exit status, stdout and stderr.
func runCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &cmdEnv{
		stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return env[k] },
	}
	code := run(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{nil, 2, "usage: curate"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"parse"}, 2, "no FILE given"},
		{[]string{"parse", "--source", "pdf", "x.html"}, 2, `--source "pdf"`},
		{[]string{"fetch"}, 2, "no arXiv IDs given"},
		{[]string{"fetch", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"parse", "/does/not/exist.html"}, 1, "exist.html"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t, nil, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.err) {
			t.Errorf("curate %v: exit %d, stderr %q; want exit %d mentioning %q", tt.args, code, stderr, tt.code, tt.err)
		}
	}
}

func TestParseCommand(t *testing.T) {
	code, out, stderr := runCLI(t, nil, "parse", "../../parse/latexml/testdata/pages/edge-arxiv.html")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var d record.Document
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("output is not a Document: %v", err)
	}
	if d.Title == nil || *d.Title != "A Small Test Paper" || len(d.References) != 4 {
		t.Errorf("parsed %+v", d)
	}
	// Flags after the file work too, and --source overrides detection.
	code, out, _ = runCLI(t, nil, "parse", "../../parse/latexml/testdata/pages/edge-arxiv.html", "--source", "ar5iv", "--compact")
	if code != 0 || !strings.Contains(out, `"source":"ar5iv"`) || strings.Count(out, "\n") != 1 {
		t.Errorf("--source/--compact after the file: exit %d, %q", code, out[:min(len(out), 200)])
	}
	// A GROBID TEI is told by its root element.
	code, out, stderr = runCLI(t, nil, "parse", "--compact", "../../parse/tei/testdata/tei/edge-structure.tei.xml")
	if code != 0 || !strings.Contains(out, `"source":"pdf"`) {
		t.Errorf("parse of a TEI: exit %d, %q, %s", code, out[:min(len(out), 200)], stderr)
	}
}

func TestFetchAndShow(t *testing.T) {
	c := sim.NewCorpus()
	ax, a5 := simtest.Serve(t, sim.Arxiv, c), simtest.Serve(t, sim.Ar5iv, c)
	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2507.11127", "arxiv-2507.11127v1.html")
	simtest.AddFixturePage(t, c, sim.HTMLAr5iv, "1706.03762", "ar5iv-1706.03762.html") // and a 307 for hep-th/9901001
	dir := t.TempDir()
	env := map[string]string{
		"CURATE_STORE": dir, "CURATE_ARXIV_BASE": ax.URL, "CURATE_AR5IV_BASE": a5.URL,
		"CURATE_MAILTO": "team@example.org",
	}
	common := []string{"--arxiv-interval", "10ms", "--retries", "1"}

	code, out, stderr := runCLI(t, env, append([]string{"fetch", "2507.11127", "1706.03762", "hep-th/9901001", "not-an-id"}, common...)...)
	if code != 1 {
		t.Errorf("exit %d, want 1 (one paper without HTML, one bad ID)", code)
	}
	for _, want := range []string{"2507.11127\tfetched\tarxiv\tDefining neurosymbolic AI", "1706.03762\tfetched\tar5iv\tAttention Is All You Need", "hep-th/9901001\tmissing"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{`"not-an-id"`, "fetched 2 (arxiv 1, ar5iv 1)", "no HTML 1", "failed 1"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	// Again: nothing is requested.
	before := len(ax.Calls()) + len(a5.Calls())
	code, out, stderr = runCLI(t, env, append([]string{"fetch", "2507.11127", "1706.03762"}, common...)...)
	if code != 0 || !strings.Contains(out, "2507.11127\tstored") || len(ax.Calls())+len(a5.Calls()) != before {
		t.Errorf("second fetch: exit %d, out %q, stderr %q, requests %d", code, out, stderr, len(ax.Calls())+len(a5.Calls())-before)
	}

	// show prints the stored records as JSON, with the Document inline.
	code, out, stderr = runCLI(t, env, "show", "2507.11127v1")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	var item struct {
		ID      string `json:"id"`
		Records map[string]struct {
			Bytes int               `json:"bytes"`
			Meta  map[string]string `json:"meta"`
			Value json.RawMessage   `json:"value"`
		} `json:"records"`
		Ledger []struct{ Stage, Status string } `json:"ledger"`
	}
	if err := json.Unmarshal([]byte(out), &item); err != nil {
		t.Fatalf("show output: %v\n%s", err, out)
	}
	var doc record.Document
	if err := json.Unmarshal(item.Records["document"].Value, &doc); err != nil || doc.ID != "2507.11127v1" {
		t.Errorf("show document: %v %+v", err, doc.ID)
	}
	if raw := item.Records["raw"]; raw.Bytes == 0 || raw.Meta["source"] != "arxiv" {
		t.Errorf("show raw record: %+v", raw)
	}
	if len(item.Ledger) != 1 || item.Ledger[0].Status != "done" {
		t.Errorf("show ledger: %+v", item.Ledger)
	}
	code, _, stderr = runCLI(t, env, "show", "2101.00001")
	if code != 1 || !strings.Contains(stderr, "2101.00001") {
		t.Errorf("show of an unknown paper: exit %d, %q", code, stderr)
	}
	// --raw gives the page back byte for byte.
	code, out, _ = runCLI(t, env, "show", "--raw", "1706.03762")
	if code != 0 || !strings.Contains(out, "Attention Is All You Need") {
		t.Errorf("show --raw: exit %d", code)
	}
}

func TestTargetsFile(t *testing.T) {
	ids, err := readTargets("-", strings.NewReader("# targets\n2507.11127  # a comment\n\n hep-th/9901001\n1706.03762v7\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2507.11127", "hep-th/9901001", "1706.03762v7"}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("readTargets = %v, want %v", ids, want)
	}
	if _, err := readTargets("/no/such/file", nil); err == nil || !strings.Contains(err.Error(), "/no/such/file") {
		t.Errorf("missing targets file: %v", err)
	}
}

func TestStatus(t *testing.T) {
	c := sim.NewCorpus()
	ax, a5 := simtest.Serve(t, sim.Arxiv, c), simtest.Serve(t, sim.Ar5iv, c)
	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2507.11127", "arxiv-2507.11127v1.html")
	dir := t.TempDir()
	env := map[string]string{"CURATE_STORE": dir, "CURATE_ARXIV_BASE": ax.URL, "CURATE_AR5IV_BASE": a5.URL}
	runCLI(t, env, "fetch", "2507.11127", "2101.00001", "--arxiv-interval", "1ms", "--retries", "0")
	code, out, stderr := runCLI(t, env, "status")
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"fetch", "2101.00001", "no HTML"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, env, "status", "--json")
	var s app.StoreStatus
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s.Stages["fetch"]["done"] != 1 || s.Stages["fetch"]["failed"] != 1 {
		t.Errorf("status --json: exit %d, %+v", code, s)
	}
}

// TestDemoEndToEnd runs the whole pipeline on the bundled corpus, checks
// the dataset, and runs it again: nothing is redone and the dataset is
// byte for byte the same.
func TestDemoEndToEnd(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"SOURCE_DATE_EPOCH": "1767225600"}
	args := []string{"demo", "--store", dir + "/store", "--out", dir + "/ds"}
	code, stdout, stderr := runCLI(t, env, args...)
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, stderr)
	}
	firstStderr := stderr
	// The run's account on stderr, what it made on stdout.
	if !strings.Contains(stderr, "9 of 9 targets through every stage") {
		t.Errorf("demo's stderr lacks the run summary:\n%s", stderr)
	}
	for _, want := range []string{"5 train and 3 test instances", "test_target_as_train_source 1", "the dataset is in " + dir + "/ds"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo's stdout lacks %q:\n%s", want, stdout)
		}
	}
	if code, out, stderr := runCLI(t, nil, "dataset", "--check", dir+"/ds"); code != 0 {
		t.Fatalf("check: exit %d\n%s%s", code, out, stderr)
	}
	first := readShards(t, dir+"/ds")

	code, stdout, stderr = runCLI(t, env, args...)
	if code != 0 {
		t.Fatalf("second demo: exit %d\n%s", code, stderr)
	}
	for _, stage := range []string{"fetch", "citegraph", "classify", "summarize"} {
		if !strings.Contains(stderr, stage+strings.Repeat(" ", 11-len(stage))+"0     9") {
			t.Errorf("second run redid %s work:\n%s", stage, stderr)
		}
	}
	// Nothing is asked, robots.txt included: the demo's services come back
	// at the addresses of the first run, whose robots.txt answers the
	// store holds within their TTL.
	// (Unless another process took one of those ports meanwhile: the demo
	// then moves, and asks that host's robots.txt again.)
	crawl := regexp.MustCompile(`(?m)^crawl: (\S+):`)
	if fmt.Sprint(crawl.FindAllStringSubmatch(firstStderr, -1)) != fmt.Sprint(crawl.FindAllStringSubmatch(stderr, -1)) {
		t.Logf("the demo's services moved:\n%s", stderr)
	} else if !strings.Contains(stderr, "requests: arxiv 0 (0.00 per target), ar5iv 0 (0.00 per target), s2 0 (0.00 per target), arxiv-api 0 (0.00 per target)") {
		t.Errorf("the second demo run made requests:\n%s", stderr)
	}
	if second := readShards(t, dir+"/ds"); !reflect.DeepEqual(first, second) {
		t.Errorf("second run wrote a different dataset")
	}
	// Work done once is one attempt, however often the run is repeated.
	st, err := store.OpenExisting(context.Background(), dir+"/store")
	if err != nil {
		t.Fatal(err)
	}
	items, err := st.Items(context.Background(), record.Documents.Name())
	if err != nil || len(items) < 9 {
		t.Fatalf("stored documents: %v %v", items, err)
	}
	for _, item := range items {
		es, err := st.Entries(context.Background(), item)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.Attempts > 1 {
				t.Errorf("after two runs, %s %s has %d attempts, want at most 1", e.Stage, item, e.Attempts)
			}
		}
	}
	st.Close()
	// Trainer exports and the report, from the published files alone.
	for range 2 { // the second run replaces the first's export
		code, _, stderr := runCLI(t, nil, "export", "--format", "verl-rl", "--encoding", "jsonl", "--out", dir+"/rl", dir+"/ds")
		if code != 0 {
			t.Fatalf("export: exit %d\n%s", code, stderr)
		}
	}
	rows := 0
	for _, split := range []string{"train", "validation", "test"} {
		rl, err := os.ReadFile(dir + "/rl/" + split + ".jsonl")
		if err != nil || !strings.Contains(string(rl), `"reward_model"`) || !strings.Contains(string(rl), `"split":"`+split+`"`) {
			t.Errorf("verl-rl export of %s: %v\n%.300s", split, err, rl)
		}
		rows += strings.Count(string(rl), "\n")
	}
	if rows != 8 {
		t.Errorf("verl-rl export: %d rows, want 8", rows)
	}
	if _, problems, err := publish.Verify(dir + "/rl"); err != nil || len(problems) > 0 {
		t.Errorf("export does not verify: %v %v", problems, err)
	}
	if code, _, stderr := runCLI(t, nil, "report", "--out", dir+"/rep", dir+"/ds"); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	if html, err := os.ReadFile(dir + "/rep/report.html"); err != nil || !strings.Contains(string(html), "<svg") {
		t.Errorf("report.html: %v", err)
	}
	if code, out, stderr := runCLI(t, nil, "stats", "labels", "--store", dir+"/store"); code != 0 || !strings.Contains(out, "Label health over 38 cards") {
		t.Errorf("stats labels: exit %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(stdout, "is up to date") {
		t.Errorf("second run rebuilt an unchanged dataset:\n%s", stdout)
	}
	// A changed option rebuilds it, keeping the previous one beside it.
	if code, _, stderr := runCLI(t, env, "dataset", "--store", dir+"/store", "--out", dir+"/ds", "--num-ideas", "2"); code != 0 {
		t.Fatalf("dataset --num-ideas 2: exit %d\n%s", code, stderr)
	}
	code, out, _ := runCLI(t, nil, "dataset", "--check", dir+"/ds.prev")
	if code != 0 {
		t.Errorf("the previous dataset kept beside the new one should still check: %s", out)
	}
}

func readShards(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "data", "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no parquet shards in %s: %v", dir, err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}

// TestRunMisbehavingLLM runs the pipeline on the demo corpus against an
// OpenAI-compatible endpoint that never answers validly: the run ends with
// every target named as failed with its reason, token totals printed, and
// the planted API key nowhere in the output or the store.
func TestRunMisbehavingLLM(t *testing.T) {
	const key = "sk-PLANTED-cli-0123456789"
	// It takes only the planted key, and answers in prose.
	llm := simtest.ServeOptions(t, sim.LLM, nil, sim.Options{LLMKey: key, LLMAnswer: func(sim.LLMRequest) (sim.LLMReply, bool) {
		return sim.LLMReply{Text: "I would rather not answer in JSON.", Usage: &sim.LLMUsage{Prompt: 100, Completion: 10}}, true
	}})
	srv, err := demo.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	env := map[string]string{"LLM_API_KEY": key}
	code, out, stderr := runCLI(t, env, "run", "--store", dir, "--targets", writeTargets(t, demo.TargetIDs()),
		"--arxiv-base", srv.URL(sim.Arxiv), "--ar5iv-base", srv.URL(sim.Ar5iv), "--arxiv-interval", "1ms",
		"--s2-base", srv.URL(sim.S2), "--arxiv-api-base", srv.URL(sim.ArxivAPI), "--s2-interval", "1ms",
		"--llm-base", llm.BaseURL(), "--llm-model", "fake-1", "--price", "fake-1=1/2", "--log", "debug")
	if code != 1 {
		t.Errorf("exit %d, want 1 (targets failed)", code)
	}
	for _, id := range demo.TargetIDs() {
		if !strings.Contains(out, id+"\tclassify\tfailed\t") {
			t.Errorf("target %s not named as failed in classify:\n%s", id, out)
		}
	}
	if !strings.Contains(stderr, "classify") || !strings.Contains(stderr, "fake-1") || !strings.Contains(stderr, "$0.") {
		t.Errorf("no LLM usage and cost in the summary:\n%s", stderr)
	}
	calls := llm.Calls()
	if len(calls) == 0 {
		t.Fatal("the endpoint was never called")
	}
	for _, c := range calls {
		if c.Status != http.StatusOK {
			t.Fatalf("the endpoint answered %d: curate did not send the key", c.Status)
		}
	}
	if strings.Contains(out+stderr, key) {
		t.Errorf("the API key leaked into the output")
	}
	// Every file (the ledger included) and every blob, decompressed.
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	blobs := 0
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if name, ok := strings.CutSuffix(d.Name(), ".zst"); ok {
			if b, err = st.Blob(store.Hash(name)); err != nil {
				return err
			}
			blobs++
		}
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("the API key is in %s", p)
		}
		return nil
	})
	if err != nil || blobs == 0 {
		t.Fatalf("scanned %d blobs: %v", blobs, err)
	}
}

func writeTargets(t *testing.T, ids []string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "targets.txt")
	if err := os.WriteFile(p, []byte("# demo targets\n"+strings.Join(ids, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestParseCommandBound: a page longer than --max-mb is refused, naming
// the file and the flag, without being read whole (a sparse file of 3 GiB
// would otherwise be read into memory); --max-mb 0 lifts the bound, and a
// negative one is a usage error.
func TestParseCommandBound(t *testing.T) {
	big := filepath.Join(t.TempDir(), "huge.html")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 30); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	f.Close()
	code, _, stderr := runCLI(t, nil, "parse", big)
	if code == 0 || !strings.Contains(stderr, "huge.html") || !strings.Contains(stderr, "--max-mb 64") || !strings.Contains(stderr, "too large") {
		t.Errorf("3 GiB page: exit %d\n%s", code, stderr)
	}
	page := "../../parse/latexml/testdata/pages/edge-arxiv.html"
	if code, _, stderr := runCLI(t, nil, "parse", "--max-mb", "0", page); code != 0 {
		t.Errorf("--max-mb 0: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runCLI(t, nil, "parse", "--max-mb", "-1", page); code != 2 || !strings.Contains(stderr, "--max-mb") {
		t.Errorf("--max-mb -1: exit %d\n%s", code, stderr)
	}
}

// TestDemoAddressesKept: the demo's services come back where they were on
// the store's last demo run (so the robots.txt answers the store keeps by
// URL still apply), unless an address is taken.
func TestDemoAddressesKept(t *testing.T) {
	dir := t.TempDir()
	first, err := app.StartDemo(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	was := map[string]string{}
	for _, name := range demo.Services() {
		was[name] = first.URL(name)
	}
	first.Close()
	again, err := app.StartDemo(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for name, u := range was {
		if again.URL(name) == u {
			continue
		}
		// Moved: only because another process holds the address now.
		if ln, err := net.Listen("tcp", strings.TrimPrefix(u, "http://")); err == nil {
			ln.Close()
			t.Errorf("%s moved from %s to %s although %s is free", name, u, again.URL(name), u)
		}
	}
}
