package providers

import (
	"bytes"
	"maps"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/sim"
)

// TestE2EBatchModesAnthropic runs a simulated world through Anthropic's
// Messages API in sync mode and in batch mode (as batch.TestE2EBatchModes
// does through OpenAI's): the sync run's usage table shows prompt cache
// reads; the batch run that waits (--llm-wait) finishes in one run with
// the sync run's Parquet, byte for byte; no request is submitted twice;
// the usage table shows the batch calls and what they saved.
func TestE2EBatchModesAnthropic(t *testing.T) {
	if testing.Short() {
		t.Skip("two end-to-end runs of 200 targets")
	}
	world := sim.WorldConfig{Seed: 3, Targets: 200}
	sync := clitest.RunLLM(t, world, "anthropic", "sync")
	if sync.Instances < world.Targets/2 {
		t.Fatalf("the anthropic sync run built %d instances of %d targets", sync.Instances, world.Targets)
	}
	if !strings.Contains(sync.Stderr, "cache writes") || clitest.UsageColumn(t, sync.Stderr, "summarize", "from prompt cache") == "0" {
		t.Errorf("anthropic sync: the usage table shows no prompt cache reads for summarize:\n%s", sync.Stderr)
	}
	b := clitest.RunLLM(t, world, "anthropic", "batch", "--llm-wait", "2m")
	clitest.CheckBatchRun(t, "anthropic", b, sync)
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
