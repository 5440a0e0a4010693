//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests in this file run a copy of the test binary as a second process,
// told what to do by the environment variable helperEnv.
const helperEnv = "STORE_TEST_HELPER"

// TestHelperProcess is not a test: it is the body of the child process.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(helperEnv)
	if role == "" {
		t.Skip("helper process only")
	}
	ctx := context.Background()
	s, err := Open(ctx, os.Getenv("STORE_TEST_DIR"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	switch role {
	case "lock":
		if _, err := s.Lock(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("locked")
	case "write":
		fmt.Println("writing")
		for i := 0; ; i++ {
			item := fmt.Sprintf("2507.%05d", i)
			v := doc{ID: item, Title: strings.Repeat("text ", 2000+i)}
			if _, err := s.PutJSON(ctx, item, "document", v, nil); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			if err := s.SetStatus(ctx, item, "parse", StatusDone, ""); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
	}
	time.Sleep(time.Minute) // until killed
	os.Exit(0)
}

// startHelper starts the child in role on dir and waits for its first line
// of output.
func startHelper(t *testing.T, role, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+role, "STORE_TEST_DIR="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	buf := make([]byte, 16)
	if _, err := out.Read(buf); err != nil {
		t.Fatalf("helper %s: %v", role, err)
	}
	return cmd
}

func kill9(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	other := openTest(t, dir) // stands in for a second process

	unlock, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Lock()
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock err = %v, want ErrLocked", err)
	}
	if pid := "pid " + strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), pid) {
		t.Errorf("second Lock err = %q, want it to name %s", err, pid)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	unlock2, err := other.Lock()
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	if err := unlock2(); err != nil {
		t.Fatal(err)
	}
}

// TestLockOtherProcess checks that a lock held by another process is
// refused naming its pid, and that kill -9 of the holder leaves no stale
// lock.
func TestLockOtherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	s := openTest(t, dir)
	child := startHelper(t, "lock", dir)

	_, err := s.Lock()
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Lock while another process holds it: err = %v, want ErrLocked", err)
	}
	if pid := "pid " + strconv.Itoa(child.Process.Pid); !strings.Contains(err.Error(), pid) {
		t.Errorf("Lock err = %q, want it to name %s", err, pid)
	}
	kill9(t, child)
	unlock, err := s.Lock()
	if err != nil {
		t.Fatalf("Lock after the holder was killed: %v", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
}

// TestKilledWriter kills a writing process with SIGKILL and checks that every
// record it left reads back intact.
func TestKilledWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	ctx := context.Background()
	dir := t.TempDir()
	for round := range 3 {
		child := startHelper(t, "write", dir)
		time.Sleep(time.Duration(100+150*round) * time.Millisecond)
		kill9(t, child)
	}
	s := openTest(t, dir)
	items, err := s.Items(ctx, "document")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) == 0 {
		t.Fatal("the killed writer left no records; nothing was tested")
	}
	for _, item := range items {
		var d doc
		if _, err := s.GetJSON(ctx, item, "document", &d); err != nil {
			t.Errorf("after kill -9: %v", err)
		} else if d.ID != item {
			t.Errorf("record of %q holds %q", item, d.ID)
		}
	}
	t.Logf("%d records intact after 3 kills", len(items))
}
