// Package pipeline runs per-target stages as concurrent staged workers: each
// stage has its own bounded pool, and a target moves to its next stage as
// soon as its current one is done, with no barrier between stages.
//
// Stages are idempotent functions of a target's key over the store: work
// already stored is reused, so running the same pipeline again after a crash
// redoes only what was in flight. The pipeline itself keeps no state.
//
// A step may also say that a target waits on work outside the run (an LLM
// answer in a provider's batch): the target is neither done nor failed.
// When nothing else is left to do, Options.Settle may end the wait and the
// waiting targets go through their step again; otherwise the run ends
// with them listed in Summary.Waiting, and a later run picks them up.
package pipeline

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"
)

// Outcomes a Step reports for a target.
const (
	Done    = "done"    // work was done now
	Reused  = "reused"  // the stored result was current: nothing to do
	Skipped = "skipped" // the target does not go on (e.g. too few sources); not a failure
	// Waiting is the Event outcome of a target whose step returned a
	// WaitingError.
	Waiting = "waiting"
)

// HeldError is what a Step returns for a target it holds back: not a
// failure of the step, but a result that must not go on (an implausible
// classification, say). The pipeline lists it in Summary.Held.
type HeldError struct {
	Reason string
	// Suspect says the step's own result is implausible (its ledger entry
	// is suspect), rather than the target being held back before the
	// step by an earlier one's (skipped).
	Suspect bool
}

func (e *HeldError) Error() string { return "held back: " + e.Reason }

// Hold returns the error that holds a target back for reason, found
// before the step (an earlier stage's result is suspect).
func Hold(reason string) error { return &HeldError{Reason: reason} }

// Suspect returns the error that holds a target back because the step's
// own result is implausible, for the reasons given; the reason says that
// --include-suspect keeps it.
func Suspect(reasons ...string) error {
	return &HeldError{Reason: SuspectReason(reasons), Suspect: true}
}

// SuspectReason is the reason a suspect target is held back.
func SuspectReason(reasons []string) string {
	return "suspect (" + strings.Join(reasons, "; ") + "); --include-suspect keeps it"
}

// WaitingError is what a Step returns for a target whose work waits on
// something outside the run, such as an LLM answer from a provider's
// batch: not done, not failed. The pipeline lists it in Summary.Waiting
// (or sends it through the step again, see Options.Settle).
type WaitingError struct{ Reason string }

func (e *WaitingError) Error() string { return "waiting: " + e.Reason }

// Wait returns the error that makes a target wait for reason.
func Wait(reason string) error { return &WaitingError{Reason: reason} }

// Step is one stage of per-target work.
type Step struct {
	Name    string
	Workers int // goroutines; at least 1
	// Run does the stage's work for one target and reports Done, Reused or
	// Skipped, or an error. It must be safe for concurrent use.
	Run func(ctx context.Context, key string) (string, error)
}

// Event reports one target leaving one step.
type Event struct {
	Key     string
	Step    string
	Outcome string // Done, Reused, Skipped, "held", Waiting or "failed"
	Err     error
	Elapsed time.Duration
}

// Failure is a target that failed a step.
type Failure struct {
	Key    string `json:"target"`
	Step   string `json:"stage"`
	Reason string `json:"reason"`
}

// StepSummary counts a step's outcomes.
type StepSummary struct {
	Name     string        `json:"stage"`
	Done     int           `json:"done"`
	Reused   int           `json:"reused"`
	Skipped  int           `json:"skipped"`
	Held     int           `json:"held"`
	Waiting  int           `json:"waiting"` // targets left waiting (WaitingError) when the run ended
	Failed   int           `json:"failed"`
	Pending  int           `json:"not_reached"` // targets that never got to the step
	Busy     time.Duration `json:"busy_ns"`     // summed time in Run
	Wall     time.Duration `json:"wall_ns"`     // first start to last end
	first    time.Time
	last     time.Time
	InFlight int `json:"-"`
}

// Summary is what a run did.
type Summary struct {
	Targets   int           `json:"targets"`
	Completed int           `json:"completed"` // went through every step
	Steps     []StepSummary `json:"stages"`
	Failures  []Failure     `json:"failures"`
	// Held lists the targets a step held back (HeldError), with the reason.
	Held []Failure `json:"held,omitempty"`
	// Waiting lists the targets left waiting (WaitingError) at the step
	// they wait in, with the reason: neither done nor failed.
	Waiting     []Failure `json:"waiting,omitempty"`
	Interrupted bool      `json:"interrupted"`
	// Fatal is the error that stopped the run (Options.Fatal), if any:
	// work in flight was abandoned and no new work started.
	Fatal   string        `json:"fatal,omitempty"`
	Started time.Time     `json:"started"`
	Wall    time.Duration `json:"wall_ns"`
}

// Options tune Run.
type Options struct {
	// Drain, when done, stops new targets from entering and targets from
	// moving on to their next step; work in progress finishes. Cancelling
	// ctx instead abandons work in progress.
	Drain <-chan struct{}
	// Started is when the run began, if before Run was called (a run that
	// read robots.txt first): Summary.Started and Wall count from it.
	// Zero: when Run is called.
	Started time.Time
	// OnEvent is called after each step of each target (progress).
	OnEvent func(Event)
	// Fatal, when set, says which step errors stop the whole run (a full
	// disk): the first one abandons work in flight, like cancelling ctx,
	// and is reported in Summary.Fatal.
	Fatal func(error) bool
	// Settle, when set, is called each time every target has either left
	// the run or waits at a step (WaitingError), with the number waiting.
	// It may end their wait (submit the requests they wait on, wait for
	// the answers) and returns true to send the waiting targets through
	// their step again, or false to end the run with them waiting. It is
	// not called once the run drains or ctx ends.
	Settle func(ctx context.Context, waiting int) bool
}

// Run sends every key through the steps in order and returns what happened.
func Run(ctx context.Context, keys []string, steps []Step, opt Options) *Summary {
	sum := &Summary{Targets: len(keys), Started: opt.Started}
	if sum.Started.IsZero() {
		sum.Started = time.Now()
	}
	if len(steps) == 0 {
		return sum
	}
	outer := ctx
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var mu sync.Mutex
	var waiting []parked // guarded by mu
	stats := make([]StepSummary, len(steps))
	for i, s := range steps {
		stats[i].Name = s.Name
	}
	draining := func() bool {
		if opt.Drain == nil {
			return false
		}
		select {
		case <-opt.Drain:
			return true
		default:
			return false
		}
	}

	// One unbuffered queue per step; a feeder goroutine per hand-off keeps
	// a slow step from blocking the workers of the step before it.
	queues := make([]chan string, len(steps))
	for i := range queues {
		queues[i] = make(chan string)
	}
	var inflight sync.WaitGroup // targets somewhere in the pipeline
	forward := func(i int, key string) {
		if i == len(steps) {
			mu.Lock()
			sum.Completed++
			mu.Unlock()
			inflight.Done()
			return
		}
		if draining() || ctx.Err() != nil {
			inflight.Done()
			return
		}
		go func() {
			select {
			case queues[i] <- key:
			case <-ctx.Done():
				inflight.Done()
			case <-drainChan(opt.Drain):
				inflight.Done()
			}
		}()
	}

	var workers sync.WaitGroup
	for i, s := range steps {
		for range max(s.Workers, 1) {
			workers.Go(func() {
				for key := range queues[i] {
					if draining() || ctx.Err() != nil {
						// Handed over just as the run was told to stop.
						inflight.Done()
						continue
					}
					start := time.Now()
					mu.Lock()
					if stats[i].first.IsZero() {
						stats[i].first = start
					}
					stats[i].InFlight++
					mu.Unlock()

					outcome, err := s.Run(ctx, key)
					elapsed := time.Since(start)
					ev := Event{Key: key, Step: s.Name, Outcome: outcome, Err: err, Elapsed: elapsed}

					mu.Lock()
					st := &stats[i]
					st.InFlight--
					st.Busy += elapsed
					st.last = time.Now()
					next := false
					var held *HeldError
					var wait *WaitingError
					switch {
					case errors.As(err, &wait):
						ev.Outcome = Waiting
						st.Waiting++
						waiting = append(waiting, parked{step: i, Failure: Failure{Key: key, Step: s.Name, Reason: wait.Reason}})
					case errors.As(err, &held):
						ev.Outcome = "held"
						st.Held++
						sum.Held = append(sum.Held, Failure{Key: key, Step: s.Name, Reason: held.Reason})
					case err != nil && opt.Fatal != nil && opt.Fatal(err) && sum.Fatal == "":
						ev.Outcome = "failed"
						st.Failed++
						sum.Fatal = err.Error()
						sum.Failures = append(sum.Failures, Failure{Key: key, Step: s.Name, Reason: err.Error()})
						stop() // abandon the rest: it would fail the same way
					case err != nil && errors.Is(err, context.Canceled) && (ctx.Err() != nil || draining()):
						// Abandoned by the second interrupt, or cut short
						// by the first (a request that gave up rather than
						// retry): not failed, not listed; it counts as not
						// reached, and the next run redoes it.
						ev.Outcome = "abandoned"
					case err != nil:
						ev.Outcome = "failed"
						st.Failed++
						sum.Failures = append(sum.Failures, Failure{Key: key, Step: s.Name, Reason: err.Error()})
					case outcome == Skipped:
						st.Skipped++
					case outcome == Reused:
						st.Reused++
						next = true
					default:
						ev.Outcome = Done
						st.Done++
						next = true
					}
					mu.Unlock()
					if opt.OnEvent != nil {
						opt.OnEvent(ev)
					}
					if next {
						forward(i+1, key)
					} else {
						inflight.Done()
					}
				}
			})
		}
	}

	for _, key := range keys {
		if draining() || ctx.Err() != nil {
			sum.Interrupted = draining() || outer.Err() != nil
			break
		}
		inflight.Add(1)
		select {
		case queues[0] <- key:
		case <-ctx.Done():
			inflight.Done()
		case <-drainChan(opt.Drain):
			inflight.Done()
		}
	}
	inflight.Wait()
	for opt.Settle != nil && !draining() && ctx.Err() == nil {
		// Every target has left the run or waits: nothing moves until
		// what they wait on is settled.
		mu.Lock()
		again := waiting
		mu.Unlock()
		if len(again) == 0 || !opt.Settle(ctx, len(again)) || draining() || ctx.Err() != nil {
			break
		}
		mu.Lock()
		waiting = nil
		for _, w := range again {
			stats[w.step].Waiting--
		}
		mu.Unlock()
		for _, w := range again {
			inflight.Add(1)
			forward(w.step, w.Key)
		}
		inflight.Wait()
	}
	for _, q := range queues {
		close(q)
	}
	workers.Wait()

	if draining() || outer.Err() != nil {
		sum.Interrupted = true
	}
	reached := len(keys)
	for i := range stats {
		st := &stats[i]
		if !st.first.IsZero() {
			st.Wall = st.last.Sub(st.first)
		}
		st.Pending = reached - (st.Done + st.Reused + st.Skipped + st.Held + st.Waiting + st.Failed)
		reached = st.Done + st.Reused
	}
	sum.Steps = stats
	for _, w := range waiting {
		sum.Waiting = append(sum.Waiting, w.Failure)
	}
	for _, list := range [][]Failure{sum.Failures, sum.Held, sum.Waiting} {
		sort.Slice(list, func(a, b int) bool {
			if list[a].Key != list[b].Key {
				return list[a].Key < list[b].Key
			}
			return list[a].Step < list[b].Step
		})
	}
	sum.Wall = time.Since(sum.Started)
	return sum
}

// parked is a waiting target and the index of the step it waits in.
type parked struct {
	step int
	Failure
}

// drainChan returns c, or a channel that never closes when c is nil.
func drainChan(c <-chan struct{}) <-chan struct{} {
	if c == nil {
		return make(chan struct{})
	}
	return c
}
