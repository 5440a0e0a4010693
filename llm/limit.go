package llm

import (
	"context"
	"sync"
	"time"
)

// tokenBudget is a tokens-per-minute bucket that can be charged before a
// call by an estimate and corrected afterwards in either direction.
//
// It is not a rate.Limiter: a Reservation can only be cancelled before it
// is acted on, so an over-estimate (max_tokens is a ceiling the answer
// rarely reaches) could never be refunded and would throttle the stage to
// a fraction of its budget. Charges are taken in arrival order, as with a
// reservation: the level may go negative, and a caller waits until the
// refill has paid off the debt that includes its own charge.
type tokenBudget struct {
	mu    sync.Mutex
	rate  float64 // tokens per second
	size  float64 // bucket capacity: one minute of tokens
	level float64
	last  time.Time
	now   func() time.Time
}

func newTokenBudget(perMinute int, now func() time.Time) *tokenBudget {
	return &tokenBudget{
		rate:  float64(perMinute) / 60,
		size:  float64(perMinute),
		level: float64(perMinute),
		last:  now(),
		now:   now,
	}
}

// charge takes n tokens and returns how long the caller must wait before
// using them.
func (b *tokenBudget) charge(n int64) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	b.level -= float64(n)
	if b.level >= 0 {
		return 0
	}
	return time.Duration(-b.level / b.rate * float64(time.Second))
}

// adjust corrects an earlier charge by delta tokens: positive when the call
// used more than charged, negative to refund.
func (b *tokenBudget) adjust(delta int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	b.level = min(b.level-float64(delta), b.size)
}

func (b *tokenBudget) refill() {
	now := b.now()
	if el := now.Sub(b.last); el > 0 {
		b.level = min(b.level+el.Seconds()*b.rate, b.size)
	}
	b.last = now
}

// take charges n tokens and waits for them. If ctx ends first the charge
// is refunded.
func (b *tokenBudget) take(ctx context.Context, n int64) error {
	d := b.charge(n)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		b.adjust(-n)
		return ctx.Err()
	}
}

// pacer adapts a service's request interval to 429s, additive-increase /
// multiplicative-decrease style on the interval: each burst of 429s doubles
// it, each call without one moves it an eighth of the way back to the
// configured base.
type pacer struct {
	mu   sync.Mutex
	base time.Duration // from the configured requests per minute; 0: unlimited
	seen int64         // the service's 429 count when last looked at
	get  func() time.Duration
	set  func(time.Duration)
}

const (
	firstSlowInterval = 100 * time.Millisecond // after a 429 on an unpaced service
	maxSlowInterval   = time.Minute
)

// observe looks at the service's 429 counter after a call and returns the
// interval it set, or 0 if it made no change.
func (p *pacer) observe(count429 int64) (slowedTo time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.get()
	if count429 > p.seen {
		p.seen = count429
		next := min(max(2*cur, firstSlowInterval, p.base), maxSlowInterval)
		p.set(next)
		return next
	}
	if cur > p.base {
		next := p.base + (cur-p.base)*7/8
		if next-p.base < time.Millisecond {
			next = p.base
		}
		p.set(next)
	}
	return 0
}
