package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a step that records which keys it saw and how many ran at
// once.
type recorder struct {
	mu       sync.Mutex
	seen     []string
	cur, max atomic.Int32
	delay    time.Duration
	fail     map[string]bool
	skip     map[string]bool
	reuse    map[string]bool
	gate     chan struct{} // when set, Run waits for it
}

func (r *recorder) run(ctx context.Context, key string) (string, error) {
	n := r.cur.Add(1)
	defer r.cur.Add(-1)
	for {
		m := r.max.Load()
		if n <= m || r.max.CompareAndSwap(m, n) {
			break
		}
	}
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if r.delay > 0 {
		time.Sleep(r.delay)
	}
	r.mu.Lock()
	r.seen = append(r.seen, key)
	r.mu.Unlock()
	switch {
	case r.fail[key]:
		return "", fmt.Errorf("%s broke", key)
	case r.skip[key]:
		return Skipped, nil
	case r.reuse[key]:
		return Reused, nil
	}
	return Done, nil
}

func keys(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("t%02d", i))
	}
	return out
}

func TestRunOutcomes(t *testing.T) {
	a := &recorder{fail: map[string]bool{"t01": true}, reuse: map[string]bool{"t02": true}}
	b := &recorder{skip: map[string]bool{"t03": true}}
	c := &recorder{}
	sum := Run(context.Background(), keys(6), []Step{
		{Name: "a", Workers: 2, Run: a.run},
		{Name: "b", Workers: 2, Run: b.run},
		{Name: "c", Workers: 1, Run: c.run},
	}, Options{})
	if sum.Completed != 4 || len(sum.Failures) != 1 || sum.Failures[0].Key != "t01" || sum.Failures[0].Step != "a" {
		t.Errorf("completed %d, failures %+v; want 4 and t01 at a", sum.Completed, sum.Failures)
	}
	want := []StepSummary{
		{Name: "a", Done: 4, Reused: 1, Failed: 1},
		{Name: "b", Done: 4, Skipped: 1, Pending: 0},
		{Name: "c", Done: 4, Pending: 0},
	}
	for i, w := range want {
		g := sum.Steps[i]
		if g.Name != w.Name || g.Done != w.Done || g.Reused != w.Reused || g.Failed != w.Failed || g.Skipped != w.Skipped || g.Pending != w.Pending {
			t.Errorf("step %s: %+v, want %+v", w.Name, g, w)
		}
	}
	if len(b.seen) != 5 || len(c.seen) != 4 {
		t.Errorf("b saw %d, c saw %d; want 5 and 4 (a failed target stops, a reused one goes on)", len(b.seen), len(c.seen))
	}
}

func TestRunBoundsWorkers(t *testing.T) {
	a := &recorder{delay: 5 * time.Millisecond}
	b := &recorder{delay: 5 * time.Millisecond}
	Run(context.Background(), keys(20), []Step{
		{Name: "a", Workers: 3, Run: a.run},
		{Name: "b", Workers: 1, Run: b.run},
	}, Options{})
	if m := a.max.Load(); m > 3 {
		t.Errorf("step a ran %d at once, pool is 3", m)
	}
	if m := b.max.Load(); m != 1 {
		t.Errorf("step b ran %d at once, pool is 1", m)
	}
}

func TestRunNoBarrier(t *testing.T) {
	// Step a holds t01 until t00 has finished step b: with a barrier
	// between stages this would never happen.
	release := make(chan struct{})
	var once sync.Once
	a := func(ctx context.Context, key string) (string, error) {
		if key == "t01" {
			select {
			case <-release:
			case <-time.After(10 * time.Second):
				return "", errors.New("t00 never reached step b while t01 was still in step a")
			}
		}
		return Done, nil
	}
	b := func(ctx context.Context, key string) (string, error) {
		if key == "t00" {
			once.Do(func() { close(release) })
		}
		return Done, nil
	}
	sum := Run(context.Background(), keys(2), []Step{{Name: "a", Workers: 2, Run: a}, {Name: "b", Workers: 1, Run: b}}, Options{})
	if len(sum.Failures) != 0 || sum.Completed != 2 {
		t.Errorf("failures %+v, completed %d", sum.Failures, sum.Completed)
	}
}

func TestRunDrain(t *testing.T) {
	gate := make(chan struct{})
	a := &recorder{gate: gate}
	b := &recorder{}
	drain := make(chan struct{})
	var events atomic.Int32
	done := make(chan *Summary)
	go func() {
		done <- Run(context.Background(), keys(10), []Step{
			{Name: "a", Workers: 2, Run: a.run},
			{Name: "b", Workers: 2, Run: b.run},
		}, Options{Drain: drain, OnEvent: func(Event) { events.Add(1) }})
	}()
	// Two targets are in step a; drain, then let them finish.
	for a.cur.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	close(drain)
	close(gate)
	sum := <-done
	if !sum.Interrupted {
		t.Error("summary does not say the run was interrupted")
	}
	if len(a.seen) != 2 || len(b.seen) != 0 {
		t.Errorf("a finished %d, b started %d; want 2 and 0 (in-flight work finishes, nothing new starts)", len(a.seen), len(b.seen))
	}
	if sum.Steps[0].Done != 2 || sum.Steps[1].Pending != 2 {
		t.Errorf("steps %+v", sum.Steps)
	}
}

// TestRunStartedEarlier: a run that began before its pipeline (robots.txt
// first, a Ctrl-C during it) reports its own times, not the pipeline's:
// "interrupted … in 1ms" was the pipeline's millisecond after a minute of
// retries.
func TestRunStartedEarlier(t *testing.T) {
	drain := make(chan struct{})
	close(drain)
	began := time.Now().Add(-time.Minute)
	before := time.Since(began)
	sum := Run(context.Background(), keys(3), []Step{{Name: "a", Workers: 1, Run: (&recorder{}).run}}, Options{Drain: drain, Started: began})
	if !sum.Interrupted || !sum.Started.Equal(began) || sum.Wall < before {
		t.Errorf("interrupted %v, started %s, wall %s; want the run's start %s and at least %s", sum.Interrupted, sum.Started, sum.Wall, began, before)
	}
	if sum.Steps[0].Pending != 3 {
		t.Errorf("steps %+v, want every target not reached", sum.Steps)
	}
}

// TestRunDrainCutsShort: a step whose work the drain cut short (a request
// that gave up rather than retry: an error wrapping context.Canceled) is
// not listed as a failure; a real failure during the drain is.
func TestRunDrainCutsShort(t *testing.T) {
	drain := make(chan struct{})
	started := make(chan struct{}, 2)
	step := func(_ context.Context, key string) (string, error) {
		started <- struct{}{}
		<-drain
		if key == "t00" {
			return "", fmt.Errorf("fetch %s: %w", key, context.Canceled)
		}
		return "", errors.New("fetch " + key + ": status 500")
	}
	done := make(chan *Summary)
	go func() {
		done <- Run(context.Background(), keys(2), []Step{{Name: "a", Workers: 2, Run: step}}, Options{Drain: drain})
	}()
	<-started
	<-started
	close(drain)
	sum := <-done
	if len(sum.Failures) != 1 || sum.Failures[0].Key != "t01" {
		t.Errorf("failures %+v, want only t01's", sum.Failures)
	}
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	gate := make(chan struct{}) // never opened: work in flight is abandoned
	a := &recorder{gate: gate}
	done := make(chan *Summary)
	go func() { done <- Run(ctx, keys(5), []Step{{Name: "a", Workers: 2, Run: a.run}}, Options{}) }()
	for a.cur.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	sum := <-done
	// Abandoned work is not a failure of the target, in the failures
	// listed or in the stage's counts (which the summary line sums): the
	// two in flight count as not reached, with the three never started.
	if !sum.Interrupted || sum.Completed != 0 || sum.Steps[0].Failed != 0 || sum.Steps[0].Pending != 5 {
		t.Errorf("summary %+v", sum)
	}
	if len(sum.Failures) != 0 {
		t.Errorf("abandoned work is not a failure of the target: %+v", sum.Failures)
	}
}

// A held target stops where it was held and is listed with the reason;
// it is neither a failure nor pending.
func TestRunHeld(t *testing.T) {
	c := &recorder{}
	sum := Run(context.Background(), keys(4), []Step{
		{Name: "a", Workers: 2, Run: func(ctx context.Context, key string) (string, error) {
			if key == "t02" {
				return "", Hold("too many sources")
			}
			return Done, nil
		}},
		{Name: "b", Workers: 1, Run: c.run},
	}, Options{})
	if len(sum.Failures) != 0 || len(sum.Held) != 1 || sum.Held[0].Key != "t02" || sum.Held[0].Reason != "too many sources" || sum.Held[0].Step != "a" {
		t.Errorf("failures %+v, held %+v", sum.Failures, sum.Held)
	}
	if sum.Steps[0].Held != 1 || sum.Steps[0].Done != 3 || sum.Steps[1].Pending != 0 || len(c.seen) != 3 || sum.Completed != 3 {
		t.Errorf("steps %+v, b saw %d", sum.Steps, len(c.seen))
	}
}

var errDiskFull = errors.New("no space left on device")

// A fatal error stops the run: nothing new starts after it, work in
// flight is abandoned, and the summary names the error.
func TestRunFatal(t *testing.T) {
	var started atomic.Int32
	sum := Run(context.Background(), keys(50), []Step{{Name: "a", Workers: 2, Run: func(ctx context.Context, key string) (string, error) {
		if started.Add(1) == 1 {
			return "", fmt.Errorf("store %s: %w", key, errDiskFull)
		}
		<-ctx.Done() // in flight when the disk filled: abandoned
		return "", ctx.Err()
	}}}, Options{Fatal: func(err error) bool { return errors.Is(err, errDiskFull) }})
	if sum.Fatal == "" || !strings.Contains(sum.Fatal, "no space left") {
		t.Errorf("Fatal = %q", sum.Fatal)
	}
	// Two workers: at most the other one was already running.
	if n := started.Load(); n > 2 {
		t.Errorf("%d targets started; the run went on after the disk filled", n)
	}
	if sum.Interrupted {
		t.Error("a fatal error is reported as an interrupt")
	}
	if len(sum.Failures) != 1 {
		t.Errorf("failures %+v: the abandoned target is not a failure", sum.Failures)
	}
}

// waiter is a step whose targets wait until released: the first time a
// key arrives it waits; once released (by Settle) it is done.
type waiter struct {
	mu       sync.Mutex
	released map[string]bool
	runs     map[string]int
	wait     map[string]bool
}

func (w *waiter) run(_ context.Context, key string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runs[key]++
	if w.wait[key] && !w.released[key] {
		return "", Wait("answer in batch b1")
	}
	return Done, nil
}

func TestRunWaiting(t *testing.T) {
	newWaiter := func() *waiter {
		return &waiter{released: map[string]bool{}, runs: map[string]int{}, wait: map[string]bool{"t01": true, "t03": true}}
	}
	t.Run("settled", func(t *testing.T) {
		a, c := &recorder{}, &recorder{}
		w := newWaiter()
		settles := 0
		var events []string
		var mu sync.Mutex
		sum := Run(context.Background(), keys(5), []Step{
			{Name: "a", Workers: 2, Run: a.run},
			{Name: "w", Workers: 2, Run: w.run},
			{Name: "c", Workers: 1, Run: c.run},
		}, Options{
			Settle: func(_ context.Context, n int) bool {
				settles++
				if n != 2 {
					t.Errorf("Settle saw %d waiting, want 2", n)
				}
				// Nothing runs while Settle decides.
				if len(c.seen) != 3 {
					t.Errorf("step c saw %d targets before Settle, want the 3 not waiting", len(c.seen))
				}
				w.mu.Lock()
				w.released["t01"], w.released["t03"] = true, true
				w.mu.Unlock()
				return true
			},
			OnEvent: func(ev Event) {
				mu.Lock()
				events = append(events, ev.Key+"/"+ev.Step+"/"+ev.Outcome)
				mu.Unlock()
			},
		})
		if settles != 1 || sum.Completed != 5 || len(sum.Waiting) != 0 {
			t.Errorf("settles %d, completed %d, waiting %+v; want 1, 5, none", settles, sum.Completed, sum.Waiting)
		}
		if len(a.seen) != 5 || w.runs["t01"] != 2 || w.runs["t00"] != 1 || len(c.seen) != 5 {
			t.Errorf("a saw %d, w ran t01 %d and t00 %d times, c saw %d: a waiting target goes again through its own step only", len(a.seen), w.runs["t01"], w.runs["t00"], len(c.seen))
		}
		if got := sum.Steps[1]; got.Done != 5 || got.Waiting != 0 || got.Pending != 0 {
			t.Errorf("step w: %+v", got)
		}
		if !slices.Contains(events, "t01/w/waiting") || !slices.Contains(events, "t01/w/done") {
			t.Errorf("events %v", events)
		}
	})
	t.Run("left waiting", func(t *testing.T) {
		w := newWaiter()
		c := &recorder{}
		sum := Run(context.Background(), keys(5), []Step{{Name: "w", Workers: 2, Run: w.run}, {Name: "c", Workers: 1, Run: c.run}},
			Options{Settle: func(context.Context, int) bool { return false }})
		want := []Failure{{Key: "t01", Step: "w", Reason: "answer in batch b1"}, {Key: "t03", Step: "w", Reason: "answer in batch b1"}}
		if !slices.Equal(sum.Waiting, want) || sum.Completed != 3 || len(sum.Failures) != 0 {
			t.Errorf("waiting %+v, completed %d, failures %+v", sum.Waiting, sum.Completed, sum.Failures)
		}
		if got := sum.Steps[0]; got.Waiting != 2 || got.Done != 3 || got.Pending != 0 {
			t.Errorf("step w: %+v", got)
		}
		if got := sum.Steps[1]; got.Pending != 0 || got.Done != 3 {
			t.Errorf("step c: %+v (waiting targets did not reach it, and are not 'not reached' there either)", got)
		}
	})
	t.Run("draining", func(t *testing.T) {
		w := newWaiter()
		drain := make(chan struct{})
		called := false
		sum := Run(context.Background(), keys(5), []Step{{Name: "w", Workers: 1, Run: func(ctx context.Context, key string) (string, error) {
			if key == "t03" {
				close(drain)
			}
			return w.run(ctx, key)
		}}}, Options{Drain: drain, Settle: func(context.Context, int) bool { called = true; return true }})
		if called || !sum.Interrupted || len(sum.Waiting) == 0 {
			t.Errorf("Settle called %v, interrupted %v, waiting %+v: a draining run does not settle", called, sum.Interrupted, sum.Waiting)
		}
	})
}
