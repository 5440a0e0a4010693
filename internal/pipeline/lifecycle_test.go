package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// ledger is a Ledger in memory: the last status of each item and stage,
// its attempts and why.
type ledger struct {
	mu      sync.Mutex
	entries map[string]ledgerEntry
	fail    error // returned by End when set
}

type ledgerEntry struct {
	status, reason string
	attempts       int
}

func (l *ledger) Begin(_ context.Context, item, stage string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries[item+"/"+stage]
	e.status, e.reason = "running", ""
	l.entries[item+"/"+stage] = e
	return nil
}

func (l *ledger) End(_ context.Context, item, stage, status, reason string, worked bool) error {
	if l.fail != nil {
		return l.fail
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries[item+"/"+stage]
	e.status, e.reason = status, reason
	if worked {
		e.attempts++
	}
	l.entries[item+"/"+stage] = e
	return nil
}

// Every way a stage's work can end is recorded the same way whatever the
// stage: reused work is no attempt, a failure is one with its error, a
// held item is suspect or skipped by who judged it, a waiting one
// pending, and abandoned work is left running.
func TestLifecycle(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		ctx      context.Context
		outcome  string
		err      error
		status   string
		reason   string
		attempts int
	}{
		{"done", nil, Done, nil, StatusDone, "", 1},
		{"reused", nil, Reused, nil, StatusDone, "", 0},
		{"skipped", nil, Skipped, nil, StatusSkipped, "", 0},
		{"failed", nil, "", errors.New("status 500"), StatusFailed, "status 500", 1},
		{"failed before, nothing asked", nil, Reused, errors.New("no HTML (checked yesterday)"), StatusFailed, "no HTML (checked yesterday)", 0},
		{"suspect after work", nil, Done, Suspect("12 sources of 13"), StatusSuspect, "suspect (12 sources of 13); --include-suspect keeps it", 1},
		{"suspect reused", nil, Reused, Suspect("12 sources of 13"), StatusSuspect, "suspect (12 sources of 13); --include-suspect keeps it", 0},
		{"held before the stage", nil, "", Hold("classify held it"), StatusSkipped, "classify held it", 0},
		{"waiting", nil, "", Wait("in batch b1"), StatusPending, "in batch b1", 0},
		{"waiting after writing cards", nil, Done, Wait("2 cards in batch b1"), StatusPending, "2 cards in batch b1", 1},
		{"cut short by the drain", nil, "", fmt.Errorf("fetch: %w", context.Canceled), "running", "", 0},
		{"abandoned", cancelled, "", errors.New("read: connection reset"), "running", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			l := &ledger{entries: map[string]ledgerEntry{}}
			lc := &Lifecycle{Ledger: l}
			s := Func{Decl: Decl{Name: "stage"}, Run: func(context.Context, string) (string, error) { return tt.outcome, tt.err }}
			outcome, err := lc.Track(ctx, s, "t1")
			if outcome != tt.outcome || !errors.Is(err, tt.err) {
				t.Errorf("Track = %q, %v; want what Do returned, %q, %v", outcome, err, tt.outcome, tt.err)
			}
			if e := l.entries["t1/stage"]; e.status != tt.status || e.reason != tt.reason || e.attempts != tt.attempts {
				t.Errorf("ledger %+v, want %s %q with %d attempts", e, tt.status, tt.reason, tt.attempts)
			}
		})
	}
}

// A ledger that cannot record fails work that succeeded (the next run
// must not believe it undone and lose it, nor done and skip it), and
// leaves a failure's own error as it is.
func TestLifecycleLedgerError(t *testing.T) {
	full := errors.New("no space left on device")
	lc := &Lifecycle{Ledger: &ledger{entries: map[string]ledgerEntry{}, fail: full}}
	ok := Func{Decl: Decl{Name: "s"}, Run: func(context.Context, string) (string, error) { return Done, nil }}
	if _, err := lc.Track(context.Background(), ok, "t1"); !errors.Is(err, full) {
		t.Errorf("done but not recorded: %v, want the ledger's error", err)
	}
	broke := errors.New("status 500")
	bad := Func{Decl: Decl{Name: "s"}, Run: func(context.Context, string) (string, error) { return "", broke }}
	if _, err := lc.Track(context.Background(), bad, "t1"); !errors.Is(err, broke) {
		t.Errorf("failed: %v, want the stage's error", err)
	}
}

// A run's steps made from stages carry the lifecycle: the ledger says how
// each item went in each stage.
func TestLifecycleSteps(t *testing.T) {
	l := &ledger{entries: map[string]ledgerEntry{}}
	lc := &Lifecycle{Ledger: l}
	a := Func{Decl: Decl{Name: "a", Workers: 2}, Run: func(_ context.Context, k string) (string, error) {
		if k == "t01" {
			return "", errors.New("broke")
		}
		return Done, nil
	}}
	b := Func{Decl: Decl{Name: "b", Workers: 1}, Run: func(context.Context, string) (string, error) { return Reused, nil }}
	sum := Run(context.Background(), keys(3), []Step{lc.Step(a, 0), lc.Step(b, 3)}, Options{})
	if sum.Completed != 2 || len(sum.Failures) != 1 {
		t.Errorf("summary %+v", sum)
	}
	for k, want := range map[string]ledgerEntry{
		"t00/a": {StatusDone, "", 1}, "t00/b": {StatusDone, "", 0},
		"t01/a": {StatusFailed, "broke", 1},
		"t02/a": {StatusDone, "", 1}, "t02/b": {StatusDone, "", 0},
	} {
		if got := l.entries[k]; got != want {
			t.Errorf("%s: %+v, want %+v", k, got, want)
		}
	}
	if _, ok := l.entries["t01/b"]; ok {
		t.Error("a failed target went on to the next stage")
	}
}
