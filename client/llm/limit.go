package llm

import (
	"context"
	"net/http"
	"strconv"
	"strings"
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

// headroom follows the rate-limit headers a provider sends with each
// answer — Anthropic's anthropic-ratelimit-{requests,tokens,input-tokens}-
// {remaining,reset}, OpenAI's x-ratelimit-{remaining,reset}-{requests,
// tokens} — and holds a request back until the reset when the provider has
// said it has no room for it, instead of sending it into a 429.
type headroom struct {
	mu       sync.Mutex
	now      func() time.Time
	reqLeft  int64 // -1: unknown
	reqReset time.Time
	tokLeft  int64 // -1: unknown
	tokReset time.Time
	// paused holds every request until then: the endpoint asked for a
	// wait longer than httpx would make (Retry-After beyond its clamp).
	paused time.Time
}

// pause holds all requests for d (each waits at most maxHeadroomWait at
// a time, then tries).
func (h *headroom) pause(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.now().Add(d); t.After(h.paused) {
		h.paused = t
	}
}

// maxHeadroomWait caps a wait a header asks for: a clock off by hours must
// not stall the run.
const maxHeadroomWait = 2 * time.Minute

func newHeadroom(now func() time.Time) *headroom {
	return &headroom{now: now, reqLeft: -1, tokLeft: -1}
}

// observe reads the headers of an answer.
func (h *headroom) observe(hdr http.Header) {
	if h == nil || hdr == nil {
		return
	}
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if n, ok := headerInt(hdr, "Anthropic-Ratelimit-Requests-Remaining", "X-Ratelimit-Remaining-Requests"); ok {
		h.reqLeft = n
		h.reqReset = resetTime(now, hdr, "Anthropic-Ratelimit-Requests-Reset", "X-Ratelimit-Reset-Requests")
	}
	tok, okT := headerInt(hdr, "Anthropic-Ratelimit-Tokens-Remaining", "X-Ratelimit-Remaining-Tokens")
	in, okI := headerInt(hdr, "Anthropic-Ratelimit-Input-Tokens-Remaining")
	switch {
	case okT && okI:
		if in < tok {
			h.tokLeft, h.tokReset = in, resetTime(now, hdr, "Anthropic-Ratelimit-Input-Tokens-Reset")
		} else {
			h.tokLeft, h.tokReset = tok, resetTime(now, hdr, "Anthropic-Ratelimit-Tokens-Reset")
		}
	case okT:
		h.tokLeft, h.tokReset = tok, resetTime(now, hdr, "Anthropic-Ratelimit-Tokens-Reset", "X-Ratelimit-Reset-Tokens")
	case okI:
		h.tokLeft, h.tokReset = in, resetTime(now, hdr, "Anthropic-Ratelimit-Input-Tokens-Reset")
	}
}

// delay returns how long a request of need tokens must wait, and counts it
// against what is left so that concurrent requests do not all go at once.
func (h *headroom) delay(need int64) time.Duration {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	var until time.Time
	if now.Before(h.paused) {
		return min(h.paused.Sub(now), maxHeadroomWait)
	}
	if h.reqLeft == 0 && now.Before(h.reqReset) {
		until = h.reqReset
	}
	if h.tokLeft >= 0 && need > h.tokLeft && now.Before(h.tokReset) && h.tokReset.After(until) {
		until = h.tokReset
	}
	if !until.IsZero() {
		// The window resets: what the provider said no longer holds.
		h.reqLeft, h.tokLeft = -1, -1
		return min(until.Sub(now), maxHeadroomWait)
	}
	if h.reqLeft > 0 {
		h.reqLeft--
	}
	if h.tokLeft > 0 {
		h.tokLeft = max(h.tokLeft-need, 0)
	}
	return 0
}

func (h *headroom) wait(ctx context.Context, need int64) error {
	d := h.delay(need)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func headerInt(h http.Header, names ...string) (int64, bool) {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			if i, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && i >= 0 {
				return i, true
			}
		}
	}
	return 0, false
}

// resetTime reads a reset header: an RFC 3339 time (Anthropic) or a
// duration such as "6m0s" or "20ms" (OpenAI).
func resetTime(now time.Time, h http.Header, names ...string) time.Time {
	for _, n := range names {
		v := strings.TrimSpace(h.Get(n))
		if v == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t
		}
		if d, err := time.ParseDuration(v); err == nil && d >= 0 {
			return now.Add(d)
		}
	}
	return time.Time{}
}
