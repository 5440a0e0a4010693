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
// block in both calls), then the task.
const benchTargets = 20

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
		{ProviderOpenAI, "gpt-5-mini"}, {ProviderAnthropic, "claude-sonnet-4-6"}, {ProviderAnthropic, "claude-haiku-4-5"},
	} {
		price, ok := DefaultModels().Price(m.provider, m.model)
		if !ok {
			b.Fatalf("%s has no price in the table", m.model)
		}
		prices := Prices{m.model: price}
		for _, mode := range []string{"sync", "sync+cache", "batch+cache", "batch+cache-5m"} {
			b.Run(m.model+"/"+mode, func(b *testing.B) {
				w, err := sim.NewWorld(sim.WorldConfig{Seed: 1, Targets: 1})
				if err != nil {
					b.Fatal(err)
				}
				s, err := sim.Start(w, sim.Options{Services: []string{sim.LLM, sim.Anthropic}, Limits: map[string]sim.Limits{
					sim.LLM: {Latency: 2 * time.Millisecond}, sim.Anthropic: {Latency: 2 * time.Millisecond}}})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				bw := &batchWorld{s: s}
				var spent Usage
				var usd, inUSD, plain, inPlain float64 // plain: the same tokens, nothing cached
				for i := 0; b.Loop(); i++ {
					st, err := store.Open(b.Context(), b.TempDir())
					if err != nil {
						b.Fatal(err)
					}
					c := bw.client(b, m.provider, st)
					c.cfg.Model = m.model
					c.rules = newRules(m.provider, m.model, DefaultModels().Lookup(m.provider, m.model), st, c.log)
					c.cfg.NoPromptCache = mode == "sync"
					if mode == "batch+cache-5m" {
						// --llm-prompt-cache-ttl 5m: the paper is marked in
						// batch mode too, read if the gold cards' batch runs
						// within five minutes of the classify batch, as the
						// simulated batches do.
						c.cfg.PromptCacheTTL = TTL5m
					}
					var classify, gold []Request
					for k := range benchTargets {
						r := benchRequests(i*benchTargets + k) // new papers each round: no cache across rounds
						classify, gold = append(classify, r[0]), append(gold, r[1])
					}
					if strings.HasPrefix(mode, "batch") {
						// As a run does: the classify requests go in one batch,
						// the gold cards in the next.
						bt := batcher(b, c, st, BatchConfig{PollInterval: time.Millisecond})
						for _, reqs := range [][]Request{classify, gold} {
							for pass := 0; pass < 5; pass++ {
								left := 0
								for _, r := range reqs {
									if _, err := bt.Complete(b.Context(), r); errors.Is(err, ErrPending) {
										left++
									} else if err != nil {
										b.Fatal(err)
									}
								}
								if left == 0 {
									break
								}
								bt.Flush(b.Context())
								bt.Wait(b.Context())
							}
						}
					} else {
						for k := range classify {
							for _, r := range []Request{classify[k], gold[k]} {
								if _, err := c.Complete(b.Context(), r); err != nil {
									b.Fatal(err)
								}
							}
						}
					}
					for _, t := range c.Meter().Tallies() {
						spent = spent.Add(t.Spent)
						cost, _ := prices.TallyCost(t)
						usd += cost
						outBatch, _ := prices.BatchCost(t.Model, Usage{CompletionTokens: t.Batch.CompletionTokens})
						outSync, _ := prices.Cost(t.Model, Usage{CompletionTokens: t.Spent.CompletionTokens - t.Batch.CompletionTokens})
						inUSD += cost - outBatch - outSync
						p, _ := prices.uncached(m.model).Cost(t.Model, t.Spent)
						out, _ := prices.Cost(t.Model, Usage{CompletionTokens: t.Spent.CompletionTokens})
						plain += p
						inPlain += p - out
					}
					st.Close()
				}
				n := float64(b.N)
				if mode == "sync" {
					// The list price: the sync run's tokens, nothing cached
					// (OpenAI's cache cannot be turned off).
					list[m.model], inList[m.model] = plain/n, inPlain/n
				}
				b.ReportMetric(usd/n, "usd/op")
				b.ReportMetric(100*usd/n/list[m.model], "list%")
				b.ReportMetric(100*inUSD/n/inList[m.model], "input-list%")
				b.ReportMetric(100*float64(spent.CachedTokens)/float64(max(spent.PromptTokens, 1)), "cached%")
				b.ReportMetric(float64(spent.PromptTokens)/n, "input-tokens/op")
			})
		}
	}
}

func ptr(f float64) *float64 { return &f }
