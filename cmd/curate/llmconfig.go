package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/groundwork/curate/httpx"
	"github.com/groundwork/curate/llm"
	"github.com/groundwork/curate/store"
)

const (
	envLLMModel  = "CURATE_LLM_MODEL"
	envLLMPrices = "CURATE_PRICES"
)

// llmOptions are the flags of commands that call an LLM.
type llmOptions struct {
	backend        string // "heuristic" or "endpoint"; "" picks endpoint when a base URL is set
	base           string
	provider       string // "" infers it from the base URL
	dialect        string // "" infers it from the provider and base URL
	model          string
	concurrency    int
	rpm            int
	tpm            int
	timeout        time.Duration
	attemptTimeout time.Duration
	structured     bool
	promptCache    bool
	cacheTTL       string
	prices         string
}

// Default API roots of the providers, for --llm-provider without --llm-base.
var providerBases = map[string]string{llm.ProviderOpenAI: "https://api.openai.com/v1", llm.ProviderAnthropic: "https://api.anthropic.com/v1"}

func addLLMFlags(fs *flag.FlagSet, env *cmdEnv, o *llmOptions) {
	get := func(k, def string) string { return cmp.Or(env.getenv(k), def) }
	fs.StringVar(&o.backend, "llm", "", "LLM backend: heuristic (offline, deterministic) or endpoint (an OpenAI-compatible API at --llm-base); default endpoint when --llm-base is set, else heuristic")
	fs.StringVar(&o.base, "llm-base", get(envLLMBase, ""), "LLM API root with its version path, e.g. https://api.openai.com/v1, https://api.anthropic.com/v1 or http://127.0.0.1:8000/v1 (env "+envLLMBase+"); the key is read from ANTHROPIC_API_KEY for Anthropic, else LLM_API_KEY or OPENAI_API_KEY")
	fs.StringVar(&o.provider, "llm-provider", "", "LLM API: openai, anthropic (native Messages API) or compatible (vLLM, Ollama, llama.cpp, LiteLLM); default inferred from --llm-base")
	fs.StringVar(&o.dialect, "llm-schema-dialect", "", "structured output the endpoint takes: "+dialectList()+"; default from the provider, and ollama on port 11434")
	fs.StringVar(&o.model, "llm-model", get(envLLMModel, ""), "model name (env "+envLLMModel+")")
	fs.IntVar(&o.concurrency, "llm-concurrency", 4, "LLM requests in flight (1 or more)")
	fs.IntVar(&o.rpm, "llm-rpm", 0, "LLM requests per minute (0: no limit)")
	fs.IntVar(&o.tpm, "llm-tpm", 0, "LLM tokens per minute (0: no limit)")
	fs.DurationVar(&o.timeout, "llm-timeout", 10*time.Minute, "time one LLM call may take from its first attempt, retries and follow-ups included")
	fs.DurationVar(&o.attemptTimeout, "llm-attempt-timeout", llm.DefaultAttemptTimeout, "time one HTTP attempt of an LLM call may take before it is retried (a hung or trickling answer)")
	fs.BoolVar(&o.structured, "llm-json-schema", true, "send the answer's JSON schema as the endpoint's structured output (a schema the endpoint rejects is sent as an instruction instead)")
	fs.BoolVar(&o.promptCache, "llm-prompt-cache", true, "mark the static prompt blocks for the provider's prompt cache (Anthropic cache_control, OpenAI prompt_cache_key)")
	fs.StringVar(&o.cacheTTL, "llm-prompt-cache-ttl", "", "Anthropic prompt cache lifetime: 5m (default) or 1h")
	fs.StringVar(&o.prices, "price", get(envLLMPrices, ""), "prices to estimate cost, dollars per million tokens: \"MODEL=input/output[/cached_input[/cache_write]],...\" (cached input defaults to the input price, cache writes to 1.25× it; batch calls cost half) or a JSON file (env "+envLLMPrices+")")
}

func dialectList() string {
	var names []string
	for _, d := range llm.Dialects() {
		names = append(names, string(d))
	}
	return strings.Join(names, ", ")
}

// validate checks the LLM flags, the price table included.
func (o *llmOptions) validate() error {
	heuristic, err := o.heuristic()
	if err != nil {
		return err
	}
	switch {
	case o.concurrency < 1:
		return fmt.Errorf("%w: --llm-concurrency %d: want 1 or more", errUsage, o.concurrency)
	case o.rpm < 0:
		return fmt.Errorf("%w: --llm-rpm %d: want 0 (no limit) or more", errUsage, o.rpm)
	case o.tpm < 0:
		return fmt.Errorf("%w: --llm-tpm %d: want 0 (no limit) or more", errUsage, o.tpm)
	case o.timeout <= 0:
		return fmt.Errorf("%w: --llm-timeout %s: want more than 0", errUsage, o.timeout)
	case o.attemptTimeout <= 0:
		return fmt.Errorf("%w: --llm-attempt-timeout %s: want more than 0", errUsage, o.attemptTimeout)
	}
	if !heuristic {
		if err := checkBaseURL("--llm-base", o.base); err != nil {
			return err
		}
	}
	_, err = o.loadPrices()
	return err
}

// heuristic reports whether the heuristic backend is chosen.
func (o *llmOptions) heuristic() (bool, error) {
	switch o.provider {
	case "", llm.ProviderCompatible:
	case llm.ProviderOpenAI, llm.ProviderAnthropic:
		o.base = cmp.Or(o.base, providerBases[o.provider])
	default:
		return false, fmt.Errorf("%w: --llm-provider %q: want %s", errUsage, o.provider, strings.Join(llm.Providers(), ", "))
	}
	if o.dialect != "" && !slices.Contains(llm.Dialects(), llm.Dialect(o.dialect)) {
		return false, fmt.Errorf("%w: --llm-schema-dialect %q: want %s", errUsage, o.dialect, dialectList())
	}
	if o.cacheTTL != "" && o.cacheTTL != "5m" && o.cacheTTL != "1h" {
		return false, fmt.Errorf("%w: --llm-prompt-cache-ttl %q: want 5m or 1h", errUsage, o.cacheTTL)
	}
	switch o.backend {
	case llm.HeuristicModel:
		return true, nil
	case "endpoint", "openai":
		if o.base == "" {
			return false, fmt.Errorf("%w: --llm endpoint needs --llm-base (or %s)", errUsage, envLLMBase)
		}
		if o.model == "" {
			return false, fmt.Errorf("%w: --llm endpoint needs --llm-model (or %s)", errUsage, envLLMModel)
		}
		return false, nil
	case "":
		if o.base == "" {
			return true, nil
		}
		if o.model == "" {
			return false, fmt.Errorf("%w: --llm-base is set but no --llm-model (or %s)", errUsage, envLLMModel)
		}
		return false, nil
	}
	return false, fmt.Errorf("%w: --llm %q: want heuristic or endpoint", errUsage, o.backend)
}

// config returns the LLM client configuration; its ServiceConfig joins the
// httpx client.
func (o *llmOptions) config(env *cmdEnv, st *store.Store, meter *llm.Meter, log *slog.Logger) llm.Config {
	provider := cmp.Or(o.provider, llm.InferProvider(o.base))
	return llm.Config{
		BaseURL: o.base, Provider: provider, Dialect: llm.Dialect(o.dialect), Model: o.model,
		APIKey:           llm.APIKeyForProvider(provider, env.getenv),
		StructuredOutput: o.structured, NoPromptCache: !o.promptCache, PromptCacheTTL: o.cacheTTL,
		Concurrency: o.concurrency, RequestsPerMinute: o.rpm, TokensPerMinute: o.tpm,
		Timeout: o.timeout, AttemptTimeout: o.attemptTimeout, Drain: env.drain,
		Store: st, Meter: meter, Logger: log,
	}
}

// serviceConfigs returns the LLM service for the httpx client, none for the
// heuristic.
func (o *llmOptions) serviceConfigs(cfg llm.Config, heuristic bool) []httpx.ServiceConfig {
	if heuristic {
		return nil
	}
	return []httpx.ServiceConfig{cfg.ServiceConfig()} // its per-attempt timeout is --llm-attempt-timeout
}

// loadPrices reads --price: a table or a JSON file.
func (o *llmOptions) loadPrices() (llm.Prices, error) {
	if o.prices == "" {
		return nil, nil
	}
	if _, err := os.Stat(o.prices); err == nil {
		p, err := llm.LoadPrices(o.prices)
		if err != nil {
			return nil, fmt.Errorf("%w: --price %s: %v", errUsage, o.prices, err)
		}
		return p, nil
	}
	p, err := llm.ParsePrices(o.prices)
	if err != nil {
		return nil, fmt.Errorf("%w: --price: %v", errUsage, err)
	}
	return p, nil
}

// printUsage writes the LLM token and cost totals per stage: prompt
// tokens with the part the provider's prompt cache served (and wrote),
// calls made through a batch API, and the cost with batch and cache
// prices.
func printUsage(w io.Writer, meter *llm.Meter, prices llm.Prices) {
	tallies := meter.Tallies()
	if len(tallies) == 0 {
		return
	}
	sort.Slice(tallies, func(i, j int) bool { return tallies[i].Stage < tallies[j].Stage })
	costs := map[string]llm.StageCost{}
	for _, c := range prices.Costs(tallies) {
		costs[c.Stage] = c
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LLM usage\tmodel\tcalls\tcached\tfailed\tinput tokens\tfrom prompt cache\tcache writes\toutput tokens\tbatch calls\tcost (est.)\tsaved by cache\tsaved by batch")
	for _, t := range tallies {
		cost, saved, batch := "-", "-", "-"
		if c, ok := costs[t.Stage]; ok && len(prices) > 0 {
			cost, saved, batch = fmt.Sprintf("$%.4f", c.Spent), fmt.Sprintf("$%.4f", c.Saved), fmt.Sprintf("$%.4f", c.BatchSaved)
			if len(c.Unpriced) > 0 {
				cost += " (unpriced: " + strings.Join(c.Unpriced, ", ") + ")"
			}
		}
		if llm.IsHeuristic(t.Model) {
			cost, saved, batch = "$0 (heuristic)", "-", "-"
		}
		share := "0"
		if t.Spent.PromptTokens > 0 {
			share = fmt.Sprintf("%d (%.0f%%)", t.Spent.CachedTokens, 100*float64(t.Spent.CachedTokens)/float64(t.Spent.PromptTokens))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%s\t%s\t%s\n", t.Stage, t.Model, t.Calls, t.CachedCalls, t.Failures,
			t.Spent.PromptTokens, share, t.Spent.CacheWriteTokens, t.Spent.CompletionTokens, t.BatchCalls, cost, saved, batch)
	}
	tw.Flush()
}
