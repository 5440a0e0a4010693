package exports

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/pairs"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
	"github.com/groundwork/curate/store"
)

// pairsStore writes a store with six 2022 training targets as the
// pipeline stores them, which make five candidate pairs and three pairs
// (each paper in one), and a test target.
func pairsStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	papers := []struct {
		id, title, published string
		cit, infl            int
	}{
		{"2201.00001", "Alpha Readers", "2022-01-10", 100, 20}, {"2201.00002", "Beta Readers", "2022-01-20", 10, 2},
		{"2205.00003", "Gamma Probes", "2022-05-01", 60, 12}, {"2205.00004", "Delta Probes", "2022-05-03", 15, 3},
		{"2209.00005", "Epsilon Agents", "2022-09-01", 40, 9}, {"2209.00006", "Zeta Agents", "2022-09-30", 12, 1},
		{"2601.00007", "Eta Tests", "2026-01-05", 500, 80},
	}
	for _, p := range papers {
		g := record.Graph{TargetID: p.id, Meta: record.TargetMeta{ArxivID: p.id, Title: p.title, Published: p.published}}
		gold := &record.Card{
			ProblemGap: "[Evidence Gap] Nobody checks how " + strings.ToLower(p.title) + " behave on drifted inputs.",
			CoreClaim:  "We claim that drift hides their errors.", Method: "[Empirical Mapping] Compare them on drifted inputs.",
			Inspiration: "Document 1.",
		}
		if _, err := record.Graphs.Put(ctx, st, p.id, &g, nil); err != nil {
			t.Fatal(err)
		}
		s2 := &record.ScholarPaper{PaperID: "s2" + p.id, CitationCount: &p.cit, InfluentialCitationCount: &p.infl}
		if _, err := record.S2Papers.Put(ctx, st, p.id, &record.S2Paper{Found: true, Paper: s2}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := record.Summaries.Put(ctx, st, p.id, &record.Summary{Target: p.id, Gold: record.CardResult{Key: p.id, Card: gold}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPairsCommand(t *testing.T) {
	st := pairsStore(t)
	out := filepath.Join(t.TempDir(), "pairs")
	code, stdout, stderr := clitest.Run(t, nil, "pairs", "--store", st, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if strings.Count(stdout, "\n") != 3 || !strings.Contains(stdout, "2201.00001__2201.00002\twinner 2201.00001 (100 citations, 20 influential)") ||
		!strings.Contains(stderr, "3 pairs from 5 candidates among 7 targets") || !strings.Contains(stderr, "test_target") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	rows, err := pairs.ReadParquet(filepath.Join(out, pairs.PairsParquet))
	if err != nil || len(rows) != 6 || rows[0].RewriteModel != "heuristic" {
		t.Fatalf("%d rows, %v: %+v", len(rows), err, rows)
	}
	readme, _ := os.ReadFile(filepath.Join(out, pairs.ReadmeFile))
	if !strings.Contains(string(readme), "heuristic backend") {
		t.Errorf("the README does not say the heuristic wrote the summaries:\n%s", readme)
	}

	// With an endpoint: one call per paper, cached in the store.
	llm := simtest.ServeOptions(t, sim.LLM, nil, sim.Options{LLMAnswer: func(r sim.LLMRequest) (sim.LLMReply, bool) {
		if !strings.Contains(r.System+r.User(), "Reveal nothing but the idea") {
			return sim.LLMReply{}, false // another prompt: the schema's answer, which the test would see
		}
		return sim.Say(`{"problem_gap": "[Evidence Gap] Readers are never checked against drift.", "core_claim": "We claim that drift hides reader errors.", "method": "[Empirical Mapping] Compare readers on drifted inputs."}`), true
	}})
	calls := func() int { return llm.Stats().Requests }
	env := map[string]string{"LLM_API_KEY": "sk-test"}
	args := []string{"pairs", "--store", st, "--llm-base", llm.BaseURL(), "--llm-model", "fake-1"}
	if code, _, stderr := clitest.Run(t, env, append(args, "--out", filepath.Join(t.TempDir(), "p1"))...); code != 0 || calls() != 6 {
		t.Fatalf("endpoint: exit %d, %d calls\n%s", code, calls(), stderr)
	}
	out2 := filepath.Join(t.TempDir(), "p2")
	if code, _, stderr := clitest.Run(t, env, append(args, "--out", out2)...); code != 0 || calls() != 6 {
		t.Errorf("second run: exit %d, %d calls (want the cache to answer)\n%s", code, calls(), stderr)
	}
	rows, err = pairs.ReadParquet(filepath.Join(out2, pairs.PairsParquet))
	if err != nil || len(rows) != 6 || rows[0].RewriteModel != "fake-1" || rows[0].RewritePromptVersion != "pairs-rewrite-v1" || rows[0].IdeaA.CoreClaim != "We claim that drift hides reader errors." {
		t.Errorf("endpoint rows %v: %+v", err, rows)
	}

	// Bad flags are refused before the store is opened.
	for _, bad := range [][]string{{"--from-year", "2024", "--to-year", "2023"}, {"--min-ratio", "0.5"}, {"--test-from", "2026"}} {
		code, _, stderr := clitest.Run(t, nil, append([]string{"pairs", "--store", filepath.Join(t.TempDir(), "none"), "--out", out}, bad...)...)
		if code != 2 {
			t.Errorf("pairs %v: exit %d, %q", bad, code, stderr)
		}
	}
}
