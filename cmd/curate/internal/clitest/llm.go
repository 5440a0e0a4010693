package clitest

import (
	"bytes"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/groundwork/curate/sim"
)

// Provider is how a test points curate at one of the simulated LLM
// services: the flags after the world's own (which name the
// OpenAI-compatible service and its model).
func Provider(s *sim.Servers, provider, mode string) []string {
	var f []string
	switch provider {
	case "compatible":
		f = []string{"--llm-provider", "compatible"}
	case "openai":
		f = []string{"--llm-provider", "openai"}
	case "anthropic":
		f = []string{"--llm-provider", "anthropic", "--llm-base", s.URL(sim.Anthropic), "--llm-model", "claude-sonnet-4-6"}
	}
	f = append(f, "--llm-mode", mode)
	if mode == "batch" {
		f = append(f, "--llm-poll-interval", "5ms")
	}
	return f
}

// Prices prices the simulated models as their real counterparts.
const Prices = "sim-1=2.5/10/1.25,claude-sonnet-4-6=3/15/0.30/3.75"

// UsageColumn returns a stage's value in the named column of the LLM
// usage table curate prints on stderr.
func UsageColumn(t testing.TB, stderr, stage, column string) string {
	t.Helper()
	lines := strings.Split(stderr, "\n")
	h := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "LLM usage") })
	if h < 0 {
		t.Fatalf("no usage table in:\n%s", stderr)
	}
	cols := splitColumns(lines[h])
	i := slices.Index(cols, column)
	if i < 0 {
		t.Fatalf("no column %q in %q", column, cols)
	}
	for _, l := range lines[h+1:] {
		f := splitColumns(l)
		if len(f) == len(cols) && f[0] == stage {
			return f[i]
		}
	}
	t.Fatalf("no usage row for %s in:\n%s", stage, stderr)
	return ""
}

// columnGap separates the columns of curate's tables.
var columnGap = regexp.MustCompile(`\s{2,}`)

func splitColumns(l string) []string { return columnGap.Split(strings.TrimSpace(l), -1) }

// LLMRun is what a curate run over a simulated world through one LLM
// provider left.
type LLMRun struct {
	Shards    map[string][]byte // the dataset's Parquet files
	Stderr    string
	Batches   sim.BatchStats // the provider's batches
	Instances int            // the dataset's
}

// RunLLM runs curate run over a fresh simulated world whose OpenAI
// service refuses what OpenAI's strict mode refuses, through provider in
// mode (see Provider), the simulated models priced as their real
// counterparts, extra flags after; a run that does not exit 0 fails t.
func RunLLM(t testing.TB, world sim.WorldConfig, provider, mode string, extra ...string) LLMRun {
	t.Helper()
	s := Sim(t, world, sim.Options{StrictOpenAI: true})
	dir := t.TempDir()
	flags := append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn", "--price", Prices}, Provider(s, provider, mode)...)
	code, _, stderr := Run(t, map[string]string{"SOURCE_DATE_EPOCH": Epoch}, RunArgs(t, s, dir+"/store", dir+"/dataset", append(flags, extra...)...)...)
	if code != 0 {
		t.Fatalf("%s %s: exit %d\n%s", provider, mode, code, stderr)
	}
	name := sim.LLM
	if provider == "anthropic" {
		name = sim.Anthropic
	}
	in, _ := Dataset(t, dir+"/dataset")
	return LLMRun{Shards: Shards(t, dir+"/dataset"), Stderr: stderr, Batches: s.BatchStats(name), Instances: len(in)}
}

// CheckBatchRun checks a batch-mode run against the sync run of the same
// model: the same Parquet byte for byte, a batch submitted and no request
// submitted twice, and each LLM stage's batch calls and what they saved
// in the usage table.
func CheckBatchRun(t testing.TB, provider string, b, sync LLMRun) {
	t.Helper()
	if !maps.EqualFunc(b.Shards, sync.Shards, bytes.Equal) {
		t.Errorf("batch mode wrote other Parquet than sync mode: %v vs %v", slices.Sorted(maps.Keys(b.Shards)), slices.Sorted(maps.Keys(sync.Shards)))
	}
	if b.Batches.Batches == 0 {
		t.Fatalf("no batch was submitted: %+v", b.Batches)
	}
	for id, n := range b.Batches.Submissions {
		if n != 1 {
			t.Errorf("%s submitted %d times", id, n)
		}
	}
	for _, stage := range []string{"classify", "summarize"} {
		calls, _ := strconv.Atoi(UsageColumn(t, b.Stderr, stage, "calls"))
		batch, _ := strconv.Atoi(UsageColumn(t, b.Stderr, stage, "batch calls"))
		// Anthropic's batches may be warmed: one request sent ahead
		// of a batch writes the prefix its requests share.
		if calls == 0 || batch > calls || calls-batch > b.Batches.Batches || !strings.HasPrefix(UsageColumn(t, b.Stderr, stage, "saved by batch"), "$") ||
			UsageColumn(t, b.Stderr, stage, "saved by batch") == "$0.0000" {
			t.Errorf("%s: %d calls, %d batch calls, saved by batch %s:\n%s", stage, calls, batch, UsageColumn(t, b.Stderr, stage, "saved by batch"), b.Stderr)
		}
	}
	t.Logf("%s batch: %d batches, %d lines, %d polls", provider, b.Batches.Batches, b.Batches.Lines, b.Batches.Polls)
}
