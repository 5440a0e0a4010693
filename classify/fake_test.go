package classify

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/testutil"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// fakeLLM is the simulated OpenAI-compatible LLM answering with reply,
// which sees the 1-based call number and the decoded request body. It
// records every request (testutil.Server) for the tests to read.
type fakeLLM struct {
	*testutil.Server
	t     *testing.T
	reply func(n int, req chatRequest) fakeReply

	mu sync.Mutex
	n  int
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

// fakeReply is one answer, as the simulated model gives it.
type fakeReply = sim.LLMReply

func newFakeLLM(t *testing.T, reply func(n int, req chatRequest) fakeReply) *fakeLLM {
	t.Helper()
	f := &fakeLLM{t: t, reply: reply}
	svc, err := sim.NewService(sim.LLM, nil, sim.Options{LLMAnswer: f.answer})
	if err != nil {
		t.Fatal(err)
	}
	f.Server = testutil.NewServer(t, func(w http.ResponseWriter, r testutil.Request) { svc.ServeHTTP(w, r.HTTP) })
	return f
}

// answer is the simulated model's answer hook: reply's, in call order.
func (f *fakeLLM) answer(r sim.LLMRequest) (sim.LLMReply, bool) {
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	var req chatRequest
	if err := json.Unmarshal(r.Body, &req); err != nil {
		f.t.Errorf("fake llm: request body is not JSON: %v", err)
	}
	return f.reply(n, req), true
}

func (f *fakeLLM) decode(r testutil.Request) chatRequest {
	var req chatRequest
	if err := json.Unmarshal(r.Body, &req); err != nil {
		f.t.Errorf("fake llm: request body is not JSON: %v", err)
	}
	return req
}

func (f *fakeLLM) calls() int { return f.Count() }

func (f *fakeLLM) request(i int) chatRequest { return f.decode(f.Request(i)) }

// methodPaths returns "METHOD /path" of every request.
func (f *fakeLLM) methodPaths() []string {
	var out []string
	for _, r := range f.Requests() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

// testUsage is the usage every fake answer reports.
var testUsage = llm.Usage{PromptTokens: 1200, CompletionTokens: 300, TotalTokens: 1500}

// ok is an answer with content and usage, from the model's dated
// snapshot (as OpenAI names it in answers).
func ok(content string) fakeReply {
	return fakeReply{Text: content, Model: "fake-model-2026-01-01",
		Usage: &sim.LLMUsage{Prompt: int(testUsage.PromptTokens), Completion: int(testUsage.CompletionTokens)}}
}

// apiError is OpenAI's error object with status.
func apiError(status int, msg string) fakeReply {
	return fakeReply{Error: &sim.LLMError{Status: status, Type: "invalid_request_error", Message: msg}}
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
