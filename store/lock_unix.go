//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Lock takes an exclusive lock on the store, so that a second curate process
// writing the same store is refused rather than interleaving with this one.
// The lock is an flock on DIR/lock, which holds the owner's pid; the kernel
// releases it when the process exits, even after kill -9, so it never goes
// stale. If another process holds the lock, the error wraps ErrLocked and
// names its pid.
func (s *Store) Lock() (unlock func() error, err error) {
	if s.readOnly {
		return nil, fmt.Errorf("lock store %s: %w", s.dir, ErrReadOnly)
	}
	path := filepath.Join(s.dir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock store %s: %w", s.dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock store %s: %w (%s holds it)", s.dir, ErrLocked, holder(f))
		}
		return nil, fmt.Errorf("lock store %s: %w", s.dir, err)
	}
	// The pid is informational; a failure to write it must not lose the lock.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() error {
		f.Truncate(0) // don't leave a pid that no longer holds the lock
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("unlock store %s: %w", s.dir, err)
		}
		return nil
	}, nil
}

// holder describes the process whose pid is written in the lock file f.
func holder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil {
		// The holder locked the file but has not written its pid yet.
		return "a process that has not written its pid yet"
	}
	return "pid " + strconv.Itoa(pid)
}

// LockHeld reports whether a process holds the store's lock, and which
// (as in Lock's error). It takes the lock for an instant to find out and
// creates nothing: a store whose lock file is absent was never locked.
func (s *Store) LockHeld() (bool, string) {
	f, err := os.Open(filepath.Join(s.dir, "lock"))
	if err != nil {
		return false, ""
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK), holder(f)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false, ""
}
