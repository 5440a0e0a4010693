// Package membudget bounds what work in flight across goroutines holds in
// memory at once: each piece of work asks for its weight (an estimate of
// the bytes it may hold) before it starts and gives it back when it ends,
// waiting while the others hold too much. curate's parses of pages and TEI
// share one Budget across the fetch, sources and pdfs stages' workers, so
// that two large pages in flight cannot add up past it.
package membudget

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/semaphore"
)

// Budget is a bound on the bytes held at once. A nil *Budget bounds
// nothing. Its methods are safe for concurrent use.
type Budget struct {
	size int64
	sem  *semaphore.Weighted

	mu             sync.Mutex
	inFlight, peak int64
}

// New returns a Budget of size bytes (at least 1).
func New(size int64) *Budget {
	size = max(size, 1)
	return &Budget{size: size, sem: semaphore.NewWeighted(size)}
}

// Size returns the budget's bound.
func (b *Budget) Size() int64 {
	if b == nil {
		return 0
	}
	return b.size
}

// Acquire waits until n bytes fit within the budget beside what others
// hold, or ctx ends, and returns the function that gives them back (call
// it once). A weight over the whole budget is taken as the whole budget,
// so the largest work runs alone rather than never; one under 1 as 1.
// Waiters are served in order: a large one is not passed over forever by
// small ones.
func (b *Budget) Acquire(ctx context.Context, n int64) (release func(), err error) {
	if b == nil {
		return func() {}, nil
	}
	n = min(max(n, 1), b.size)
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, fmt.Errorf("wait for %d bytes of the memory budget: %w", n, err)
	}
	b.mu.Lock()
	b.inFlight += n
	b.peak = max(b.peak, b.inFlight)
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			b.inFlight -= n
			b.mu.Unlock()
			b.sem.Release(n)
		})
	}, nil
}

// InFlight returns the bytes held now, and the most held at once so far.
func (b *Budget) InFlight() (now, peak int64) {
	if b == nil {
		return 0, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inFlight, b.peak
}
