//go:build !linux

package topics

// exchange reports that this system has no atomic directory swap.
func exchange(a, b string) error { return errNoExchange }
