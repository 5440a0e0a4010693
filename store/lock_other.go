//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package store

import (
	"errors"
	"fmt"
)

// Lock takes an exclusive lock on the store. It is not implemented on this
// platform and always fails.
func (s *Store) Lock() (unlock func() error, err error) {
	return nil, fmt.Errorf("lock store %s: %w", s.dir, errors.ErrUnsupported)
}

// LockHeld reports whether a process holds the store's lock; without locks
// on this platform, never.
func (s *Store) LockHeld() (bool, string) { return false, "" }
