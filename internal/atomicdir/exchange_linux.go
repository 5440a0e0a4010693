package atomicdir

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// exchange atomically swaps the directories a and b.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return fmt.Errorf("exchange %s and %s: %w: %w", a, b, ErrNoExchange, err)
	}
	if err != nil {
		return fmt.Errorf("exchange %s and %s: %w", a, b, err)
	}
	return nil
}
