package llm

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/testutil"
	"github.com/groundwork/curate/store"
)

// fakeServer is an in-process OpenAI-compatible endpoint. It records every
// request it receives (testutil.Server) and answers with reply, which sees
// the 1-based call number and the decoded request body.
type fakeServer struct {
	*testutil.Server
	t     *testing.T
	reply func(n int, body map[string]any) fakeReply
	// hold, when set, runs while the request counts as in flight.
	hold func(n int)
}

type recorded struct {
	method, path string
	header       http.Header
	body         map[string]any
	raw          []byte
	at           time.Time
}

// fakeReply is one answer: a status, optional headers and a body that is
// sent as JSON (or as is, if it is a string).
type fakeReply struct {
	status int
	header map[string]string
	body   any
}

func newFakeServer(t *testing.T, reply func(n int, body map[string]any) fakeReply) *fakeServer {
	t.Helper()
	f := &fakeServer{t: t, reply: reply}
	f.Server = testutil.NewServer(t, func(w http.ResponseWriter, r testutil.Request) {
		var body map[string]any
		if err := json.Unmarshal(r.Body, &body); err != nil {
			f.t.Errorf("fake server: request body is not JSON: %v", err)
		}
		if f.hold != nil {
			f.hold(r.N)
		}
		rep := f.reply(r.N, body)
		var header []string
		for k, v := range rep.header {
			header = append(header, k, v)
		}
		testutil.WriteJSON(w, rep.status, rep.body, header...)
	})
	return f
}

func (f *fakeServer) calls() int { return f.Count() }

func (f *fakeServer) request(i int) recorded {
	r := f.Request(i)
	var body map[string]any
	json.Unmarshal(r.Body, &body)
	return recorded{r.Method, r.Path, r.Header, body, r.Body, r.At}
}

// ok is a 200 chat-completions answer with content and usage.
func ok(content string) fakeReply {
	return fakeReply{status: 200, body: completion(content, "stop", &usageJSON{12, 5, 17})}
}

type usageJSON struct {
	Prompt     int64 `json:"prompt_tokens"`
	Completion int64 `json:"completion_tokens"`
	Total      int64 `json:"total_tokens"`
}

func completion(content, finish string, u *usageJSON) map[string]any {
	m := map[string]any{
		"id":      "chatcmpl-test",
		"object":  "chat.completion",
		"created": 1767225600,
		"model":   "test-model-2026-01-01",
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content},
			"finish_reason": finish,
		}},
	}
	if u != nil {
		m["usage"] = u
	}
	return m
}

func apiError(status int, msg, param string) fakeReply {
	return fakeReply{status: status, body: map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "param": param, "code": nil,
	}}}
}

// testEnv is a Client wired to a fake server.
type testEnv struct {
	client *Client
	http   *httpx.Client
	svc    *httpx.Service
	logs   *testutil.SyncBuffer
}

// newTestClient builds a Client for srv. Retries back off for
// milliseconds, not seconds; everything is logged at Debug into logs.
func newTestClient(t *testing.T, srv *fakeServer, cfg Config) *testEnv {
	t.Helper()
	logs := &testutil.SyncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.BaseURL = srv.URL + "/v1"
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	if cfg.Logger == nil {
		cfg.Logger = log
	}
	if cfg.EnvelopeWait == 0 {
		cfg.EnvelopeWait = time.Millisecond
	}
	hc, err := httpx.New(httpx.Config{
		UserAgent:    "curate-test",
		Timeout:      cfg.AttemptTimeout,
		RetryMax:     3,
		RetryWaitMin: 5 * time.Millisecond,
		RetryWaitMax: 20 * time.Millisecond,
		Logger:       log,
	}, cfg.ServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(hc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := hc.Service(DefaultService)
	return &testEnv{client: c, http: hc, svc: svc, logs: logs}
}

func openStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// messages returns the role and content of a recorded request's messages.
func messages(t *testing.T, body map[string]any) [][2]string {
	t.Helper()
	list, _ := body["messages"].([]any)
	var out [][2]string
	for _, m := range list {
		mm := m.(map[string]any)
		out = append(out, [2]string{mm["role"].(string), mm["content"].(string)})
	}
	return out
}

func baseRequest() Request {
	return Request{
		Stage:         "classify",
		PromptVersion: "classify-v1",
		System:        "You classify references.",
		User:          "Paper: Attention is all you need.",
		MaxTokens:     200,
	}
}
