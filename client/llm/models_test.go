package llm

import (
	"strings"
	"testing"
)

// TestModelTable: the shipped table parses, has a row for the models a
// provider's table does not know, and rows for the models the recipe
// names, each with its source and date.
func TestModelTable(t *testing.T) {
	m := DefaultModels()
	for _, p := range Providers() {
		if r := m.Lookup(p, "a-model-nobody-made"); r.Match != "*" || r.Source == "(none)" {
			t.Errorf("%s: no row for unknown models (%+v)", p, r)
		}
	}
	for _, tt := range []struct {
		provider, model, match string
		price                  bool
	}{
		{ProviderOpenAI, "gpt-5.4-mini", "gpt-5.4-mini*", true},
		{ProviderOpenAI, "gpt-5-mini", "gpt-5-mini*", true},
		{ProviderOpenAI, "gpt-5-mini-2025-08-07", "gpt-5-mini*", true},
		{ProviderOpenAI, "gpt-5", "gpt-5", true},
		{ProviderOpenAI, "gpt-5.2", "gpt-5*", false},
		{ProviderOpenAI, "o4-mini", "o4-mini*", true},
		{ProviderAnthropic, "claude-opus-4-8", "claude-opus-4-8*", true},
		{ProviderAnthropic, "claude-opus-4-7", "claude-opus-4-7*", true},
		{ProviderAnthropic, "claude-sonnet-4-20250514", "claude-sonnet-4*", true},
		{ProviderAnthropic, "claude-sonnet-4-6", "claude-sonnet-4-6*", true},
		{ProviderAnthropic, "claude-haiku-4-5-20251001", "claude-haiku-4-5*", true},
		{ProviderCompatible, "openai/gpt-oss-120b", "gpt-oss-120b", false},
		{ProviderCompatible, "Qwen/Qwen3-8B", "qwen3-8b*", false},
		{ProviderCompatible, "gemini-3.5-flash", "gemini-3.5-flash*", true},
	} {
		r := m.Lookup(tt.provider, tt.model)
		if r.Match != tt.match || (r.Price != nil) != tt.price || r.Source == "" || r.Checked == "" {
			t.Errorf("%s %s: row %q (price %v, source %q, checked %q), want %q (price %v)", tt.provider, tt.model, r.Match, r.Price != nil, r.Source, r.Checked, tt.match, tt.price)
		}
	}
	// The per-model rules the providers document.
	for _, tt := range []struct {
		provider, model string
		temperature     bool
		tokens          string
		structured      string
		minCache        int
	}{
		{ProviderOpenAI, "gpt-5-mini", false, "max_completion_tokens", StructuredSchema, 1024},
		{ProviderOpenAI, "o3", false, "max_completion_tokens", StructuredSchema, 1024},
		{ProviderOpenAI, "gpt-4o-mini", true, "max_completion_tokens", StructuredSchema, 1024},
		{ProviderAnthropic, "claude-opus-4-7", false, "max_tokens", StructuredOutputConfig, 4096},
		{ProviderAnthropic, "claude-opus-4-8", false, "max_tokens", StructuredOutputConfig, 4096},
		{ProviderAnthropic, "claude-opus-4-5", true, "max_tokens", StructuredOutputConfig, 4096},
		{ProviderAnthropic, "claude-opus-4-1", true, "max_tokens", StructuredTool, 1024},
		{ProviderAnthropic, "claude-sonnet-4-20250514", true, "max_tokens", StructuredTool, 1024},
		{ProviderAnthropic, "claude-sonnet-4-5", true, "max_tokens", StructuredOutputConfig, 1024},
		{ProviderAnthropic, "claude-sonnet-4-6", true, "max_tokens", StructuredOutputConfig, 2048},
		{ProviderAnthropic, "claude-haiku-4-5", true, "max_tokens", StructuredOutputConfig, 4096},
	} {
		r := m.Lookup(tt.provider, tt.model)
		if r.Takes("temperature") != tt.temperature || r.TokenParam != tt.tokens || r.Structured != tt.structured || r.MinCachePrefix != tt.minCache {
			t.Errorf("%s: temperature %v, %s, %s, least prefix %d; want %v, %s, %s, %d", tt.model,
				r.Takes("temperature"), r.TokenParam, r.Structured, r.MinCachePrefix, tt.temperature, tt.tokens, tt.structured, tt.minCache)
		}
	}
}

// TestModelTableOverride: a user's rows replace the shipped row of the
// same provider and match, or add one; a broken row is refused naming it.
func TestModelTableOverride(t *testing.T) {
	rows, err := ParseModels([]byte(`{"models":[
		{"provider":"compatible","match":"my-model","token_param":"max_tokens","structured":"prompt","cache":"none","context_window":8192,"source":"my server","checked":"2026-12"},
		{"provider":"openai","match":"gpt-5-mini*","sampling":[],"token_param":"max_completion_tokens","structured":"json_schema","cache":"automatic",
		 "price":{"input":0.2,"output":1.5},"source":"my contract","checked":"2026-12"}]}`), "mine.json")
	if err != nil {
		t.Fatal(err)
	}
	m := DefaultModels().With(rows...)
	if r := m.Lookup(ProviderCompatible, "my-model"); r.ContextWindow != 8192 || r.Structured != StructuredPrompt {
		t.Errorf("added row: %+v", r)
	}
	if p, ok := m.Price(ProviderOpenAI, "gpt-5-mini"); !ok || p.Input != 0.2 {
		t.Errorf("replaced price: %+v %v", p, ok)
	}
	if n, d := len(m.Rows()), len(DefaultModels().Rows()); n != d+1 {
		t.Errorf("%d rows, want %d", n, d+1)
	}
	for _, tt := range []struct{ row, want string }{
		{`{"provider":"gemini","match":"x","token_param":"max_tokens","structured":"prompt","cache":"none","source":"s","checked":"d"}`, "provider"},
		{`{"provider":"openai","match":"x","token_param":"max_output","structured":"prompt","cache":"none","source":"s","checked":"d"}`, "token_param"},
		{`{"provider":"openai","match":"x","token_param":"max_tokens","structured":"output_config","cache":"none","source":"s","checked":"d"}`, "Anthropic's"},
		{`{"provider":"openai","match":"x","token_param":"max_tokens","structured":"prompt","cache":"none"}`, "no source"},
		{`{"provider":"openai","match":"x","token_param":"max_tokens","structured":"prompt","cache":"none","source":"s","checked":"d","price":{"input":-1,"output":1}}`, "negative price"},
		{`{"provider":"openai","match":"x","token_param":"max_tokens","structured":"prompt","cache":"none","source":"s","checked":"d","sampling":["temp"]}`, "sampling"},
		{`{"provider":"openai","match":"x","tokens":"max_tokens","structured":"prompt","cache":"none","source":"s","checked":"d"}`, "unknown field"},
	} {
		_, err := ParseModels([]byte(`{"models":[`+tt.row+`]}`), "bad.json")
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "bad.json") {
			t.Errorf("%s: err %v, want one naming %q and the file", tt.row, err, tt.want)
		}
	}
}

// TestTablePrices: the table prices a model --price does not name; a
// --price entry overrides it.
func TestTablePrices(t *testing.T) {
	m := DefaultModels()
	p := m.PricesFor(ProviderAnthropic, nil, "claude-sonnet-4-6")
	u := Usage{PromptTokens: 1_000_000, CachedTokens: 500_000, CacheWriteTokens: 300_000, CacheWrite1hTokens: 100_000, CompletionTokens: 100_000}
	// 200k plain at $3, 500k read at $0.30, 200k 5-minute writes at $3.75,
	// 100k 1-hour writes at $6, 100k out at $15.
	if c, ok := p.Cost("claude-sonnet-4-6", u); !ok || !near(c, 0.6+0.15+0.75+0.6+1.5) {
		t.Errorf("cost %v %v", c, ok)
	}
	over := m.PricesFor(ProviderAnthropic, Prices{"claude-sonnet-4-6": {Input: 1, Output: 1}}, "claude-sonnet-4-6")
	if pr, _ := over.Lookup("claude-sonnet-4-6"); pr.Input != 1 {
		t.Errorf("--price did not override the table: %+v", pr)
	}
	if _, ok := m.PricesFor(ProviderCompatible, nil, "Qwen/Qwen3-8B").Lookup("Qwen/Qwen3-8B"); ok {
		t.Error("a self-hosted model got a price")
	}
}
