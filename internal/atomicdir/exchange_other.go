//go:build !linux

package atomicdir

// exchange is not available: Replace falls back to two renames.
func exchange(a, b string) error { return ErrNoExchange }
