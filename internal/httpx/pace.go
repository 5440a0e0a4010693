package httpx

import (
	"cmp"
	"math"
	"sync"
	"time"
)

// Pacing tunes how a service's interval adapts to 429s. The zero value
// takes the defaults.
//
// After a 429, with or without Retry-After, the interval grows by Factor
// (Semantic Scholar's maintainers advise about ×1.1, since their limiter
// answers 429 even below the published rate); the 429's own request still
// backs off as usual. After RecoverAfter responses in a row without a 429
// the interval gives back half of what it gained, so it settles just above
// the rate the server really enforces instead of swinging between the
// configured interval and the grown one. It never drops below the
// configured interval.
type Pacing struct {
	// Factor multiplies the interval after a 429 (default 1.1; must be
	// above 1).
	Factor float64
	// RecoverAfter is the run of responses without a 429 after which the
	// interval steps back toward the configured one (default 20).
	RecoverAfter int
	// MaxInterval caps the grown interval (default 1 minute, or the
	// configured interval if that is longer).
	MaxInterval time.Duration
	// Fixed turns adaptation off: the interval stays as configured and
	// 429s are met by per-request backoff alone. A Retry-After still
	// pauses the service.
	Fixed bool
}

// Margin is what a configured interval d gets in hand, the one rule for
// every interval curate keeps (--arxiv-interval, --s2-interval,
// --pdf-interval, a robots.txt Crawl-delay, a requests-per-minute limit):
// a server sees when requests arrive, not when they were sent, and one the
// network or a busy machine holds up a little brings the next closer than
// d on arrival, which a server that enforces the rate with no burst
// answers with a 429. A fiftieth of d, at least 5 ms and at most 250 ms,
// and never more than a tenth of d: at arxiv.org's 15 s Crawl-delay,
// 250 ms (1.7%); at 3 s, 60 ms; at 1 s, 20 ms.
func Margin(d time.Duration) time.Duration {
	return min(max(d/50, 5*time.Millisecond), 250*time.Millisecond, max(d, 0)/10)
}

// Paced is the spacing kept for a configured interval d: d and its
// Margin; 0 (unlimited) stays 0.
func Paced(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d + Margin(d)
}

const (
	defaultPaceFactor   = 1.1
	defaultRecoverAfter = 20
	defaultMaxInterval  = time.Minute
	// minSlowInterval is where a service without an interval starts after
	// its first 429 when its recent traffic gives no better estimate.
	minSlowInterval = 10 * time.Millisecond
	// recentGrants is how many grant times an unpaced service keeps to
	// estimate the rate a 429 answered.
	recentGrants = 16
)

// limiter spaces the starts of a service's requests: a GCRA token bucket
// (burst requests back to back, then one per interval) whose interval
// adapts to 429s, and a pause that holds every request until a server's
// Retry-After has passed. Its methods take the time as an argument, so
// its schedule is a pure function of the events it is given.
type limiter struct {
	mu     sync.Mutex
	pacing Pacing // defaults applied
	burst  int

	base     time.Duration // the configured interval: the floor
	interval time.Duration // the interval in force
	peak     time.Duration // the longest interval in force so far
	tat      time.Time     // theoretical arrival time of the next request
	paused   time.Time     // no grant before this
	slowAt   time.Time     // the last slowdown; 429s to requests granted before it are its echo
	okRun    int           // responses without a 429 since the last change
	recent   []time.Time   // last grants, kept while base is 0
	lastSent time.Time     // when the last request was written out
	minGap   time.Duration // the shortest time between two requests written out

	slowdowns, pauses int64
}

func newLimiter(interval time.Duration, burst int, p Pacing) *limiter {
	p.Factor = cmp.Or(p.Factor, defaultPaceFactor)
	p.RecoverAfter = cmp.Or(p.RecoverAfter, defaultRecoverAfter)
	p.MaxInterval = max(cmp.Or(p.MaxInterval, defaultMaxInterval), interval)
	return &limiter{pacing: p, burst: max(burst, 1), base: interval, interval: interval, peak: interval}
}

// slot is a limiter's answer to a request for a start.
type slot struct {
	ok       bool          // granted
	wait     time.Duration // if not: how long until the next start is allowed
	paused   bool          // if not: the wait is a Retry-After pause
	interval time.Duration // the interval in force
}

// reserve grants a start at now if the schedule allows it, and otherwise
// says how long to wait before asking again.
func (l *limiter) reserve(now time.Time) slot {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Before(l.paused) {
		return slot{wait: l.paused.Sub(now), paused: true, interval: l.interval}
	}
	// With burst b a request may start b-1 intervals ahead of the
	// theoretical schedule.
	earliest := l.tat.Add(-time.Duration(l.burst-1) * l.interval)
	if now.Before(earliest) {
		return slot{wait: earliest.Sub(now), interval: l.interval}
	}
	l.tat = later(l.tat, now).Add(l.interval)
	if l.base == 0 {
		if len(l.recent) == recentGrants {
			l.recent = append(l.recent[:0], l.recent[1:]...)
		}
		l.recent = append(l.recent, now)
	}
	return slot{ok: true, interval: l.interval}
}

// observe takes the outcome of a request granted at granted: its status
// (0 for a transport error) and the server's Retry-After (negative if
// absent). It returns the interval before and after, and when a pause now
// ends (zero if observe started none).
func (l *limiter) observe(now, granted time.Time, status int, retryAfter time.Duration) (from, to time.Duration, pausedUntil time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	from = l.interval
	if retryAfter > 0 && (status == 429 || status == 503) {
		if until := now.Add(retryAfter); until.After(l.paused) {
			l.paused, pausedUntil = until, until
			l.pauses++
		}
	}
	switch {
	case l.pacing.Fixed:
	case status == 429:
		l.okRun = 0
		if granted.Before(l.slowAt) {
			// Sent before the last slowdown took effect: the same
			// overload, already answered.
			break
		}
		next := l.interval
		if next == 0 {
			next = max(l.recentGap(), minSlowInterval)
		}
		next = time.Duration(math.Round(float64(next) * l.pacing.Factor))
		l.setInterval(min(next, l.pacing.MaxInterval))
		l.slowAt = now
		l.slowdowns++
	case status == 0 || status >= 500:
		// Says nothing about the rate.
	default:
		l.okRun++
		if l.okRun >= l.pacing.RecoverAfter && l.interval > l.base {
			l.okRun = 0
			next := l.base + (l.interval-l.base)/2
			// Close enough to count as back: a thousandth of the
			// configured interval, or a millisecond for an unpaced one.
			if snap := l.base / 1000; l.base == 0 && next < time.Millisecond || next-l.base < snap {
				next = l.base
			}
			l.setInterval(next)
		}
	}
	return from, l.interval, pausedUntil
}

// sent takes the moment a granted request was written out: the next
// start is an interval after it, not only after the grant, so a request
// slow to leave (a new connection, a busy machine) never lands closer to
// the next than the interval.
func (l *limiter) sent(at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.interval <= 0 {
		return
	}
	if next := at.Add(l.interval); next.After(l.tat) {
		l.tat = next
	}
	if !l.lastSent.IsZero() {
		if gap := at.Sub(l.lastSent); l.minGap == 0 || gap < l.minGap {
			l.minGap = gap
		}
	}
	l.lastSent = at
}

// set replaces the configured interval, as Service.SetInterval does; the
// interval in force starts from it again.
func (l *limiter) set(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.base = max(d, 0)
	l.pacing.MaxInterval = max(l.pacing.MaxInterval, l.base)
	l.setInterval(l.base)
	l.okRun = 0
}

// setInterval changes the interval in force. The pending spacing takes the
// new interval at once: with burst 1 the next start is the last one plus
// the new interval.
func (l *limiter) setInterval(d time.Duration) {
	if !l.tat.IsZero() {
		l.tat = l.tat.Add(d - l.interval)
	}
	l.interval = d
	l.peak = max(l.peak, d)
}

// recentGap is the mean spacing of the last grants, 0 if too few.
func (l *limiter) recentGap() time.Duration {
	if len(l.recent) < 2 {
		return 0
	}
	return l.recent[len(l.recent)-1].Sub(l.recent[0]) / time.Duration(len(l.recent)-1)
}

// pace is a snapshot of a limiter's state for Stats.
type pace struct {
	interval, peak    time.Duration
	paused            time.Time
	slowdowns, pauses int64
	minGap            time.Duration
}

func (l *limiter) snapshot() pace {
	l.mu.Lock()
	defer l.mu.Unlock()
	return pace{l.interval, l.peak, l.paused, l.slowdowns, l.pauses, l.minGap}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
