package httpx

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// at is t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// mustGrant reserves at now and fails unless the limiter grants.
func mustGrant(t *testing.T, l *limiter, now time.Time) {
	t.Helper()
	if sl := l.reserve(now); !sl.ok {
		t.Fatalf("at t0+%s: refused (wait %s), want a grant", now.Sub(t0), sl.wait)
	}
}

// mustWait reserves at now and fails unless the limiter refuses with
// exactly wait.
func mustWait(t *testing.T, l *limiter, now time.Time, wait time.Duration) {
	t.Helper()
	sl := l.reserve(now)
	if sl.ok || sl.wait != wait {
		t.Fatalf("at t0+%s: ok %v wait %s, want a wait of %s", now.Sub(t0), sl.ok, sl.wait, wait)
	}
}

func TestLimiterSchedule(t *testing.T) {
	// step asks at t0+at; wait 0 expects a grant, else a refusal with
	// exactly that wait.
	type step struct{ at, wait time.Duration }
	tests := []struct {
		name     string
		interval time.Duration
		burst    int
		steps    []step
	}{
		{"burst 1: exactly one interval apart", time.Second, 1, []step{
			{0, 0}, {time.Second - time.Nanosecond, time.Nanosecond}, {time.Second, 0},
			{2500 * time.Millisecond, 0}, {3 * time.Second, 500 * time.Millisecond}, {3500 * time.Millisecond, 0},
		}},
		{"burst 3: three back to back, then one per interval", time.Second, 3, []step{
			{0, 0}, {0, 0}, {0, 0}, {0, time.Second}, {time.Second / 2, time.Second / 2},
			{time.Second, 0}, {time.Second, time.Second}, {2 * time.Second, 0},
		}},
		{"unlimited", 0, 1, []step{{0, 0}, {0, 0}, {0, 0}, {time.Nanosecond, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLimiter(tt.interval, tt.burst, Pacing{})
			for _, st := range tt.steps {
				if st.wait == 0 {
					mustGrant(t, l, at(st.at))
				} else {
					mustWait(t, l, at(st.at), st.wait)
				}
			}
		})
	}
}

func TestLimiterSlowsDownAfter429(t *testing.T) {
	l := newLimiter(time.Second, 1, Pacing{})
	mustGrant(t, l, at(0))
	from, to, until := l.observe(at(100*time.Millisecond), at(0), 429, -1)
	if from != time.Second || to != 1100*time.Millisecond || !until.IsZero() {
		t.Fatalf("after a 429: %s -> %s, pause until %v; want 1s -> 1.1s and no pause", from, to, until)
	}
	// The pending spacing takes the new interval at once.
	mustWait(t, l, at(time.Second), 100*time.Millisecond)
	mustGrant(t, l, at(1100*time.Millisecond))

	// A 429 to a request granted before the slowdown is the same overload
	// answered late: no second slowdown.
	if _, to, _ := l.observe(at(1200*time.Millisecond), at(0), 429, -1); to != 1100*time.Millisecond {
		t.Errorf("echo of the same 429 slowed to %s", to)
	}
	// One to a request granted after it slows down again: ×1.1 each time.
	if _, to, _ := l.observe(at(1300*time.Millisecond), at(1100*time.Millisecond), 429, -1); to != 1210*time.Millisecond {
		t.Errorf("second 429: interval %s, want 1.21s", to)
	}
	if st := l.snapshot(); st.slowdowns != 2 || st.peak != 1210*time.Millisecond {
		t.Errorf("snapshot %+v, want 2 slowdowns and a peak of 1.21s", st)
	}
}

func TestLimiterRecovers(t *testing.T) {
	const base = time.Second
	l := newLimiter(base, 1, Pacing{RecoverAfter: 5})
	l.observe(at(0), at(0), 429, -1) // 1.1s
	now := at(time.Second)
	ok := func(n int, status int) {
		for range n {
			now = now.Add(2 * time.Second)
			l.observe(now, now, status, -1)
		}
	}
	ok(4, 200)
	if d := l.snapshot().interval; d != 1100*time.Millisecond {
		t.Fatalf("after 4 successes: %s, want still 1.1s", d)
	}
	ok(10, 503) // 5xx and transport errors say nothing about the rate
	ok(1, 404)  // an answer is a success for pacing
	if d := l.snapshot().interval; d != 1050*time.Millisecond {
		t.Fatalf("after 5 successes: %s, want half the excess given back (1.05s)", d)
	}
	ok(5, 200)
	if d := l.snapshot().interval; d != 1025*time.Millisecond {
		t.Fatalf("after 10 successes: %s, want 1.025s", d)
	}
	// A 429 resets the run.
	ok(4, 200)
	l.observe(now, now, 429, -1)
	ok(4, 200)
	if d := l.snapshot().interval; d != 1128*time.Millisecond-500*time.Microsecond {
		t.Fatalf("after a 429 and 4 successes: %s, want 1.1275s", d)
	}
	ok(200, 200)
	if d := l.snapshot().interval; d != base {
		t.Fatalf("after a long run of successes: %s, want back at the configured %s", d, base)
	}
}

func TestLimiterCapsAndFloors(t *testing.T) {
	l := newLimiter(time.Second, 1, Pacing{MaxInterval: 1500 * time.Millisecond})
	for i := range 20 {
		now := at(time.Duration(i) * time.Minute)
		l.observe(now, now, 429, -1)
	}
	if d := l.snapshot().interval; d != 1500*time.Millisecond {
		t.Errorf("after 20 429s: %s, want capped at 1.5s", d)
	}

	// A configured interval above MaxInterval is kept.
	l = newLimiter(2*time.Minute, 1, Pacing{})
	if _, to, _ := l.observe(at(0), at(0), 429, -1); to != 2*time.Minute {
		t.Errorf("interval above the cap: %s, want the configured 2m", to)
	}

	// SetInterval starts from the new configured interval.
	l = newLimiter(time.Second, 1, Pacing{})
	l.observe(at(0), at(0), 429, -1)
	l.set(3 * time.Second)
	if st := l.snapshot(); st.interval != 3*time.Second {
		t.Errorf("after set(3s): %s", st.interval)
	}
	for i := range 100 {
		now := at(time.Duration(i) * time.Minute)
		l.observe(now, now, 200, -1)
	}
	if d := l.snapshot().interval; d != 3*time.Second {
		t.Errorf("recovered below the configured interval: %s", d)
	}
}

func TestLimiterUnpacedService(t *testing.T) {
	l := newLimiter(0, 1, Pacing{RecoverAfter: 1})
	// No history: the first 429 starts from the floor.
	if _, to, _ := l.observe(at(0), at(0), 429, -1); to != 11*time.Millisecond {
		t.Fatalf("first 429 without history: %s, want 11ms", to)
	}
	l.set(0)
	// With history: 1.1 × the recent mean spacing.
	for i := range 20 {
		mustGrant(t, l, at(time.Duration(i)*50*time.Millisecond))
	}
	now := at(time.Second)
	if _, to, _ := l.observe(now, now, 429, -1); to != 55*time.Millisecond {
		t.Fatalf("429 after grants 50ms apart: %s, want 55ms", to)
	}
	// Recovery goes all the way back to unlimited.
	for range 20 {
		now = now.Add(time.Second)
		l.observe(now, now, 200, -1)
	}
	if d := l.snapshot().interval; d != 0 {
		t.Errorf("not back to unlimited: %s", d)
	}
}

func TestLimiterRetryAfterPauses(t *testing.T) {
	l := newLimiter(100*time.Millisecond, 1, Pacing{})
	mustGrant(t, l, at(0))
	_, _, until := l.observe(at(50*time.Millisecond), at(0), 429, 2*time.Second)
	if !until.Equal(at(2050 * time.Millisecond)) {
		t.Fatalf("pause until t0+%s, want t0+2.05s", until.Sub(t0))
	}
	sl := l.reserve(at(time.Second))
	if sl.ok || !sl.paused || sl.wait != 1050*time.Millisecond {
		t.Fatalf("during the pause: %+v, want a paused wait of 1.05s", sl)
	}
	// A shorter Retry-After does not end the pause early.
	if _, _, u := l.observe(at(time.Second), at(0), 503, time.Second); !u.IsZero() {
		t.Errorf("a shorter retry-after moved the pause to %v", u)
	}
	mustWait(t, l, at(2*time.Second), 50*time.Millisecond)
	mustGrant(t, l, at(2050*time.Millisecond))
	// Retry-After on other statuses is not a pause.
	if _, _, u := l.observe(at(3*time.Second), at(0), 200, time.Hour); !u.IsZero() {
		t.Errorf("a 200 with retry-after paused until %v", u)
	}

	// Fixed pacing keeps the interval but still pauses.
	l = newLimiter(time.Second, 1, Pacing{Fixed: true})
	from, to, until := l.observe(at(0), at(0), 429, 5*time.Second)
	if from != to || until.IsZero() {
		t.Errorf("fixed pacing: %s -> %s, pause %v; want the interval kept and a pause", from, to, until)
	}
	if st := l.snapshot(); st.pauses != 1 || st.slowdowns != 0 {
		t.Errorf("snapshot %+v", st)
	}
}

// A request slow to leave after its grant pushes the next start back: the
// interval runs from when it was written out.
func TestLimiterSpacesFromSend(t *testing.T) {
	l := newLimiter(100*time.Millisecond, 1, Pacing{})
	mustGrant(t, l, at(0))
	l.sent(at(40 * time.Millisecond)) // 40 ms to get a connection and write
	mustWait(t, l, at(100*time.Millisecond), 40*time.Millisecond)
	mustGrant(t, l, at(140*time.Millisecond))
	l.sent(at(141 * time.Millisecond)) // prompt: the grant's schedule stands
	mustWait(t, l, at(240*time.Millisecond), time.Millisecond)
	if g := l.snapshot().minGap; g != 101*time.Millisecond {
		t.Errorf("min send gap %s, want 101ms", g)
	}
	// An unpaced service keeps no schedule.
	u := newLimiter(0, 1, Pacing{})
	mustGrant(t, u, at(0))
	u.sent(at(time.Millisecond))
	mustGrant(t, u, at(time.Millisecond))
}

// TestMargin: every configured interval keeps a fiftieth of itself in
// hand, at least 5 ms and at most 250 ms, never more than a tenth of it;
// none is unlimited.
func TestMargin(t *testing.T) {
	for _, tt := range []struct{ d, want time.Duration }{
		{0, 0},
		{time.Millisecond, 100 * time.Microsecond},
		{20 * time.Millisecond, 2 * time.Millisecond},
		{50 * time.Millisecond, 5 * time.Millisecond},
		{time.Second, 20 * time.Millisecond},
		{3 * time.Second, 60 * time.Millisecond},
		{15 * time.Second, 250 * time.Millisecond},
		{time.Minute, 250 * time.Millisecond},
	} {
		if got := Margin(tt.d); got != tt.want {
			t.Errorf("Margin(%s) = %s, want %s", tt.d, got, tt.want)
		}
		if got, want := Paced(tt.d), tt.d+tt.want; got != want {
			t.Errorf("Paced(%s) = %s, want %s", tt.d, got, want)
		}
	}
}
