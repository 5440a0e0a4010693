package batch

import (
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/sim"
)

// TestE2EBatchModes runs the same simulated world through the
// OpenAI-compatible service in sync mode and through OpenAI's Batch API
// (Anthropic's Messages API in sync and batch mode is
// providers.TestE2EBatchModesAnthropic). The batch run that waits
// (--llm-wait) finishes in one run with the Parquet of the sync run of the
// same model, byte for byte; no request is submitted twice; the usage
// table shows the batch calls and what they saved.
func TestE2EBatchModes(t *testing.T) {
	if testing.Short() {
		t.Skip("two end-to-end runs of 200 targets")
	}
	world := sim.WorldConfig{Seed: 3, Targets: 200}
	sync := clitest.RunLLM(t, world, "compatible", "sync")
	if sync.Instances < world.Targets/2 {
		t.Fatalf("the sync run built %d instances of %d targets", sync.Instances, world.Targets)
	}
	b := clitest.RunLLM(t, world, "openai", "batch", "--llm-wait", "2m")
	clitest.CheckBatchRun(t, "openai", b, sync)
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
