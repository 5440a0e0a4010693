package batch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// TestLLMModeFlags: --llm-mode and its flags are checked before anything
// is opened or requested.
func TestLLMModeFlags(t *testing.T) {
	dir := t.TempDir()
	base := []string{"run", "--store", filepath.Join(dir, "store"), "2401.00001"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--llm-mode", "later"}, `--llm-mode "later": want sync or batch`},
		{[]string{"--llm-mode", "batch"}, "--llm-mode batch needs an LLM endpoint"},
		{[]string{"--llm-mode", "batch", "--llm-base", "http://127.0.0.1:8000/v1", "--llm-model", "m"}, "provider compatible has no batch API"},
		{[]string{"--llm-mode", "batch", "--llm-provider", "compatible", "--llm-base", "https://api.openai.com/v1", "--llm-model", "m"}, "provider compatible has no batch API"},
		{[]string{"--llm-wait", "1h", "--llm-base", "https://api.openai.com/v1", "--llm-model", "m"}, "only --llm-mode batch waits"},
		{[]string{"--llm-mode", "batch", "--llm-wait", "-1s", "--llm-provider", "openai", "--llm-model", "m"}, "--llm-wait -1s: want 0"},
		{[]string{"--llm-mode", "batch", "--llm-poll-interval", "0s", "--llm-provider", "anthropic", "--llm-model", "m"}, "--llm-poll-interval 0s: want more than 0"},
		{[]string{"--llm-mode", "batch", "--llm-batch-max-tokens", "-5", "--llm-provider", "openai", "--llm-model", "m"}, "--llm-batch-max-tokens -5: want 0"},
		{[]string{"--llm-batch-max-tokens", "90000", "--llm-provider", "openai", "--llm-model", "m"}, "only --llm-mode batch submits batches"},
	} {
		code, _, stderr := clitest.Run(t, nil, append(base, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused flag left %v", entries)
	}
}

// TestBatchBudget: --budget-usd applies before a batch is submitted, at
// the batch price: what it cannot take is not submitted, the targets wait
// and the run exits 75 saying so; a budget that takes the batch submits
// it.
func TestBatchBudget(t *testing.T) {
	s := clitest.Sim(t, sim.WorldConfig{Seed: 3, Targets: 6}, sim.Options{Limits: map[string]sim.Limits{sim.LLM: {BatchDuration: 1 << 40}}})
	dir := t.TempDir()
	run := func(budget string) (int, string) {
		args := clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn",
			"--price", "sim-1=2.5/10", "--budget-usd", budget}, clitest.Provider(s, "openai", "batch")...)...)
		code, _, stderr := clitest.Run(t, nil, args...)
		return code, stderr
	}
	// Six classify requests, each estimated at its prompt (the shared
	// system prompt of every paper task, the paper, the references) and
	// an answer at its first limit: about $0.034 each at the standard
	// price, half that in a batch ($0.10 for the six).
	code, stderr := run("0.001")
	if code != 75 || s.BatchStats(sim.LLM).Lines != 0 || !strings.Contains(stderr, "not submitted: the run's budget is spent") {
		t.Errorf("a budget too small: exit %d, %d lines submitted\n%s", code, s.BatchStats(sim.LLM).Lines, stderr)
	}
	code, stderr = run("0.15")
	if code != 75 || s.BatchStats(sim.LLM).Lines != 6 {
		t.Errorf("a budget for the batch at half price: exit %d, %d lines submitted\n%s", code, s.BatchStats(sim.LLM).Lines, stderr)
	}
}

// TestBatchQueueLimitRun: --llm-batch-max-tokens holds each submission to
// the provider's queue limit: below any one request's size, every batch
// carries one request, the run waits for each to end before the next goes
// and still finishes; the ledger records each batch's input tokens.
func TestBatchQueueLimitRun(t *testing.T) {
	s := clitest.Sim(t, sim.WorldConfig{Seed: 3, Targets: 3}, sim.Options{})
	dir := t.TempDir()
	args := clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn",
		"--llm-wait", "10m", "--llm-batch-max-tokens", "1"}, clitest.Provider(s, "openai", "batch")...)...)
	code, _, stderr := clitest.Run(t, nil, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	bs := s.BatchStats(sim.LLM)
	if bs.Lines == 0 || bs.Batches != bs.Lines {
		t.Errorf("batch stats %+v: want one request per batch", bs)
	}
	st, err := store.Open(context.Background(), dir+"/store")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	batches, err := st.Batches(context.Background())
	if err != nil || len(batches) != bs.Batches {
		t.Fatalf("ledger batches %d, %v; the service saw %d", len(batches), err, bs.Batches)
	}
	for _, b := range batches {
		if b.Requests != 1 || b.InputTokens <= 0 {
			t.Errorf("batch %s: %d requests, %d input tokens", b.ID, b.Requests, b.InputTokens)
		}
	}
}
