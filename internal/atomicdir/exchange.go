package atomicdir

import "errors"

// ErrNoExchange means the system cannot swap two directories atomically;
// Replace then falls back to two renames. An Options.Exchange that
// returns it (wrapped or not) selects the fallback.
var ErrNoExchange = errors.New("atomic exchange not supported")
