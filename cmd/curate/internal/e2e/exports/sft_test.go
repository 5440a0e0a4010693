package exports

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/gate"
	"github.com/groundwork/curate/sft"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
)

// demoDataset builds the demo corpus's dataset offline, as a user would
// with `curate demo`, and returns its directory.
func demoDataset(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	code, _, stderr := clitest.Run(t, nil, "demo", "--store", filepath.Join(dir, "store"), "--out", ds)
	if code != 0 {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	return ds
}

// The recipe's done-when: a corpus built by the pipeline yields SFT files
// that trainers read, with the gate's pass rate, the rejects and the token
// and cost totals reported; the gate command agrees with them.
func TestSFTOnDemoCorpus(t *testing.T) {
	ds := demoDataset(t)
	out := filepath.Join(t.TempDir(), "sft")
	code, stdout, stderr := clitest.Run(t, nil, "sft", "--dataset", ds, "--out", out, "--splits", "train,test", "--val-size", "1")
	if code != 0 {
		t.Fatalf("sft: exit %d: %s", code, stderr)
	}
	stderr = stdout + stderr // what was written on stdout, the account on stderr
	for _, want := range []string{
		"curate sft: 4 train and 1 validation rows in " + out + " (teacher heuristic, K=3, think)",
		"and 3 rows of the dataset's test targets, asked for with --splits, in the SFT test split",
		"gate: 100.0% pass rate (8 of 8 answers, 8 on the first attempt)", "rejects: 0",
		"openings: 8 distinct of 8 traces", fmt.Sprintf("length: max %d tokens by estimate", sft.DefaultMaxTokens), "cost: $0.0000 spent",
		"sft-ideas", "sft-trace", "$0 (heuristic)",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// Test targets, asked for by name, are their own split: every format
	// keeps each row's dataset split, and no test target is in train or
	// validation.
	for _, split := range sft.Splits() {
		want := map[string]int{"train": 4, "validation": 1, "test": 3}[split]
		rows, err := parquet.ReadFile[sft.VerlRow](filepath.Join(out, "data", split+"-00000-of-00001.parquet"))
		if err != nil || len(rows) != want {
			t.Fatalf("verl %s: %d rows, %v", split, len(rows), err)
		}
		msgs, err := parquet.ReadFile[sft.MessagesRow](filepath.Join(out, "messages", split+"-00000-of-00001.parquet"))
		if err != nil || len(msgs) != want {
			t.Fatalf("messages %s: %d rows, %v", split, len(msgs), err)
		}
		wantDS := map[string]string{"train": "train", "validation": "train", "test": "test"}[split]
		for i, r := range rows {
			if _, err := gate.Check(r.Response, 3); err != nil || !strings.HasPrefix(r.Prompt, "Below are ") {
				t.Errorf("row %s: %v", r.ExtraInfo.InstanceID, err)
			}
			if r.ExtraInfo.Split != split || r.ExtraInfo.DatasetSplit != wantDS || msgs[i].DatasetSplit != wantDS || msgs[i].Split != split {
				t.Errorf("%s row %s: split %q/%q, dataset split %q/%q, want %s and %s", split, r.ExtraInfo.InstanceID,
					r.ExtraInfo.Split, msgs[i].Split, r.ExtraInfo.DatasetSplit, msgs[i].DatasetSplit, split, wantDS)
			}
		}
	}
	for _, f := range []string{"messages/validation-00000-of-00001.parquet", "jsonl/train.jsonl", "jsonl/test.jsonl", "rejects.jsonl", "sft.json", "README.md", "manifest.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if card, _ := os.ReadFile(filepath.Join(out, "README.md")); !strings.Contains(string(card), "drawn on its train and test splits") || !strings.Contains(string(card), "split: test") {
		t.Errorf("the card does not say it draws on the test split:\n%s", card)
	}
	// The card and the report name the dataset by its directory's name and
	// its manifest's digest: a published card carries no local path.
	manifest, err := os.ReadFile(filepath.Join(ds, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	digest := fmt.Sprintf("%x", sha256.Sum256(manifest))[:12]
	for _, f := range []string{"README.md", "sft.json"} {
		b, _ := os.ReadFile(filepath.Join(out, f))
		if strings.Contains(string(b), filepath.Dir(ds)) || !strings.Contains(string(b), filepath.Base(ds)) || !strings.Contains(string(b), digest) {
			t.Errorf("%s names the dataset by its local path %s, or not by its name and manifest digest %s:\n%.600s", f, ds, digest, b)
		}
	}
	code, stdout, stderr = clitest.Run(t, nil, "gate", "--strict", filepath.Join(out, "data", "test-00000-of-00001.parquet"), filepath.Join(out, "jsonl", "validation.jsonl"))
	if code != 0 || !strings.Contains(stdout, "3 rows, 3 passed (100.0%), 0 failed") || !strings.Contains(stdout, "1 rows, 1 passed") {
		t.Errorf("gate: exit %d\n%s%s", code, stdout, stderr)
	}

	// The default takes the train split only; --no-think writes empty
	// think blocks with the same answers.
	code, stdout, stderr = clitest.Run(t, nil, "sft", "--dataset", ds, "--out", out, "--no-think")
	if code != 0 || !strings.Contains(stdout, "3 train and 2 validation rows") || strings.Contains(stderr, "openings:") {
		t.Errorf("--no-think: exit %d:\n%s", code, stderr)
	}
	if _, err := os.Stat(out + ".prev"); err != nil {
		t.Errorf("the previous output is not kept: %v", err)
	}
}

// A teacher endpoint through the CLI: the LLM flags, the cache in the
// store (a re-run calls nothing), the budget and the usage table.
func TestSFTEndpoint(t *testing.T) {
	ds := demoDataset(t)
	llm := simtest.ServeOptions(t, sim.LLM, nil, sim.Options{LLMAnswer: func(r sim.LLMRequest) (sim.LLMReply, bool) {
		return sim.LLMReply{Text: teacherAnswer(t, r), Usage: &sim.LLMUsage{Prompt: 1000, Completion: 200}}, true
	}})
	calls := func() int32 { return int32(llm.Stats().Requests) }
	dir := t.TempDir()
	out := filepath.Join(dir, "sft")
	args := []string{"sft", "--dataset", ds, "--out", out, "--store", filepath.Join(dir, "store"), "--splits", "train,test",
		"--llm-base", llm.BaseURL(), "--llm-model", "teacher-1", "--price", "teacher-1=1/5"}
	code, stdout, stderr := clitest.Run(t, nil, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	stderr = stdout + stderr
	first := calls()
	// 8 ideas, 1 openings batch, 8 traces.
	if first != 17 {
		t.Errorf("%d calls, want 17", first)
	}
	for _, want := range []string{"teacher teacher-1", "gate: 100.0% pass rate", "cost: $0.0340 spent", "sft-openings  teacher-1  1"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	code, _, stderr = clitest.Run(t, nil, args...)
	if code != 0 || calls() != first || !strings.Contains(stderr, "cost: $0.0000 spent, $0.0340 saved by the cache") {
		t.Errorf("re-run: exit %d, %d new calls:\n%s", code, calls()-first, stderr)
	}
	// A budget on a new store stops after the calls it covers; the rows
	// it could not pay for are reported, not written as rejects.
	args[6] = filepath.Join(dir, "store2")
	code, _, stderr = clitest.Run(t, nil, append(args, "--budget", "$0.005", "--no-think", "--workers", "1")...)
	if code != 0 || calls()-first != 3 || !strings.Contains(stderr, "not generated: 5 instances") {
		t.Errorf("budget: exit %d, %d calls:\n%s", code, calls()-first, stderr)
	}
}

var (
	reCount   = regexp.MustCompile(`a JSON array of exactly (\d+) object`)
	reOpening = regexp.MustCompile(`begins with exactly this sentence: "([^"]*)"`)
	reN       = regexp.MustCompile(`Write (\d+) new opening sentences`)
)

// teacherAnswer answers a teacher request well, by the stage its system
// prompt names.
func teacherAnswer(t *testing.T, r sim.LLMRequest) string {
	system, user := r.System, r.User()
	switch {
	case strings.Contains(system, "teacher model"):
		k, _ := strconv.Atoi(reCount.FindStringSubmatch(user)[1])
		var cards []map[string]string
		for i := range k {
			cards = append(cards, map[string]string{
				"problem_gap": fmt.Sprintf("[Evidence Gap] Gap %d of this set is unmeasured.", i), "core_claim": "We claim that it can be measured.",
				"method": "[Empirical Mapping] Build a benchmark.", "inspiration": "Document 1 and Document 2 leave it open.",
			})
		}
		b, _ := json.Marshal(cards)
		return string(b)
	case strings.Contains(system, "opening sentences"):
		n, _ := strconv.Atoi(reN.FindStringSubmatch(user)[1])
		var ss []string
		for i := range n {
			ss = append(ss, fmt.Sprintf("Opening %d: I wonder what these papers leave open.", i))
		}
		b, _ := json.Marshal(map[string]any{"openings": ss})
		return string(b)
	case strings.Contains(system, "private thinking"):
		return reOpening.FindStringSubmatch(user)[1] + strings.Repeat(" Document 1 seems to leave something open, but I am not sure.", 12)
	}
	t.Errorf("unknown teacher request: %.100s", system)
	return ""
}

func TestGateCommand(t *testing.T) {
	good := func(k int) string {
		var cards []map[string]string
		for range k {
			cards = append(cards, map[string]string{"problem_gap": "[Evidence Gap] a", "core_claim": "b", "method": "[Robustification] c", "inspiration": "d"})
		}
		b, _ := json.Marshal(cards)
		return "<think>\nhmm\n</think>\n<answer>\n" + string(b) + "\n</answer>"
	}
	lines := []map[string]any{
		{"completion": good(3)},
		{"completion": good(2)},                                    // K-1 cards
		{"response": good(2), "num_ideas": 2},                      // its own K
		{"completion": strings.Replace(good(3), "<think>", "", 1)}, // no think block
		{"completion": strings.Replace(good(3), "[Robustification]", "[Evidence Gap]", 1)},
	}
	var b strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	p := filepath.Join(t.TempDir(), "gen.jsonl")
	os.WriteFile(p, []byte(b.String()), 0o644)

	code, stdout, stderr := clitest.Run(t, nil, "gate", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"5 rows, 2 passed (40.0%), 3 failed", "missing_think   1", "wrong_count     1", "wrong_axis      1"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = clitest.Run(t, nil, "gate", "--strict", "-v", p)
	if code != 1 || !strings.Contains(stdout, p+":2: gate: wrong_count: the answer has 2 cards, want exactly 3") {
		t.Errorf("--strict -v: exit %d:\n%s", code, stdout)
	}
	code, stdout, _ = clitest.Run(t, nil, "gate", "--num-ideas", "2", p)
	if code != 0 || !strings.Contains(stdout, "5 rows, 2 passed") {
		t.Errorf("--num-ideas 2: exit %d:\n%s", code, stdout)
	}
}

func TestSFTUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"sft"}, 2, "give --dataset DIR and --out DIR"},
		{[]string{"sft", "--dataset", "d", "--out", "o", "--think", "--no-think"}, 2, "--think and --no-think together"},
		{[]string{"sft", "--dataset", "d", "--out", "o", "--splits", "dev"}, 2, `unknown split "dev"`},
		{[]string{"sft", "--dataset", "d", "--out", "o", "--budget", "lots"}, 2, "--budget"},
		{[]string{"sft", "--dataset", "d", "--out", "o", "--llm-base", "http://127.0.0.1:1/v1", "--llm-model", "m", "--budget", "5"}, 2, "--budget needs a price for m"},
		{[]string{"sft", "--dataset", "/does/not/exist", "--out", "o"}, 2, "/does/not/exist"},
		{[]string{"gate"}, 2, "give a JSONL or Parquet file"},
		{[]string{"gate", "/does/not/exist.jsonl"}, 2, "exist.jsonl"},
	}
	for _, tt := range tests {
		code, _, stderr := clitest.Run(t, nil, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.err) {
			t.Errorf("curate %v: exit %d, stderr %q; want exit %d mentioning %q", tt.args, code, stderr, tt.code, tt.err)
		}
	}
}
