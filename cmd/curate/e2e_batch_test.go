package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/pairs"
	"github.com/groundwork/curate/sft"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/topics"
)

// e2eProvider is how a test points curate at one of the simulated LLM
// services: the flags after the world's own (which name the
// OpenAI-compatible service and its model).
func e2eProvider(s *sim.Servers, provider, mode string) []string {
	var f []string
	switch provider {
	case "compatible":
		f = []string{"--llm-provider", "compatible"}
	case "openai":
		f = []string{"--llm-provider", "openai"}
	case "anthropic":
		f = []string{"--llm-provider", "anthropic", "--llm-base", s.URL(sim.Anthropic), "--llm-model", "claude-sonnet-4-6"}
	}
	f = append(f, "--llm-mode", mode)
	if mode == "batch" {
		f = append(f, "--llm-poll-interval", "5ms")
	}
	return f
}

// e2ePrices prices the simulated models as their real counterparts.
const e2ePrices = "sim-1=2.5/10/1.25,claude-sonnet-4-6=3/15/0.30/3.75"

// TestE2EBatchModes runs the same simulated world through the
// OpenAI-compatible service in sync mode, OpenAI's Batch API, and
// Anthropic's Messages API in sync and in batch mode. Batch runs that wait
// (--llm-wait) finish in one run with the Parquet of the sync run of the
// same model, byte for byte; no request is submitted twice; the usage
// table shows the batch calls and what they saved, and the prompt cache.
func TestE2EBatchModes(t *testing.T) {
	if testing.Short() {
		t.Skip("four end-to-end runs")
	}
	world := sim.WorldConfig{Seed: 3, Targets: 200}
	common := []string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn", "--price", e2ePrices}
	env := map[string]string{"SOURCE_DATE_EPOCH": e2eEpoch}
	type result struct {
		shards        map[string][]byte
		stderr        string
		batches       sim.BatchStats
		chat, anthMsg int
		instances     int
	}
	run := func(t *testing.T, provider, mode string, extra ...string) result {
		s := e2eSim(t, world, sim.Options{StrictOpenAI: true})
		dir := t.TempDir()
		args := e2eRunArgs(t, s, dir+"/store", dir+"/dataset", append(append(common, e2eProvider(s, provider, mode)...), extra...)...)
		code, _, stderr := runCLI(t, env, args...)
		if code != 0 {
			t.Fatalf("%s %s: exit %d\n%s", provider, mode, code, stderr)
		}
		name := sim.LLM
		if provider == "anthropic" {
			name = sim.Anthropic
		}
		in, _ := e2eDataset(t, dir+"/dataset")
		return result{shards: readShards(t, dir+"/dataset"), stderr: stderr, batches: s.BatchStats(name),
			chat: s.Service(sim.LLM).Stats().Requests, anthMsg: s.Service(sim.Anthropic).Stats().Requests, instances: len(in)}
	}
	syncOpenAI := run(t, "compatible", "sync")
	if syncOpenAI.instances < world.Targets/2 {
		t.Fatalf("the sync run built %d instances of %d targets", syncOpenAI.instances, world.Targets)
	}
	for _, tc := range []struct {
		provider string
		ref      *result
	}{{"openai", &syncOpenAI}, {"anthropic", nil}} {
		t.Run(tc.provider, func(t *testing.T) {
			ref := tc.ref
			if ref == nil {
				r := run(t, tc.provider, "sync")
				ref = &r
				if r.instances < world.Targets/2 {
					t.Fatalf("the anthropic sync run built %d instances of %d targets", r.instances, world.Targets)
				}
				if !strings.Contains(r.stderr, "cache writes") || usageColumn(t, r.stderr, "summarize", "from prompt cache") == "0" {
					t.Errorf("anthropic sync: the usage table shows no prompt cache reads for summarize:\n%s", r.stderr)
				}
			}
			b := run(t, tc.provider, "batch", "--llm-wait", "2m")
			if !maps.EqualFunc(b.shards, ref.shards, bytes.Equal) {
				t.Errorf("batch mode wrote other Parquet than sync mode: %v vs %v", slices.Sorted(maps.Keys(b.shards)), slices.Sorted(maps.Keys(ref.shards)))
			}
			if b.batches.Batches == 0 {
				t.Fatalf("no batch was submitted: %+v", b.batches)
			}
			for id, n := range b.batches.Submissions {
				if n != 1 {
					t.Errorf("%s submitted %d times", id, n)
				}
			}
			for _, stage := range []string{"classify", "summarize"} {
				calls, _ := strconv.Atoi(usageColumn(t, b.stderr, stage, "calls"))
				batch, _ := strconv.Atoi(usageColumn(t, b.stderr, stage, "batch calls"))
				// Anthropic's batches may be warmed: one request sent ahead
				// of a batch writes the prefix its requests share.
				if calls == 0 || batch > calls || calls-batch > b.batches.Batches || !strings.HasPrefix(usageColumn(t, b.stderr, stage, "saved by batch"), "$") ||
					usageColumn(t, b.stderr, stage, "saved by batch") == "$0.0000" {
					t.Errorf("%s: %d calls, %d batch calls, saved by batch %s:\n%s", stage, calls, batch, usageColumn(t, b.stderr, stage, "saved by batch"), b.stderr)
				}
			}
			t.Logf("%s batch: %d batches, %d lines, %d polls", tc.provider, b.batches.Batches, b.batches.Lines, b.batches.Polls)
		})
	}
}

// TestE2EBatchInterrupt: the first Ctrl-C stops a run that waits for its
// batches at once (it does not sit out --llm-wait), with exit 130; the
// batch stays pending in the store for the next run.
func TestE2EBatchInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds curate")
	}
	bin := e2eBuild(t)
	s := e2eSim(t, sim.WorldConfig{Seed: 3, Targets: 4}, sim.Options{Limits: map[string]sim.Limits{sim.LLM: {BatchDuration: time.Hour}}})
	dir := t.TempDir()
	p := e2eStart(t, bin, e2eRunArgs(t, s, dir+"/store", dir+"/dataset", append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms"},
		append(e2eProvider(s, "openai", "batch"), "--llm-wait", "1h")...)...)...)
	if !e2eWaitUntil(t, p, func() bool { return s.BatchStats(sim.LLM).Polls >= 2 }) {
		t.Fatalf("the run ended before waiting: exit %d\n%s", p.code, p.stderr.String())
	}
	p.cmd.Process.Signal(os.Interrupt)
	if !p.wait(30 * time.Second) {
		t.Fatal("the run did not stop within 30 s of SIGINT while waiting for a batch")
	}
	if p.code != 130 || !strings.Contains(p.stderr.String(), "waiting for LLM batches") {
		t.Errorf("exit %d, want 130\n%s", p.code, p.stderr.String())
	}
	code, stdout, _ := runCLI(t, nil, "status", "--store", dir+"/store")
	if code != 0 || !strings.Contains(stdout, "LLM batches pending (1)") {
		t.Errorf("status after the interrupt: exit %d\n%s", code, stdout)
	}
}

// TestE2EStrictOpenAI: with --llm-provider openai, the schemas curate
// sends in strict mode hold no keyword OpenAI's strict mode rejects (the
// simulated service refuses them as OpenAI does, with a 400): no request
// of the run is refused, and none falls back to a schema in the prompt.
func TestE2EStrictOpenAI(t *testing.T) {
	s := e2eSim(t, sim.WorldConfig{Seed: 3, Targets: 6}, sim.Options{StrictOpenAI: true})
	dir := t.TempDir()
	args := e2eRunArgs(t, s, dir+"/store", dir+"/dataset", append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms"},
		e2eProvider(s, "openai", "sync")...)...)
	code, _, stderr := runCLI(t, map[string]string{"SOURCE_DATE_EPOCH": e2eEpoch}, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	calls := s.Service(sim.LLM).Calls()
	for _, c := range calls {
		if c.Status != 200 {
			t.Errorf("%s: status %d", c.Note, c.Status)
		}
	}
	if len(calls) == 0 || strings.Contains(stderr, "falling back") {
		t.Errorf("%d calls; stderr:\n%s", len(calls), stderr)
	}
	// The compatible dialect sends the full schema under strict: true,
	// which OpenAI refuses: the check can fail.
	s.Reset()
	args = e2eRunArgs(t, s, dir+"/store2", dir+"/dataset2", append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms"},
		e2eProvider(s, "compatible", "sync")...)...)
	if code, _, stderr := runCLI(t, nil, args...); code != 0 || !strings.Contains(stderr, "falling back") {
		t.Errorf("compatible dialect on a strict endpoint: exit %d, no fallback logged:\n%s", code, stderr)
	}
}

// TestE2EDemoProviders runs the demo corpus through the simulated
// OpenAI-compatible service, OpenAI's Batch API and Anthropic's Messages
// API in sync and batch mode: every run builds instances, and batch mode
// writes the Parquet of sync mode with the same model.
func TestE2EDemoProviders(t *testing.T) {
	if testing.Short() {
		t.Skip("four demo runs")
	}
	s := e2eSim(t, sim.WorldConfig{Seed: 1, Targets: 1}, sim.Options{StrictOpenAI: true})
	env := map[string]string{"SOURCE_DATE_EPOCH": e2eEpoch}
	shards := map[string]map[string][]byte{}
	for _, c := range []struct{ provider, mode string }{{"compatible", "sync"}, {"openai", "batch"}, {"anthropic", "sync"}, {"anthropic", "batch"}} {
		dir := t.TempDir()
		args := []string{"demo", "--store", dir + "/store", "--out", dir + "/ds", "--log", "warn", "--llm-base", s.URL(sim.LLM), "--llm-model", sim.Model}
		args = append(args, e2eProvider(s, c.provider, c.mode)...)
		if c.mode == "batch" {
			args = append(args, "--llm-wait", "1m")
		}
		code, _, stderr := runCLI(t, env, args...)
		if code != 0 {
			t.Fatalf("demo via %s %s: exit %d\n%s", c.provider, c.mode, code, stderr)
		}
		in, _ := e2eDataset(t, dir+"/ds")
		if len(in) < 3 {
			t.Errorf("demo via %s %s: %d instances, want the demo's few", c.provider, c.mode, len(in))
		}
		shards[c.provider+" "+c.mode] = readShards(t, dir+"/ds")
	}
	for batch, sync := range map[string]string{"openai batch": "compatible sync", "anthropic batch": "anthropic sync"} {
		if !maps.EqualFunc(shards[batch], shards[sync], bytes.Equal) {
			t.Errorf("the demo's Parquet via %s differs from %s", batch, sync)
		}
	}
}

// TestE2ESFTBatch runs curate sft over a simulated world's dataset with
// the simulated model as teacher: in sync mode, then through OpenAI's and
// Anthropic's batch APIs. Batch mode writes the rows of sync mode (same
// prompts, completions and cards); the openings, which chain one call on
// the next, go synchronously; a run that does not wait exits 75 with the
// instances not generated yet, and the next collects them without
// submitting anything twice.
func TestE2ESFTBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("a pipeline run and five sft runs")
	}
	slow := sim.Limits{BatchDuration: 300 * time.Millisecond}
	s := e2eSim(t, sim.WorldConfig{Seed: 3, Targets: 16}, sim.Options{StrictOpenAI: true, Limits: map[string]sim.Limits{sim.LLM: slow, sim.Anthropic: slow}})
	dir := t.TempDir()
	env := map[string]string{"SOURCE_DATE_EPOCH": e2eEpoch}
	args := e2eRunArgs(t, s, dir+"/store", dir+"/dataset", "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn")
	if code, _, stderr := runCLI(t, env, args...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	sftRun := func(name, provider string, extra ...string) (int, string, map[string]string) {
		out := filepath.Join(dir, "sft-"+name)
		a := []string{"sft", "--dataset", dir + "/dataset", "--out", out, "--store", filepath.Join(dir, "store-"+name), "--log", "warn",
			"--llm-base", s.URL(sim.LLM), "--llm-model", sim.Model, "--splits", "train,test", "--price", e2ePrices}
		mode := "sync"
		if len(extra) > 0 && extra[0] == "batch" {
			mode, extra = "batch", extra[1:]
		}
		a = append(append(a, e2eProvider(s, provider, mode)...), extra...)
		code, _, stderr := runCLI(t, env, a...)
		rows := map[string]string{}
		for _, split := range sft.Splits() {
			data, err := os.ReadFile(filepath.Join(out, sft.JSONLDir, split+".jsonl"))
			if err != nil {
				continue
			}
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var r sft.Row
				if json.Unmarshal([]byte(l), &r) == nil && r.InstanceID != "" {
					rows[r.InstanceID] = r.Split + "\x00" + r.Prompt + "\x00" + r.Response
				}
			}
		}
		return code, stderr, rows
	}
	code, stderr, want := sftRun("sync", "compatible")
	if code != 0 || len(want) < 4 {
		t.Fatalf("sft sync: exit %d, %d rows\n%s", code, len(want), stderr)
	}
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			name := map[string]string{"openai": sim.LLM, "anthropic": sim.Anthropic}[provider]
			before := s.BatchStats(name)
			model := sim.Model
			if provider == "anthropic" {
				model = "claude-sonnet-4-6"
			}
			var ref map[string]string
			if provider == "anthropic" {
				// Another model: its own sync rows to compare with.
				c, e, r := sftRun("anthropic-sync", provider)
				if c != 0 {
					t.Fatalf("sft anthropic sync: exit %d\n%s", c, e)
				}
				ref = r
			} else {
				ref = want
			}
			code, stderr, _ := sftRun(provider+"-batch", provider, "batch")
			if code != 75 || !strings.Contains(stderr, "not generated yet") || !strings.Contains(stderr, "run the same command again later") {
				t.Errorf("sft batch without waiting: exit %d, want 75:\n%s", code, stderr)
			}
			code, stderr, got := sftRun(provider+"-batch", provider, "batch", "--llm-wait", "1m")
			if code != 0 {
				t.Fatalf("sft batch (%s): exit %d\n%s", model, code, stderr)
			}
			if !maps.Equal(got, ref) {
				t.Errorf("sft batch wrote %d rows unlike the %d of sync mode", len(got), len(ref))
			}
			if batch := usageColumn(t, stderr, "sft-ideas", "batch calls"); batch == "0" {
				t.Errorf("the ideas went through no batch:\n%s", stderr)
			}
			if batch := usageColumn(t, stderr, "sft-openings", "batch calls"); batch != "0" {
				t.Errorf("the openings went through a batch:\n%s", stderr)
			}
			after := s.BatchStats(name)
			for id, n := range after.Submissions {
				if n-before.Submissions[id] > 1 {
					t.Errorf("%s submitted %d times", id, n)
				}
			}
			t.Logf("%s: %d batches, %d lines", provider, after.Batches-before.Batches, after.Lines-before.Lines)
		})
	}
}

// TestE2ETopicsPairsBatch: topic tags (curate topics) and idea-only
// rewrites (curate pairs) by the simulated model through OpenAI's Batch
// API: a run that does not wait writes nothing and exits 75; one that
// waits writes what sync mode writes.
func TestE2ETopicsPairsBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("two demo runs, topics and pairs runs")
	}
	s := e2eSim(t, sim.WorldConfig{Seed: 1, Targets: 1}, sim.Options{StrictOpenAI: true,
		Limits: map[string]sim.Limits{sim.LLM: {BatchDuration: 200 * time.Millisecond}}})
	llmFlags := func(mode string) []string {
		provider := map[string]string{"sync": "compatible", "batch": "openai"}[mode]
		return append([]string{"--log", "warn", "--llm-base", s.URL(sim.LLM), "--llm-model", sim.Model}, e2eProvider(s, provider, mode)...)
	}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	t.Run("topics", func(t *testing.T) {
		out := map[string]string{}
		for _, mode := range []string{"sync", "batch"} {
			dir := t.TempDir()
			st := filepath.Join(dir, "store")
			if code, _, stderr := runCLI(t, nil, "demo", "--store", st, "--out", filepath.Join(dir, "ds")); code != 0 {
				t.Fatalf("demo: exit %d\n%s", code, stderr)
			}
			args := append([]string{"topics", "--store", st, "--iou", "0.25", "--min-support", "2", "--min-background", "4",
				"--splits", "train,test", "--out", filepath.Join(dir, "topics")}, llmFlags(mode)...)
			if mode == "batch" {
				code, _, stderr := runCLI(t, nil, args...)
				if code != 75 || !strings.Contains(stderr, "wait on their LLM tag; nothing written") {
					t.Errorf("topics batch without waiting: exit %d\n%s", code, stderr)
				}
				args = append(args, "--llm-wait", "1m")
			}
			code, _, stderr := runCLI(t, nil, args...)
			if code != 0 {
				t.Fatalf("topics %s: exit %d\n%s", mode, code, stderr)
			}
			out[mode] = read(filepath.Join(dir, "topics", topics.TopicsJSONL))
			if !strings.Contains(out[mode], "Shared work on") {
				t.Errorf("topics %s: no tag by the model:\n%s", mode, out[mode])
			}
		}
		if out["sync"] != out["batch"] {
			t.Errorf("topics in batch mode differ from sync mode")
		}
	})
	t.Run("pairs", func(t *testing.T) {
		out := map[string]string{}
		for _, mode := range []string{"sync", "batch"} {
			st := pairsStore(t)
			dir := filepath.Join(t.TempDir(), "pairs")
			args := append([]string{"pairs", "--store", st, "--out", dir}, llmFlags(mode)...)
			if mode == "batch" {
				code, _, stderr := runCLI(t, nil, args...)
				if code != 75 || !strings.Contains(stderr, "rewrites wait on LLM answers; nothing written") {
					t.Errorf("pairs batch without waiting: exit %d\n%s", code, stderr)
				}
				args = append(args, "--llm-wait", "1m")
			}
			code, stdout, stderr := runCLI(t, nil, args...)
			if code != 0 || strings.Count(stdout, "\n") != 3 {
				t.Fatalf("pairs %s: exit %d, want 3 pairs\n%s%s", mode, code, stdout, stderr)
			}
			// Each store's counts were read when it was written.
			out[mode] = readAt.ReplaceAllString(read(filepath.Join(dir, pairs.PairsJSONL)), "")
		}
		if out["sync"] != out["batch"] {
			t.Errorf("pairs in batch mode differ from sync mode:\n%s\n%s", out["sync"], out["batch"])
		}
	})
}

// usageColumn returns a stage's value in the named column of the LLM
// usage table curate prints on stderr.
func usageColumn(t *testing.T, stderr, stage, column string) string {
	t.Helper()
	lines := strings.Split(stderr, "\n")
	h := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "LLM usage") })
	if h < 0 {
		t.Fatalf("no usage table in:\n%s", stderr)
	}
	cols := splitColumns(lines[h])
	i := slices.Index(cols, column)
	if i < 0 {
		t.Fatalf("no column %q in %q", column, cols)
	}
	for _, l := range lines[h+1:] {
		f := splitColumns(l)
		if len(f) == len(cols) && f[0] == stage {
			return f[i]
		}
	}
	t.Fatalf("no usage row for %s in:\n%s", stage, stderr)
	return ""
}

var (
	columnGap = regexp.MustCompile(`\s{2,}`)
	readAt    = regexp.MustCompile(`"counts_read_at":"[^"]*",?`)
)

func splitColumns(l string) []string { return columnGap.Split(strings.TrimSpace(l), -1) }

// e2eDropped reads a dataset's dropped targets by reason.
func e2eDropped(t *testing.T, dir string) map[string][]string {
	t.Helper()
	_, dropped := e2eDataset(t, dir)
	out := map[string][]string{}
	for id, d := range dropped {
		out[d.Reason] = append(out[d.Reason], id)
	}
	return out
}

// TestE2EBatchCrashResume runs the curate binary in batch mode against
// the simulated OpenAI and Anthropic batch APIs, whose batches take a
// second, and kills it (SIGKILL) while batches are pending: once as the
// first batch file goes up, once with the classify batch pending, once
// with the summarize batch pending. In between, a run that does not wait
// exits 75 and lists the waiting targets, and curate status shows the
// pending batches. The last run collects everything: its Parquet is the
// uninterrupted run's byte for byte, and no request was ever submitted
// twice.
func TestE2EBatchCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds curate and runs it a dozen times")
	}
	bin := e2eBuild(t)
	world := sim.WorldConfig{Seed: 9, Targets: 24}
	slow := sim.Limits{BatchDuration: time.Second}
	opts := sim.Options{Limits: map[string]sim.Limits{sim.LLM: slow, sim.Anthropic: slow}}
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			name := map[string]string{"openai": sim.LLM, "anthropic": sim.Anthropic}[provider]
			flags := func(s *sim.Servers, wait bool) []string {
				f := append([]string{"--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn", "--price", e2ePrices},
					e2eProvider(s, provider, "batch")...)
				f = append(f, "--llm-poll-interval", "20ms")
				if wait {
					f = append(f, "--llm-wait", "2m")
				}
				return f
			}
			ref := e2eSim(t, world, opts)
			refDir := t.TempDir()
			p := e2eStart(t, bin, e2eRunArgs(t, ref, refDir+"/store", refDir+"/dataset", flags(ref, true)...)...)
			if !p.wait(120*time.Second) || p.code != 0 {
				t.Fatalf("uninterrupted run: exit %d\n%s", p.code, p.stderr.String())
			}
			want := readShards(t, refDir+"/dataset")
			refStats := ref.BatchStats(name)
			t.Logf("uninterrupted run: %s, %d batches of %d lines", time.Since(p.started).Round(time.Millisecond), refStats.Batches, refStats.Lines)

			s := e2eSim(t, world, opts)
			dir := t.TempDir()
			waitArgs := e2eRunArgs(t, s, dir+"/store", dir+"/dataset", flags(s, true)...)
			noWaitArgs := e2eRunArgs(t, s, dir+"/store", dir+"/dataset", flags(s, false)...)
			killWhen := func(what string, cond func() bool) {
				t.Helper()
				p := e2eStart(t, bin, waitArgs...)
				if !e2eWaitUntil(t, p, cond) {
					t.Fatalf("the run ended (exit %d) before %s\n%s", p.code, what, p.stderr.String())
				}
				p.cmd.Process.Signal(syscall.SIGKILL)
				p.wait(10 * time.Second)
				t.Logf("killed %s; batches so far %+v", what, s.BatchStats(name).Batches)
			}
			upload := func() bool {
				for _, c := range s.Service(name).Calls() {
					if strings.Contains(c.Key, "/v1/files") || strings.Contains(c.Key, "/v1/messages/batches") {
						return true
					}
				}
				return false
			}
			killWhen("as the first batch goes up", upload)
			if s.BatchStats(name).Batches == 0 {
				killWhen("with the classify batch pending", func() bool { return s.BatchStats(name).Batches >= 1 })
			}

			// Status sees the pending batch; a run that does not wait lists
			// the waiting targets and exits 75, submitting nothing again.
			code, stdout, _ := runCLI(t, nil, "status", "--store", dir+"/store", "--json")
			var st app.StoreStatus
			if err := json.Unmarshal([]byte(stdout), &st); code != 0 || err != nil {
				t.Fatalf("status: exit %d, %v", code, err)
			}
			if len(st.Batches) == 0 || st.Batches[0].Requests == 0 || len(st.Waiting) == 0 {
				t.Errorf("status shows batches %+v and %d waiting targets; want the pending classify batch and its targets", st.Batches, len(st.Waiting))
			}
			// While it runs no batch ends: a run longer than the batches'
			// second (a loaded machine's) would otherwise collect them all.
			svc := s.Service(name)
			svc.SetLimits(sim.Limits{BatchDuration: time.Hour})
			p = e2eStart(t, bin, noWaitArgs...)
			ended := p.wait(5 * time.Minute)
			svc.SetLimits(slow)
			if !ended || p.code != 75 {
				t.Errorf("a run that does not wait: exit %d, want 75 (not finished)\n%s", p.code, p.stderr.String())
			}
			if n := strings.Count(p.stdout.String(), "\twaiting\t"); n == 0 || !strings.Contains(p.stderr.String(), "run the same command again later to collect them") {
				t.Errorf("%d waiting lines on stdout; stderr:\n%s", n, p.stderr.String())
			}
			if d := e2eDropped(t, dir+"/dataset")[dataset.DropPending]; len(d) == 0 {
				t.Errorf("no target dropped as %s from the dataset of an unfinished run", dataset.DropPending)
			}

			killWhen("with the summarize batch pending", func() bool { return s.BatchStats(name).Batches >= 2 })
			p = e2eStart(t, bin, waitArgs...)
			if !p.wait(120*time.Second) || p.code != 0 {
				t.Fatalf("final run: exit %d\n%s", p.code, p.stderr.String())
			}
			if got := readShards(t, dir+"/dataset"); !maps.EqualFunc(got, want, bytes.Equal) {
				t.Errorf("the dataset after the kills differs from the uninterrupted run's")
			}
			bs := s.BatchStats(name)
			for id, n := range bs.Submissions {
				if n != 1 {
					t.Errorf("%s was submitted %d times", id, n)
				}
			}
			// Requests asked: the batch lines and, for Anthropic, the ones
			// sent ahead of their batch to warm the prompt cache.
			if asked, refAsked := bs.Lines+syncMessages(s, name), refStats.Lines+syncMessages(ref, name); asked != refAsked {
				t.Errorf("%d requests asked across the kills, the uninterrupted run %d", asked, refAsked)
			}
			t.Logf("after the kills: %d batches, %d lines, %d polls", bs.Batches, bs.Lines, bs.Polls)
		})
	}
}

// syncMessages counts the synchronous answers a simulated LLM gave: the
// requests sent ahead of a batch to warm the prompt cache, in batch mode.
func syncMessages(s *sim.Servers, name string) int {
	path := map[string]string{sim.LLM: "/v1/chat/completions", sim.Anthropic: "/v1/messages"}[name]
	n := 0
	for _, c := range s.Service(name).CallsTo(path) {
		if c.Status == 200 {
			n++
		}
	}
	return n
}
