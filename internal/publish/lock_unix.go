//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package publish

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Lock takes the publishing lock of the directory out: an flock on
// ".<name>.lock" beside it (out itself is swapped, so a lock inside it
// would move with the old directory). Two processes publishing to one
// place, from one store or two, are serialized: the second is refused
// with an error wrapping ErrLocked that names the holder's pid. The
// kernel releases the lock when the process exits, even after kill -9.
func Lock(out string) (unlock func() error, err error) {
	out, err = filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", out, err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", out, err)
	}
	path := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", out, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			who := "another process"
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil {
				who = "pid " + strconv.Itoa(pid)
			}
			return nil, fmt.Errorf("publish %s: %w (%s)", out, ErrLocked, who)
		}
		return nil, fmt.Errorf("lock %s: %w", out, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() error {
		f.Truncate(0)
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}
