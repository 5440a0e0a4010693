package keylock

import (
	"sync"
	"testing"
)

// TestLock: holders of one key never overlap, other keys do not wait, and
// no key is kept once released.
func TestLock(t *testing.T) {
	var l Locks
	var mu sync.Mutex
	inside := map[string]int{}
	var wg sync.WaitGroup
	for i := range 200 {
		key := []string{"a", "b", "c"}[i%3]
		wg.Go(func() {
			unlock := l.Lock(key)
			mu.Lock()
			inside[key]++
			if inside[key] != 1 {
				t.Errorf("%d holders of %s at once", inside[key], key)
			}
			mu.Unlock()
			mu.Lock()
			inside[key]--
			mu.Unlock()
			unlock()
		})
	}
	wg.Wait()
	if n := l.held(); n != 0 {
		t.Errorf("%d keys kept after every release", n)
	}
	// Another key is not held up by a held one.
	unlock := l.Lock("a")
	l.Lock("b")()
	unlock()
}
