package exports

import (
	"context"
	"fmt"
	"net"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim/demo"
	"github.com/groundwork/curate/store"
)

// TestDemoEndToEnd runs the whole pipeline on the bundled corpus, checks
// the dataset, and runs it again: nothing is redone and the dataset is
// byte for byte the same.
func TestDemoEndToEnd(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"SOURCE_DATE_EPOCH": "1767225600"}
	args := []string{"demo", "--store", dir + "/store", "--out", dir + "/ds"}
	code, stdout, stderr := clitest.Run(t, env, args...)
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, stderr)
	}
	firstStderr := stderr
	// The run's account on stderr, what it made on stdout.
	if !strings.Contains(stderr, "9 of 9 targets through every stage") {
		t.Errorf("demo's stderr lacks the run summary:\n%s", stderr)
	}
	for _, want := range []string{"5 train and 3 test instances", "test_target_as_train_source 1", "the dataset is in " + dir + "/ds"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo's stdout lacks %q:\n%s", want, stdout)
		}
	}
	if code, out, stderr := clitest.Run(t, nil, "dataset", "--check", dir+"/ds"); code != 0 {
		t.Fatalf("check: exit %d\n%s%s", code, out, stderr)
	}
	first := clitest.Shards(t, dir+"/ds")

	code, stdout, stderr = clitest.Run(t, env, args...)
	if code != 0 {
		t.Fatalf("second demo: exit %d\n%s", code, stderr)
	}
	for _, stage := range []string{"fetch", "citegraph", "classify", "summarize"} {
		if !strings.Contains(stderr, stage+strings.Repeat(" ", 11-len(stage))+"0     9") {
			t.Errorf("second run redid %s work:\n%s", stage, stderr)
		}
	}
	// Nothing is asked, robots.txt included: the demo's services come back
	// at the addresses of the first run, whose robots.txt answers the
	// store holds within their TTL.
	// (Unless another process took one of those ports meanwhile: the demo
	// then moves, and asks that host's robots.txt again.)
	crawl := regexp.MustCompile(`(?m)^crawl: (\S+):`)
	if fmt.Sprint(crawl.FindAllStringSubmatch(firstStderr, -1)) != fmt.Sprint(crawl.FindAllStringSubmatch(stderr, -1)) {
		t.Logf("the demo's services moved:\n%s", stderr)
	} else if !strings.Contains(stderr, "requests: arxiv 0 (0.00 per target), ar5iv 0 (0.00 per target), s2 0 (0.00 per target), arxiv-api 0 (0.00 per target)") {
		t.Errorf("the second demo run made requests:\n%s", stderr)
	}
	if second := clitest.Shards(t, dir+"/ds"); !reflect.DeepEqual(first, second) {
		t.Errorf("second run wrote a different dataset")
	}
	// Work done once is one attempt, however often the run is repeated.
	st, err := store.OpenExisting(context.Background(), dir+"/store")
	if err != nil {
		t.Fatal(err)
	}
	items, err := st.Items(context.Background(), record.Documents.Name())
	if err != nil || len(items) < 9 {
		t.Fatalf("stored documents: %v %v", items, err)
	}
	for _, item := range items {
		es, err := st.Entries(context.Background(), item)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.Attempts > 1 {
				t.Errorf("after two runs, %s %s has %d attempts, want at most 1", e.Stage, item, e.Attempts)
			}
		}
	}
	st.Close()
	// Trainer exports and the report, from the published files alone.
	for range 2 { // the second run replaces the first's export
		code, _, stderr := clitest.Run(t, nil, "export", "--format", "verl-rl", "--encoding", "jsonl", "--out", dir+"/rl", dir+"/ds")
		if code != 0 {
			t.Fatalf("export: exit %d\n%s", code, stderr)
		}
	}
	rows := 0
	for _, split := range []string{"train", "validation", "test"} {
		rl, err := os.ReadFile(dir + "/rl/" + split + ".jsonl")
		if err != nil || !strings.Contains(string(rl), `"reward_model"`) || !strings.Contains(string(rl), `"split":"`+split+`"`) {
			t.Errorf("verl-rl export of %s: %v\n%.300s", split, err, rl)
		}
		rows += strings.Count(string(rl), "\n")
	}
	if rows != 8 {
		t.Errorf("verl-rl export: %d rows, want 8", rows)
	}
	if _, problems, err := publish.Verify(dir + "/rl"); err != nil || len(problems) > 0 {
		t.Errorf("export does not verify: %v %v", problems, err)
	}
	if code, _, stderr := clitest.Run(t, nil, "report", "--out", dir+"/rep", dir+"/ds"); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	if html, err := os.ReadFile(dir + "/rep/report.html"); err != nil || !strings.Contains(string(html), "<svg") {
		t.Errorf("report.html: %v", err)
	}
	if code, out, stderr := clitest.Run(t, nil, "stats", "labels", "--store", dir+"/store"); code != 0 || !strings.Contains(out, "Label health over 38 cards") {
		t.Errorf("stats labels: exit %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(stdout, "is up to date") {
		t.Errorf("second run rebuilt an unchanged dataset:\n%s", stdout)
	}
	// A changed option rebuilds it, keeping the previous one beside it.
	if code, _, stderr := clitest.Run(t, env, "dataset", "--store", dir+"/store", "--out", dir+"/ds", "--num-ideas", "2"); code != 0 {
		t.Fatalf("dataset --num-ideas 2: exit %d\n%s", code, stderr)
	}
	code, out, _ := clitest.Run(t, nil, "dataset", "--check", dir+"/ds.prev")
	if code != 0 {
		t.Errorf("the previous dataset kept beside the new one should still check: %s", out)
	}
}

// TestDemoAddressesKept: the demo's services come back where they were on
// the store's last demo run (so the robots.txt answers the store keeps by
// URL still apply), unless an address is taken.
func TestDemoAddressesKept(t *testing.T) {
	dir := t.TempDir()
	first, err := app.StartDemo(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	was := map[string]string{}
	for _, name := range demo.Services() {
		was[name] = first.URL(name)
	}
	first.Close()
	again, err := app.StartDemo(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for name, u := range was {
		if again.URL(name) == u {
			continue
		}
		// Moved: only because another process holds the address now.
		if ln, err := net.Listen("tcp", strings.TrimPrefix(u, "http://")); err == nil {
			ln.Close()
			t.Errorf("%s moved from %s to %s although %s is free", name, u, again.URL(name), u)
		}
	}
}
