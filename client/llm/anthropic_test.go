package llm

import (
	"errors"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/sim"
)

func anthropicReply(content []any, stop string, usage map[string]any) fakeReply {
	return fakeReply{status: 200, body: map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
		"content": content, "stop_reason": stop, "usage": usage,
	}}
}

func newAnthropicTestClient(t *testing.T, srv *fakeServer, cfg Config) *testEnv {
	t.Helper()
	cfg.Provider = ProviderAnthropic
	if cfg.Model == "" {
		cfg.Model = "claude-sonnet-4-6"
	}
	return newTestClient(t, srv, cfg)
}

func TestAnthropicWire(t *testing.T) {
	srv := newFakeServer(t, func(int, map[string]any) fakeReply {
		return anthropicReply([]any{map[string]any{"type": "text", "text": validAnswer}}, "end_turn",
			map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 0})
	})
	env := newAnthropicTestClient(t, srv, Config{APIKey: "sk-ant-test-123456", StructuredOutput: true})
	req := jsonRequest()
	req.MaxTokens = 0
	req.Static = "The taxonomy: ..."
	r, err := env.client.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	rec := srv.request(0)
	if rec.path != "/v1/messages" {
		t.Errorf("path = %s", rec.path)
	}
	if rec.header.Get("X-Api-Key") != "sk-ant-test-123456" || rec.header.Get("Authorization") != "" {
		t.Errorf("auth headers: x-api-key %q, authorization %q", rec.header.Get("X-Api-Key"), rec.header.Get("Authorization"))
	}
	if rec.header.Get("Anthropic-Version") != DefaultAnthropicVersion {
		t.Errorf("anthropic-version = %q", rec.header.Get("Anthropic-Version"))
	}
	b := rec.body
	if b["max_tokens"] != float64(defaultAnthropicMaxTokens) {
		t.Errorf("max_tokens = %v, want the default", b["max_tokens"])
	}
	sys := b["system"].([]any)[0].(map[string]any)
	if sys["text"] != "You classify references." || sys["cache_control"].(map[string]any)["type"] != "ephemeral" {
		t.Errorf("system = %v", sys)
	}
	msgs := b["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "user" {
		t.Fatalf("messages = %v", msgs)
	}
	blocks := msgs[0].(map[string]any)["content"].([]any)
	if blocks[0].(map[string]any)["text"] != "The taxonomy: ..." || blocks[0].(map[string]any)["cache_control"] == nil ||
		blocks[1].(map[string]any)["cache_control"] != nil {
		t.Errorf("user blocks = %v, want the static one first with a breakpoint", blocks)
	}
	of := b["output_config"].(map[string]any)["format"].(map[string]any)
	if of["type"] != "json_schema" || of["schema"] == nil || b["tools"] != nil {
		t.Errorf("output_config = %v, tools %v", of, b["tools"])
	}
	want := Usage{PromptTokens: 2010, CompletionTokens: 5, TotalTokens: 2015, CachedTokens: 2000}
	if r.Usage != want || string(r.JSON) != validAnswer {
		t.Errorf("usage %+v JSON %s, want %+v", r.Usage, r.JSON, want)
	}
}

// TestAnthropicToolFallback: an older model gets a forced tool without
// strict (the table says it has neither structured outputs nor strict
// tools); a model whose output_config is refused for a schema falls back
// to a strict tool for that schema; the tool_use input is the answer.
func TestAnthropicToolFallback(t *testing.T) {
	srv := newFakeServer(t, func(_ int, body map[string]any) fakeReply {
		if body["output_config"] != nil {
			return apiError(400, "output_config.format.schema: this schema is not supported", "")
		}
		return anthropicReply([]any{map[string]any{"type": "tool_use", "id": "t1", "name": "classification",
			"input": map[string]any{"refs": []any{map[string]any{"n": 1, "role": "source"}, map[string]any{"n": 2, "role": "other"}}}}},
			"tool_use", map[string]any{"input_tokens": 10, "output_tokens": 5})
	})
	for _, model := range []string{"claude-3-5-sonnet-20241022", "claude-sonnet-4-6"} {
		env := newAnthropicTestClient(t, srv, Config{Model: model, StructuredOutput: true})
		for range 2 {
			r, err := env.client.Complete(t.Context(), jsonRequest())
			if err != nil {
				t.Fatal(err)
			}
			if string(r.JSON) != validAnswer {
				t.Errorf("%s: JSON = %s", model, r.JSON)
			}
		}
	}
	// 2 tool calls for the old model; 1 refused + 2 tool calls for the new.
	if srv.calls() != 5 {
		t.Fatalf("calls = %d, want 5", srv.calls())
	}
	if old := srv.request(0).body; old["output_config"] != nil || old["tools"].([]any)[0].(map[string]any)["strict"] != nil {
		t.Errorf("the older model got output_config or a strict tool: %v", old)
	}
	last := srv.request(4).body
	tool := last["tools"].([]any)[0].(map[string]any)
	if tool["strict"] != true || tool["name"] != "classification" || last["tool_choice"].(map[string]any)["name"] != "classification" {
		t.Errorf("tool = %v, choice %v", tool, last["tool_choice"])
	}
	for _, tt := range []struct {
		model string
		want  bool
	}{
		{"claude-sonnet-4-6", true}, {"claude-opus-4.8", true}, {"claude-haiku-4-5-20251001", true}, {"claude-opus-4-5", true},
		{"claude-sonnet-4-20250514", false}, {"claude-opus-4-1", false}, {"claude-3-5-sonnet-20241022", false}, {"claude-sonnet-5", true},
	} {
		if got := AnthropicStructuredOutput(tt.model); got != tt.want {
			t.Errorf("AnthropicStructuredOutput(%q) = %v", tt.model, got)
		}
	}
}

// TestAnthropicOverloaded: 529s are retried; one that persists names the
// overload.
func TestAnthropicOverloaded(t *testing.T) {
	overloaded := fakeReply{status: 529, body: map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}}}
	srv := newFakeServer(t, func(n int, _ map[string]any) fakeReply {
		if n <= 2 {
			return overloaded
		}
		return anthropicReply([]any{map[string]any{"type": "text", "text": validAnswer}}, "end_turn", map[string]any{"input_tokens": 1, "output_tokens": 1})
	})
	env := newAnthropicTestClient(t, srv, Config{})
	if _, err := env.client.Complete(t.Context(), jsonRequest()); err != nil || srv.calls() != 3 {
		t.Fatalf("err %v after %d calls", err, srv.calls())
	}
	srv2 := newFakeServer(t, func(int, map[string]any) fakeReply { return overloaded })
	env2 := newAnthropicTestClient(t, srv2, Config{})
	_, err := env2.client.Complete(t.Context(), jsonRequest())
	var se *httpx.StatusError
	if !errors.As(err, &se) || se.Status != 529 || !strings.Contains(err.Error(), "overloaded") {
		t.Errorf("err = %v", err)
	}
	// Truncation and refusal map to the shared reasons.
	srv3 := newFakeServer(t, func(int, map[string]any) fakeReply {
		return anthropicReply([]any{map[string]any{"type": "text", "text": `{"refs":`}}, "max_tokens", map[string]any{"input_tokens": 1, "output_tokens": 1})
	})
	env3 := newAnthropicTestClient(t, srv3, Config{InvalidRetries: -1})
	var ie *InvalidError
	if _, err := env3.client.Complete(t.Context(), jsonRequest()); !errors.As(err, &ie) || !strings.Contains(ie.Reason, "cut off") {
		t.Errorf("err = %v", err)
	}
}

// TestAnthropicAgainstSim runs cards through the simulated Anthropic API:
// the answers pass, the protocol's checks pass, and the static system
// prompt is written to the cache once and read after.
func TestAnthropicAgainstSim(t *testing.T) {
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 3, Targets: 2})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.Start(w, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cfg := Config{Provider: ProviderAnthropic, BaseURL: s.URL(sim.Anthropic), Model: "claude-sonnet-4-6", APIKey: "sk-ant-sim-123456", StructuredOutput: true}
	hc, err := httpx.New(httpx.Config{UserAgent: "t"}, cfg.ServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(hc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Below Sonnet 4.6's least cacheable prefix (about 2,048 tokens,
	// measured; the docs say 1,024) nothing is cached.
	short := strings.Repeat("You write idea cards of papers, carefully and briefly. ", 120) // ~1,600 tokens
	r, err := c.Complete(t.Context(), Request{Stage: "summarize", PromptVersion: "gold-v1", System: short, MaxTokens: 800, Schema: goldSchemaForTest,
		User: "Title: Brindle: a short prompt\nWrite the idea card of this paper.\n\nText: ..."})
	if err != nil || r.Usage.CacheWriteTokens != 0 || r.Usage.CachedTokens != 0 {
		t.Errorf("a prefix below the model's minimum: usage %+v, %v; want nothing cached", r.Usage, err)
	}
	long := strings.Repeat("You write idea cards of papers, carefully and briefly. ", 190) // ~2,600 tokens
	var total Usage
	for i, title := range []string{"Zorbify: sparse routing for long documents", "Quandle: robust retrieval for noisy queries"} {
		r, err := c.Complete(t.Context(), Request{
			Stage: "summarize", PromptVersion: "gold-v1", System: long, MaxTokens: 800, Schema: goldSchemaForTest,
			User: "Title: " + title + "\nWrite the idea card of this paper.\n\nText: ...",
		})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		switch i {
		case 0:
			if r.Usage.CacheWriteTokens == 0 || r.Usage.CachedTokens != 0 {
				t.Errorf("first call usage %+v, want a cache write", r.Usage)
			}
		case 1:
			if r.Usage.CachedTokens == 0 || r.Usage.CacheWriteTokens != 0 {
				t.Errorf("second call usage %+v, want a cache read", r.Usage)
			}
		}
		total = total.Add(r.Usage)
	}
	if total.CachedTokens*3 < total.PromptTokens {
		t.Errorf("cached %d of %d prompt tokens", total.CachedTokens, total.PromptTokens)
	}
}

var goldSchemaForTest = MustSchemaFor[goldAnswer]("gold_card", NonEmptyStrings())
