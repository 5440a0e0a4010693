package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
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
	backend     string // "heuristic" or "endpoint"; "" picks endpoint when a base URL is set
	base        string
	model       string
	concurrency int
	rpm         int
	tpm         int
	timeout     time.Duration
	structured  bool
	prices      string
}

func addLLMFlags(fs *flag.FlagSet, env *cmdEnv, o *llmOptions) {
	get := func(k, def string) string { return cmp.Or(env.getenv(k), def) }
	fs.StringVar(&o.backend, "llm", "", "LLM backend: heuristic (offline, deterministic) or endpoint (an OpenAI-compatible API at --llm-base); default endpoint when --llm-base is set, else heuristic")
	fs.StringVar(&o.base, "llm-base", get(envLLMBase, ""), "OpenAI-compatible API root with its version path, e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1 (env "+envLLMBase+"); the key is read from LLM_API_KEY or OPENAI_API_KEY")
	fs.StringVar(&o.model, "llm-model", get(envLLMModel, ""), "model name (env "+envLLMModel+")")
	fs.IntVar(&o.concurrency, "llm-concurrency", 4, "LLM requests in flight (1 or more)")
	fs.IntVar(&o.rpm, "llm-rpm", 0, "LLM requests per minute (0: no limit)")
	fs.IntVar(&o.tpm, "llm-tpm", 0, "LLM tokens per minute (0: no limit)")
	fs.DurationVar(&o.timeout, "llm-timeout", 10*time.Minute, "timeout of one LLM request (more than 0)")
	fs.BoolVar(&o.structured, "llm-json-schema", true, "send the answer's JSON schema as response_format (servers that reject it get it as an instruction)")
	fs.StringVar(&o.prices, "price", get(envLLMPrices, ""), "prices to estimate cost, dollars per million input/output tokens: \"gpt-4o-mini=0.15/0.60,...\" or a JSON file (env "+envLLMPrices+")")
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
	return llm.Config{
		BaseURL: o.base, Model: o.model, APIKey: llm.APIKeyFromEnv(env.getenv),
		StructuredOutput: o.structured, Concurrency: o.concurrency,
		RequestsPerMinute: o.rpm, TokensPerMinute: o.tpm, Timeout: o.timeout,
		Store: st, Meter: meter, Logger: log,
	}
}

// serviceConfigs returns the LLM service for the httpx client, none for the
// heuristic.
func (o *llmOptions) serviceConfigs(cfg llm.Config, heuristic bool) []httpx.ServiceConfig {
	if heuristic {
		return nil
	}
	sc := cfg.ServiceConfig()
	sc.Timeout = o.timeout // a generation may take minutes
	return []httpx.ServiceConfig{sc}
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

// printUsage writes the LLM token and cost totals per stage.
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
	fmt.Fprintln(tw, "LLM usage\tmodel\tcalls\tcached\tfailed\tinput tokens\toutput tokens\tcost (est.)\tsaved by cache")
	for _, t := range tallies {
		cost, saved := "-", "-"
		if c, ok := costs[t.Stage]; ok && len(prices) > 0 {
			cost, saved = fmt.Sprintf("$%.4f", c.Spent), fmt.Sprintf("$%.4f", c.Saved)
			if len(c.Unpriced) > 0 {
				cost += " (unpriced: " + strings.Join(c.Unpriced, ", ") + ")"
			}
		}
		if llm.IsHeuristic(t.Model) {
			cost, saved = "$0 (heuristic)", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", t.Stage, t.Model, t.Calls, t.CachedCalls, t.Failures,
			t.Spent.PromptTokens, t.Spent.CompletionTokens, cost, saved)
	}
	tw.Flush()
}
