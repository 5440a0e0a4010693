package resume

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// TestE2ECrashAndInterrupt runs the curate binary against the simulated
// services, with an LLM slow enough that a run takes a few seconds:
//
//   - kill: SIGKILL at seeded random moments, then a run to the end. A
//     second run on the store is refused while one holds it; no call that
//     completed before a kill is made again (only calls in flight at a
//     kill are); the final Parquet files are byte for byte those of an
//     uninterrupted run.
//   - interrupt: one SIGINT mid-run. The run takes no new work, finishes
//     what is in flight (no ledger entry is left running), prints where
//     things stand and exits 130; the next run completes the same dataset.
func TestE2ECrashAndInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds curate and runs it a dozen times (about 40 s)")
	}
	bin := clitest.Build(t)
	world := sim.WorldConfig{Seed: 9, Targets: 24}
	opts := sim.Options{Limits: map[string]sim.Limits{
		sim.Arxiv: {Latency: 5 * time.Millisecond}, sim.Ar5iv: {Latency: 5 * time.Millisecond},
		sim.S2: {Latency: 5 * time.Millisecond}, sim.ArxivAPI: {Latency: 20 * time.Millisecond},
		sim.LLM: {MaxInFlight: 4, Latency: 120 * time.Millisecond},
	}}
	const classifyWorkers = 4
	flags := []string{"--arxiv-interval", "5ms", "--s2-interval", "5ms", "--llm-concurrency", "4", "--log", "warn",
		"--classify-workers", strconv.Itoa(classifyWorkers), "--summarize-workers", "4"}

	// The uninterrupted run every other run is compared with.
	ref := clitest.Sim(t, world, opts)
	refDir := t.TempDir()
	p := clitest.Start(t, bin, clitest.RunArgs(t, ref, refDir+"/store", refDir+"/dataset", flags...)...)
	if !p.Wait(60*time.Second) || p.Code != 0 {
		t.Fatalf("uninterrupted run: exit %d\n%s", p.Code, p.Stderr.String())
	}
	refWall := time.Since(p.Started)
	want := clitest.Shards(t, refDir+"/dataset")
	t.Logf("uninterrupted run: %s, %d LLM calls, %d Parquet files", refWall.Round(time.Millisecond), ref.Service(sim.LLM).Stats().Requests, len(want))

	t.Run("kill", func(t *testing.T) {
		s := clitest.Sim(t, world, opts)
		dir := t.TempDir()
		args := clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", flags...)
		rng := rand.New(rand.NewPCG(2026, 7))
		var kills []time.Time
		for k := range 3 {
			p := clitest.Start(t, bin, args...)
			at := p.Started.Add(time.Duration((0.1 + 0.3*rng.Float64()) * float64(refWall)))
			if k == 0 {
				// Once the run has made a request it holds the lock: a second
				// run on the same store is refused, naming the holder.
				if !clitest.WaitUntil(t, p, func() bool { return s.Requests() > 0 }) {
					t.Fatalf("the first run ended before making a request: exit %d\n%s", p.Code, p.Stderr.String())
				}
				q := clitest.Start(t, bin, args...)
				if !q.Wait(30*time.Second) || q.Code != 2 {
					t.Errorf("a second run on a locked store: exit %d, want 2 (could not run)", q.Code)
				}
				msg := q.Stderr.String()
				for _, want := range []string{"another curate run is using the store", "store is locked by another process", "pid " + strconv.Itoa(p.Cmd.Process.Pid)} {
					if !strings.Contains(msg, want) {
						t.Errorf("the refusal does not say %q:\n%s", want, msg)
					}
				}
			}
			if p.Wait(time.Until(at)) {
				t.Logf("run %d ended by itself (exit %d) before its kill", k+1, p.Code)
				break
			}
			p.Cmd.Process.Signal(syscall.SIGKILL)
			kills = append(kills, time.Now())
			p.Wait(10 * time.Second)
			t.Logf("run %d killed after %s; requests so far %d", k+1, time.Since(p.Started).Round(time.Millisecond), s.Requests())
		}
		if len(kills) == 0 {
			t.Fatal("no run was killed: the runs are too fast for this test")
		}
		p := clitest.Start(t, bin, args...)
		if !p.Wait(60*time.Second) || p.Code != 0 {
			t.Fatalf("final run: exit %d\n%s", p.Code, p.Stderr.String())
		}
		got := clitest.Shards(t, dir+"/dataset")
		if !maps.EqualFunc(got, want, bytes.Equal) {
			t.Errorf("the dataset after %d kills differs from the uninterrupted run's: files %v vs %v",
				len(kills), slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}

		// Only work in flight at a kill is asked for again. Which calls
		// were in flight cannot be told from the clock on a loaded machine
		// (an answer may wait seconds before it is stored), but how many
		// can be bounded: at a kill no more calls are unfinished than the
		// run has workers — the stages' pools, each summarize target's
		// source cards, the LLM's concurrency. Completed work asked again
		// would make the repeats grow with the run, far past that bound.
		const inFlight = 2 + 4 + classifyWorkers + 4*4 + 4 // fetch, citegraph, classify, summarize × source cards, LLM
		total, again := 0, 0
		late := 0 // repeats the clock cannot explain, for the log
		const grace = 500 * time.Millisecond
		inFlightByClock := func(c sim.Call) bool {
			for _, k := range kills {
				if !c.Start.After(k) && (c.End.IsZero() || c.End.After(k.Add(-grace))) {
					return true
				}
			}
			return false
		}
		for _, calls := range clitest.Calls(s) {
			total += len(calls)
			for _, c := range sim.Repeats(nil, calls) {
				again++
				var prev []sim.Call
				for _, e := range calls[:c.Seq] {
					if e.Task == c.Task {
						prev = append(prev, e)
					}
				}
				if !slices.ContainsFunc(prev, inFlightByClock) {
					late++
				}
			}
		}
		if again > len(kills)*inFlight {
			t.Errorf("%d calls asked again after %d kills, more than the %d that can be in flight: completed work was redone", again, len(kills), len(kills)*inFlight)
		}
		if late > 0 {
			t.Logf("%d repeated calls had been answered more than %s before the kill (the machine is loaded: their answers were not stored yet)", late, grace)
		}
		t.Logf("%d kills; %d requests in all, %d of them for work in flight at a kill", len(kills), total, again)
	})

	t.Run("interrupt", func(t *testing.T) {
		s := clitest.Sim(t, world, opts)
		dir := t.TempDir()
		args := clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", flags...)
		p := clitest.Start(t, bin, args...)
		calls := ref.Service(sim.LLM).Stats().Requests
		if !clitest.WaitUntil(t, p, func() bool { return s.Service(sim.LLM).Stats().OK >= calls/4 }) {
			t.Fatalf("the run ended before a quarter of its LLM calls: exit %d", p.Code)
		}
		p.Cmd.Process.Signal(os.Interrupt)
		signalled := time.Now()
		if !p.Wait(30 * time.Second) {
			t.Fatal("the run did not stop within 30 s of SIGINT")
		}
		t.Logf("stopped %s after SIGINT", time.Since(signalled).Round(time.Millisecond))
		if p.Code != 130 {
			t.Errorf("exit %d after SIGINT, want 130", p.Code)
		}
		stderr := p.Stderr.String()
		for _, want := range []string{"stopping: finishing work in flight", "not reached", "interrupted (run the same command again to resume)"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		// In-flight work finished: nothing is left running. New work was
		// not taken: some targets never reached summarize.
		st, err := store.Open(context.Background(), dir+"/store")
		if err != nil {
			t.Fatal(err)
		}
		counts, err := st.Counts(context.Background())
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		for stage, c := range counts {
			if c[store.StatusRunning] > 0 {
				t.Errorf("%d %s entries left running after SIGINT", c[store.StatusRunning], stage)
			}
		}
		if n := counts["summarize"][store.StatusDone]; n == 0 || n >= world.Targets {
			t.Errorf("%d of %d targets summarized when interrupted, want some but not all", n, world.Targets)
		}
		// A target may enter classify after SIGINT only if a classify
		// worker had already taken it: at most one per worker.
		late := map[string]bool{}
		for _, c := range s.Service(sim.LLM).Calls() {
			if c.Start.After(signalled) && strings.HasPrefix(c.Note, "classify: ") {
				late[c.Note] = true
			}
		}
		t.Logf("after SIGINT: classify began for %d targets; summarize done for %d", len(late), counts["summarize"][store.StatusDone])
		var bug string
		if len(late) > classifyWorkers {
			bug = fmt.Sprintf("pipeline.Run handed targets that finished a stage to the next one after SIGINT: "+
				"classify began for %d targets after the signal with %d classify workers", len(late), classifyWorkers)
		}

		p = clitest.Start(t, bin, args...)
		if !p.Wait(60*time.Second) || p.Code != 0 {
			t.Fatalf("run after the interrupt: exit %d\n%s", p.Code, p.Stderr.String())
		}
		if got := clitest.Shards(t, dir+"/dataset"); !maps.EqualFunc(got, want, bytes.Equal) {
			t.Errorf("the dataset after an interrupt differs from the uninterrupted run's")
		}
		if bug != "" {
			t.Error(bug)
		}
	})

	t.Run("kill during the arXiv lookup", func(t *testing.T) {
		// 150 targets take two arXiv API requests of 100 IDs; the second
		// answers slowly, and the run is killed while it is in flight. The
		// first was answered: the next run should not ask it again.
		s := clitest.Sim(t, sim.WorldConfig{Seed: 9, Targets: 150}, sim.Options{Limits: map[string]sim.Limits{
			sim.ArxivAPI: {Latency: 1500 * time.Millisecond}, sim.LLM: {MaxInFlight: 16},
		}})
		dir := t.TempDir()
		args := clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", flags...)
		api := s.Service(sim.ArxivAPI)
		p := clitest.Start(t, bin, args...)
		if !clitest.WaitUntil(t, p, func() bool { return api.Stats().OK == 1 && api.Stats().Requests == 2 }) {
			t.Fatalf("the run ended before its second arXiv API request: exit %d", p.Code)
		}
		p.Cmd.Process.Signal(syscall.SIGKILL)
		p.Wait(10 * time.Second)
		first := api.Calls()[0]
		p = clitest.Start(t, bin, args...)
		if !clitest.WaitUntil(t, p, func() bool { return api.Stats().OK >= 3 || api.Stats().Requests >= 4 }) && p.Code != 0 {
			t.Fatalf("the run after the kill failed: exit %d\n%s", p.Code, p.Stderr.String())
		}
		p.Cmd.Process.Signal(syscall.SIGKILL)
		p.Wait(10 * time.Second)
		for _, c := range api.Calls()[2:] {
			if c.Key == first.Key {
				t.Errorf("a crash during a later chunk of the arXiv lookup asked an answered chunk again (the first 100 IDs were asked %d times)",
					1+strings.Count(fmt.Sprint(api.Calls()[1:]), first.Key))
			}
		}
	})
}
