//go:build linux

package testneeds

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// goCommand returns the process of the `go test` that started this test
// binary, as "PID-STARTTIME" (a process ID alone may be reused), or
// false when there is none (not Linux, or run directly).
func goCommand() (pid int, id string, ok bool) {
	pid = os.Getppid()
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return 0, "", false
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if len(args) < 2 || filepath.Base(args[0]) != "go" || !slices.Contains(args[1:], "test") {
		return 0, "", false
	}
	start, ok := startTime(pid)
	if !ok {
		return 0, "", false
	}
	return pid, fmt.Sprintf("%d-%s", pid, start), true
}

// startTime is a process's start time in clock ticks after boot
// (/proc/PID/stat, field 22).
func startTime(pid int) (string, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", false
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return "", false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return "", false
	}
	return f[19], true
}

// startWatcher starts the invocation's watcher unless one was started.
func startWatcher(dir string, goPID int) {
	mark, err := os.OpenFile(filepath.Join(dir, "watcher"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return // started already (or cannot be: the skips still say why)
	}
	defer mark.Close()
	self, err := os.Executable()
	if err != nil {
		return
	}
	// The go command's standard error, reopened: the watcher writes
	// there after the go command is gone.
	out, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/2", goPID), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer out.Close()
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), watchEnv+"="+dir)
	cmd.ExtraFiles = []*os.File{out} // fd 3
	// Its own session, and none of the test binary's streams: the go
	// command waits for those to close, and must not wait for the watcher.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return
	}
	fmt.Fprintf(mark, "%d\n", cmd.Process.Pid)
	cmd.Process.Release()
}
