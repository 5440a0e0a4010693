package membudget

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestBound checks that the weights held at once never pass the budget,
// however many goroutines ask, and that all of them get through.
func TestBound(t *testing.T) {
	b := New(100)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := b.Acquire(context.Background(), int64(10+i%7*10))
			if err != nil {
				t.Error(err)
				return
			}
			if now, _ := b.InFlight(); now > 100 {
				t.Errorf("%d bytes in flight, past the budget of 100", now)
			}
			release()
			release() // a second call gives nothing back twice
			mu.Lock()
			done++
			mu.Unlock()
		}()
	}
	wg.Wait()
	now, peak := b.InFlight()
	if done != 50 || now != 0 || peak > 100 || peak < 10 {
		t.Errorf("%d done, %d in flight at the end, peak %d", done, now, peak)
	}
}

// TestOversized checks that a weight past the budget is taken as the
// whole budget (it runs alone, and does run), and that a waiter gives up
// when its context ends.
func TestOversized(t *testing.T) {
	b := New(100)
	release, err := b.Acquire(context.Background(), 1_000)
	if err != nil {
		t.Fatal(err)
	}
	if now, _ := b.InFlight(); now != 100 {
		t.Errorf("oversized weight holds %d, want the whole budget", now)
	}
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := b.Acquire(ctx, 1)
		waited <- err
	}()
	select {
	case err := <-waited:
		t.Fatalf("a second weight got in beside a full budget: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled waiter: %v, want context.Canceled", err)
	}
	release()
	r, err := b.Acquire(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r()
	var none *Budget
	r, err = none.Acquire(context.Background(), 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	r()
}
