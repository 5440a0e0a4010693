package store

import (
	"errors"
	"syscall"
)

// IsDiskFull reports whether err says the disk holding the store is full
// (or over quota): nothing more can be stored, so a run should stop rather
// than go on fetching what it cannot keep.
func IsDiskFull(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	// SQLite's SQLITE_FULL (13): "database or disk is full".
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 13
}
