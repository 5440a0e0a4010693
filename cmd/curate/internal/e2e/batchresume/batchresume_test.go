package batchresume

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/sim"
)

// TestE2EBatchInterrupt: the first Ctrl-C stops a run that waits for its
// batches at once (it does not sit out --llm-wait), with exit 130; the
// batch stays pending in the store for the next run.
func TestE2EBatchInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds curate")
	}
	bin := clitest.Build(t)
	s := clitest.Sim(t, sim.WorldConfig{Seed: 3, Targets: 4}, sim.Options{Limits: map[string]sim.Limits{sim.LLM: {BatchDuration: time.Hour}}})
	dir := t.TempDir()
	p := clitest.Start(t, bin, clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms"},
		append(clitest.Provider(s, "openai", "batch"), "--llm-wait", "1h")...)...)...)
	if !clitest.WaitUntil(t, p, func() bool { return s.BatchStats(sim.LLM).Polls >= 2 }) {
		t.Fatalf("the run ended before waiting: exit %d\n%s", p.Code, p.Stderr.String())
	}
	p.Cmd.Process.Signal(os.Interrupt)
	if !p.Wait(30 * time.Second) {
		t.Fatal("the run did not stop within 30 s of SIGINT while waiting for a batch")
	}
	if p.Code != 130 || !strings.Contains(p.Stderr.String(), "waiting for LLM batches") {
		t.Errorf("exit %d, want 130\n%s", p.Code, p.Stderr.String())
	}
	code, stdout, _ := clitest.Run(t, nil, "status", "--store", dir+"/store")
	if code != 0 || !strings.Contains(stdout, "LLM batches pending (1)") {
		t.Errorf("status after the interrupt: exit %d\n%s", code, stdout)
	}
}

// e2eDropped reads a dataset's dropped targets by reason.
func e2eDropped(t *testing.T, dir string) map[string][]string {
	t.Helper()
	_, dropped := clitest.Dataset(t, dir)
	out := map[string][]string{}
	for id, d := range dropped {
		out[d.Reason] = append(out[d.Reason], id)
	}
	return out
}

// TestE2EBatchCrashResume runs the curate binary in batch mode against
// the simulated OpenAI and Anthropic batch APIs, whose batches take a
// second, and kills it (SIGKILL) while batches are pending: once as the
// first batch file goes up, once with the classify batch pending, once
// with the summarize batch pending. In between, a run that does not wait
// exits 75 and lists the waiting targets, and curate status shows the
// pending batches. The last run collects everything: its Parquet is the
// uninterrupted run's byte for byte, and no request was ever submitted
// twice.
func TestE2EBatchCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds curate and runs it a dozen times")
	}
	bin := clitest.Build(t)
	world := sim.WorldConfig{Seed: 9, Targets: 24}
	slow := sim.Limits{BatchDuration: time.Second}
	opts := sim.Options{Limits: map[string]sim.Limits{sim.LLM: slow, sim.Anthropic: slow}}
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			name := map[string]string{"openai": sim.LLM, "anthropic": sim.Anthropic}[provider]
			flags := func(s *sim.Servers, wait bool) []string {
				f := append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn", "--price", clitest.Prices},
					clitest.Provider(s, provider, "batch")...)
				f = append(f, "--llm-poll-interval", "20ms")
				if wait {
					f = append(f, "--llm-wait", "2m")
				}
				return f
			}
			ref := clitest.Sim(t, world, opts)
			refDir := t.TempDir()
			p := clitest.Start(t, bin, clitest.RunArgs(t, ref, refDir+"/store", refDir+"/dataset", flags(ref, true)...)...)
			if !p.Wait(120*time.Second) || p.Code != 0 {
				t.Fatalf("uninterrupted run: exit %d\n%s", p.Code, p.Stderr.String())
			}
			want := clitest.Shards(t, refDir+"/dataset")
			refStats := ref.BatchStats(name)
			t.Logf("uninterrupted run: %s, %d batches of %d lines", time.Since(p.Started).Round(time.Millisecond), refStats.Batches, refStats.Lines)

			s := clitest.Sim(t, world, opts)
			dir := t.TempDir()
			waitArgs := clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", flags(s, true)...)
			noWaitArgs := clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", flags(s, false)...)
			killWhen := func(what string, cond func() bool) {
				t.Helper()
				p := clitest.Start(t, bin, waitArgs...)
				if !clitest.WaitUntil(t, p, cond) {
					t.Fatalf("the run ended (exit %d) before %s\n%s", p.Code, what, p.Stderr.String())
				}
				p.Cmd.Process.Signal(syscall.SIGKILL)
				p.Wait(10 * time.Second)
				t.Logf("killed %s; batches so far %+v", what, s.BatchStats(name).Batches)
			}
			upload := func() bool {
				for _, c := range s.Service(name).Calls() {
					if strings.Contains(c.Key, "/v1/files") || strings.Contains(c.Key, "/v1/messages/batches") {
						return true
					}
				}
				return false
			}
			killWhen("as the first batch goes up", upload)
			if s.BatchStats(name).Batches == 0 {
				killWhen("with the classify batch pending", func() bool { return s.BatchStats(name).Batches >= 1 })
			}

			// Status sees the pending batch; a run that does not wait lists
			// the waiting targets and exits 75, submitting nothing again.
			code, stdout, _ := clitest.Run(t, nil, "status", "--store", dir+"/store", "--json")
			var st app.StoreStatus
			if err := json.Unmarshal([]byte(stdout), &st); code != 0 || err != nil {
				t.Fatalf("status: exit %d, %v", code, err)
			}
			if len(st.Batches) == 0 || st.Batches[0].Requests == 0 || len(st.Waiting) == 0 {
				t.Errorf("status shows batches %+v and %d waiting targets; want the pending classify batch and its targets", st.Batches, len(st.Waiting))
			}
			// While it runs no batch ends: a run longer than the batches'
			// second (a loaded machine's) would otherwise collect them all.
			svc := s.Service(name)
			svc.SetLimits(sim.Limits{BatchDuration: time.Hour})
			p = clitest.Start(t, bin, noWaitArgs...)
			ended := p.Wait(5 * time.Minute)
			svc.SetLimits(slow)
			if !ended || p.Code != 75 {
				t.Errorf("a run that does not wait: exit %d, want 75 (not finished)\n%s", p.Code, p.Stderr.String())
			}
			if n := strings.Count(p.Stdout.String(), "\twaiting\t"); n == 0 || !strings.Contains(p.Stderr.String(), "run the same command again later to collect them") {
				t.Errorf("%d waiting lines on stdout; stderr:\n%s", n, p.Stderr.String())
			}
			if d := e2eDropped(t, dir+"/dataset")[dataset.DropPending]; len(d) == 0 {
				t.Errorf("no target dropped as %s from the dataset of an unfinished run", dataset.DropPending)
			}

			killWhen("with the summarize batch pending", func() bool { return s.BatchStats(name).Batches >= 2 })
			p = clitest.Start(t, bin, waitArgs...)
			if !p.Wait(120*time.Second) || p.Code != 0 {
				t.Fatalf("final run: exit %d\n%s", p.Code, p.Stderr.String())
			}
			if got := clitest.Shards(t, dir+"/dataset"); !maps.EqualFunc(got, want, bytes.Equal) {
				t.Errorf("the dataset after the kills differs from the uninterrupted run's")
			}
			bs := s.BatchStats(name)
			for id, n := range bs.Submissions {
				if n != 1 {
					t.Errorf("%s was submitted %d times", id, n)
				}
			}
			// Requests asked: the batch lines and, for Anthropic, the ones
			// sent ahead of their batch to warm the prompt cache.
			if asked, refAsked := bs.Lines+syncMessages(s, name), refStats.Lines+syncMessages(ref, name); asked != refAsked {
				t.Errorf("%d requests asked across the kills, the uninterrupted run %d", asked, refAsked)
			}
			t.Logf("after the kills: %d batches, %d lines, %d polls", bs.Batches, bs.Lines, bs.Polls)
		})
	}
}

// syncMessages counts the synchronous answers a simulated LLM gave: the
// requests sent ahead of a batch to warm the prompt cache, in batch mode.
func syncMessages(s *sim.Servers, name string) int {
	path := map[string]string{sim.LLM: "/v1/chat/completions", sim.Anthropic: "/v1/messages"}[name]
	n := 0
	for _, c := range s.Service(name).CallsTo(path) {
		if c.Status == 200 {
			n++
		}
	}
	return n
}
