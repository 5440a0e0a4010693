package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/app"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// The providers benchmark runs the same world through the simulated
// OpenAI and Anthropic APIs, which report cached tokens as those providers
// do (OpenAI: automatic prefix cache of 1,024 tokens and up; Anthropic:
// cache_control breakpoints, writes and reads), in sync mode without and
// with prompt caching and in batch mode. It reports per stage the calls,
// input tokens, the share served from the prompt cache, the cost at list
// prices and the wall time. The simulated batches end after
// batchDuration, where the providers take up to 24 hours: batch wall
// times say what curate adds, not what a provider takes.
const (
	providerLat   = 100 * time.Millisecond
	batchDuration = 2 * time.Second
	// providerPrices are list prices, dollars per million tokens: the
	// simulated OpenAI model as gpt-4o (cached input half price),
	// claude-sonnet-4-6 with Anthropic's cache read (0.1×) and five-minute
	// write (1.25×) prices; batch calls cost half.
	providerPrices = "sim-1=2.5/10/1.25,claude-sonnet-4-6=3/15/0.30/3.75"
)

// providerResult is one run of the providers benchmark.
type providerResult struct {
	Provider string        `json:"provider"`
	Mode     string        `json:"mode"`
	Targets  int           `json:"targets"`
	Exit     int           `json:"exit"`
	Wall     time.Duration `json:"wall_ns"`
	Stages   []stageCost   `json:"stages"`
	Args     []string      `json:"args"`
}

// stageCost is one LLM stage of a providers run.
type stageCost struct {
	Stage        string  `json:"stage"`
	Calls        int64   `json:"calls"`
	BatchCalls   int64   `json:"batch_calls"`
	InputTokens  int64   `json:"input_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	WriteTokens  int64   `json:"cache_write_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	USD          float64 `json:"usd"`
	// NoCacheUSD is what the same tokens cost with every input token at
	// the input price: the run without a prompt cache.
	NoCacheUSD float64       `json:"no_cache_usd"`
	Wall       time.Duration `json:"wall_ns"`
}

func benchProviders(ctx context.Context, opt *options, res *results) error {
	for _, m := range []struct{ provider, mode string }{
		{"openai", "sync"}, {"openai", "batch"},
		{"anthropic", "sync, no cache"}, {"anthropic", "sync"}, {"anthropic", "batch"},
	} {
		pr, err := providerRun(ctx, opt, m.provider, m.mode)
		if err != nil {
			return err
		}
		res.Providers = append(res.Providers, pr)
	}
	return nil
}

func providerRun(ctx context.Context, opt *options, provider, mode string) (*providerResult, error) {
	w, err := sim.NewWorld(sim.WorldConfig{Seed: opt.seed, Targets: opt.rateTargets})
	if err != nil {
		return nil, err
	}
	lim := sim.Limits{MaxInFlight: llmSlots, Latency: providerLat, BatchDuration: batchDuration}
	s, err := sim.Start(w, sim.Options{LLMAnswer: sim.CurateModel, StrictOpenAI: true, Limits: map[string]sim.Limits{sim.LLM: lim, sim.Anthropic: lim}})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	dir := filepath.Join(opt.work, "providers-"+provider+"-"+strings.NewReplacer(" ", "", ",", "-").Replace(mode))
	args, err := runArgs(w, s, dir)
	if err != nil {
		return nil, err
	}
	args = append(args, "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--llm-concurrency", "16",
		"--fetch-workers", "4", "--citegraph-workers", "8", "--classify-workers", "16", "--summarize-workers", "16",
		"--llm-provider", provider, "--price", providerPrices)
	if provider == "anthropic" {
		args = append(args, "--llm-base", s.URL(sim.Anthropic), "--llm-model", "claude-sonnet-4-6")
	}
	switch mode {
	case "batch":
		args = append(args, "--llm-mode", "batch", "--llm-wait", "10m", "--llm-poll-interval", "200ms")
	case "sync, no cache":
		args = append(args, "--llm-prompt-cache=false")
	}
	fmt.Fprintf(os.Stderr, "providers: %d targets, %s %s\n", opt.rateTargets, provider, mode)
	r, err := runCurate(ctx, opt, benchEnv, args...)
	if err != nil {
		return nil, err
	}
	if r.Exit != 0 {
		return nil, fmt.Errorf("providers %s %s: curate exited %d:\n%s", provider, mode, r.Exit, tail(r.Stderr, 30))
	}
	pr := &providerResult{Provider: provider, Mode: mode, Targets: opt.rateTargets, Exit: r.Exit, Wall: r.Wall, Args: args}
	if pr.Stages, err = lastRunCosts(ctx, filepath.Join(dir, "store")); err != nil {
		return nil, err
	}
	return pr, nil
}

// lastRunCosts reads the LLM stages' usage, cost and wall time from the
// run summary curate keeps in its store.
func lastRunCosts(ctx context.Context, dir string) ([]stageCost, error) {
	st, err := store.OpenExisting(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	data, err := st.Value(ctx, app.RunSummaryKey)
	if err != nil {
		return nil, err
	}
	var rec struct {
		Summary *pipeline.Summary `json:"summary"`
		LLM     []llm.Tally       `json:"llm"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("run summary: %w", err)
	}
	prices, err := llm.ParsePrices(providerPrices)
	if err != nil {
		return nil, err
	}
	uncached := llm.Prices{}
	for m, p := range prices {
		in := p.Input
		p.CachedInput, p.CacheWrite = &in, &in
		uncached[m] = p
	}
	wall := map[string]time.Duration{}
	if rec.Summary != nil {
		for _, s := range rec.Summary.Steps {
			wall[s.Name] = s.Wall
		}
	}
	var out []stageCost
	for _, t := range rec.LLM {
		usd, _ := prices.TallyCost(t)
		nc, _ := uncached.TallyCost(t)
		out = append(out, stageCost{Stage: t.Stage, Calls: t.Calls, BatchCalls: t.BatchCalls, InputTokens: t.Spent.PromptTokens,
			CachedTokens: t.Spent.CachedTokens, WriteTokens: t.Spent.CacheWriteTokens, OutputTokens: t.Spent.CompletionTokens,
			USD: usd, NoCacheUSD: nc, Wall: wall[t.Stage]})
	}
	return out, nil
}

// printProviders writes the providers table as the README shows it.
func printProviders(w io.Writer, prs []*providerResult) {
	if len(prs) == 0 {
		return
	}
	fmt.Fprintf(w, "LLM providers and modes, %d simulated targets (LLM: %s a call, %d in flight; batches end after %s):\n\n",
		prs[0].Targets, providerLat, llmSlots, batchDuration)
	fmt.Fprintln(w, "| provider | mode | stage | calls | input tokens | from cache | cost | without the cache | stage wall |\n|---|---|---|---|---|---|---|---|---|")
	for _, p := range prs {
		var total stageCost
		for _, s := range p.Stages {
			fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %.0f%% | $%.3f | $%.3f | %s |\n", p.Provider, p.Mode, s.Stage, s.Calls, s.InputTokens,
				share(s.CachedTokens, s.InputTokens), s.USD, s.NoCacheUSD, secs(s.Wall))
			total.Calls += s.Calls
			total.InputTokens += s.InputTokens
			total.CachedTokens += s.CachedTokens
			total.USD += s.USD
			total.NoCacheUSD += s.NoCacheUSD
		}
		fmt.Fprintf(w, "| %s | %s | **all** | %d | %d | %.0f%% | **$%.3f** | $%.3f | run %s |\n", p.Provider, p.Mode, total.Calls, total.InputTokens,
			share(total.CachedTokens, total.InputTokens), total.USD, total.NoCacheUSD, secs(p.Wall))
	}
	fmt.Fprintln(w)
}

func share(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}
