package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/groundwork/curate/classify"
	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/paperprompt"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// ModelsOptions configure Models.
type ModelsOptions struct {
	// Models is the table (the shipped one with --models' rows).
	Models *llm.Models
	// Prices are --price's, which override the table's.
	Prices llm.Prices
	// Provider and Model name a model to describe; Provider "" takes the
	// first provider with a row that knows the model.
	Provider, Model string
	// Store, when it holds a store, is read for what endpoints refused of
	// the model (nothing is created or written).
	Store string
	// PromptCacheTTL is --llm-prompt-cache-ttl.
	PromptCacheTTL string
}

// ModelsReport is what curate models prints: the table, and for a named
// model what curate sends it.
type ModelsReport struct {
	Rows  []llm.Model    `json:"models"`
	Model *ModelSendings `json:"model,omitempty"`
}

// ModelSendings is what curate sends one model, and why.
type ModelSendings struct {
	Provider string    `json:"provider"`
	Model    string    `json:"model"`
	Row      llm.Model `json:"row"`
	// Price is what the model is priced at, and PriceFrom says from where
	// ("--price", "the model table", or "" when unpriced).
	Price     *llm.Price `json:"price,omitempty"`
	PriceFrom string     `json:"price_from,omitempty"`
	// Rules are what curate sends and leaves out, in words.
	Rules []string `json:"rules"`
	// Learned is what an endpoint refused of the model at run time, kept
	// in the store.
	Learned *record.ModelRefusals `json:"learned,omitempty"`
	// Classify and ClassifyBatch are the body of a classify request of a
	// made-up target (40 references, a paper of 6,000 tokens) in sync and
	// batch mode, its texts shortened.
	Classify      any `json:"classify_request"`
	ClassifyBatch any `json:"classify_batch_line"`
}

// Models describes the model table and, when opt names one, a model.
func Models(ctx context.Context, opt ModelsOptions) (*ModelsReport, error) {
	t := cmp.Or(opt.Models, llm.DefaultModels())
	rep := &ModelsReport{Rows: t.Rows()}
	if opt.Model == "" {
		return rep, nil
	}
	provider := opt.Provider
	if provider == "" {
		provider = llm.ProviderCompatible
		for _, p := range llm.Providers() {
			if t.Lookup(p, opt.Model).Known() {
				provider = p
				break
			}
		}
	}
	m := &ModelSendings{Provider: provider, Model: opt.Model, Row: t.Lookup(provider, opt.Model)}
	if p, ok := opt.Prices.Lookup(opt.Model); ok {
		m.Price, m.PriceFrom = &p, "--price"
	} else if p, ok := t.Price(provider, opt.Model); ok {
		m.Price, m.PriceFrom = &p, "the model table"
	}
	var st *store.Store
	if opt.Store != "" {
		s, err := store.OpenExisting(ctx, opt.Store)
		switch {
		case err == nil:
			st = s
			defer st.Close()
		case !errors.Is(err, store.ErrNoStore):
			return nil, err
		}
	}
	// The Client only encodes; its base URL is never asked.
	cfg := llm.Config{Provider: provider, Model: opt.Model, Models: t, Prices: opt.Prices, StructuredOutput: true,
		BaseURL: "http://127.0.0.1:1/v1", Store: st, PromptCacheTTL: opt.PromptCacheTTL}
	hc, err := httpx.New(httpx.Config{UserAgent: "curate models"}, cfg.ServiceConfig())
	if err != nil {
		return nil, err
	}
	c, err := llm.New(hc, cfg) // nothing is sent
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if l := c.Learned(ctx); len(l.Learned) > 0 {
		m.Learned = &l
	}
	req, err := classify.SampleRequest(40, 6000)
	if err != nil {
		return nil, err
	}
	for _, b := range []struct {
		batch bool
		out   *any
	}{{false, &m.Classify}, {true, &m.ClassifyBatch}} {
		body, err := c.Body(ctx, req, b.batch)
		if err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return nil, err
		}
		*b.out = shorten(v, "")
	}
	m.Rules = describe(m.Row, provider, m.Learned)
	rep.Model = m
	return rep, nil
}

// describe says in words what curate sends a model of row.
func describe(r llm.Model, provider string, learned *record.ModelRefusals) []string {
	var out []string
	switch {
	case !r.Known():
		out = append(out, "not in the model table: curate sends what most models take and learns, once, what the endpoint refuses (kept in the store)")
	default:
		out = append(out, fmt.Sprintf("row %s %q, from %s (checked %s)", r.Provider, r.Match, r.Source, r.Checked))
	}
	temp := "temperature: sent (0 unless the task sets one)"
	if !r.Takes("temperature") || learned != nil && learned.NoTemperature {
		temp = "temperature: not sent (the model takes only its default)"
	}
	out = append(out, temp)
	limit := "answer limit: " + r.TokenParam + ", the task's first limit (classify: 128 + 25 a reference + 260 a likely source; a card: 1,536)"
	if r.Reasoning != "" {
		limit += fmt.Sprintf(", plus %d for the model's reasoning, which counts as output", r.ReasoningTokens)
	}
	if r.MaxOutput > 0 {
		limit += fmt.Sprintf("; an answer cut at its limit is asked again with twice it, up to the largest output (%d)", r.MaxOutput)
	} else {
		limit += "; an answer cut at its limit is asked again with twice it, a few times (the largest output is not known)"
	}
	out = append(out, limit)
	switch r.Structured {
	case llm.StructuredSchema:
		if provider == llm.ProviderOpenAI {
			out = append(out, "structured output: response_format json_schema, strict (every property required, optional ones nullable, additionalProperties false; the keywords strict mode refuses left out, and checked here)")
		} else {
			out = append(out, "structured output: response_format json_schema in the form --llm-schema-dialect names")
		}
	case llm.StructuredOutputConfig:
		out = append(out, "structured output: output_config.format json_schema (numeric and length bounds left out and checked here)")
	case llm.StructuredTool:
		out = append(out, "structured output: a forced tool without strict (the model has neither structured outputs nor strict tools)")
	case llm.StructuredPrompt:
		out = append(out, "structured output: the schema in the system prompt")
	}
	sh, _ := paperprompt.Load()
	switch r.Cache {
	case llm.CacheBreakpoints:
		s := fmt.Sprintf("prompt cache: cache_control on the shared system prompt (five minutes in sync mode, an hour on batch lines, writes priced by lifetime) and, in sync mode, on a target's paper, which its gold card reads; least cacheable prefix %d tokens", r.MinCachePrefix)
		if sh != nil && float64(paperprompt.EstimateTokens(sh.System)) < 1.15*float64(r.MinCachePrefix) {
			s += fmt.Sprintf(": the system prompt (about %d tokens) is lengthened by the worked examples (about %d)", paperprompt.EstimateTokens(sh.System), paperprompt.EstimateTokens(sh.Examples))
		}
		out = append(out, s, "batch: requests sharing the system prompt get one sent ahead, synchronously, to write it to the cache when that pays (the requests of one batch do not see each other's writes)")
	case llm.CacheAutomatic:
		s := "prompt cache: the provider's own prefix cache; the shared system prompt and schema first, then the paper, so the gold card reads a target's paper"
		if r.MinCachePrefix > 0 {
			s += fmt.Sprintf(" (prefixes of %d tokens and up)", r.MinCachePrefix)
		}
		if provider == llm.ProviderOpenAI {
			s += "; prompt_cache_key per paper"
		}
		out = append(out, s)
	default:
		out = append(out, "prompt cache: none")
	}
	if r.ContextWindow > 0 {
		out = append(out, fmt.Sprintf("context window %d tokens: a prompt past it is not sent; the paper is trimmed by sections (references, back matter and appendices first) and the record says so", r.ContextWindow))
	} else {
		out = append(out, "context window not known: a prompt the endpoint refuses for its window is trimmed by sections and asked again")
	}
	if r.Note != "" {
		out = append(out, "note: "+r.Note)
	}
	return out
}

// shorten replaces the long texts of a request body by their size, and
// schemas by their name.
func shorten(v any, key string) any {
	switch x := v.(type) {
	case string:
		if len(x) > 100 {
			first := strings.Join(strings.Fields(x)[:min(8, len(strings.Fields(x)))], " ")
			return fmt.Sprintf("%s … (%d bytes, about %d tokens)", first, len(x), paperprompt.EstimateTokens(x))
		}
		return x
	case map[string]any:
		if slices.Contains([]string{"schema", "input_schema"}, key) {
			b, _ := json.Marshal(x)
			return fmt.Sprintf("(a JSON schema of %d bytes)", len(b))
		}
		out := map[string]any{}
		for k, e := range x {
			out[k] = shorten(e, k)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = shorten(e, key)
		}
		return out
	}
	return v
}
