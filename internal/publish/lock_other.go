//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package publish

import (
	"errors"
	"fmt"
)

// Lock takes the publishing lock of out. It is not implemented on this
// platform (nor is the store's lock) and always fails.
func Lock(out string) (unlock func() error, err error) {
	return nil, fmt.Errorf("lock %s: %w", out, errors.ErrUnsupported)
}
