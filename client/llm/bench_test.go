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

// benchCalls is the workload: card calls over papers of about 6,000
// tokens, with about 3,000 tokens of instructions and taxonomy that are
// the same in every call.
const benchCalls = 40

var (
	benchStatic = strings.Repeat("Write the idea card: the problem and its gap, the core claim, the method and the inspiration. "+
		"Label the gap with one opportunity pattern of the taxonomy and the method with one paradigm. ", 64)
	benchPaper = strings.Repeat("The paper's body text, section after section, with its results and discussion. ", 300)
)

func benchRequest(i int, staticFirst bool) Request {
	title := fmt.Sprintf("Title: Paper%d: a method for problem %d\nWrite the idea card of this paper.\n", i, i)
	r := Request{Stage: "summarize", PromptVersion: "gold-v1", MaxTokens: 800, Schema: goldSchemaForTest}
	if staticFirst {
		r.System, r.User = benchStatic, title+benchPaper
	} else {
		// The paper first: no two prompts share a prefix.
		r.System, r.User = "You write idea cards.", title+benchPaper+"\n\n"+benchStatic
	}
	return r
}

// BenchmarkProviderModes measures the same calls in sync mode without and
// with prompt caching and in batch mode, on the simulated OpenAI and
// Anthropic APIs (which report cached tokens as those providers do):
// usd/op is the cost of the benchCalls calls at list prices, cached% the
// share of input tokens served from the prompt cache. The wall time of
// batch mode here is the simulated lifecycle's, not a provider's hours.
func BenchmarkProviderModes(b *testing.B) {
	prices := Prices{
		"gpt-sim":           {Input: 2.5, Output: 10, CachedInput: ptr(1.25)},
		"claude-sonnet-4-6": {Input: 3, Output: 15, CachedInput: ptr(0.30), CacheWrite: ptr(3.75)},
	}
	for _, provider := range []string{ProviderOpenAI, ProviderAnthropic} {
		for _, mode := range []string{"sync", "sync+cache", "batch+cache"} {
			b.Run(provider+"/"+mode, func(b *testing.B) {
				w, err := sim.NewWorld(sim.WorldConfig{Seed: 1, Targets: 1})
				if err != nil {
					b.Fatal(err)
				}
				s, err := sim.Start(w, sim.Options{Limits: map[string]sim.Limits{
					sim.LLM: {Latency: 2 * time.Millisecond}, sim.Anthropic: {Latency: 2 * time.Millisecond}}})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				bw := &batchWorld{s: s}
				var spent Usage
				var usd float64
				for i := 0; b.Loop(); i++ {
					st, err := store.Open(b.Context(), b.TempDir())
					if err != nil {
						b.Fatal(err)
					}
					c := bw.client(b, provider, st)
					c.cfg.NoPromptCache = mode == "sync"
					reqs := make([]Request, benchCalls)
					for k := range reqs {
						reqs[k] = benchRequest(i*benchCalls+k, mode != "sync") // new papers each round: no cache across rounds
					}
					if mode == "batch+cache" {
						bt := batcher(b, c, st, BatchConfig{PollInterval: time.Millisecond})
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
					} else {
						for _, r := range reqs {
							if _, err := c.Complete(b.Context(), r); err != nil {
								b.Fatal(err)
							}
						}
					}
					for _, t := range c.Meter().Tallies() {
						spent = spent.Add(t.Spent)
						cost, _ := prices.TallyCost(t)
						usd += cost
					}
					st.Close()
				}
				n := float64(b.N)
				b.ReportMetric(usd/n, "usd/op")
				b.ReportMetric(100*float64(spent.CachedTokens)/float64(max(spent.PromptTokens, 1)), "cached%")
				b.ReportMetric(float64(spent.PromptTokens)/n, "input-tokens/op")
			})
		}
	}
}

func ptr(f float64) *float64 { return &f }
