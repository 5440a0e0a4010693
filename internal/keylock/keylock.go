// Package keylock serializes work per key: the stages work on many targets
// at once, and two of them often share a paper (a target is another's
// source, or two targets cite one source). Holding the paper's key, the
// second waits and then finds the first's result stored instead of
// fetching, converting or summarizing the paper again.
package keylock

import "sync"

// Locks is a set of per-key locks; the zero value is ready. A key's lock
// exists only while someone holds or waits for it.
type Locks struct {
	mu sync.Mutex
	m  map[string]*lock
}

type lock struct {
	mu    sync.Mutex
	users int // holders and waiters
}

// Lock waits until no one else holds key, and returns the function that
// releases it.
func (l *Locks) Lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*lock{}
	}
	k := l.m[key]
	if k == nil {
		k = &lock{}
		l.m[key] = k
	}
	k.users++
	l.mu.Unlock()
	k.mu.Lock()
	return func() {
		k.mu.Unlock()
		l.mu.Lock()
		if k.users--; k.users == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
}

// held returns the number of keys with a holder or waiter (tests).
func (l *Locks) held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
