//go:build !linux

package testneeds

// goCommand reports no go command: without Linux's /proc the records and
// the watcher are off, and a skip is an ordinary skip.
func goCommand() (pid int, id string, ok bool) { return 0, "", false }

func startTime(pid int) (string, bool) { return "", false }

func startWatcher(dir string, goPID int) {}
