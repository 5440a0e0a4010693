package resume

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/cli"
	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// TestSecondInterruptAbandons: the second Ctrl-C abandons the work in
// flight, which the next run redoes. That work did not fail: the ledger
// keeps it running (curate status: interrupted), no target is recorded
// failed for the interrupt, the stage table counts no failure, as the
// summary says, and the next run completes every target.
//
// Each case holds one stage's request at its service until curate gives
// it up, so the work is in flight at both interrupts whatever the
// machine's speed: the test waits on the request's arrival and on
// curate's exit, never on a clock.
func TestSecondInterruptAbandons(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	for _, tc := range []struct {
		stage   string // the ledger's stage whose work is held
		service string
		held    func(sim.Call) bool
		// begun: the stage has begun the held work in the ledger. The
		// references requests of a run are the citegraph feed's, made
		// ahead of the stage, which begins a target only once the feed
		// has its answers.
		begun bool
	}{
		{"fetch", sim.Arxiv, func(c sim.Call) bool { return strings.HasPrefix(c.Path, "/html/") }, true},
		{"citegraph", sim.S2, func(c sim.Call) bool { return strings.HasSuffix(c.Path, "/references") }, false},
		{"classify", sim.LLM, func(c sim.Call) bool { return strings.HasPrefix(c.Note, "classify: ") }, true},
		{"summarize", sim.LLM, func(c sim.Call) bool {
			return strings.HasPrefix(c.Note, "gold: ") || strings.HasPrefix(c.Note, "source: ")
		}, true},
	} {
		t.Run(tc.stage, func(t *testing.T) {
			s := clitest.Sim(t, sim.WorldConfig{Seed: 9, Targets: 3}, sim.Options{})
			// A held request answers nothing until its client goes away.
			arrived := make(chan struct{})
			var once sync.Once
			svc := s.Service(tc.service)
			svc.Intercept(func(w http.ResponseWriter, r *http.Request, c sim.Call) bool {
				if !tc.held(c) {
					return false
				}
				once.Do(func() { close(arrived) })
				<-r.Context().Done()
				return true
			})
			dir := t.TempDir()
			args := clitest.RunArgs(t, s, dir+"/store", dir+"/ds", "--arxiv-interval", "1ms", "--s2-interval", "1ms")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			drain := make(chan struct{})
			var stdout, stderr bytes.Buffer
			env := &cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Drain: drain}
			done := make(chan int, 1)
			go func() { done <- cli.Run(ctx, env, args) }()
			select {
			case <-arrived:
			case code := <-done:
				t.Fatalf("the run ended (exit %d) before any %s request was held\n%s", code, tc.stage, stderr.String())
			}
			// Two interrupts while the request is held, as main does on
			// two Ctrl-Cs: the first drains, the second cancels.
			close(drain)
			cancel()
			code := <-done
			if code != 130 {
				t.Fatalf("exit %d after two interrupts, want 130 (interrupted)\n%s", code, stderr.String())
			}
			out := stderr.String()
			if !strings.Contains(out, " 0 failed") {
				t.Errorf("the summary counts failures:\n%s", out)
			}
			for _, line := range strings.Split(out, "\n") {
				f := strings.Fields(line)
				// stage  done  reused  skipped  held  waiting  failed  not reached  wall
				// (the LLM usage table's rows, "classify  MODEL  calls …", are not it)
				if len(f) >= 9 && strings.Trim(f[1], "0123456789") == "" && (f[0] == "classify" || f[0] == "summarize" || f[0] == "fetch" || f[0] == "citegraph" || f[0] == "sources") && f[6] != "0" {
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
			for stage, c := range counts {
				if c[store.StatusFailed] > 0 {
					failed, _ := st.ByStatus(context.Background(), stage, store.StatusFailed)
					t.Errorf("%s: %d recorded failed after the interrupt: %+v", stage, c[store.StatusFailed], failed)
				}
			}
			if tc.begun && counts[tc.stage][store.StatusRunning] == 0 {
				t.Errorf("%s: the held work is not left running for the next run (ledger %v)", tc.stage, counts)
			}
			st.Close()
			// The next run redoes what was abandoned, and everything passes.
			svc.Intercept(nil)
			stdout.Reset()
			stderr.Reset()
			env.Drain = nil
			if code := cli.Run(context.Background(), env, args); code != 0 {
				t.Fatalf("the run after: exit %d\n%s", code, stderr.String())
			}
		})
	}
}
