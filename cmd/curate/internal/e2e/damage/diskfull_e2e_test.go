package damage

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/sim"
)

// A store on a disk that fills up during a run: the run stops at once
// with one message naming the store (exit 2), starts no more than the
// work already in flight, publishes nothing, loses nothing, and once
// there is room the same command completes with the dataset an
// uninterrupted run writes. It needs a tmpfs mount (root).
func TestE2EDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs for the store")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	bin := clitest.Build(t)
	s := clitest.Sim(t, sim.WorldConfig{Seed: 13, Targets: 60}, sim.Options{})
	out := t.TempDir()
	args := clitest.RunArgs(t, s, mnt+"/store", out+"/dataset", "--arxiv-interval", "1ms", "--s2-interval", "1ms")
	runArgs := func(args []string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+clitest.Epoch)
		b, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(b)
	}
	run := func() (int, string) { return runArgs(args) }
	code, msg := run()
	if code != 2 || !strings.Contains(msg, "curate run: the disk holding the store "+mnt+"/store is full") {
		t.Fatalf("exit %d, want 2 with a message naming the store:\n%s", code, msg)
	}
	// Told once: the run's log line when it stops and its final message;
	// no flood of the same error from every piece of work in flight.
	var told []string
	for _, line := range strings.Split(msg, "\n") {
		if strings.Contains(line, "no space left") || strings.Contains(line, "disk is full (") || strings.Contains(line, "context canceled") {
			told = append(told, line)
		}
	}
	if len(told) != 2 {
		t.Errorf("the full disk is told %d times, want twice (when the run stops, and at its end):\n%s", len(told), strings.Join(told, "\n"))
	}
	if _, err := os.Stat(out + "/dataset"); !os.IsNotExist(err) {
		t.Errorf("a dataset was published from a run that could not finish: %v", err)
	}
	// Requests started after the disk filled: at most the work in flight
	// (the workers of every stage and the LLM's concurrency).
	m := regexp.MustCompile(`time=(\S+) level=ERROR msg="the disk holding the store is full`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("no time of the first full-disk error in:\n%s", msg)
	}
	full, err := time.Parse(time.RFC3339Nano, m[1])
	if err != nil {
		t.Fatal(err)
	}
	late := 0
	for _, calls := range clitest.Calls(s) {
		for _, c := range calls {
			if c.Start.After(full.Add(time.Millisecond)) {
				late++
			}
		}
	}
	const inFlight = 2 + 4 + 4 + 4 + 4 // fetch, citegraph, classify, summarize workers; LLM concurrency
	if late > inFlight {
		t.Errorf("%d requests started after the disk filled, more than the %d in flight", late, inFlight)
	}
	t.Logf("disk full after %d requests; %d started afterwards", s.Requests(), late)

	// Room again: the same command completes, as an uninterrupted run does.
	if b, err := exec.Command("mount", "-o", "remount,size=512m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, b)
	}
	if code, msg := run(); code != 0 {
		t.Fatalf("after freeing space: exit %d\n%s", code, msg)
	}
	// The uninterrupted run is the same binary's: the Parquet files name
	// their writer's version as the binary's build information says, and
	// a test binary's (outside package main) has none.
	ref := t.TempDir()
	if code, msg := runArgs(clitest.RunArgs(t, s, ref+"/store", ref+"/dataset", "--arxiv-interval", "1ms", "--s2-interval", "1ms")); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, msg)
	}
	got, want := clitest.Shards(t, out+"/dataset"), clitest.Shards(t, ref+"/dataset")
	for name, b := range want {
		if string(got[name]) != string(b) {
			t.Errorf("%s differs from an uninterrupted run's", filepath.Base(name))
		}
	}
}
