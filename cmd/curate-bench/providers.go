package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// The providers benchmark runs the same world through the simulated
// OpenAI and Anthropic APIs with the recipe's models (gpt-5.4-mini,
// claude-opus-4-8) and claude-sonnet-4-6, whose per-model rules the
// simulator applies (OpenAI: automatic prefix cache of 1,024 tokens and
// up, reasoning counted as output, batches taken cold; Anthropic:
// cache_control breakpoints, each model's least cacheable prefix, writes
// priced by lifetime, a batch's requests blind to each other's writes),
// in sync mode without and with prompt caching and in batch mode. The
// world's pages are lengthened to the recipe's papers (-paper-tokens,
// about 6,000 tokens of text; the shared system prompt is about 3,000),
// so that the prompts have the recipe's shape. It reports per stage the
// calls, input tokens, the share served from the prompt cache, the cost
// at the model table's prices, its share of the list price (the input of
// the run without a prompt cache at the sync price, and the same output)
// and the wall time. The simulated batches end after batchDuration, where
// the providers take up to 24 hours: batch wall times say what curate
// adds, not what a provider takes.
const (
	providerLat   = 100 * time.Millisecond
	batchDuration = 2 * time.Second
)

// providerRuns are the runs, in order; a model's sync run without the
// cache (OpenAI's cannot be turned off) comes first and is its list
// price. The model table prices every model.
var providerRuns = []struct{ provider, model, mode string }{
	{"openai", "gpt-5.4-mini", "sync"}, {"openai", "gpt-5.4-mini", "batch"},
	{"anthropic", "claude-opus-4-8", "sync, no cache"}, {"anthropic", "claude-opus-4-8", "sync"}, {"anthropic", "claude-opus-4-8", "batch"},
	{"anthropic", "claude-sonnet-4-6", "sync, no cache"}, {"anthropic", "claude-sonnet-4-6", "sync"}, {"anthropic", "claude-sonnet-4-6", "batch"},
}

// providerResult is one run of the providers benchmark.
type providerResult struct {
	Provider    string        `json:"provider"`
	Model       string        `json:"model"`
	Mode        string        `json:"mode"`
	Targets     int           `json:"targets"`
	PaperTokens int           `json:"paper_tokens"`
	Exit        int           `json:"exit"`
	Wall        time.Duration `json:"wall_ns"`
	Stages      []stageCost   `json:"stages"`
	Args        []string      `json:"args"`
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
	// InputUSD is the part of USD the input cost.
	InputUSD float64 `json:"input_usd"`
	// NoCacheUSD is what the same tokens cost with every input token at
	// the input price: the run without a prompt cache.
	NoCacheUSD float64 `json:"no_cache_usd"`
	// ListInputUSD is the list price of the input: the input tokens of
	// the model's run without the cache (no worked examples lengthen its
	// system prompt) at the sync input price, nothing cached; for OpenAI,
	// whose cache cannot be turned off, this run's input tokens.
	// ListOutputUSD is this run's output at the sync output price.
	ListInputUSD  float64       `json:"list_input_usd"`
	ListOutputUSD float64       `json:"list_output_usd"`
	Wall          time.Duration `json:"wall_ns"`
}

func benchProviders(ctx context.Context, opt *options, res *results) error {
	list := map[string]map[string]int64{} // model → stage → input tokens of its run without the cache
	for _, m := range providerRuns {
		pr, err := providerRun(ctx, opt, m.provider, m.model, m.mode)
		if err != nil {
			return err
		}
		if list[m.model] == nil {
			list[m.model] = map[string]int64{}
			for _, s := range pr.Stages {
				list[m.model][s.Stage] = s.InputTokens
			}
		}
		price, _ := llm.DefaultModels().Price(m.provider, m.model)
		for i := range pr.Stages {
			s := &pr.Stages[i]
			s.ListInputUSD = float64(list[m.model][s.Stage]) * price.Input / 1e6
			s.ListOutputUSD = float64(s.OutputTokens) * price.Output / 1e6
		}
		res.Providers = append(res.Providers, pr)
	}
	return nil
}

func providerRun(ctx context.Context, opt *options, provider, model, mode string) (*providerResult, error) {
	w, err := sim.NewWorld(sim.WorldConfig{Seed: opt.seed, Targets: opt.rateTargets, PaperTokens: opt.paperTokens})
	if err != nil {
		return nil, err
	}
	lim := sim.Limits{MaxInFlight: llmSlots, Latency: providerLat, BatchDuration: batchDuration}
	s, err := sim.Start(w, sim.Options{LLMAnswer: sim.CurateModel, StrictOpenAI: true, Limits: map[string]sim.Limits{sim.LLM: lim, sim.Anthropic: lim}})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	dir := filepath.Join(opt.work, "providers-"+model+"-"+strings.NewReplacer(" ", "", ",", "-").Replace(mode))
	args, err := runArgs(w, s, dir)
	if err != nil {
		return nil, err
	}
	args = append(args, "--arxiv-interval", "1ms", "--s2-interval", "1ms", "--llm-concurrency", "16",
		"--fetch-workers", "4", "--citegraph-workers", "8", "--classify-workers", "16", "--summarize-workers", "16",
		"--llm-provider", provider, "--llm-model", model)
	if provider == "anthropic" {
		args = append(args, "--llm-base", s.URL(sim.Anthropic))
	}
	switch mode {
	case "batch":
		args = append(args, "--llm-mode", "batch", "--llm-wait", "10m", "--llm-poll-interval", "200ms")
	case "sync, no cache":
		args = append(args, "--llm-prompt-cache=false")
	}
	fmt.Fprintf(os.Stderr, "providers: %d targets of about %d tokens, %s %s\n", opt.rateTargets, opt.paperTokens, model, mode)
	r, err := runCurate(ctx, opt, benchEnv, args...)
	if err != nil {
		return nil, err
	}
	if r.Exit != 0 {
		return nil, fmt.Errorf("providers %s %s: curate exited %d:\n%s", model, mode, r.Exit, tail(r.Stderr, 30))
	}
	pr := &providerResult{Provider: provider, Model: model, Mode: mode, Targets: opt.rateTargets, PaperTokens: opt.paperTokens, Exit: r.Exit, Wall: r.Wall, Args: args}
	if pr.Stages, err = lastRunCosts(ctx, filepath.Join(dir, "store"), provider, model); err != nil {
		return nil, err
	}
	return pr, nil
}

// lastRunCosts reads the LLM stages' usage, cost and wall time from the
// run summary curate keeps in its store.
func lastRunCosts(ctx context.Context, dir, provider, model string) ([]stageCost, error) {
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
	prices := llm.DefaultModels().PricesFor(provider, nil, model)
	uncached := llm.Prices{}
	for m, p := range prices {
		in := p.Input
		p.CachedInput, p.CacheWrite, p.CacheWrite1h = &in, &in, &in
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
		noOutput := t
		noOutput.Spent.CompletionTokens, noOutput.Batch.CompletionTokens = 0, 0
		in, _ := prices.TallyCost(noOutput)
		out = append(out, stageCost{Stage: t.Stage, Calls: t.Calls, BatchCalls: t.BatchCalls, InputTokens: t.Spent.PromptTokens,
			CachedTokens: t.Spent.CachedTokens, WriteTokens: t.Spent.CacheWriteTokens, OutputTokens: t.Spent.CompletionTokens,
			USD: usd, InputUSD: in, NoCacheUSD: nc, Wall: wall[t.Stage]})
	}
	return out, nil
}

// printProviders writes the providers table as the README shows it:
// per model and mode, each LLM stage's cost and wall time (the stages
// that ask the LLM, in the table's order), then all of them together,
// the share of their input served from the prompt cache, and their cost
// as a share of the list price, of the input alone and of everything at
// equal output.
func printProviders(w io.Writer, prs []*providerResult) {
	if len(prs) == 0 {
		return
	}
	var stages []string
	for _, n := range app.Names() {
		if asksLLM(n) {
			stages = append(stages, n)
		}
	}
	fmt.Fprintf(w, "LLM providers and modes, %d simulated targets with about %d tokens of text each (LLM: %s a call, %d in flight; batches end after %s; prices from the model table):\n\n",
		prs[0].Targets, prs[0].PaperTokens, providerLat, llmSlots, batchDuration)
	fmt.Fprintf(w, "| model | mode | %s | all LLM stages | input a call | from the prompt cache | input, of list | of list | run wall |\n|---|---|%s---|---|---|---|---|---|\n",
		strings.Join(stages, " | "), strings.Repeat("---|", len(stages)))
	for _, p := range prs {
		var total stageCost
		cell := map[string]string{}
		for _, s := range p.Stages {
			cell[s.Stage] = fmt.Sprintf("$%.3f, %s", s.USD, secs(s.Wall))
			if !asksLLM(s.Stage) {
				continue
			}
			total.Calls += s.Calls
			total.InputTokens += s.InputTokens
			total.CachedTokens += s.CachedTokens
			total.USD += s.USD
			total.InputUSD += s.InputUSD
			total.ListInputUSD += s.ListInputUSD
			total.ListOutputUSD += s.ListOutputUSD
		}
		cells := make([]string, len(stages))
		for i, n := range stages {
			cells[i] = cmp.Or(cell[n], "–")
		}
		fmt.Fprintf(w, "| %s | %s | %s | **$%.3f** | %d | %.0f%% | %.1f%% | %.1f%% | %s |\n", p.Model, p.Mode, strings.Join(cells, " | "),
			total.USD, total.InputTokens/max(total.Calls, 1), share(total.CachedTokens, total.InputTokens),
			100*total.InputUSD/max(total.ListInputUSD, 1e-12), 100*total.USD/max(total.ListInputUSD+total.ListOutputUSD, 1e-12), secs(p.Wall))
	}
	fmt.Fprintln(w)
}

// asksLLM reports whether the table's stage named name asks the LLM.
func asksLLM(name string) bool {
	d, ok := app.Lookup(name)
	return ok && slices.ContainsFunc(d.Requests, func(r pipeline.Request) bool { return r.LLM != nil })
}

func share(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}
