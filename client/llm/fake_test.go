package llm

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/testutil"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// fakeServer is the simulated LLM: OpenAI's API, and Anthropic's at
// /v1/messages, answering every request with reply, which sees the
// 1-based call number and the decoded request body. It records every
// request (testutil.Server) for the tests to read.
type fakeServer struct {
	*testutil.Server
	t     *testing.T
	reply func(n int, body map[string]any) fakeReply
	// hold, when set, runs while the request counts as in flight.
	hold func(n int)

	mu sync.Mutex
	n  int
}

type recorded struct {
	method, path string
	header       http.Header
	body         map[string]any
	raw          []byte
	at           time.Time
}

// fakeReply is one answer, as the simulated model gives it.
type fakeReply = sim.LLMReply

func newFakeServer(t *testing.T, reply func(n int, body map[string]any) fakeReply) *fakeServer {
	t.Helper()
	f := &fakeServer{t: t, reply: reply}
	openai, err := sim.NewService(sim.LLM, nil, sim.Options{LLMAnswer: f.answer})
	if err != nil {
		t.Fatal(err)
	}
	anthropic, err := sim.NewService(sim.Anthropic, nil, sim.Options{LLMAnswer: f.answer})
	if err != nil {
		t.Fatal(err)
	}
	f.Server = testutil.NewServer(t, func(w http.ResponseWriter, r testutil.Request) {
		if strings.HasPrefix(r.Path, "/v1/messages") {
			anthropic.ServeHTTP(w, r.HTTP)
			return
		}
		openai.ServeHTTP(w, r.HTTP)
	})
	return f
}

// answer is the simulated model's answer hook: reply's, in call order.
func (f *fakeServer) answer(r sim.LLMRequest) (sim.LLMReply, bool) {
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		f.t.Errorf("fake server: request body is not JSON: %v", err)
	}
	if f.hold != nil {
		f.hold(n)
	}
	return f.reply(n, body), true
}

func (f *fakeServer) calls() int { return f.Count() }

func (f *fakeServer) request(i int) recorded {
	r := f.Request(i)
	var body map[string]any
	json.Unmarshal(r.Body, &body)
	return recorded{r.Method, r.Path, r.Header, body, r.Body, r.At}
}

// snapshot is the model an answer names: OpenAI answers with the dated
// snapshot of the model asked for.
const snapshot = "test-model-2026-01-01"

// ok is an answer with content and usage.
func ok(content string) fakeReply {
	return fakeReply{Text: content, Model: snapshot, Usage: &sim.LLMUsage{Prompt: 12, Completion: 5}}
}

type usageJSON struct {
	Prompt, Completion, Total int
}

// completion is an answer with content, finish_reason and usage (nil: the
// answer reports none).
func completion(content, finish string, u *usageJSON) fakeReply {
	r := fakeReply{Text: content, Finish: finish, Model: snapshot, NoUsage: u == nil}
	if u != nil {
		r.Usage = &sim.LLMUsage{Prompt: u.Prompt, Completion: u.Completion}
	}
	return r
}

// apiError is the provider's error object with status.
func apiError(status int, msg, param string) fakeReply {
	return fakeReply{Error: &sim.LLMError{Status: status, Message: msg, Param: param}}
}

// raw is a body no provider sends (a proxy's, another server's shape).
func raw(status int, body string) fakeReply {
	return fakeReply{Raw: &sim.LLMRaw{Status: status, Body: body}}
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
