package store

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

type sqliteErr int

func (e sqliteErr) Error() string { return fmt.Sprintf("sqlite error %d", int(e)) }
func (e sqliteErr) Code() int     { return int(e) }

func TestIsDiskFull(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&fs.PathError{Op: "write", Path: "/s/blobs/ab/x.tmp", Err: syscall.ENOSPC}, true},
		{fmt.Errorf("put blob: %w", &fs.PathError{Op: "write", Err: syscall.EDQUOT}), true},
		{fmt.Errorf("set status: %w", sqliteErr(13)), true},
		{fmt.Errorf("set status: %w", sqliteErr(13|(1<<8))), true}, // an extended SQLITE_FULL code
		{fmt.Errorf("set status: %w", sqliteErr(5)), false},        // SQLITE_BUSY
		{fmt.Errorf("open: %w", sqliteErr(10|19<<8)), true},        // SQLITE_IOERR_SHMSIZE: the -shm file cannot grow
		{fmt.Errorf("read: %w", sqliteErr(10|2<<8)), false},        // SQLITE_IOERR_SHORT_READ
		{errors.New("no space"), false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := IsDiskFull(tt.err); got != tt.want {
			t.Errorf("IsDiskFull(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
