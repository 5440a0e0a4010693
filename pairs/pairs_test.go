package pairs

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/readback"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// simPaper is one target of the simulated store.
type simPaper struct {
	id, title, published string
	cit, infl            int
	noS2, noInfl, noGold bool
	gold                 *record.Card
}

func simGold(topic string) *record.Card {
	return &record.Card{
		ProblemGap:  "[Evidence Gap] Nobody knows how " + topic + " behaves when the inputs drift. Existing checks look at clean data only.",
		CoreClaim:   "We claim that " + topic + " hides its failures under drift.",
		Method:      "[Empirical Mapping] Build drifted test conditions and compare how the approach holds up. We report the error on each.",
		Inspiration: "Document 1 and Document 2.",
		Opportunity: record.Evidence, Paradigm: record.Empirical, Model: "m", PromptVersion: "v",
	}
}

// simPapers is a store's worth of targets: many pairs meet the rules,
// some papers can pair with several, one paper's summary leaks, and some
// targets are not eligible.
func simPapers() []simPaper {
	leaky := &record.Card{
		ProblemGap: "[Evidence Gap] Scores drop by 12 points on 3 benchmarks.", CoreClaim: "We claim that 40% of errors are drift.",
		Method: "[Empirical Mapping] Train 7B models.", Inspiration: "Document 1.",
	}
	lora := simGold("low-rank adapters")
	lora.CoreClaim = "We claim that LoRA keeps its gains under drift. We claim that low-rank updates transfer across tasks."
	return []simPaper{
		{id: "2201.00001", title: "LoRA: Low-Rank Adaptation of Large Language Models", published: "2022-01-10", cit: 100, infl: 20, gold: lora},
		{id: "2203.00002", title: "Drift in Retrieval", published: "2022-03-01", cit: 20, infl: 3},
		{id: "2202.00003", title: "Calibration at Scale", published: "2022-02-01", cit: 35, infl: 10},
		{id: "2205.00004", title: "Uncertainty Under Shift", published: "2022-05-30", cit: 10, infl: 2},
		// Boundaries: exactly four months, ratio exactly 3, gaps exactly 20 and 5.
		{id: "2301.00005", title: "Robust Readers", published: "2023-01-31", cit: 30, infl: 6},
		{id: "2305.00006", title: "Faithful Summaries", published: "2023-05-31", cit: 10, infl: 1},
		// Four months and a day.
		{id: "2306.00007", title: "Sparse Probes", published: "2023-06-01", cit: 300, infl: 50},
		{id: "2310.00008", title: "Dense Probes", published: "2023-10-02", cit: 10, infl: 2},
		// Sixteen days apart, across New Year.
		{id: "2212.00009", title: "Graph Priors", published: "2022-12-20", cit: 200, infl: 40},
		{id: "2301.00010", title: "Tree Priors", published: "2023-01-05", cit: 10, infl: 2},
		// Influential gap 4; an influential count of 0; the winner with fewer influential citations.
		{id: "2208.00011", title: "Token Budgets", published: "2022-08-01", cit: 100, infl: 6},
		{id: "2208.00012", title: "Token Limits", published: "2022-08-15", cit: 10, infl: 2},
		{id: "2209.00013", title: "Prompt Order", published: "2022-09-01", cit: 100, infl: 30},
		{id: "2209.00014", title: "Prompt Length", published: "2022-09-10", cit: 10, infl: 0},
		{id: "2210.00015", title: "Agent Memory", published: "2022-10-01", cit: 100, infl: 2},
		{id: "2210.00016", title: "Agent Plans", published: "2022-10-05", cit: 10, infl: 8},
		// Ratio 4 but a gap of 9.
		{id: "2307.00017", title: "Small Gains", published: "2023-07-01", cit: 12, infl: 9},
		{id: "2307.00018", title: "Smaller Gains", published: "2023-07-03", cit: 3, infl: 1},
		// X–Y would pair, but X's summary leaks; Y then pairs with Z.
		{id: "2308.00019", title: "Leaky Numbers", published: "2023-08-01", cit: 90, infl: 15, gold: leaky},
		{id: "2308.00020", title: "Quiet Ideas", published: "2023-08-20", cit: 12, infl: 3},
		{id: "2310.00021", title: "Loud Ideas", published: "2023-10-15", cit: 80, infl: 12},
		// Not eligible.
		{id: "2103.00022", title: "Too Early", published: "2021-03-01", cit: 500, infl: 90},
		{id: "2601.00023", title: "Test Target", published: "2026-01-02", cit: 500, infl: 90},
		{id: "2204.00024", title: "No Record", published: "2022-04-01", noS2: true},
		{id: "2204.00025", title: "No Influential Field", published: "2022-04-02", cit: 300, noInfl: true},
		{id: "2204.00026", title: "No Gold", published: "2022-04-03", cit: 300, infl: 30, noGold: true},
	}
}

// simStore writes the simulated papers as the pipeline stores them: the
// citegraph Graph, citegraph's record of S2's paper (kind "s2-paper"),
// the summarize Result with the gold card.
func simStore(t *testing.T, ps []simPaper) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, p := range ps {
		g := record.Graph{TargetID: p.id, Meta: record.TargetMeta{ArxivID: p.id, Title: p.title, Published: p.published, PrimaryCategory: "cs.CL"}}
		if _, err := record.Graphs.Put(ctx, st, p.id, &g, nil); err != nil {
			t.Fatal(err)
		}
		if !p.noS2 {
			paper := &record.ScholarPaper{PaperID: "s2-" + p.id, CitationCount: &p.cit}
			if !p.noInfl {
				paper.InfluentialCitationCount = &p.infl
			}
			if _, err := record.S2Papers.Put(ctx, st, p.id, &record.S2Paper{Found: true, Paper: paper}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if !p.noGold {
			gold := p.gold
			if gold == nil {
				gold = simGold(strings.ToLower(p.title))
			}
			if _, err := record.Summaries.Put(ctx, st, p.id, &record.Summary{Target: p.id, Gold: record.CardResult{Key: p.id, Card: gold}}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	return st
}

// TestRules puts each rule at its boundary, in a store of its own.
func TestRules(t *testing.T) {
	p := func(id, published string, cit, infl int) simPaper {
		// A title without digits: the gold card is written from it.
		title := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return 'a' + r - '0'
			}
			return r
		}, "Paper "+id)
		return simPaper{id: id, title: title, published: published, cit: cit, infl: infl}
	}
	tests := []struct {
		name   string
		papers []simPaper
		want   []string // winner>loser
	}{
		{"a clear pair", []simPaper{p("2201.00001", "2022-01-10", 100, 20), p("2203.00002", "2022-03-01", 20, 3)}, []string{"2201.00001>2203.00002"}},
		{"every bound met exactly", []simPaper{p("2301.00005", "2023-01-31", 30, 6), p("2305.00006", "2023-05-31", 10, 1)}, []string{"2301.00005>2305.00006"}},
		{"four months and a day", []simPaper{p("2306.00007", "2023-06-01", 300, 50), p("2310.00008", "2023-10-02", 10, 2)}, nil},
		{"sixteen days, across New Year", []simPaper{p("2212.00009", "2022-12-20", 200, 40), p("2301.00010", "2023-01-05", 10, 2)}, nil},
		{"ratio just under 3", []simPaper{p("2201.00011", "2022-01-01", 29, 9), p("2201.00012", "2022-01-02", 10, 2)}, nil},
		{"gap of 9 citations", []simPaper{p("2307.00017", "2023-07-01", 12, 9), p("2307.00018", "2023-07-03", 3, 1)}, nil},
		{"influential gap of 4", []simPaper{p("2208.00011", "2022-08-01", 100, 6), p("2208.00012", "2022-08-15", 10, 2)}, nil},
		{"an influential count of 0", []simPaper{p("2209.00013", "2022-09-01", 100, 30), p("2209.00014", "2022-09-10", 10, 0)}, nil},
		{"the winner with fewer influential citations", []simPaper{p("2210.00015", "2022-10-01", 100, 2), p("2210.00016", "2022-10-05", 10, 8)}, nil},
		{"out of the years", []simPaper{p("2103.00022", "2021-03-01", 500, 90), p("2103.00023", "2021-03-05", 10, 2)}, nil},
		{"test targets", []simPaper{p("2601.00023", "2026-01-02", 500, 90), p("2601.00024", "2026-01-05", 10, 2)}, nil},
		{"each paper in one pair, closest first", []simPaper{
			p("2202.00001", "2022-02-01", 100, 30), p("2202.00002", "2022-02-03", 10, 2), p("2202.00003", "2022-02-20", 12, 3),
		}, []string{"2202.00001>2202.00002"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Build(context.Background(), simStore(t, tt.papers), Heuristic{}, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range res.Pairs {
				got = append(got, p.Winner.ArxivID+">"+p.Loser.ArxivID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("pairs %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBuildOnSimulatedStore(t *testing.T) {
	st := simStore(t, simPapers())
	res, err := Build(context.Background(), st, Heuristic{}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, c := range res.Considered {
		status[c.ArxivID] = c.Status
	}
	for id, s := range map[string]string{
		"2103.00022": StatusOutOfRange, "2601.00023": StatusTest, "2204.00024": StatusNoS2, "2204.00025": StatusNoInfluential,
		"2204.00026": StatusNoGold, "2308.00019": StatusRewriteRejects, "2201.00001": StatusPaired,
	} {
		if status[id] != s {
			t.Errorf("%s: status %q, want %q", id, status[id], s)
		}
	}
	if len(res.Considered) != len(simPapers()) || len(res.Pairs) < 4 {
		t.Errorf("%d targets considered, %d pairs", len(res.Considered), len(res.Pairs))
	}
	// The LoRA card loses the claim sentence naming the title's LoRA and
	// the method sentence reporting a result.
	for _, p := range res.Pairs {
		for _, pp := range []PairPaper{p.Winner, p.Loser} {
			if pp.ArxivID != "2201.00001" {
				continue
			}
			s := pp.Rewrite.Summary
			if s.CoreClaim != "We claim that low-rank updates transfer across tasks." || strings.Contains(s.Method, "report") || !strings.HasPrefix(s.Method, "[Empirical Mapping] Build") {
				t.Errorf("LoRA summary %+v", s)
			}
		}
	}
	if res.Rewriter != llm.HeuristicModel {
		t.Errorf("rewriter %q", res.Rewriter)
	}
}

// TestRederiveFromStore writes the pairs and re-derives every claim of
// the output from the store alone: the dates, the counts and when they
// were read, each rule, the winner, each paper in one pair, no eligible
// pair left out, both orderings with the right winner, and summaries that
// leak nothing.
func TestRederiveFromStore(t *testing.T) {
	ctx := context.Background()
	st := simStore(t, simPapers())
	res, err := Build(ctx, st, Heuristic{}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "pairs")
	if err := Write(ctx, out, res, WriteOptions{Version: "test"}); err != nil {
		t.Fatal(err)
	}

	// What the store says, read here without the package's loader.
	type fact struct {
		title  string
		date   time.Time
		cit    int
		infl   int
		readAt string
	}
	read := func(id string) fact {
		g, _, err := record.Graphs.Get(ctx, st, id)
		if err != nil {
			t.Fatal(err)
		}
		s2, rec, err := record.S2Papers.Get(ctx, st, id)
		if err != nil {
			t.Fatal(err)
		}
		d, err := time.Parse("2006-01-02", g.Meta.Published)
		if err != nil {
			t.Fatal(err)
		}
		return fact{g.Meta.Title, d, *s2.Paper.CitationCount, *s2.Paper.InfluentialCitationCount, rec.UpdatedAt.UTC().Format(time.RFC3339)}
	}
	holds := func(w, l fact) bool {
		lo, hi := w.date, l.date
		if hi.Before(lo) {
			lo, hi = hi, lo
		}
		months := (hi.Year()-lo.Year())*12 + int(hi.Month()) - int(lo.Month())
		within := months < 4 || months == 4 && hi.Day() <= lo.Day()
		return w.date.Year() == l.date.Year() && within && float64(w.cit) >= 3*float64(l.cit) && w.cit-l.cit >= 10 &&
			w.infl > 0 && l.infl > 0 && w.infl-l.infl >= 5
	}

	f, err := os.Open(filepath.Join(out, PairsJSONL))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pairs []Pair
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var p Pair
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, p)
	}
	if len(pairs) == 0 {
		t.Fatal("no pairs written")
	}
	inPair := map[string]bool{}
	for _, p := range pairs {
		w, l := read(p.Winner.ArxivID), read(p.Loser.ArxivID)
		for _, c := range []struct {
			pp PairPaper
			f  fact
		}{{p.Winner, w}, {p.Loser, l}} {
			if c.pp.Citations != c.f.cit || c.pp.Influential != c.f.infl || c.pp.CountsReadAt != c.f.readAt || c.pp.Published != c.f.date.Format("2006-01-02") || c.pp.Title != c.f.title {
				t.Errorf("%s: claims %+v, the store says %+v", c.pp.ArxivID, c.pp.Paper, c.f)
			}
			if err := CheckSummary(c.pp.Rewrite.Summary, c.f.title); err != nil {
				t.Errorf("%s: summary leaks: %v", c.pp.ArxivID, err)
			}
			if inPair[c.pp.ArxivID] {
				t.Errorf("%s is in two pairs", c.pp.ArxivID)
			}
			inPair[c.pp.ArxivID] = true
		}
		if !holds(w, l) {
			t.Errorf("%s: the store's counts and dates break the rules: winner %+v, loser %+v", p.ID, w, l)
		}
		if math.Abs(p.Claim.CitationRatio-float64(w.cit)/float64(l.cit)) > 1e-9 || p.Claim.CitationGap != w.cit-l.cit || p.Claim.InfluentialGap != w.infl-l.infl {
			t.Errorf("%s: claim %+v", p.ID, p.Claim)
		}
	}
	// No two papers that could still pair were left unpaired.
	var free []string
	var papers []Considered
	b, _ := os.ReadFile(filepath.Join(out, PapersJSONL))
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var c Considered
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		papers = append(papers, c)
		if c.Status == StatusUnpaired {
			free = append(free, c.ArxivID)
		}
	}
	for i, a := range free {
		for _, b := range free[i+1:] {
			fa, fb := read(a), read(b)
			if holds(fa, fb) || holds(fb, fa) {
				t.Errorf("%s and %s are both unpaired but meet the rules", a, b)
			}
		}
	}
	if len(papers) != len(simPapers()) {
		t.Errorf("papers.jsonl lists %d targets, want %d", len(papers), len(simPapers()))
	}

	rows, err := ReadParquet(filepath.Join(out, PairsParquet))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2*len(pairs) {
		t.Fatalf("%d rows for %d pairs", len(rows), len(pairs))
	}
	for i, r := range rows {
		p := pairs[i/2]
		winnerIdea := map[string]Summary{"A": r.IdeaA, "B": r.IdeaB}[r.Winner]
		other := map[string]Summary{"A": r.IdeaB, "B": r.IdeaA}[r.Winner]
		winnerID := map[string]string{"A": r.ArxivA, "B": r.ArxivB}[r.Winner]
		if r.PairID != p.ID || r.Ordering != i%2+1 || winnerIdea != p.Winner.Rewrite.Summary || other != p.Loser.Rewrite.Summary || winnerID != p.Winner.ArxivID {
			t.Errorf("row %d: %+v does not say pair %s with winner %s", i, r, p.ID, p.Winner.ArxivID)
		}
	}
	if rows[0].Winner == rows[1].Winner || rows[0].IdeaA != rows[1].IdeaB {
		t.Errorf("the two orderings of a pair are not swapped: %+v %+v", rows[0], rows[1])
	}
	readme, _ := os.ReadFile(filepath.Join(out, ReadmeFile))
	for _, s := range []string{fmt.Sprintf("%d pairs (%d papers)", len(pairs), 2*len(pairs)), "heuristic backend", "`no_influential_count` | 1", "ratio of at least 3"} {
		if !strings.Contains(string(readme), s) {
			t.Errorf("README lacks %q", s)
		}
	}
}

func TestCheckSummary(t *testing.T) {
	title := "Toolformer: Language Models Can Teach Themselves to Use Tools"
	ok := Summary{"[Evidence Gap] Models cannot decide when an outside tool would help.", "We claim that a model can learn when to call a tool from its own predictions.", "[Artifact / System] Let the model annotate its own text with calls and keep the helpful ones."}
	if err := CheckSummary(ok, title); err != nil {
		t.Errorf("clean summary rejected: %v", err)
	}
	for name, tt := range map[string]struct {
		s    Summary
		want string
	}{
		"a number":        {Summary{ok.ProblemGap, "We claim that 7 tools suffice.", ok.Method}, "contains a number"},
		"a year":          {Summary{ok.ProblemGap, ok.CoreClaim, "[Artifact / System] Follow the 2021 protocol."}, "contains a number"},
		"a result":        {Summary{ok.ProblemGap, "We claim that it outperforms larger models.", ok.Method}, "states a result"},
		"we show":         {Summary{"[Evidence Gap] We show that tools help.", ok.CoreClaim, ok.Method}, "states a result"},
		"the system name": {Summary{ok.ProblemGap, "We claim that toolformer works.", ok.Method}, `repeats the title's "toolformer"`},
		"a title run":     {Summary{ok.ProblemGap, "We claim that models can teach themselves to use tools.", ok.Method}, "repeats the title's"},
		"an empty field":  {Summary{ok.ProblemGap, " ", ok.Method}, "core_claim is empty"},
	} {
		err := CheckSummary(tt.s, title)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", name, err, tt.want)
		}
	}
	if terms := TitleTerms("LoRA: Low-Rank Adaptation of GPT-3"); !slices.Contains(terms, "lora") || !slices.Contains(terms, "gpt-3") || !slices.Contains(terms, "low-rank adaptation of gpt-3") {
		t.Errorf("TitleTerms = %q", terms)
	}
}

// fakeLLM answers rewrite requests from a table and applies the request's
// validator as the LLM client does (an answer that stays invalid is an
// *llm.InvalidError).
type fakeLLM struct {
	answers map[string]string // a title word in the prompt -> the JSON answer
	calls   int
}

func (f *fakeLLM) Complete(_ context.Context, req llm.Request) (*llm.Response, error) {
	f.calls++
	if req.Stage != StageName || req.Schema == nil || !strings.Contains(req.System, "Reveal nothing but the idea") {
		return nil, fmt.Errorf("unexpected request %+v", req)
	}
	for k, a := range f.answers {
		if strings.Contains(req.User, k) {
			if err := req.Validate(json.RawMessage(a)); err != nil {
				return nil, &llm.InvalidError{Stage: req.Stage, Model: "fake", Attempts: 2, Reason: err.Error()}
			}
			return &llm.Response{JSON: json.RawMessage(a), Model: "fake-1"}, nil
		}
	}
	return nil, errors.New("no answer for this paper")
}

func TestLLMRewrite(t *testing.T) {
	ps := []simPaper{
		{id: "2201.00001", title: "Alpha Readers", published: "2022-01-10", cit: 100, infl: 20},
		{id: "2202.00002", title: "Beta Readers", published: "2022-02-10", cit: 10, infl: 2},
		{id: "2202.00003", title: "Gamma Readers", published: "2022-02-11", cit: 30, infl: 9},
	}
	good := `{"problem_gap": "[Evidence Gap] Readers are never checked against drift.", "core_claim": "We claim that drift hides reader errors.", "method": "[Empirical Mapping] Compare readers on drifted inputs."}`
	f := &fakeLLM{answers: map[string]string{
		"Alpha": good, "Beta": good,
		"Gamma": `{"problem_gap": "[Evidence Gap] Gamma Readers fail.", "core_claim": "We claim that it achieves 90% accuracy.", "method": "[Empirical Mapping] Test it."}`,
	}}
	res, err := Build(context.Background(), simStore(t, ps), LLM{Client: f, Model: "fake-1"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// Alpha–Gamma is closest, but Gamma's answer leaks: Alpha pairs with Beta.
	if len(res.Pairs) != 1 || res.Pairs[0].ID != "2201.00001__2202.00002" || res.Rewriter != "fake-1" || res.RewriterVersion != "pairs-rewrite-v1" {
		t.Fatalf("pairs %+v, rewriter %s %s", res.Pairs, res.Rewriter, res.RewriterVersion)
	}
	for _, c := range res.Considered {
		if c.ArxivID == "2202.00003" && (c.Status != StatusRewriteRejects || !strings.Contains(c.Detail, "contains a number")) {
			t.Errorf("gamma: %+v", c)
		}
	}
	if f.calls != 3 {
		t.Errorf("%d LLM calls, want 3 (one per paper)", f.calls)
	}
	// An endpoint error is the command's error, not a rejected paper.
	f.answers = nil
	if _, err := Build(context.Background(), simStore(t, ps), LLM{Client: f}, DefaultOptions()); err == nil || errors.Is(err, ErrRejected) {
		t.Errorf("endpoint error: %v", err)
	}
}

// TestReadersReadPairs reads pairs.parquet with Arrow's Go reader,
// hyparquet and DuckDB.
func TestReadersReadPairs(t *testing.T) {
	res, err := Build(context.Background(), simStore(t, simPapers()), Heuristic{}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var files []readback.File
	for _, c := range []parquetcodec.Codec{"", parquetcodec.Zstd} {
		out := filepath.Join(t.TempDir(), "pairs")
		if err := Write(context.Background(), out, res, WriteOptions{Compression: c}); err != nil {
			t.Fatal(err)
		}
		files = append(files, readback.File{Path: filepath.Join(out, PairsParquet), Rows: Rows(res.Pairs), Codec: strings.ToUpper(c.String())})
	}
	readback.Check(t, files...)
}

func TestOptionsCheck(t *testing.T) {
	for _, o := range []func(*Options){
		func(o *Options) { o.ToYear = 2020 },
		func(o *Options) { o.MinRatio = 0.5 },
		func(o *Options) { o.MaxMonths = -1 },
		func(o *Options) { o.MinGap = -1 },
	} {
		opt := DefaultOptions()
		o(&opt)
		if opt.Check() == nil {
			t.Errorf("%+v accepted", opt)
		}
	}
}
