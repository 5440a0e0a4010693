package llm

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/groundwork/curate/record"
)

// The model table: one row per provider and model or model family, as
// data (models.json, embedded; --models FILE overrides or adds rows). The
// request builder reads it, so that nothing a model refuses is sent, and
// prices come from it unless --price overrides them.

//go:embed models.json
var modelsJSON []byte

// Model is one row of the model table: what a model, or a family of
// models, takes and costs at one provider.
type Model struct {
	Provider string `json:"provider"`
	// Match is a model name, or a family: a prefix ending in "*" ("gpt-5*").
	// "*" alone is the provider's row for models the table does not know.
	// Names compare case-insensitively, and a name with an organisation
	// ("openai/gpt-oss-120b", "Qwen/Qwen3-8B") also matches without it.
	Match string `json:"match"`
	// Sampling lists the sampling parameters the model takes
	// ("temperature", "top_p", "seed"); nil (absent in the file) means
	// all, empty means none: only the defaults.
	Sampling []string `json:"sampling"`
	// TokenParam is the answer limit's name: "max_tokens" or
	// "max_completion_tokens".
	TokenParam string `json:"token_param"`
	// Reasoning says how the model reasons: "" not at all, "effort"
	// (reasoning_effort), "thinking" (Anthropic's extended thinking) or
	// "always" (thinks whatever is asked, as gpt-oss and Qwen3 do).
	// ReasoningTokens is what its reasoning is expected to take of the
	// answer limit: it counts as output, so the first limit has room for
	// it.
	Reasoning       string `json:"reasoning,omitempty"`
	ReasoningTokens int    `json:"reasoning_tokens,omitempty"`
	// Structured is how the model is asked for structured output:
	// "json_schema" (response_format; OpenAI's strict mode, a compatible
	// server's per --llm-schema-dialect), "output_config" (Anthropic's
	// output_config.format), "tool" (a forced tool without strict, for
	// Claude models before 4.5) or "prompt" (the schema in the prompt).
	// StrictKeywords are the JSON-schema keywords strict mode enforces.
	Structured     string   `json:"structured"`
	StrictKeywords []string `json:"strict_keywords,omitempty"`
	// Cache is the provider's prompt cache: "automatic" (prefixes cached
	// as they come), "breakpoints" (cache_control marks) or "none";
	// MinCachePrefix is the least prefix it caches, in tokens.
	Cache          string `json:"cache"`
	MinCachePrefix int    `json:"min_cache_prefix,omitempty"`
	// ContextWindow and MaxOutput are in tokens; 0 when unknown.
	ContextWindow int `json:"context_window,omitempty"`
	MaxOutput     int `json:"max_output,omitempty"`
	// Price is nil when the table has none (self-hosted models, models
	// not priced on the pages read).
	Price *Price `json:"price,omitempty"`
	// Source is the page (or pages) the row was taken from, Checked the
	// date, Note what is uncertain.
	Source  string `json:"source"`
	Checked string `json:"checked"`
	Note    string `json:"note,omitempty"`
}

// Structured-output modes, reasoning kinds and caches of a row.
const (
	StructuredSchema       = "json_schema"
	StructuredOutputConfig = "output_config"
	StructuredTool         = "tool"
	StructuredPrompt       = "prompt"

	ReasoningEffort   = "effort"
	ReasoningThinking = "thinking"
	ReasoningAlways   = "always"

	CacheAutomatic   = "automatic"
	CacheBreakpoints = "breakpoints"
	CacheNone        = "none"

	tokenMax           = "max_tokens"
	tokenMaxCompletion = "max_completion_tokens"
)

// Takes reports whether the model takes the sampling parameter p.
func (m Model) Takes(p string) bool { return m.Sampling == nil || slices.Contains(m.Sampling, p) }

// Known reports whether the row names models, rather than standing for
// the provider's models the table does not know.
func (m Model) Known() bool { return m.Match != "*" }

// Models is a model table. The zero value has no rows; DefaultModels is
// the table shipped with curate.
type Models struct{ rows []Model }

// DefaultModels returns the embedded table. It panics if the file is
// broken, which its test rules out.
func DefaultModels() *Models {
	rows, err := ParseModels(modelsJSON, "models.json")
	if err != nil {
		panic(err)
	}
	return &Models{rows: rows}
}

// ParseModels reads a model table file: {"models": [row, ...]}. Each row
// is checked: a provider curate speaks, a match, known modes, no negative
// figure or price, a source and a date.
func ParseModels(data []byte, name string) ([]Model, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var raw struct {
		About  string            `json:"about"`
		Models []json.RawMessage `json:"models"`
	}
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("model table %s: %w", name, err)
	}
	var rows []Model
	seen := map[string]bool{}
	for i, r := range raw.Models {
		var m Model
		d := json.NewDecoder(bytes.NewReader(r))
		d.DisallowUnknownFields()
		if err := d.Decode(&m); err != nil {
			return nil, fmt.Errorf("model table %s: row %d: %w", name, i+1, err)
		}
		if err := m.check(); err != nil {
			return nil, fmt.Errorf("model table %s: row %d (%s %s): %w", name, i+1, m.Provider, m.Match, err)
		}
		k := m.Provider + "\x00" + strings.ToLower(m.Match)
		if seen[k] {
			return nil, fmt.Errorf("model table %s: two rows for %s %s", name, m.Provider, m.Match)
		}
		seen[k] = true
		rows = append(rows, m)
	}
	return rows, nil
}

func (m Model) check() error {
	switch {
	case !slices.Contains(Providers(), m.Provider):
		return fmt.Errorf("provider %q: want %s", m.Provider, strings.Join(Providers(), ", "))
	case m.Match == "" || strings.Contains(strings.TrimSuffix(m.Match, "*"), "*"):
		return errors.New("match: want a model name, or a prefix ending in *")
	case m.TokenParam != tokenMax && m.TokenParam != tokenMaxCompletion:
		return fmt.Errorf("token_param %q: want max_tokens or max_completion_tokens", m.TokenParam)
	case !slices.Contains([]string{"", ReasoningEffort, ReasoningThinking, ReasoningAlways}, m.Reasoning):
		return fmt.Errorf("reasoning %q: want effort, thinking, always or nothing", m.Reasoning)
	case !slices.Contains([]string{StructuredSchema, StructuredOutputConfig, StructuredTool, StructuredPrompt}, m.Structured):
		return fmt.Errorf("structured %q: want json_schema, output_config, tool or prompt", m.Structured)
	case (m.Structured == StructuredOutputConfig || m.Structured == StructuredTool) && m.Provider != ProviderAnthropic:
		return fmt.Errorf("structured %q is Anthropic's", m.Structured)
	case !slices.Contains([]string{CacheAutomatic, CacheBreakpoints, CacheNone}, m.Cache):
		return fmt.Errorf("cache %q: want automatic, breakpoints or none", m.Cache)
	case m.ReasoningTokens < 0 || m.MinCachePrefix < 0 || m.ContextWindow < 0 || m.MaxOutput < 0:
		return errors.New("a negative token figure")
	case m.Source == "" || m.Checked == "":
		return errors.New("no source page or date: say where the row comes from")
	}
	for _, p := range m.Sampling {
		if !slices.Contains([]string{"temperature", "top_p", "top_k", "seed"}, p) {
			return fmt.Errorf("sampling %q: want temperature, top_p, top_k or seed", p)
		}
	}
	if p := m.Price; p != nil && (p.Input < 0 || p.Output < 0 || p.cachedInput() < 0 || p.cacheWrite() < 0 || p.cacheWrite1h() < 0 || p.batch() < 0) {
		return errors.New("a negative price")
	}
	return nil
}

// LoadModels reads a model table file (--models).
func LoadModels(path string) ([]Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load model table: %w", err)
	}
	return ParseModels(data, path)
}

// With returns the table with rows added: a row for the provider and
// match of one already there replaces it.
func (t *Models) With(rows ...Model) *Models {
	out := &Models{rows: slices.Clone(t.rows)}
	for _, r := range rows {
		i := slices.IndexFunc(out.rows, func(m Model) bool {
			return m.Provider == r.Provider && strings.EqualFold(m.Match, r.Match)
		})
		if i >= 0 {
			out.rows[i] = r
		} else {
			out.rows = append(out.rows, r)
		}
	}
	return out
}

// Rows returns the rows, by provider and match.
func (t *Models) Rows() []Model {
	out := slices.Clone(t.rows)
	slices.SortStableFunc(out, func(a, b Model) int {
		if c := strings.Compare(a.Provider, b.Provider); c != 0 {
			return c
		}
		return strings.Compare(strings.ToLower(a.Match), strings.ToLower(b.Match))
	})
	return out
}

// Lookup returns the row of model at provider: an exact match, else the
// family with the longest prefix, else the provider's row for models the
// table does not know ("*"), else a row that assumes nothing.
func (t *Models) Lookup(provider, model string) Model {
	names := []string{strings.ToLower(model)}
	if i := strings.LastIndexByte(model, '/'); i >= 0 && i < len(model)-1 {
		names = append(names, strings.ToLower(model[i+1:]))
	}
	best, bestLen, exact := -1, -1, false
	for i, r := range t.rows {
		if r.Provider != provider {
			continue
		}
		m := strings.ToLower(r.Match)
		for _, n := range names {
			switch {
			case m == n:
				if !exact {
					best, bestLen, exact = i, len(m), true
				}
			case !exact && strings.HasSuffix(m, "*") && strings.HasPrefix(n, m[:len(m)-1]) && len(m) > bestLen:
				best, bestLen = i, len(m)
			}
		}
	}
	if best >= 0 {
		return t.rows[best]
	}
	return Model{Provider: provider, Match: "*", TokenParam: tokenMax, Structured: StructuredSchema, Cache: CacheNone,
		Source: "(none)", Checked: "-", Note: "no row for this provider"}
}

// Price returns the table's price of model at provider, if it has one.
func (t *Models) Price(provider, model string) (Price, bool) {
	r := t.Lookup(provider, model)
	if r.Price == nil {
		return Price{}, false
	}
	return *r.Price, true
}

// PricesFor returns prices with the table's price of each of models added
// where prices (--price, an override) name none.
func (t *Models) PricesFor(provider string, prices Prices, models ...string) Prices {
	out := Prices{}
	for k, v := range prices {
		out[k] = v
	}
	for _, m := range models {
		if _, ok := out.Lookup(m); ok || IsHeuristic(m) || m == "" {
			continue
		}
		if p, ok := t.Price(provider, m); ok {
			out[m] = p
		}
	}
	return out
}

// refusals is what an endpoint was learned to refuse of a model, kept in
// the store (record.ModelRefusalSets) so that a later run and the next
// batch never send it again.
type refusals = record.ModelRefusals

// ModelRefusalsItem is the store item of what the endpoint of provider
// refused of model.
func ModelRefusalsItem(provider, model string) string {
	return "llm-model:" + provider + ":" + model
}
