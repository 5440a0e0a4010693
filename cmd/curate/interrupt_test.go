package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// TestSecondInterruptAbandons: the second Ctrl-C abandons the work in
// flight, which the next run redoes. That work did not fail: the ledger
// keeps it pending (no target is recorded failed for the interrupt), the
// stage table counts no failure, as the summary says, and the next run
// completes every target.
func TestSecondInterruptAbandons(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	s := e2eSim(t, sim.WorldConfig{Seed: 9, Targets: 4}, sim.Options{Limits: map[string]sim.Limits{
		sim.LLM: {MaxInFlight: 4, Latency: 500 * time.Millisecond}, // the first call is in flight at both interrupts
	}})
	dir := t.TempDir()
	args := e2eRunArgs(t, s, dir+"/store", dir+"/ds", "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--llm-concurrency", "4")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	drain := make(chan struct{})
	var stdout, stderr bytes.Buffer
	env := &cmdEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }, drain: drain}
	done := make(chan int, 1)
	go func() { done <- run(ctx, env, args) }()
	// Interrupt twice while LLM calls are in flight, as main does on two
	// Ctrl-Cs: the first drains, the second cancels.
	deadline := time.Now().Add(2 * time.Minute)
	for s.Service(sim.LLM).Stats().Requests == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no LLM call within 2 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(drain)
	cancel()
	code := <-done
	if code != exitInterrupted {
		t.Fatalf("exit %d after two interrupts, want %d\n%s", code, exitInterrupted, stderr.String())
	}
	out := stderr.String()
	if !strings.Contains(out, " 0 failed") {
		t.Errorf("the summary counts failures:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		// stage  done  reused  skipped  held  waiting  failed  not reached  wall
		if len(f) >= 9 && (f[0] == "classify" || f[0] == "summarize" || f[0] == "fetch" || f[0] == "citegraph" || f[0] == "sources") && f[6] != "0" {
			t.Errorf("the stage table counts abandoned work as failed: %s", line)
		}
	}
	st, err := store.Open(context.Background(), dir+"/store")
	if err != nil {
		t.Fatal(err)
	}
	counts, err := st.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	abandoned := 0
	for stage, c := range counts {
		if c[store.StatusFailed] > 0 {
			failed, _ := st.ByStatus(context.Background(), stage, store.StatusFailed)
			t.Errorf("%s: %d recorded failed after the interrupt: %+v", stage, c[store.StatusFailed], failed)
		}
		abandoned += c[store.StatusRunning]
	}
	if abandoned == 0 {
		t.Errorf("nothing was in flight at the second interrupt (ledger %v): the test saw nothing abandoned", counts)
	}
	st.Close()
	// The next run redoes what was abandoned, and everything passes.
	stdout.Reset()
	stderr.Reset()
	env.drain = nil
	if code := run(context.Background(), env, args); code != 0 {
		t.Fatalf("the run after: exit %d\n%s", code, stderr.String())
	}
}
