package llm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/sim"
)

// TestModelTableConformance holds the model table against the simulated
// providers, which apply the providers' documented rules per model (see
// package sim): for every OpenAI and Anthropic row, a request built from
// the table is taken at once (nothing the model refuses is sent, a first
// limit of the row's largest output is allowed), and the row's least
// cacheable prefix is the provider's: a shared prefix a little above it
// is read from the cache, one a little below it is not.
func TestModelTableConformance(t *testing.T) {
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 1, Targets: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.Start(w, sim.Options{Services: []string{sim.LLM, sim.Anthropic}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, row := range DefaultModels().Rows() {
		if !row.Known() || row.Provider == ProviderCompatible {
			continue
		}
		model := strings.TrimSuffix(row.Match, "*")
		if model != row.Match {
			model += "-test" // a member of the family
		}
		t.Run(row.Provider+"/"+model, func(t *testing.T) {
			name := map[string]string{ProviderOpenAI: sim.LLM, ProviderAnthropic: sim.Anthropic}[row.Provider]
			svc := s.Service(name)
			c := conformanceClient(t, s, row.Provider, model)
			if got := c.Row(); got.Match != row.Match {
				t.Fatalf("%s looks up row %q, want %q", model, got.Match, row.Match)
			}
			call := func(system, title string, maxTokens int) Usage {
				t.Helper()
				before := len(svc.Calls())
				r, err := c.Complete(t.Context(), Request{Stage: "summarize", PromptVersion: "conformance", System: system,
					MaxTokens: maxTokens, Schema: goldSchemaForTest,
					User: "Title: " + title + ": a method for a problem\nWrite the idea card of this paper."})
				if err != nil {
					t.Fatalf("%s: %v", model, err)
				}
				if calls := svc.Calls()[before:]; len(calls) != 1 || calls[0].Status != 200 {
					for _, cl := range calls {
						t.Errorf("%s: status %d", model, cl.Status)
					}
					t.Fatalf("%s: %d requests for one answer: the table sent what the model refuses", model, len(calls))
				}
				return r.Usage
			}
			call("You write idea cards.", "Alpha", 800)
			if row.MaxOutput > 0 {
				call("You write idea cards of papers.", "Beta", row.MaxOutput)
			}
			if row.MinCachePrefix == 0 {
				return
			}
			for _, tt := range []struct {
				share  float64
				cached bool
			}{{0.85, false}, {1.25, true}} {
				system := cachePrefix(row.MinCachePrefix, tt.share, model)
				call(system, fmt.Sprintf("Gamma%v", tt.share), 800)
				u := call(system, fmt.Sprintf("Delta%v", tt.share), 800)
				if (u.CachedTokens > 0) != tt.cached {
					t.Errorf("%s: a shared prefix of %.0f%% of the row's least cacheable prefix (%d): %d tokens read from the cache",
						model, 100*tt.share, row.MinCachePrefix, u.CachedTokens)
				}
			}
		})
	}
}

// cachePrefix is a system prompt of share times minTokens (four bytes a
// token, as the simulated providers count), unique to the model.
func cachePrefix(minTokens int, share float64, model string) string {
	unit := "Instructions for the cards of " + model + ". "
	return strings.Repeat(unit, int(share*float64(minTokens*4))/len(unit))
}

func conformanceClient(t *testing.T, s *sim.Servers, provider, model string) *Client {
	t.Helper()
	cfg := Config{Provider: provider, Model: model, StructuredOutput: true, BaseURL: s.URL(sim.LLM)}
	if provider == ProviderAnthropic {
		cfg.BaseURL = s.URL(sim.Anthropic)
	}
	hc, err := httpx.New(httpx.Config{UserAgent: "t", RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond}, cfg.ServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(hc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
