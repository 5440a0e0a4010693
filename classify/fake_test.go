package classify

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/httpx"
	"github.com/groundwork/curate/llm"
	"github.com/groundwork/curate/store"
)

// fakeLLM is an in-process OpenAI-compatible chat-completions endpoint. It
// records every request and answers with reply, which sees the 1-based
// call number and the decoded request body.
type fakeLLM struct {
	*httptest.Server
	t     *testing.T
	reply func(n int, req chatRequest) fakeReply

	mu       sync.Mutex
	requests []chatRequest
	paths    []string
}

// chatRequest is the part of a chat-completions request the tests read.
type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	MaxTokens      int `json:"max_tokens"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Temperature *float64 `json:"temperature"`
	Stream      *bool    `json:"stream"`
}

func (r chatRequest) message(role string) string {
	for _, m := range r.Messages {
		if m.Role == role {
			return m.Content
		}
	}
	return ""
}

// last returns the content of the last message.
func (r chatRequest) last() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Content
}

type fakeReply struct {
	status int
	header map[string]string
	body   any // JSON-encoded unless a string
}

func newFakeLLM(t *testing.T, reply func(n int, req chatRequest) fakeReply) *fakeLLM {
	t.Helper()
	f := &fakeLLM{t: t, reply: reply}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeLLM) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var req chatRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		f.t.Errorf("fake llm: request body is not JSON: %v", err)
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.paths = append(f.paths, r.Method+" "+r.URL.Path)
	n := len(f.requests)
	f.mu.Unlock()
	rep := f.reply(n, req)
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rep.status)
	if s, ok := rep.body.(string); ok {
		io.WriteString(w, s)
		return
	}
	json.NewEncoder(w).Encode(rep.body)
}

func (f *fakeLLM) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func (f *fakeLLM) request(i int) chatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i]
}

// testUsage is the usage every fake answer reports.
var testUsage = llm.Usage{PromptTokens: 1200, CompletionTokens: 300, TotalTokens: 1500}

// ok is a 200 chat completion with content and usage.
func ok(content string) fakeReply {
	return fakeReply{status: 200, body: map[string]any{
		"id":      "chatcmpl-classify",
		"object":  "chat.completion",
		"created": 1767225600,
		"model":   "fake-model-2026-01-01",
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content},
			"finish_reason": "stop",
		}},
		"usage": map[string]any{
			"prompt_tokens":     testUsage.PromptTokens,
			"completion_tokens": testUsage.CompletionTokens,
			"total_tokens":      testUsage.TotalTokens,
		},
	}}
}

func apiError(status int, msg string) fakeReply {
	return fakeReply{status: status, body: map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "param": nil, "code": nil,
	}}}
}

// newClient returns an llm.Client for srv with millisecond HTTP backoff,
// structured output on, and the response cache in st (nil: none).
func newClient(t *testing.T, srv *fakeLLM, st *store.Store) *llm.Client {
	t.Helper()
	cfg := llm.Config{
		BaseURL:          srv.URL + "/v1",
		Model:            "fake-model",
		StructuredOutput: true,
		Store:            st,
		Logger:           testLogger(t),
	}
	hc, err := httpx.New(httpx.Config{
		UserAgent:    "curate-test",
		RetryMax:     3,
		RetryWaitMin: 5 * time.Millisecond,
		RetryWaitMax: 20 * time.Millisecond,
	}, cfg.ServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.New(hc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// goodAnswer answers the hand-made paper: [3] and [5] are sources, the
// rest other.
func goodAnswer(quotes3, quotes5 []string) string {
	refs := []ref{other(1), other(2), src(3, []string{"foundation", "extends"}, quotes3...), other(4),
		src(5, []string{"exposes_gap"}, quotes5...)}
	for n := 6; n <= handEdges; n++ {
		refs = append(refs, other(n))
	}
	return answerJSON(refs...)
}
