package dataset

import "errors"

// errNoExchange means the system cannot swap two directories atomically.
var errNoExchange = errors.New("atomic exchange not supported")
