package llm

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// The workload of BenchmarkProviderModes, at the recipe's lengths: per
// target a classify call and a gold-card call, laid out as the stages lay
// them out (package paperprompt): about 3,000 tokens of instructions every
// call shares, then the target's paper of about 6,000 tokens (the same
// block in both calls), then the task. benchTargets targets make a batch
// of classify requests and one of gold cards: a run's batches are larger
// still (up to the providers' 50,000 and 100,000 requests), so the one
// request sent ahead of them weighs less there.
const benchTargets = 100

var (
	benchSystem = strings.Repeat("Rules for every paper task: classify the references of a paper, or write its idea card or its source card, "+
		"with the labels and the taxonomy of opportunity patterns and method paradigms. ", 64)
	benchExamples = strings.Repeat("A worked example of a classification and of an idea card, on an invented paper. ", 100)
	benchPaper    = strings.Repeat("The paper's body text, section after section, with its results and discussion. ", 300)
)

// paperTaskSchemaForTest is the shape of the stages' shared answer
// schema (package paperprompt, which this package cannot import).
type benchRef struct {
	N         int      `json:"n"`
	Role      string   `json:"role"`
	Labels    []string `json:"labels"`
	Rationale string   `json:"rationale"`
	Quotes    []string `json:"quotes"`
}

type benchCard struct {
	ProblemGap  string `json:"problem_gap"`
	CoreClaim   string `json:"core_claim"`
	Method      string `json:"method"`
	Inspiration string `json:"inspiration"`
	Results     string `json:"results,omitempty"`
	Takeaways   string `json:"takeaways,omitempty"`
}

type benchAnswer struct {
	References []benchRef `json:"references"`
	Card       *benchCard `json:"card"`
}

var paperTaskSchemaForTest = MustSchemaFor[benchAnswer]("paper_task")

// benchRequests are a target's two calls.
func benchRequests(i int) []Request {
	paper := fmt.Sprintf("<paper>\nTitle: Paper%d: a method for problem %d\nText: the paper\n\n%s\n</paper>", i, i, benchPaper)
	base := Request{PromptVersion: "bench-v1", System: benchSystem, Examples: benchExamples, Paper: paper, PaperShared: true, Schema: paperTaskSchemaForTest}
	classify, gold := base, base
	classify.Stage, classify.MaxTokens = "classify", 1200
	classify.User = "Task: classify the 3 references of the paper above.\n\n<references>\n[1] Prior one\n- We build on [1].\n[2] Prior two\n[3] Prior three\n</references>"
	gold.Stage, gold.MaxTokens = "summarize", 1536
	gold.User = "Task: write the idea card of the paper above."
	return []Request{classify, gold}
}

// BenchmarkProviderModes measures a target's classify and gold-card calls
// at the recipe's lengths in sync mode without and with the prompt cache
// and in batch mode (with the hour-long cache, the default, and with
// --llm-prompt-cache-ttl 5m), on the simulated OpenAI and Anthropic APIs,
// which apply the providers' per-model rules (least cacheable prefixes;
// an Anthropic batch's requests do not see each other's cache writes;
// OpenAI's batches read nothing cached). Prices are the model table's.
// usd/op is the cost of benchTargets targets; list% is its share of the
// list price, the sync run without the cache (the same outputs; the
// worked examples that lengthen the system prompt for a model's cache
// minimum are not sent there), input-list% the same for the input alone;
// cached% is the input served from the prompt cache. The five-minute
// batch figures hold only when the gold cards' batch runs within five
// minutes of the classify batch, as the simulated batches do. The wall
// time of batch mode here is the simulated lifecycle's, not a provider's
// hours.
func BenchmarkProviderModes(b *testing.B) {
	list, inList := map[string]float64{}, map[string]float64{} // the sync run's, per model
	for _, m := range []struct{ provider, model string }{
		{ProviderOpenAI, "gpt-5.4-mini"}, {ProviderAnthropic, "claude-opus-4-8"}, {ProviderAnthropic, "claude-sonnet-4-6"}, {ProviderAnthropic, "claude-haiku-4-5"},
	} {
		for _, mode := range []string{"sync", "sync+cache", "batch+cache", "batch+cache-5m"} {
			b.Run(m.model+"/"+mode, func(b *testing.B) {
				bw := recipeWorld(b)
				var sum recipeCost
				for i := 0; b.Loop(); i++ {
					sum = sum.add(bw.recipeRun(b, m.provider, m.model, mode, i))
				}
				n := float64(b.N)
				if mode == "sync" {
					// The list price: the sync run's tokens, nothing cached
					// (OpenAI's cache cannot be turned off).
					list[m.model], inList[m.model] = sum.plain/n, sum.inPlain/n
				}
				b.ReportMetric(sum.usd/n, "usd/op")
				b.ReportMetric(100*sum.usd/n/list[m.model], "list%")
				b.ReportMetric(100*sum.inUSD/n/inList[m.model], "input-list%")
				b.ReportMetric(100*float64(sum.spent.CachedTokens)/float64(max(sum.spent.PromptTokens, 1)), "cached%")
				b.ReportMetric(float64(sum.spent.PromptTokens)/n, "input-tokens/op")
			})
		}
	}
}

// TestRecipeBatchCost is the acceptance figure at the recipe's
// lengths: a target's classify and gold-card calls in batch mode on
// claude-sonnet-4-6, with the hour-long cache (the default), the
// documented least cacheable prefix and batches whose requests do not see
// each other's writes, cost at most 35% of the list price for the input
// (the shared system prompt read at a tenth of the batch price by every
// request but the one sent ahead to write it; the paper, which an
// hour-long write at twice the input price does not pay for with its one
// read, sent as input: (0.1 × 3,000 + 6,000) / 9,000 of the batch price
// is 35% of list); the output costs the batch price, half the list. One
// request is sent ahead of the batches, and nothing else is written.
func TestRecipeBatchCost(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 200 requests through simulated batches")
	}
	bw := recipeWorld(t)
	got := bw.recipeRun(t, ProviderAnthropic, "claude-sonnet-4-6", "batch+cache", 0)
	if ahead := got.calls - got.batchCalls; ahead != 1 || got.batchCalls != 2*benchTargets-1 {
		t.Errorf("%d requests sent ahead and %d in batches, want 1 and %d", ahead, got.batchCalls, 2*benchTargets-1)
	}
	// The shared prefix is written once, by the request sent ahead.
	if w := got.spent.CacheWriteTokens; w != got.spent.CacheWrite1hTokens || w == 0 || w*(2*benchTargets-1) != got.spent.CachedTokens {
		t.Errorf("cache writes %d (1h %d), reads %d: want one hour-long write of the prefix every batch request reads",
			w, got.spent.CacheWrite1hTokens, got.spent.CachedTokens)
	}
	in, all := 100*got.inUSD/got.inPlain, 100*got.usd/got.plain
	t.Logf("input %.2f%% of list, all %.2f%% (%d input tokens, %.1f%% from the cache)", in, all,
		got.spent.PromptTokens, 100*float64(got.spent.CachedTokens)/float64(got.spent.PromptTokens))
	if in > 35 || all > 40 || in < 30 {
		t.Errorf("input at %.2f%% of the list price, all at %.2f%%: want at most 35%% and 40%%", in, all)
	}
}

// recipeCost is what a run of the recipe's workload cost.
type recipeCost struct {
	usd, inUSD     float64 // the cost, and its input's
	plain, inPlain float64 // the same tokens at the sync price, nothing cached
	spent          Usage
	calls          int64
	batchCalls     int64
}

func (r recipeCost) add(o recipeCost) recipeCost {
	return recipeCost{r.usd + o.usd, r.inUSD + o.inUSD, r.plain + o.plain, r.inPlain + o.inPlain,
		r.spent.Add(o.spent), r.calls + o.calls, r.batchCalls + o.batchCalls}
}

// recipeWorld starts the simulated OpenAI and Anthropic APIs.
func recipeWorld(tb testing.TB) *batchWorld {
	tb.Helper()
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 1, Targets: 1})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := sim.Start(w, sim.Options{Services: []string{sim.LLM, sim.Anthropic}, Limits: map[string]sim.Limits{
		sim.LLM: {Latency: 2 * time.Millisecond}, sim.Anthropic: {Latency: 2 * time.Millisecond}}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return &batchWorld{s: s}
}

// recipeRun sends benchTargets targets' classify and gold-card calls
// (new papers each round, so that nothing is cached across rounds) in
// mode: sync without the prompt cache, sync with it, or batch mode with
// the hour-long or the five-minute lifetime, and prices them at the
// model table's prices.
func (bw *batchWorld) recipeRun(tb testing.TB, provider, model, mode string, round int) recipeCost {
	tb.Helper()
	price, ok := DefaultModels().Price(provider, model)
	if !ok {
		tb.Fatalf("%s has no price in the table", model)
	}
	prices := Prices{model: price}
	st, err := store.Open(tb.Context(), tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	c := bw.client(tb, provider, st)
	c.cfg.Model = model
	c.rules = newRules(provider, model, DefaultModels().Lookup(provider, model), st, c.log)
	c.cfg.NoPromptCache = mode == "sync"
	if mode == "batch+cache-5m" {
		// --llm-prompt-cache-ttl 5m: the paper is marked in batch mode
		// too, read if the gold cards' batch runs within five minutes of
		// the classify batch, as the simulated batches do.
		c.cfg.PromptCacheTTL = TTL5m
	}
	var classify, gold []Request
	for k := range benchTargets {
		r := benchRequests(round*benchTargets + k)
		classify, gold = append(classify, r[0]), append(gold, r[1])
	}
	if strings.HasPrefix(mode, "batch") {
		// As a run does: the classify requests go in one batch, the gold
		// cards in the next.
		bt := batcher(tb, c, st, BatchConfig{PollInterval: time.Millisecond})
		for _, reqs := range [][]Request{classify, gold} {
			for pass := 0; pass < 5; pass++ {
				left := 0
				for _, r := range reqs {
					if _, err := bt.Complete(tb.Context(), r); errors.Is(err, ErrPending) {
						left++
					} else if err != nil {
						tb.Fatal(err)
					}
				}
				if left == 0 {
					break
				}
				bt.Flush(tb.Context())
				bt.Wait(tb.Context())
			}
		}
	} else {
		for k := range classify {
			for _, r := range []Request{classify[k], gold[k]} {
				if _, err := c.Complete(tb.Context(), r); err != nil {
					tb.Fatal(err)
				}
			}
		}
	}
	var out recipeCost
	for _, t := range c.Meter().Tallies() {
		out.spent = out.spent.Add(t.Spent)
		out.calls += t.Calls
		out.batchCalls += t.BatchCalls
		cost, _ := prices.TallyCost(t)
		out.usd += cost
		outBatch, _ := prices.BatchCost(t.Model, Usage{CompletionTokens: t.Batch.CompletionTokens})
		outSync, _ := prices.Cost(t.Model, Usage{CompletionTokens: t.Spent.CompletionTokens - t.Batch.CompletionTokens})
		out.inUSD += cost - outBatch - outSync
		p, _ := prices.uncached(model).Cost(t.Model, t.Spent)
		o, _ := prices.Cost(t.Model, Usage{CompletionTokens: t.Spent.CompletionTokens})
		out.plain += p
		out.inPlain += p - o
	}
	return out
}

func ptr(f float64) *float64 { return &f }
