package clitest

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Proc is a curate process started by a test (Start). Read Code, Stdout
// and Stderr once Wait has reported that it exited.
type Proc struct {
	Cmd     *exec.Cmd
	Stdout  bytes.Buffer
	Stderr  bytes.Buffer
	Started time.Time
	Code    int // the exit status
	done    chan struct{}
}

// Start starts bin (Build's curate) with args, SOURCE_DATE_EPOCH at Epoch;
// it is killed when the test ends, if it has not exited.
func Start(t testing.TB, bin string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.Cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+Epoch)
	p.Cmd.Stdout, p.Cmd.Stderr = &p.Stdout, &p.Stderr
	p.Started = time.Now()
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.Cmd.Wait()
		p.Code = p.Cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.Cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// Wait waits for the process to exit, at most d; it reports whether it
// exited.
func (p *Proc) Wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool { return p.Wait(0) }

// WaitUntil polls cond until it holds or the process exits (false) or
// 5 minutes pass (fatal): a bound only a hung run reaches (a run of 150
// targets, under go test ./... on a loaded 2-core machine, took more than
// 30 s to finish).
func WaitUntil(t testing.TB, p *Proc, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for !cond() {
		if p.Exited() {
			return false
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the run to get going")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
