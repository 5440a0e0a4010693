package llm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

// TestRefusalsKeptInStore: what an endpoint refuses of a model the table
// does not know is learned once and kept in the store: a later process
// over the same store sends the request the endpoint takes at once.
func TestRefusalsKeptInStore(t *testing.T) {
	srv := newFakeServer(t, func(_ int, body map[string]any) fakeReply {
		if _, ok := body["temperature"]; ok {
			return apiError(400, "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.", "temperature")
		}
		if _, ok := body["max_tokens"]; ok {
			return apiError(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "max_tokens")
		}
		return ok("fine")
	})
	dir := t.TempDir()
	st := openStore(t, dir)
	env := newTestClient(t, srv, Config{Model: "mystery-reasoner", Store: st})
	if _, err := env.client.Complete(t.Context(), baseRequest()); err != nil {
		t.Fatal(err)
	}
	if srv.calls() != 3 {
		t.Fatalf("%d calls, want 3: two refusals learned, then the answer", srv.calls())
	}
	got, ok, err := record.ModelRefusalSets.Lookup(t.Context(), st, ModelRefusalsItem(ProviderCompatible, "mystery-reasoner"))
	if err != nil || !ok || !got.NoTemperature || !got.MaxCompletionTokens || len(got.Learned) != 2 {
		t.Fatalf("stored refusals %+v, %v, %v", got, ok, err)
	}
	// Another process: a new Client over the same store.
	env2 := newTestClient(t, srv, Config{Model: "mystery-reasoner", Store: st})
	req := baseRequest()
	req.User = "Another paper."
	if _, err := env2.client.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if srv.calls() != 4 {
		t.Errorf("%d calls, want 4: the second process sent one request", srv.calls())
	}
	last := srv.request(3).body
	if _, ok := last["temperature"]; ok || last["max_completion_tokens"] != float64(200) {
		t.Errorf("the second process sent %v", last)
	}
}

// TestKnownModelsSendNothingRefused: for the models the table knows,
// nothing they refuse is sent, from the first request.
func TestKnownModelsSendNothingRefused(t *testing.T) {
	for _, tt := range []struct {
		provider, model string
		check           func(t *testing.T, b map[string]any)
	}{
		{ProviderOpenAI, "gpt-5-mini", func(t *testing.T, b map[string]any) {
			if _, ok := b["temperature"]; ok || b["max_completion_tokens"] == nil || b["max_tokens"] != nil {
				t.Errorf("gpt-5-mini: %v", b)
			}
		}},
		{ProviderOpenAI, "gpt-4o-mini", func(t *testing.T, b map[string]any) {
			if b["temperature"] != float64(0) || b["max_completion_tokens"] == nil {
				t.Errorf("gpt-4o-mini: %v", b)
			}
		}},
		{ProviderAnthropic, "claude-opus-4-7", func(t *testing.T, b map[string]any) {
			if _, ok := b["temperature"]; ok || b["output_config"] == nil {
				t.Errorf("claude-opus-4-7: %v", b)
			}
		}},
		{ProviderAnthropic, "claude-sonnet-4-20250514", func(t *testing.T, b map[string]any) {
			tools, _ := b["tools"].([]any)
			if b["output_config"] != nil || len(tools) != 1 || tools[0].(map[string]any)["strict"] != nil || b["tool_choice"] == nil {
				t.Errorf("claude-sonnet-4-20250514: output_config %v, tools %v", b["output_config"], b["tools"])
			}
		}},
		{ProviderAnthropic, "claude-haiku-4-5", func(t *testing.T, b map[string]any) {
			if b["temperature"] != float64(0) || b["output_config"] == nil {
				t.Errorf("claude-haiku-4-5: %v", b)
			}
		}},
	} {
		t.Run(tt.model, func(t *testing.T) {
			srv := newFakeServer(t, func(int, map[string]any) fakeReply {
				if tt.provider == ProviderAnthropic {
					return anthropicReply([]any{map[string]any{"type": "text", "text": validAnswer}}, "end_turn", map[string]any{"input_tokens": 10, "output_tokens": 5})
				}
				return ok(validAnswer)
			})
			env := newTestClient(t, srv, Config{Provider: tt.provider, Model: tt.model, StructuredOutput: true})
			if _, err := env.client.Complete(t.Context(), jsonRequest()); err != nil {
				t.Fatal(err)
			}
			if srv.calls() != 1 {
				t.Errorf("%d calls", srv.calls())
			}
			tt.check(t, srv.request(0).body)
		})
	}
}

// TestPromptLayout: the system prompt and the paper are separate blocks
// ahead of the task; the system prompt is marked for the cache, with the
// hour-long lifetime on batch lines; the paper of a target is marked in
// sync mode (a five-minute write pays for its one read) and not on batch
// lines (an hour-long write, at twice the input price, does not); a
// system prompt below the model's least cacheable prefix is lengthened
// by the worked examples when they take it there.
func TestPromptLayout(t *testing.T) {
	srv := newFakeServer(t, func(int, map[string]any) fakeReply { return ok(validAnswer) })
	req := jsonRequest()
	req.System = strings.Repeat("Instructions for every paper task. ", 300) // about 2,600 tokens
	req.Examples = strings.Repeat("A worked example of an answer. ", 400)   // about 3,100 tokens
	req.Paper = "<paper>\n" + strings.Repeat("The paper's text. ", 1000) + "\n</paper>"
	req.PaperShared = true
	req.User = "Classify the 2 references of the paper above."
	for _, tt := range []struct {
		model       string
		batch       bool
		examples    bool // needed to reach the least cacheable prefix
		ttl         string
		paperMarked bool
	}{
		{"claude-haiku-4-5", false, true, "", true},
		{"claude-haiku-4-5", true, true, "1h", false},
		{"claude-sonnet-4-6", false, false, "", true},
		{"claude-sonnet-4-6", true, false, "1h", false},
	} {
		env := newTestClient(t, srv, Config{Provider: ProviderAnthropic, Model: tt.model, StructuredOutput: true})
		c := env.client
		body, _, err := c.proto.encode(c, &req, nil, round{mode: c.formatFor(&req), limit: 1000, batch: tt.batch})
		if err != nil {
			t.Fatal(err)
		}
		var ar anthropicRequest
		if err := json.Unmarshal(body, &ar); err != nil {
			t.Fatal(err)
		}
		sys := ar.System[0]
		if strings.Contains(sys.Text, "A worked example") != tt.examples {
			t.Errorf("%s batch %v: examples in the system prompt %v, want %v", tt.model, tt.batch, !tt.examples, tt.examples)
		}
		if sys.CacheControl == nil || sys.CacheControl.TTL != tt.ttl {
			t.Errorf("%s batch %v: system cache_control %+v, want ttl %q", tt.model, tt.batch, sys.CacheControl, tt.ttl)
		}
		blocks := ar.Messages[0].Content
		if len(blocks) != 2 || blocks[0].Text != req.Paper || blocks[1].Text != req.User {
			t.Fatalf("%s: user blocks %d, want the paper then the task", tt.model, len(blocks))
		}
		if (blocks[0].CacheControl != nil) != tt.paperMarked || blocks[1].CacheControl != nil {
			t.Errorf("%s batch %v: paper marked %v, want %v", tt.model, tt.batch, blocks[0].CacheControl != nil, tt.paperMarked)
		}
	}
}

// TestContextWindow: a prompt past the context window is a
// *ContextWindowError, not an invalid answer: Anthropic's stop reason,
// its 400 and OpenAI's; a limit that takes a fitting prompt past the
// window is lowered and the request sent again; a prompt the table knows
// is past the window is not sent at all.
func TestContextWindow(t *testing.T) {
	for _, tt := range []struct {
		name   string
		reply  func(n int, body map[string]any) fakeReply
		anth   bool
		window int
		calls  int
	}{
		{"stop reason", func(int, map[string]any) fakeReply {
			return anthropicReply([]any{map[string]any{"type": "text", "text": `{"refs":[`}}, "model_context_window_exceeded", map[string]any{"input_tokens": 199000, "output_tokens": 1000})
		}, true, 0, 1},
		{"anthropic 400", func(int, map[string]any) fakeReply {
			return apiError(400, "prompt is too long: 210000 tokens > 200000 maximum", "")
		}, true, 200000, 1},
		{"openai 400", func(int, map[string]any) fakeReply {
			return apiError(400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.", "messages")
		}, false, 128000, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.reply)
			cfg := Config{Model: "mystery"}
			if tt.anth {
				cfg.Provider = ProviderAnthropic
			}
			env := newTestClient(t, srv, cfg)
			_, err := env.client.Complete(t.Context(), jsonRequest())
			var ce *ContextWindowError
			if !errors.As(err, &ce) || !errors.Is(err, ErrContextWindow) || ce.Window != tt.window || srv.calls() != tt.calls {
				t.Errorf("err %v (window %v) after %d calls", err, ce, srv.calls())
			}
		})
	}
	srv := newFakeServer(t, func(_ int, body map[string]any) fakeReply {
		if body["max_tokens"].(float64) > 2798 {
			return apiError(400, "input length and `max_tokens` exceed context limit: 197202 + 21333 > 200000, decrease input length or `max_tokens` and try again", "")
		}
		return anthropicReply([]any{map[string]any{"type": "text", "text": validAnswer}}, "end_turn", map[string]any{"input_tokens": 1, "output_tokens": 1})
	})
	env := newTestClient(t, srv, Config{Model: "mystery", Provider: ProviderAnthropic})
	req := jsonRequest()
	req.MaxTokens = 21333
	if _, err := env.client.Complete(t.Context(), req); err != nil || srv.calls() != 2 || srv.request(1).body["max_tokens"] != float64(2798) {
		t.Errorf("limit past the window: %v after %d calls", err, srv.calls())
	}
	// Known to the table: not sent.
	srv2 := newFakeServer(t, func(int, map[string]any) fakeReply { return ok(validAnswer) })
	env2 := newTestClient(t, srv2, Config{Model: "gpt-4o-mini", Provider: ProviderOpenAI})
	big := jsonRequest()
	big.Paper = strings.Repeat("A long paper. ", 40000) // about 140,000 tokens
	var ce *ContextWindowError
	if _, err := env2.client.Complete(t.Context(), big); !errors.As(err, &ce) || ce.Window != 128000 || srv2.calls() != 0 {
		t.Errorf("a prompt past gpt-4o-mini's window: %v after %d calls", err, srv2.calls())
	}
}
