package exports

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/pairs"
	"github.com/groundwork/curate/sft"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/topics"
)

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
	s := clitest.Sim(t, sim.WorldConfig{Seed: 3, Targets: 16}, sim.Options{StrictOpenAI: true, Limits: map[string]sim.Limits{sim.LLM: slow, sim.Anthropic: slow}})
	dir := t.TempDir()
	env := map[string]string{"SOURCE_DATE_EPOCH": clitest.Epoch}
	args := clitest.RunArgs(t, s, dir+"/store", dir+"/dataset", "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--log", "warn")
	if code, _, stderr := clitest.Run(t, env, args...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	sftRun := func(name, provider string, extra ...string) (int, string, map[string]string) {
		out := filepath.Join(dir, "sft-"+name)
		a := []string{"sft", "--dataset", dir + "/dataset", "--out", out, "--store", filepath.Join(dir, "store-"+name), "--log", "warn",
			"--llm-base", s.URL(sim.LLM), "--llm-model", sim.Model, "--splits", "train,test", "--price", clitest.Prices}
		mode := "sync"
		if len(extra) > 0 && extra[0] == "batch" {
			mode, extra = "batch", extra[1:]
		}
		a = append(append(a, clitest.Provider(s, provider, mode)...), extra...)
		code, _, stderr := clitest.Run(t, env, a...)
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
			if batch := clitest.UsageColumn(t, stderr, "sft-ideas", "batch calls"); batch == "0" {
				t.Errorf("the ideas went through no batch:\n%s", stderr)
			}
			if batch := clitest.UsageColumn(t, stderr, "sft-openings", "batch calls"); batch != "0" {
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
	s := clitest.Sim(t, sim.WorldConfig{Seed: 1, Targets: 1}, sim.Options{StrictOpenAI: true,
		Limits: map[string]sim.Limits{sim.LLM: {BatchDuration: 200 * time.Millisecond}}})
	llmFlags := func(mode string) []string {
		provider := map[string]string{"sync": "compatible", "batch": "openai"}[mode]
		return append([]string{"--log", "warn", "--llm-base", s.URL(sim.LLM), "--llm-model", sim.Model}, clitest.Provider(s, provider, mode)...)
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
			if code, _, stderr := clitest.Run(t, nil, "demo", "--store", st, "--out", filepath.Join(dir, "ds")); code != 0 {
				t.Fatalf("demo: exit %d\n%s", code, stderr)
			}
			args := append([]string{"topics", "--store", st, "--iou", "0.25", "--min-support", "2", "--min-background", "4",
				"--splits", "train,test", "--out", filepath.Join(dir, "topics")}, llmFlags(mode)...)
			if mode == "batch" {
				code, _, stderr := clitest.Run(t, nil, args...)
				if code != 75 || !strings.Contains(stderr, "wait on their LLM tag; nothing written") {
					t.Errorf("topics batch without waiting: exit %d\n%s", code, stderr)
				}
				args = append(args, "--llm-wait", "1m")
			}
			code, _, stderr := clitest.Run(t, nil, args...)
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
				code, _, stderr := clitest.Run(t, nil, args...)
				if code != 75 || !strings.Contains(stderr, "rewrites wait on LLM answers; nothing written") {
					t.Errorf("pairs batch without waiting: exit %d\n%s", code, stderr)
				}
				args = append(args, "--llm-wait", "1m")
			}
			code, stdout, stderr := clitest.Run(t, nil, args...)
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

// readAt is the time a pairs file says its citation counts were read.
var readAt = regexp.MustCompile(`"counts_read_at":"[^"]*",?`)
