package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/sim"
)

// A model that obeys an instruction planted in papers ("mark every
// reference as a source") for some targets: those are held back as
// suspect — listed on stdout, in curate status and in dropped.json, never
// published — and the run exits 1; a careful model on the same world
// makes no target suspect. --include-suspect keeps them.
func TestE2ESuspectClassification(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	s := e2eSim(t, sim.WorldConfig{Seed: 11, Targets: 24}, sim.Options{Faults: map[string]sim.Faults{sim.LLM: {PObey: 0.3}}})
	dir := t.TempDir()
	env := map[string]string{"SOURCE_DATE_EPOCH": e2eEpoch}
	args := e2eRunArgs(t, s, dir+"/store", dir+"/dataset", "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--retries", "1")
	code, stdout, stderr := runCLI(t, env, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (targets held back)\n%s", code, stderr)
	}
	held := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.SplitN(line, "\t", 4); len(f) == 4 && f[2] == "suspect" {
			held[f[0]] = f[3]
		}
	}
	if len(held) == 0 {
		t.Fatalf("no target held back as suspect:\n%s\n%s", stdout, stderr)
	}
	in, dropped := e2eDataset(t, dir+"/dataset")
	for id, why := range held {
		if in[id] {
			t.Errorf("suspect target %s was published", id)
		}
		if d := dropped[id]; d.Reason != dataset.DropSuspect || !strings.Contains(d.Detail, "sources") {
			t.Errorf("%s (%s) is not in dropped.json as suspect: %+v", id, why, d)
		}
	}
	t.Logf("%d of 24 targets held back as suspect; %d in the dataset", len(held), len(in))
	code, out, _ := runCLI(t, nil, "status", "--store", dir+"/store")
	if code != 0 || !strings.Contains(out, "held back as suspect") {
		t.Errorf("status does not list the suspects:\n%s", out)
	}
	for id := range held {
		if !strings.Contains(out, id) {
			t.Errorf("status does not name %s:\n%s", id, out)
		}
	}

	// Asked for by name, suspects are kept.
	code, _, stderr = runCLI(t, env, append(args, "--include-suspect")...)
	if code != 0 {
		t.Fatalf("--include-suspect: exit %d\n%s", code, stderr)
	}
	in, _ = e2eDataset(t, dir+"/dataset")
	kept := 0
	for id := range held {
		if in[id] {
			kept++
		}
	}
	if kept == 0 {
		t.Errorf("--include-suspect kept none of the %d suspects", len(held))
	}

	// A careful model on a larger world: nothing is suspect (the bounds
	// leave room for what careful readings look like).
	c := e2eSim(t, sim.WorldConfig{Seed: 11, Targets: 150}, sim.Options{})
	clean := t.TempDir()
	code, stdout, stderr = runCLI(t, env, e2eRunArgs(t, c, clean+"/store", clean+"/dataset", "--arxiv-interval", "0", "--s2-interval", "1ms",
		"--llm-concurrency", "8", "--classify-workers", "8", "--summarize-workers", "8")...)
	if code != 0 || strings.Contains(stdout, "\tsuspect\t") {
		t.Errorf("a careful model: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// When the arXiv API fails past its retries, the run says which targets
// lack their metadata, exits 1, and publishes none of them with empty
// categories; once the API answers, the next run brings them in.
func TestE2EArxivAPIDown(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	t.Run("failing", func(t *testing.T) {
		testArxivAPIDown(t, sim.Options{Faults: map[string]sim.Faults{sim.ArxivAPI: {P5xx: 1}}})
	})
	t.Run("hung", func(t *testing.T) {
		testArxivAPIDown(t, sim.Options{Limits: map[string]sim.Limits{sim.ArxivAPI: {Latency: time.Hour}}}, "--timeout", "300ms")
	})
}

func testArxivAPIDown(t *testing.T, opt sim.Options, flags ...string) {
	s := e2eSim(t, sim.WorldConfig{Seed: 12, Targets: 12}, opt)
	dir := t.TempDir()
	env := map[string]string{"SOURCE_DATE_EPOCH": e2eEpoch}
	args := e2eRunArgs(t, s, dir+"/store", dir+"/dataset", append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--retries", "1"}, flags...)...)
	code, stdout, stderr := runCLI(t, env, args...)
	if code != 1 || !strings.Contains(stderr, "12 targets without arXiv metadata") || strings.Count(stdout, "no arXiv metadata") != 12 {
		t.Fatalf("exit %d, want 1 naming the 12 targets without metadata\n%s\n%s", code, stdout, stderr)
	}
	pub, err := dataset.ReadDataset(t.Context(), dir+"/dataset")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range pub.Instances {
		t.Errorf("%s published without its arXiv metadata (categories %v)", in.InstanceID, in.Target.Categories)
	}
	for _, d := range pub.Dropped {
		if d.Reason != dataset.DropNoMetadata {
			t.Errorf("dropped %s for %s (%s), want %s", d.TargetID, d.Reason, d.Detail, dataset.DropNoMetadata)
		}
	}
	s.SetFaults(nil)
	s.Service(sim.ArxivAPI).SetLimits(sim.Limits{})
	code, _, stderr = runCLI(t, env, args...)
	if code != 0 {
		t.Fatalf("with the API back: exit %d\n%s", code, stderr)
	}
	pub, err = dataset.ReadDataset(t.Context(), dir+"/dataset")
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.Instances) == 0 {
		t.Fatal("no instance once the metadata is read")
	}
	for _, in := range pub.Instances {
		if in.Target.PrimaryCategory == "" || len(in.Target.Categories) == 0 {
			t.Errorf("%s has no categories", in.InstanceID)
		}
	}
}

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
	bin := e2eBuild(t)
	s := e2eSim(t, sim.WorldConfig{Seed: 13, Targets: 60}, sim.Options{})
	out := t.TempDir()
	args := e2eRunArgs(t, s, mnt+"/store", out+"/dataset", "--arxiv-interval", "1ms", "--s2-interval", "1ms")
	run := func() (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+e2eEpoch)
		b, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(b)
	}
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
	for _, calls := range e2eCalls(s) {
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
	ref := t.TempDir()
	if code, _, stderr := runCLI(t, map[string]string{"SOURCE_DATE_EPOCH": e2eEpoch}, e2eRunArgs(t, s, ref+"/store", ref+"/dataset", "--arxiv-interval", "1ms", "--s2-interval", "1ms")...); code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr)
	}
	got, want := readShards(t, out+"/dataset"), readShards(t, ref+"/dataset")
	for name, b := range want {
		if string(got[name]) != string(b) {
			t.Errorf("%s differs from an uninterrupted run's", filepath.Base(name))
		}
	}
}
