package main

import (
	"bytes"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/sim"
)

// e2eProvider is how a test points curate at one of the simulated LLM
// services: the flags after the world's own (which name the
// OpenAI-compatible service and its model).
func e2eProvider(s *sim.Servers, provider, mode string) []string {
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

// e2ePrices prices the simulated models as their real counterparts.
const e2ePrices = "sim-1=2.5/10/1.25,claude-sonnet-4-6=3/15/0.30/3.75"

// TestE2EBatchModes runs the same simulated world through the
// OpenAI-compatible service in sync mode, OpenAI's Batch API, and
// Anthropic's Messages API in sync and in batch mode. Batch runs that wait
// (--llm-wait) finish in one run with the Parquet of the sync run of the
// same model, byte for byte; no request is submitted twice; the usage
// table shows the batch calls and what they saved, and the prompt cache.
func TestE2EBatchModes(t *testing.T) {
	if testing.Short() {
		t.Skip("four end-to-end runs")
	}
	world := sim.WorldConfig{Seed: 3, Targets: 12}
	common := []string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn", "--price", e2ePrices}
	env := map[string]string{"SOURCE_DATE_EPOCH": e2eEpoch}
	type result struct {
		shards        map[string][]byte
		stderr        string
		batches       sim.BatchStats
		chat, anthMsg int
	}
	run := func(t *testing.T, provider, mode string, extra ...string) result {
		s := e2eSim(t, world, sim.Options{StrictOpenAI: true})
		dir := t.TempDir()
		args := e2eRunArgs(t, s, dir+"/store", dir+"/dataset", append(append(common, e2eProvider(s, provider, mode)...), extra...)...)
		code, _, stderr := runCLI(t, env, args...)
		if code != 0 {
			t.Fatalf("%s %s: exit %d\n%s", provider, mode, code, stderr)
		}
		name := sim.LLM
		if provider == "anthropic" {
			name = sim.Anthropic
		}
		return result{shards: e2eShards(t, dir+"/dataset"), stderr: stderr, batches: s.BatchStats(name),
			chat: s.Service(sim.LLM).Stats().Requests, anthMsg: s.Service(sim.Anthropic).Stats().Requests}
	}
	syncOpenAI := run(t, "compatible", "sync")
	for _, tc := range []struct {
		provider string
		ref      *result
	}{{"openai", &syncOpenAI}, {"anthropic", nil}} {
		t.Run(tc.provider, func(t *testing.T) {
			ref := tc.ref
			if ref == nil {
				r := run(t, tc.provider, "sync")
				ref = &r
				if !strings.Contains(r.stderr, "cache writes") || usageColumn(t, r.stderr, "summarize", "from prompt cache") == "0" {
					t.Errorf("anthropic sync: the usage table shows no prompt cache reads for summarize:\n%s", r.stderr)
				}
			}
			b := run(t, tc.provider, "batch", "--llm-wait", "2m")
			if !maps.EqualFunc(b.shards, ref.shards, bytes.Equal) {
				t.Errorf("batch mode wrote other Parquet than sync mode: %v vs %v", slices.Sorted(maps.Keys(b.shards)), slices.Sorted(maps.Keys(ref.shards)))
			}
			if b.batches.Batches == 0 {
				t.Fatalf("no batch was submitted: %+v", b.batches)
			}
			for id, n := range b.batches.Submissions {
				if n != 1 {
					t.Errorf("%s submitted %d times", id, n)
				}
			}
			for _, stage := range []string{"classify", "summarize"} {
				calls, _ := strconv.Atoi(usageColumn(t, b.stderr, stage, "calls"))
				batch, _ := strconv.Atoi(usageColumn(t, b.stderr, stage, "batch calls"))
				if calls == 0 || batch != calls || !strings.HasPrefix(usageColumn(t, b.stderr, stage, "saved by batch"), "$") ||
					usageColumn(t, b.stderr, stage, "saved by batch") == "$0.0000" {
					t.Errorf("%s: %d calls, %d batch calls, saved by batch %s:\n%s", stage, calls, batch, usageColumn(t, b.stderr, stage, "saved by batch"), b.stderr)
				}
			}
			t.Logf("%s batch: %d batches, %d lines, %d polls", tc.provider, b.batches.Batches, b.batches.Lines, b.batches.Polls)
		})
	}
}

// usageColumn returns a stage's value in the named column of the LLM
// usage table curate prints on stderr.
func usageColumn(t *testing.T, stderr, stage, column string) string {
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

var columnGap = regexp.MustCompile(`\s{2,}`)

func splitColumns(l string) []string { return columnGap.Split(strings.TrimSpace(l), -1) }

// e2eDropped reads a dataset's dropped targets by reason.
func e2eDropped(t *testing.T, dir string) map[string][]string {
	t.Helper()
	_, dropped := e2eDataset(t, dir)
	out := map[string][]string{}
	for id, d := range dropped {
		out[d.Reason] = append(out[d.Reason], id)
	}
	return out
}

var _ = filepath.Join
var _ = dataset.DropPending
