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
	// SQLite's SQLITE_FULL (13): "database or disk is full"; and
	// SQLITE_IOERR_SHMSIZE (10 | 19<<8), which it returns when it cannot
	// grow the -shm file: the write SQLite makes to extend it fails with
	// ENOSPC on a full disk (unixShmMap in SQLite's os_unix.c).
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return false
	}
	c := coded.Code()
	return c&0xff == 13 || c == 10|19<<8
}
