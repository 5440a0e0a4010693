package publishing

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/demo"
	"github.com/groundwork/curate/store"
)

// A run that fails on usage, on the lock, or before its stages complete
// leaves the published dataset byte for byte as it was, and makes no
// request.
func TestFailedRunNeverPublishes(t *testing.T) {
	dir := t.TempDir()
	env, requests := clitest.DemoWorld(t, dir)
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir)...); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	before := clitest.TreeDigest(t, dir+"/ds", dir+"/ds.prev")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string // in stderr
	}{
		{"a price without output", []string{"--price", "sim-1=0.15"}, nil, "--price"},
		{"dollars without prices", []string{"--budget-usd", "5"}, nil, "--budget-usd needs a --price"},
		{"a base without a model", []string{"--llm-base", "http://127.0.0.1:1/v1"}, nil, "--llm-model"},
		{"negative LLM concurrency", []string{"--llm-concurrency", "-1"}, nil, "--llm-concurrency -1"},
		{"zero LLM concurrency", []string{"--llm-concurrency", "0"}, nil, "--llm-concurrency 0"},
		{"negative retries", []string{"--retries", "-1"}, nil, "--retries -1"},
		{"negative dollars", []string{"--budget-usd", "-1"}, nil, "--budget-usd -1"},
		{"NaN dollars", []string{"--budget-usd", "NaN", "--price", "m=1/2"}, nil, "--budget-usd NaN"},
		{"negative tokens", []string{"--budget-tokens", "-5"}, nil, "--budget-tokens -5"},
		{"negative K", []string{"--num-ideas", "-3"}, nil, "--num-ideas -3"},
		{"zero workers", []string{"--summarize-workers", "0"}, nil, "--summarize-workers 0"},
		{"negative workers", []string{"--fetch-workers", "-2"}, nil, "--fetch-workers -2"},
		{"negative shard rows", []string{"--shard-rows", "-1"}, nil, "--shard-rows -1"},
		{"a bad cutoff", []string{"--test-from", "2026-13-01"}, nil, "--test-from"},
		{"a bad creation date", []string{"--created-at", "yesterday"}, nil, "--created-at"},
		{"a bad policy", []string{"--contamination", "ignore"}, nil, "--contamination"},
		{"a bad SOURCE_DATE_EPOCH", nil, map[string]string{"SOURCE_DATE_EPOCH": "tomorrow"}, "SOURCE_DATE_EPOCH"},
		{"an unknown stage", []string{"--stages", "fetch,publish"}, nil, `unknown stage "publish"`},
		{"a zero timeout", []string{"--timeout", "0"}, nil, "--timeout 0"},
		{"a zero LLM timeout", []string{"--llm-timeout", "0s"}, nil, "--llm-timeout 0s"},
		{"a page limit over 1000", []string{"--s2-page-limit", "5000"}, nil, "--s2-page-limit 5000"},
		{"a bad log level", []string{"--log", "loud"}, nil, "--log"},
		{"a base that is no URL", []string{"--s2-base", "api.semanticscholar.org"}, nil, "--s2-base"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := map[string]string{}
			for k, v := range env {
				e[k] = v
			}
			for k, v := range tt.env {
				e[k] = v
			}
			n := requests.Load()
			code, _, stderr := clitest.Run(t, e, clitest.DemoRunArgs(dir, tt.args...)...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming %q", code, stderr, tt.want)
			}
			if got := requests.Load() - n; got != 0 {
				t.Errorf("%d requests made before refusing", got)
			}
			if after := clitest.TreeDigest(t, dir+"/ds", dir+"/ds.prev"); after != before {
				t.Error("the published dataset changed")
			}
		})
	}

	// A run refused by the lock publishes nothing either.
	st, err := store.Open(context.Background(), dir+"/store")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	unlock, err := st.Lock()
	if err != nil {
		t.Fatal(err)
	}
	n := requests.Load()
	for _, args := range [][]string{clitest.DemoRunArgs(dir), {"dataset", "--out", dir + "/ds"}} {
		code, _, stderr := clitest.Run(t, env, args...)
		if code != 2 || !strings.Contains(stderr, "another curate run is using the store") {
			t.Errorf("curate %s on a locked store: exit %d, stderr %q", args[0], code, stderr)
		}
	}
	unlock()
	if requests.Load() != n {
		t.Errorf("%d requests on a locked store", requests.Load()-n)
	}
	if after := clitest.TreeDigest(t, dir+"/ds", dir+"/ds.prev"); after != before {
		t.Error("a refused run changed the published dataset")
	}
}

// Two `curate dataset` at once on one store and one output: no panic,
// each either publishes, finds it up to date or is refused by a lock, and
// the published dataset passes --check every time.
func TestConcurrentDatasetWriters(t *testing.T) {
	dir := t.TempDir()
	env, _ := clitest.DemoWorld(t, dir)
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir, "--stages", "fetch,citegraph,classify,sources,summarize,tuples")...); code != 0 {
		t.Fatalf("stages: exit %d\n%s", code, stderr)
	}
	// A copy of the store: two stores publishing to one place.
	if err := os.CopyFS(dir+"/store2", os.DirFS(dir+"/store")); err != nil {
		t.Fatal(err)
	}
	// CURATE_WRITER_ROUNDS=50 repeats the 50 tries; the default
	// keeps go test within its minutes.
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
	if v := os.Getenv("CURATE_WRITER_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CURATE_WRITER_ROUNDS=%q: want a positive count", v)
		}
		rounds = n
	}
	published, refused := 0, 0
	for round := range rounds {
		// A new cutoff each round: the inputs change, so both writers build.
		testFrom := []string{"2025-06-01", "2025-09-01", "2026-01-01"}[round%3]
		stores := []string{dir + "/store", dir + "/store"}
		if round%2 == 1 {
			stores[1] = dir + "/store2"
		}
		var wg sync.WaitGroup
		codes := make([]int, 2)
		errs := make([]string, 2)
		for i := range 2 {
			wg.Go(func() {
				codes[i], _, errs[i] = clitest.Run(t, env, "dataset", "--store", stores[i], "--out", dir+"/ds", "--test-from", testFrom)
			})
		}
		wg.Wait()
		ok := 0
		for i, code := range codes {
			switch {
			case strings.Contains(errs[i], "panic"):
				t.Fatalf("round %d: panic:\n%s", round, errs[i])
			case code == 0:
				ok++
			case code == 2 && (strings.Contains(errs[i], "another curate run is using the store") || strings.Contains(errs[i], "publishing there")):
				refused++
			default:
				t.Fatalf("round %d: writer %d: exit %d\n%s", round, i, code, errs[i])
			}
		}
		if ok == 0 {
			t.Fatalf("round %d: neither writer published: %q", round, errs)
		}
		published += ok
		if code, out, stderr := clitest.Run(t, nil, "dataset", "--check", dir+"/ds"); code != 0 {
			t.Fatalf("round %d: check: exit %d\n%s%s", round, code, out, stderr)
		}
	}
	t.Logf("%d rounds of two writers: %d publishes, %d refused by a lock, every dataset passing --check", rounds, published, refused)
}

// Exports keep the splits apart: one file per split by default; all of
// them in one file only when asked, with a split on every row and unique
// indexes; an unknown split is refused before anything is written.
func TestExportSplits(t *testing.T) {
	dir := t.TempDir()
	env, _ := clitest.DemoWorld(t, dir)
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir)...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	for _, format := range []string{"verl-rl", "verl-sft", "messages"} {
		out := dir + "/" + format
		if code, _, stderr := clitest.Run(t, nil, "export", "--format", format, "--encoding", "jsonl", "--out", out, dir+"/ds"); code != 0 {
			t.Fatalf("export %s: exit %d\n%s", format, code, stderr)
		}
		for _, split := range []string{"train", "validation", "test"} {
			b, err := os.ReadFile(out + "/" + split + ".jsonl")
			if err != nil {
				t.Fatal(err)
			}
			for _, other := range []string{"train", "validation", "test"} {
				if other != split && strings.Contains(string(b), `"split":"`+other+`"`) {
					t.Errorf("%s %s file holds %s rows:\n%.400s", format, split, other, b)
				}
			}
			if !strings.Contains(string(b), `"split":"`+split+`"`) {
				t.Errorf("%s %s file holds no %s row:\n%.400s", format, split, split, b)
			}
		}
		card, _ := os.ReadFile(out + "/README.md")
		if !strings.Contains(string(card), "train and test splits") || !strings.Contains(string(card), "never train on it") || !strings.Contains(string(card), "data.val_files=validation.jsonl") {
			t.Errorf("%s card does not say which splits it draws on:\n%s", format, card)
		}
	}
	out := dir + "/all"
	if code, _, stderr := clitest.Run(t, nil, "export", "--format", "verl-rl", "--encoding", "jsonl", "--split", "all", "--out", out, dir+"/ds"); code != 0 {
		t.Fatalf("export --split all: exit %d\n%s", code, stderr)
	}
	b, _ := os.ReadFile(out + "/all.jsonl")
	for i := range strings.Count(string(b), "\n") {
		if strings.Count(string(b), `"index":`+strconv.Itoa(i)+`,`) != 1 {
			t.Errorf("index %d is not unique in the all file:\n%s", i, b)
		}
	}
	for _, bad := range []string{"val", "valid", "both"} {
		code, _, stderr := clitest.Run(t, nil, "export", "--split", bad, "--out", dir+"/bad", dir+"/ds")
		if code != 2 || !strings.Contains(stderr, bad) {
			t.Errorf("--split %s: exit %d, %q", bad, code, stderr)
		}
		if _, err := os.Stat(dir + "/bad"); err == nil {
			t.Errorf("--split %s wrote something", bad)
		}
	}
	if _, problems, err := publish.Verify(out); err != nil || len(problems) > 0 {
		t.Errorf("export does not verify: %v %v", problems, err)
	}
}

// curate run takes its --out's publishing lock before its first request
// and holds it to the end: a second run aimed at the same --out (from any
// store) is refused with exit 2 before it asks anything, and while the
// first is fetching, nobody else can publish there.
func TestRunHoldsOutputLock(t *testing.T) {
	dir := t.TempDir()
	env, requests := clitest.DemoWorld(t, dir)
	out := dir + "/ds"
	unlock, err := publish.Lock(out)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir, "--store", dir+"/other")...)
	unlock()
	if code != 2 || !strings.Contains(stderr, "another curate is publishing there") {
		t.Errorf("a run while another holds --out: exit %d, want 2\n%s", code, stderr)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests before refusing", n)
	}

	// While the run asks the services, --out is locked.
	var locked, tried atomic.Int32
	probe := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tried.Add(1) == 1 {
				if unlock, err := publish.Lock(out); errors.Is(err, publish.ErrLocked) {
					locked.Add(1)
				} else if err == nil {
					unlock()
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	h, err := demo.ServiceHandler(sim.Arxiv)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(probe(h))
	defer srv.Close()
	env["CURATE_ARXIV_BASE"] = srv.URL
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir)...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	if tried.Load() == 0 || locked.Load() != 1 {
		t.Errorf("--out was not locked while the run asked arXiv (%d requests seen)", tried.Load())
	}
	if code, stdout, stderr := clitest.Run(t, nil, "dataset", "--check", out); code != 0 {
		t.Errorf("check: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestNothingToPublishKeepsDataset: a run in which every target failed,
// or a dataset build that keeps no instance, does not replace a published
// dataset with an empty one: it stays as it was, the command says why
// and exits 1.
func TestNothingToPublishKeepsDataset(t *testing.T) {
	dir := t.TempDir()
	env, _ := clitest.DemoWorld(t, dir)
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir)...); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	before := clitest.TreeDigest(t, dir+"/ds", dir+"/ds.prev")
	// Papers the demo's arXiv does not know: every target fails.
	args := []string{"run", "--out", dir + "/ds", "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--retries", "0", "2101.00001", "2101.00002"}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"a run whose every target failed", args},
		{"a dataset of targets the store lacks", []string{"dataset", "--out", dir + "/ds", "2101.00001"}},
	} {
		code, stdout, stderr := clitest.Run(t, env, tt.args...)
		if code != 1 || !strings.Contains(stdout+stderr, "no instance to publish") || !strings.Contains(stdout+stderr, dir+"/ds is left as it was") {
			t.Errorf("%s: exit %d, want 1 saying why\nstdout:\n%s\nstderr:\n%s", tt.name, code, stdout, stderr)
		}
		if after := clitest.TreeDigest(t, dir+"/ds", dir+"/ds.prev"); after != before {
			t.Errorf("%s: the published dataset changed", tt.name)
		}
	}
	// Without a previous dataset there is nothing to keep: the empty one
	// is published, its dropped.json saying why each target is missing.
	if code, _, stderr := clitest.Run(t, env, "dataset", "--out", dir+"/none", "2101.00001"); code != 0 {
		t.Errorf("an empty dataset at a new place: exit %d\n%s", code, stderr)
	}
	if b, err := os.ReadFile(dir + "/none/dropped.json"); err != nil || !strings.Contains(string(b), "2101.00001") {
		t.Errorf("the empty dataset does not say why: %v\n%s", err, b)
	}
}
