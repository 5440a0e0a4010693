package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/cmd/curate/internal/cli"
	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
)

// repoRoot is the repository's root, from this package's directory (go
// test runs a package's tests in its directory).
const repoRoot = "../../../.."

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
		code, _, stderr := clitest.Run(t, nil, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.err) {
			t.Errorf("curate %v: exit %d, stderr %q; want exit %d mentioning %q", tt.args, code, stderr, tt.code, tt.err)
		}
	}
}

func TestParseCommand(t *testing.T) {
	code, out, stderr := clitest.Run(t, nil, "parse", repoRoot+"/parse/latexml/testdata/pages/edge-arxiv.html")
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
	code, out, _ = clitest.Run(t, nil, "parse", repoRoot+"/parse/latexml/testdata/pages/edge-arxiv.html", "--source", "ar5iv", "--compact")
	if code != 0 || !strings.Contains(out, `"source":"ar5iv"`) || strings.Count(out, "\n") != 1 {
		t.Errorf("--source/--compact after the file: exit %d, %q", code, out[:min(len(out), 200)])
	}
	// A GROBID TEI is told by its root element.
	code, out, stderr = clitest.Run(t, nil, "parse", "--compact", repoRoot+"/parse/tei/testdata/tei/edge-structure.tei.xml")
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

	code, out, stderr := clitest.Run(t, env, append([]string{"fetch", "2507.11127", "1706.03762", "hep-th/9901001", "not-an-id"}, common...)...)
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
	code, out, stderr = clitest.Run(t, env, append([]string{"fetch", "2507.11127", "1706.03762"}, common...)...)
	if code != 0 || !strings.Contains(out, "2507.11127\tstored") || len(ax.Calls())+len(a5.Calls()) != before {
		t.Errorf("second fetch: exit %d, out %q, stderr %q, requests %d", code, out, stderr, len(ax.Calls())+len(a5.Calls())-before)
	}

	// show prints the stored records as JSON, with the Document inline.
	code, out, stderr = clitest.Run(t, env, "show", "2507.11127v1")
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
	code, _, stderr = clitest.Run(t, env, "show", "2101.00001")
	if code != 1 || !strings.Contains(stderr, "2101.00001") {
		t.Errorf("show of an unknown paper: exit %d, %q", code, stderr)
	}
	// --raw gives the page back byte for byte.
	code, out, _ = clitest.Run(t, env, "show", "--raw", "1706.03762")
	if code != 0 || !strings.Contains(out, "Attention Is All You Need") {
		t.Errorf("show --raw: exit %d", code)
	}
}

func TestTargetsFile(t *testing.T) {
	ids, err := cli.ReadTargets("-", strings.NewReader("# targets\n2507.11127  # a comment\n\n hep-th/9901001\n1706.03762v7\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2507.11127", "hep-th/9901001", "1706.03762v7"}
	if strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("readTargets = %v, want %v", ids, want)
	}
	if _, err := cli.ReadTargets("/no/such/file", nil); err == nil || !strings.Contains(err.Error(), "/no/such/file") {
		t.Errorf("missing targets file: %v", err)
	}
}

func TestStatus(t *testing.T) {
	c := sim.NewCorpus()
	ax, a5 := simtest.Serve(t, sim.Arxiv, c), simtest.Serve(t, sim.Ar5iv, c)
	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2507.11127", "arxiv-2507.11127v1.html")
	dir := t.TempDir()
	env := map[string]string{"CURATE_STORE": dir, "CURATE_ARXIV_BASE": ax.URL, "CURATE_AR5IV_BASE": a5.URL}
	clitest.Run(t, env, "fetch", "2507.11127", "2101.00001", "--arxiv-interval", "1ms", "--retries", "0")
	code, out, stderr := clitest.Run(t, env, "status")
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"fetch", "2101.00001", "no HTML"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = clitest.Run(t, env, "status", "--json")
	var s app.StoreStatus
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s.Stages["fetch"]["done"] != 1 || s.Stages["fetch"]["failed"] != 1 {
		t.Errorf("status --json: exit %d, %+v", code, s)
	}
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
	code, _, stderr := clitest.Run(t, nil, "parse", big)
	if code == 0 || !strings.Contains(stderr, "huge.html") || !strings.Contains(stderr, "--max-mb 64") || !strings.Contains(stderr, "too large") {
		t.Errorf("3 GiB page: exit %d\n%s", code, stderr)
	}
	page := repoRoot + "/parse/latexml/testdata/pages/edge-arxiv.html"
	if code, _, stderr := clitest.Run(t, nil, "parse", "--max-mb", "0", page); code != 0 {
		t.Errorf("--max-mb 0: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := clitest.Run(t, nil, "parse", "--max-mb", "-1", page); code != 2 || !strings.Contains(stderr, "--max-mb") {
		t.Errorf("--max-mb -1: exit %d\n%s", code, stderr)
	}
}
