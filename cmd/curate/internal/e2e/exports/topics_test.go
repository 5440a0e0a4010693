package exports

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
	"github.com/groundwork/curate/store"
	"github.com/groundwork/curate/topics"
)

func TestTopicsUsage(t *testing.T) {
	tests := []struct {
		args []string
		err  string
	}{
		{[]string{"topics"}, "--out DIR is required"},
		{[]string{"topics", "--out", "x", "--iou", "0"}, "want 0 < iou ≤ 1"},
		{[]string{"topics", "--out", "x", "--min-background", "9"}, "want 1 ≤ min ≤ max"},
		{[]string{"topics", "--out", "x", "--top-percent", "150"}, "want 0 (all) to 100"},
		{[]string{"topics", "--out", "x", "--splits", "train,val"}, `unknown split "val"`},
		{[]string{"topics", "--out", "x", "--test-from", "2026"}, "--test-from"},
		{[]string{"topics", "--out", "x", "--workers", "0"}, "--workers 0"},
	}
	for _, tt := range tests {
		code, _, stderr := clitest.Run(t, nil, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.err) {
			t.Errorf("curate %v: exit %d, stderr %q; want exit 2 mentioning %q", tt.args, code, stderr, tt.err)
		}
	}
}

// TestTopicsOnDemo builds topics from the store `curate demo` writes. Of
// the demo's nine targets, the three 2023 cs.IR ones share three of
// their four influential references (IoU 3/5: a topic at the recipe's
// settings, which TestReadmeCommandsOnDemo runs); the other six pair up
// (three pairs sharing two influential references each, IoU 1/3, 1/4 and
// 1/3), which only thresholds below the recipe's group: --iou 0.25,
// --min-support 2, --min-background 4. Each of those pairs is a 2025
// (train) and a 2026 (test) paper: by default only the cs.IR topic forms,
// since no topic may hold a test target; --splits train,test asks for
// them by name.
func TestTopicsOnDemo(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "store")
	if code, _, stderr := clitest.Run(t, nil, "demo", "--store", st, "--out", filepath.Join(dir, "ds")); code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, stderr)
	}
	base := []string{"topics", "--store", st, "--iou", "0.25", "--min-support", "2", "--min-background", "4"}
	// Train only: the three 2023 cs.IR targets, which share their
	// influential references, are the one group.
	code, out, stderr := clitest.Run(t, nil, append(base, "--out", filepath.Join(dir, "t0"))...)
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, "3 supporting") || !strings.Contains(stderr, "6 of 9 seeds kept") || !strings.Contains(stderr, "1 topics selected from the train split") {
		t.Errorf("train only: exit %d\n%s%s", code, out, stderr)
	}
	seeds, _ := os.ReadFile(filepath.Join(dir, "t0", topics.SeedsJSONL))
	if strings.Count(string(seeds), `"status":"split_not_used"`) != 3 || strings.Count(string(seeds), `"split":"test"`) != 3 {
		t.Errorf("the test seeds are not listed as left out:\n%s", seeds)
	}

	args := append(base, "--splits", "train,test")
	code, out, stderr = clitest.Run(t, nil, append(args, "--out", filepath.Join(dir, "t1"))...)
	if code != 0 {
		t.Fatalf("topics: exit %d\n%s", code, stderr)
	}
	if n := strings.Count(out, "\n"); n != 4 || !strings.Contains(stderr, "9 of 9 seeds kept; 4 groups, 4 candidates, 4 topics selected") || !strings.Contains(stderr, "topics     heuristic  4") {
		t.Errorf("stdout (%d lines):\n%s\nstderr:\n%s", n, out, stderr)
	}

	// Every claim against the store: each supporting paper's influential
	// set, the pair overlaps and the background.
	s, err := store.Open(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "t1", topics.TopicsJSONL))
	if err != nil {
		t.Fatal(err)
	}
	var cards int
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var tp topics.Topic
		if err := json.Unmarshal([]byte(line), &tp); err != nil {
			t.Fatal(err)
		}
		for _, sp := range tp.Supporting {
			if want := map[bool]string{true: "test", false: "train"}[sp.Published >= "2026-01-01"]; sp.Split != want {
				t.Errorf("%s: %s (%s) has split %q, want %s", tp.ID, sp.ArxivID, sp.Published, sp.Split, want)
			}
		}
		var union []string
		for _, sp := range tp.Supporting {
			g, _, err := record.Graphs.Get(context.Background(), s, sp.ArxivID)
			if err != nil {
				t.Fatal(err)
			}
			var set []string
			for _, e := range g.Edges {
				if e.IsInfluential {
					set = append(set, "s2:"+*e.S2PaperID)
				}
			}
			slices.Sort(set)
			if !slices.Equal(set, sp.Influential) {
				t.Errorf("%s: %s influential %v, store %v", tp.ID, sp.ArxivID, sp.Influential, set)
			}
			union = append(union, set...)
		}
		slices.Sort(union)
		union = slices.Compact(union)
		var bg []string
		for _, b := range tp.Background {
			bg = append(bg, b.ID)
			if b.Card != nil {
				cards++
			}
		}
		n := len(tp.Supporting)
		if !slices.Equal(bg, union) || len(tp.Pairs) != n*(n-1)/2 {
			t.Errorf("%s: background %v, union %v, %d pairs of %d supporting papers", tp.ID, bg, union, len(tp.Pairs), n)
		}
		influential := map[string][]string{}
		for _, sp := range tp.Supporting {
			influential[sp.ArxivID] = sp.Influential
		}
		for _, p := range tp.Pairs {
			o := topics.Intersect(influential[p.A], influential[p.B])
			if p.Intersection != o.Intersection || p.Union != o.Union || o.IoU() < 0.25 {
				t.Errorf("%s: pair %+v, recomputed %+v", tp.ID, p, o)
			}
		}
	}
	s.Close()
	if cards == 0 {
		t.Errorf("no background paper carries its idea card")
	}

	// The same store and flags write the same bytes.
	if code, _, stderr := clitest.Run(t, nil, append(args, "--out", filepath.Join(dir, "t2"))...); code != 0 {
		t.Fatalf("second topics: exit %d\n%s", code, stderr)
	}
	for _, f := range []string{topics.TopicsParquet, topics.TopicsJSONL, topics.GroupsJSONL, topics.SeedsJSONL, topics.ReportFile} {
		a, _ := os.ReadFile(filepath.Join(dir, "t1", f))
		b, _ := os.ReadFile(filepath.Join(dir, "t2", f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs (%d and %d bytes)", f, len(a), len(b))
		}
	}

	// Every demo paper is an arXiv preprint in Semantic Scholar (venue
	// "arXiv.org"): published-only keeps none, says so, and still writes.
	code, out, stderr = clitest.Run(t, nil, append(args, "--published-only", "--out", filepath.Join(dir, "t3"))...)
	if code != 0 || out != "" || !strings.Contains(stderr, "0 of 9 seeds kept") || !strings.Contains(stderr, "no topic met the bounds") {
		t.Errorf("published-only: exit %d\n%s%s", code, out, stderr)
	}
	if rep, err := os.ReadFile(filepath.Join(dir, "t3", topics.ReportFile)); err != nil || !strings.Contains(string(rep), "| not_published | 9 |") {
		t.Errorf("published-only report: %v\n%s", err, rep)
	}

	// Listed seeds: one known, one invalid: the run writes and fails.
	code, _, stderr = clitest.Run(t, nil, append(args, "--out", filepath.Join(dir, "t4"), "2503.07215", "nope")...)
	if code != 1 || !strings.Contains(stderr, "seeds that failed") || !strings.Contains(stderr, "nope") {
		t.Errorf("listed seeds: exit %d\n%s", code, stderr)
	}
}

// TestTopicsLLMTags tags the demo's topics through an OpenAI-compatible
// endpoint: four calls, and a second run answers from the store's cache
// without calling it.
func TestTopicsLLMTags(t *testing.T) {
	llm := simtest.ServeOptions(t, sim.LLM, nil, sim.Options{LLMAnswer: func(sim.LLMRequest) (sim.LLMReply, bool) {
		return sim.LLMReply{Text: `{"tag": "A shared research topic"}`, Usage: &sim.LLMUsage{Prompt: 50, Completion: 8}}, true
	}})
	calls := func() int { return llm.Stats().Requests }
	dir := t.TempDir()
	st := filepath.Join(dir, "store")
	if code, _, stderr := clitest.Run(t, nil, "demo", "--store", st, "--out", filepath.Join(dir, "ds")); code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, stderr)
	}
	env := map[string]string{"LLM_API_KEY": "sk-test"}
	args := []string{"topics", "--store", st, "--iou", "0.25", "--min-support", "2", "--min-background", "4", "--splits", "train,test",
		"--llm-base", llm.BaseURL(), "--llm-model", "fake-1"}
	code, out, stderr := clitest.Run(t, env, append(args, "--out", filepath.Join(dir, "t1"))...)
	if code != 0 || strings.Count(out, "A shared research topic") != 4 || calls() != 4 {
		t.Fatalf("exit %d, %d calls\n%s%s", code, calls(), out, stderr)
	}
	code, _, stderr = clitest.Run(t, env, append(args, "--out", filepath.Join(dir, "t2"))...)
	if code != 0 || calls() != 4 || !strings.Contains(stderr, "topics     fake-1  0      4") {
		t.Errorf("second run: exit %d, %d calls\n%s", code, calls(), stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "t2", topics.TopicsJSONL))
	if err != nil || !strings.Contains(string(data), `"tag_model":"fake-1","tag_prompt_version":"topics-tag-v1"`) {
		t.Errorf("tags not recorded with model and prompt version: %v\n%.400s", err, data)
	}
}
