package classify

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/testutil"
	"github.com/groundwork/curate/store"
)

// fakeLLM is an in-process OpenAI-compatible chat-completions endpoint. It
// records every request (testutil.Server) and answers with reply, which
// sees the 1-based call number and the decoded request body.
type fakeLLM struct {
	*testutil.Server
	t     *testing.T
	reply func(n int, req chatRequest) fakeReply
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
	f.Server = testutil.NewServer(t, func(w http.ResponseWriter, r testutil.Request) {
		rep := f.reply(r.N, f.decode(r))
		var header []string
		for k, v := range rep.header {
			header = append(header, k, v)
		}
		testutil.WriteJSON(w, rep.status, rep.body, header...)
	})
	return f
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

// ok is a 200 chat completion with content and usage.
func ok(content string) fakeReply {
	return fakeReply{status: 200, body: testutil.ChatCompletion("fake-model-2026-01-01", content, "", &testutil.Usage{
		Prompt: int(testUsage.PromptTokens), Completion: int(testUsage.CompletionTokens)})}
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
