package batch

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/sim"
)

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
	world := sim.WorldConfig{Seed: 3, Targets: 200}
	common := []string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn", "--price", clitest.Prices}
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}
	type result struct {
		shards        map[string][]byte
		stderr        string
		batches       sim.BatchStats
		chat, anthMsg int
		instances     int
	}
	run := func(t *testing.T, provider, mode string, extra ...string) result {
		s := clitest.Sim(t, world, sim.Options{StrictOpenAI: true})
		dir := t.TempDir()
		args := clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", append(append(common, clitest.Provider(s, provider, mode)...), extra...)...)
		code, _, stderr := clitest.Run(t, env, args...)
		if code != 0 {
			t.Fatalf("%s %s: exit %d\n%s", provider, mode, code, stderr)
		}
		name := sim.LLM
		if provider == "anthropic" {
			name = sim.Anthropic
		}
		in, _ := clitest.Dataset(t, dir+"/dataset")
		return result{shards: clitest.Shards(t, dir+"/dataset"), stderr: stderr, batches: s.BatchStats(name),
			chat: s.Service(sim.LLM).Stats().Requests, anthMsg: s.Service(sim.Anthropic).Stats().Requests, instances: len(in)}
	}
	syncOpenAI := run(t, "compatible", "sync")
	if syncOpenAI.instances < world.Targets/2 {
		t.Fatalf("the sync run built %d instances of %d targets", syncOpenAI.instances, world.Targets)
	}
	for _, tc := range []struct {
		provider string
		ref      *result
	}{{"openai", &syncOpenAI}, {"anthropic", nil}} {
		t.Run(tc.provider, func(t *testing.T) {
			ref := tc.ref
			if ref == nil {
				r := run(t, tc.provider, "sync")
				ref = &r
				if r.instances < world.Targets/2 {
					t.Fatalf("the anthropic sync run built %d instances of %d targets", r.instances, world.Targets)
				}
				if !strings.Contains(r.stderr, "cache writes") || clitest.UsageColumn(t, r.stderr, "summarize", "from prompt cache") == "0" {
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
				calls, _ := strconv.Atoi(clitest.UsageColumn(t, b.stderr, stage, "calls"))
				batch, _ := strconv.Atoi(clitest.UsageColumn(t, b.stderr, stage, "batch calls"))
				// Anthropic's batches may be warmed: one request sent ahead
				// of a batch writes the prefix its requests share.
				if calls == 0 || batch > calls || calls-batch > b.batches.Batches || !strings.HasPrefix(clitest.UsageColumn(t, b.stderr, stage, "saved by batch"), "$") ||
					clitest.UsageColumn(t, b.stderr, stage, "saved by batch") == "$0.0000" {
					t.Errorf("%s: %d calls, %d batch calls, saved by batch %s:\n%s", stage, calls, batch, clitest.UsageColumn(t, b.stderr, stage, "saved by batch"), b.stderr)
				}
			}
			t.Logf("%s batch: %d batches, %d lines, %d polls", tc.provider, b.batches.Batches, b.batches.Lines, b.batches.Polls)
		})
	}
}

// TestE2EStrictOpenAI: with --llm-provider openai, the schemas curate
// sends in strict mode hold no keyword OpenAI's strict mode rejects (the
// simulated service refuses them as OpenAI does, with a 400): no request
// of the run is refused, and none falls back to a schema in the prompt.
func TestE2EStrictOpenAI(t *testing.T) {
	s := clitest.Sim(t, sim.WorldConfig{Seed: 3, Targets: 6}, sim.Options{StrictOpenAI: true})
	dir := t.TempDir()
	args := clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms"},
		clitest.Provider(s, "openai", "sync")...)...)
	code, _, stderr := clitest.Run(t, map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	calls := s.Service(sim.LLM).Calls()
	for _, c := range calls {
		if c.Status != 200 {
			t.Errorf("%s: status %d", c.Note, c.Status)
		}
	}
	if len(calls) == 0 || strings.Contains(stderr, "falling back") {
		t.Errorf("%d calls; stderr:\n%s", len(calls), stderr)
	}
	// The compatible dialect sends the full schema under strict: true,
	// which OpenAI refuses: the check can fail.
	s.Reset()
	args = clitest.RunArgs(t, s, dir+"/store2", dir+"/dataset2", append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms"},
		clitest.Provider(s, "compatible", "sync")...)...)
	if code, _, stderr := clitest.Run(t, nil, args...); code != 0 || !strings.Contains(stderr, "falling back") {
		t.Errorf("compatible dialect on a strict endpoint: exit %d, no fallback logged:\n%s", code, stderr)
	}
}

// TestE2EDemoProviders runs the demo corpus through the simulated
// OpenAI-compatible service, OpenAI's Batch API and Anthropic's Messages
// API in sync and batch mode: every run builds instances, and batch mode
// writes the Parquet of sync mode with the same model.
func TestE2EDemoProviders(t *testing.T) {
	if testing.Short() {
		t.Skip("four demo runs")
	}
	s := clitest.Sim(t, sim.WorldConfig{Seed: 1, Targets: 1}, sim.Options{StrictOpenAI: true})
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}
	shards := map[string]map[string][]byte{}
	for _, c := range []struct{ provider, mode string }{{"compatible", "sync"}, {"openai", "batch"}, {"anthropic", "sync"}, {"anthropic", "batch"}} {
		dir := t.TempDir()
		args := []string{"demo", "--store", dir + "/store", "--out", dir + "/ds", "--log", "warn", "--llm-base", s.URL(sim.LLM), "--llm-model", sim.Model}
		args = append(args, clitest.Provider(s, c.provider, c.mode)...)
		if c.mode == "batch" {
			args = append(args, "--llm-wait", "1m")
		}
		code, _, stderr := clitest.Run(t, env, args...)
		if code != 0 {
			t.Fatalf("demo via %s %s: exit %d\n%s", c.provider, c.mode, code, stderr)
		}
		in, _ := clitest.Dataset(t, dir+"/ds")
		if len(in) < 3 {
			t.Errorf("demo via %s %s: %d instances, want the demo's few", c.provider, c.mode, len(in))
		}
		shards[c.provider+" "+c.mode] = clitest.Shards(t, dir+"/ds")
	}
	for batch, sync := range map[string]string{"openai batch": "compatible sync", "anthropic batch": "anthropic sync"} {
		if !maps.EqualFunc(shards[batch], shards[sync], bytes.Equal) {
			t.Errorf("the demo's Parquet via %s differs from %s", batch, sync)
		}
	}
}
