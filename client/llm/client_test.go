package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/httpx"
)

var testSchema = MustSchema("classification", []byte(`{
	"type": "object",
	"properties": {
		"refs": {"type": "array", "items": {
			"type": "object",
			"properties": {
				"n": {"type": "integer"},
				"role": {"type": "string", "enum": ["source", "other"]}
			},
			"required": ["n", "role"],
			"additionalProperties": false
		}}
	},
	"required": ["refs"],
	"additionalProperties": false
}`))

const validAnswer = `{"refs":[{"n":1,"role":"source"},{"n":2,"role":"other"}]}`

func jsonRequest() Request {
	r := baseRequest()
	r.Schema = testSchema
	return r
}

func TestCompleteHappyPath(t *testing.T) {
	srv := newFakeServer(t, func(int, map[string]any) fakeReply { return ok("Two references matter.") })
	env := newTestClient(t, srv, Config{})
	seed := 7
	req := baseRequest()
	req.Seed = &seed
	req.Temperature = 0

	r, err := env.client.Complete(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := &Response{
		Text:     "Two references matter.",
		Model:    "test-model-2026-01-01",
		Usage:    Usage{PromptTokens: 12, CompletionTokens: 5, TotalTokens: 17},
		Attempts: 1,
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("response = %+v, want %+v", r, want)
	}

	if srv.calls() != 1 {
		t.Fatalf("server saw %d calls, want 1", srv.calls())
	}
	got := srv.request(0)
	if got.method != http.MethodPost || got.path != "/v1/chat/completions" {
		t.Errorf("request = %s %s, want POST /v1/chat/completions", got.method, got.path)
	}
	if ct := got.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if h, ok := got.header["Authorization"]; ok {
		t.Errorf("Authorization sent without a key: %q", h)
	}
	wantBody := map[string]any{
		"model": "test-model",
		"messages": []any{
			map[string]any{"role": "system", "content": "You classify references."},
			map[string]any{"role": "user", "content": "Paper: Attention is all you need."},
		},
		"temperature": 0.0,
		"max_tokens":  200.0,
		"seed":        7.0,
		"stream":      false,
	}
	if !reflect.DeepEqual(got.body, wantBody) {
		t.Errorf("wire body = %s\nwant %v", got.raw, wantBody)
	}

	tallies := env.client.Meter().Tallies()
	wantT := []Tally{{Stage: "classify", Model: "test-model", Calls: 1, Spent: want.Usage}}
	if !reflect.DeepEqual(tallies, wantT) {
		t.Errorf("tallies = %+v, want %+v", tallies, wantT)
	}
	if u := env.client.Usage()["classify"]; u.Spent.TotalTokens != 17 {
		t.Errorf("Usage()[classify] = %+v", u)
	}
}

func TestAPIKeyHeader(t *testing.T) {
	srv := newFakeServer(t, func(int, map[string]any) fakeReply { return ok("x") })
	env := newTestClient(t, srv, Config{APIKey: "sk-test-123456"})
	if _, err := env.client.Complete(t.Context(), baseRequest()); err != nil {
		t.Fatal(err)
	}
	if h := srv.request(0).header.Get("Authorization"); h != "Bearer sk-test-123456" {
		t.Errorf("Authorization = %q", h)
	}
}

func TestStructuredOutputWire(t *testing.T) {
	for _, structured := range []bool{true, false} {
		t.Run(fmt.Sprint("structured=", structured), func(t *testing.T) {
			srv := newFakeServer(t, func(int, map[string]any) fakeReply { return ok(validAnswer) })
			env := newTestClient(t, srv, Config{StructuredOutput: structured})
			r, err := env.client.Complete(t.Context(), jsonRequest())
			if err != nil {
				t.Fatal(err)
			}
			if string(r.JSON) != validAnswer {
				t.Errorf("JSON = %s", r.JSON)
			}
			body := srv.request(0).body
			msgs := messages(t, body)
			rf, present := body["response_format"]
			if !structured {
				if present {
					t.Errorf("response_format sent with StructuredOutput off: %v", rf)
				}
				if !strings.Contains(msgs[0][1], `"enum":["source","other"]`) || !strings.Contains(msgs[0][1], "JSON schema") {
					t.Errorf("system prompt lacks the schema instruction: %q", msgs[0][1])
				}
				return
			}
			var schema any
			json.Unmarshal(testSchema.JSON(), &schema)
			want := map[string]any{
				"type": "json_schema",
				"json_schema": map[string]any{
					"name":   "classification",
					"schema": schema,
					"strict": true,
				},
			}
			if !reflect.DeepEqual(rf, want) {
				t.Errorf("response_format = %v\nwant %v", rf, want)
			}
			if msgs[0][1] != "You classify references." {
				t.Errorf("system prompt changed under structured output: %q", msgs[0][1])
			}
		})
	}
}

func TestInvalidThenValid(t *testing.T) {
	tests := []struct {
		name      string
		first     string
		validate  func(json.RawMessage) error
		wantInMsg string
	}{
		{"not json", "Sure! Here are the references.", nil, "not valid JSON"},
		{"schema violation", `{"refs":[{"n":1,"role":"essential"}]}`, nil, `$.refs[0].role: got "essential", want one of "source", "other"`},
		{"missing property", `{"refs":[{"n":1}]}`, nil, `missing required property "role"`},
		{"validator", `{"refs":[{"n":9,"role":"source"}]}`, func(doc json.RawMessage) error {
			if strings.Contains(string(doc), `"n":9`) {
				return errors.New("reference 9 does not exist")
			}
			return nil
		}, "reference 9 does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, _ map[string]any) fakeReply {
				if n == 1 {
					return ok(tt.first)
				}
				return ok(validAnswer)
			})
			env := newTestClient(t, srv, Config{StructuredOutput: true})
			r, err := env.client.CompleteJSON(t.Context(), jsonRequest(), tt.validate)
			if err != nil {
				t.Fatal(err)
			}
			if r.Attempts != 2 || string(r.JSON) != validAnswer {
				t.Errorf("attempts %d, JSON %s", r.Attempts, r.JSON)
			}
			if r.Usage.TotalTokens != 34 {
				t.Errorf("usage = %+v, want both rounds summed (34)", r.Usage)
			}
			msgs := messages(t, srv.request(1).body)
			if len(msgs) != 4 {
				t.Fatalf("follow-up has %d messages, want system, user, assistant, user: %v", len(msgs), msgs)
			}
			if msgs[2] != [2]string{"assistant", tt.first} {
				t.Errorf("assistant message = %v, want the first answer", msgs[2])
			}
			if msgs[3][0] != "user" || !strings.Contains(msgs[3][1], tt.wantInMsg) {
				t.Errorf("follow-up = %q, want it to contain %q", msgs[3][1], tt.wantInMsg)
			}
			if ta := env.client.Meter().Tallies()[0]; ta.Calls != 1 || ta.Failures != 0 {
				t.Errorf("tally = %+v", ta)
			}
		})
	}
}

func TestAlwaysInvalid(t *testing.T) {
	srv := newFakeServer(t, func(n int, _ map[string]any) fakeReply {
		return ok(fmt.Sprintf(`{"refs": "nope %d"}`, n))
	})
	env := newTestClient(t, srv, Config{Store: openStore(t, t.TempDir())})
	_, err := env.client.Complete(t.Context(), jsonRequest())
	var ie *InvalidError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want *InvalidError", err)
	}
	want := &InvalidError{
		Stage: "classify", Model: "test-model", Attempts: 3,
		Reason: `the answer does not match the JSON schema: $.refs: got string, want array`,
		Raw:    `{"refs": "nope 3"}`,
	}
	if !reflect.DeepEqual(ie, want) {
		t.Errorf("err = %+v\nwant %+v", ie, want)
	}
	if srv.calls() != 3 {
		t.Errorf("server saw %d calls, want 3 (1 + 2 follow-ups)", srv.calls())
	}
	ta := env.client.Meter().Tallies()[0]
	if ta.Calls != 1 || ta.Failures != 1 || ta.Spent.TotalTokens != 3*17 {
		t.Errorf("tally = %+v", ta)
	}

	// Not cached: asking again goes to the endpoint again.
	if _, err := env.client.Complete(t.Context(), jsonRequest()); !errors.As(err, &ie) {
		t.Fatalf("second call: %v", err)
	}
	if srv.calls() != 6 {
		t.Errorf("server saw %d calls after the repeat, want 6: an invalid answer was cached", srv.calls())
	}
}

func TestInvalidRetriesConfig(t *testing.T) {
	for _, tt := range []struct{ retries, calls int }{{-1, 1}, {1, 2}, {4, 5}} {
		srv := newFakeServer(t, func(int, map[string]any) fakeReply { return ok("no json") })
		env := newTestClient(t, srv, Config{InvalidRetries: tt.retries})
		_, err := env.client.Complete(t.Context(), jsonRequest())
		var ie *InvalidError
		if !errors.As(err, &ie) || ie.Attempts != tt.calls || srv.calls() != tt.calls {
			t.Errorf("InvalidRetries %d: err %v, %d calls; want %d", tt.retries, err, srv.calls(), tt.calls)
		}
	}
}

// TestServerQuirks feeds answers as real servers send them.
func TestServerQuirks(t *testing.T) {
	tests := []struct {
		name          string
		reply         fakeReply
		wantJSON      string
		wantReasoning string
		wantEstimated bool
	}{
		{name: "json fence", reply: ok("```json\n" + validAnswer + "\n```"), wantJSON: validAnswer},
		{name: "bare fence with prose", reply: ok("Here you go:\n```\n" + validAnswer + "\n```\nHope it helps."), wantJSON: validAnswer},
		{name: "prose around object", reply: ok("The answer is " + validAnswer + " as requested."), wantJSON: validAnswer},
		{name: "think prefix", reply: ok("<think>\nRef 1 motivates; ref 2 is background.\n</think>\n\n" + validAnswer),
			wantJSON: validAnswer, wantReasoning: "Ref 1 motivates; ref 2 is background."},
		{name: "think prefix and fence", reply: ok("<think>hmm</think>```json\n" + validAnswer + "```"),
			wantJSON: validAnswer, wantReasoning: "hmm"},
		{name: "reasoning_content", reply: fakeReply{status: 200, body: map[string]any{
			"model": "deepseek-r1",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{
				"role": "assistant", "content": validAnswer, "reasoning_content": "Thinking it over.",
			}}},
			"usage": usageJSON{12, 5, 17},
		}}, wantJSON: validAnswer, wantReasoning: "Thinking it over."},
		{name: "content parts", reply: fakeReply{status: 200, body: map[string]any{
			"model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{
				"role": "assistant", "content": []any{map[string]any{"type": "text", "text": validAnswer}},
			}}},
			"usage": usageJSON{12, 5, 17},
		}}, wantJSON: validAnswer},
		{name: "missing usage", reply: fakeReply{status: 200, body: completion(validAnswer, "stop", nil)},
			wantJSON: validAnswer, wantEstimated: true},
		{name: "zero usage", reply: fakeReply{status: 200, body: completion(validAnswer, "stop", &usageJSON{})},
			wantJSON: validAnswer, wantEstimated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(int, map[string]any) fakeReply { return tt.reply })
			env := newTestClient(t, srv, Config{})
			r, err := env.client.Complete(t.Context(), jsonRequest())
			if err != nil {
				t.Fatal(err)
			}
			if string(r.JSON) != tt.wantJSON || r.Reasoning != tt.wantReasoning || r.Attempts != 1 {
				t.Errorf("JSON %s, reasoning %q, attempts %d", r.JSON, r.Reasoning, r.Attempts)
			}
			if r.Usage.Estimated != tt.wantEstimated {
				t.Errorf("usage = %+v, want estimated %v", r.Usage, tt.wantEstimated)
			}
			if tt.wantEstimated {
				// len(validAnswer) is 57 bytes: 15 tokens at 4 bytes a token.
				if r.Usage.CompletionTokens != 15 || r.Usage.PromptTokens <= 0 ||
					r.Usage.TotalTokens != r.Usage.PromptTokens+r.Usage.CompletionTokens {
					t.Errorf("estimated usage = %+v", r.Usage)
				}
			}
		})
	}
}

// limitOf reads the answer limit a chat request was sent with.
func limitOf(body map[string]any) int {
	for _, k := range []string{"max_completion_tokens", "max_tokens"} {
		if v, ok := body[k].(float64); ok {
			return int(v)
		}
	}
	return 0
}

// TestTruncatedAnswer: an answer cut at its limit is asked again with a
// larger limit (the same conversation, no "more briefly" follow-up), up
// to the model's largest output; one that stays cut there fails naming
// the limit. Even valid JSON is rejected when the server says it stopped
// at the limit: the answer may be a prefix that happens to parse.
func TestTruncatedAnswer(t *testing.T) {
	for _, tt := range []struct {
		name   string
		model  string
		cuts   int   // answers cut before a whole one (-1: all)
		limits []int // the limits asked, in order
		reason string
	}{
		{"cut once", "test-model", 1, []int{200, 400}, ""},
		{"cut always, largest output unknown", "test-model", -1, []int{200, 400, 800}, "largest output allowed (800 tokens)"},
		{"cut always, up to the model's largest output", "gpt-4o", -1, []int{200, 400, 800, 1600, 3200, 6400, 12800, 16384}, "largest output allowed (16384 tokens)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(n int, _ map[string]any) fakeReply {
				if tt.cuts < 0 || n <= tt.cuts {
					return fakeReply{status: 200, body: completion(`{"refs":[{"n":1,"ro`, "length", &usageJSON{10, 200, 210})}
				}
				return ok(validAnswer)
			})
			provider := ProviderCompatible
			if tt.model == "gpt-4o" {
				provider = ProviderOpenAI
			}
			env := newTestClient(t, srv, Config{Model: tt.model, Provider: provider})
			r, err := env.client.Complete(t.Context(), jsonRequest())
			var got []int
			for i := range srv.calls() {
				b := srv.request(i).body
				got = append(got, limitOf(b))
				if msgs := messages(t, b); len(msgs) != 2 {
					t.Errorf("request %d has %d messages: a cut answer is asked again as it was, not followed up", i, len(msgs))
				}
			}
			if !slices.Equal(got, tt.limits) {
				t.Errorf("limits %v, want %v", got, tt.limits)
			}
			var ie *InvalidError
			switch {
			case tt.reason == "" && (err != nil || r.Attempts != len(tt.limits)):
				t.Errorf("err %v, response %+v", err, r)
			case tt.reason != "" && (!errors.As(err, &ie) || !strings.Contains(ie.Reason, tt.reason)):
				t.Errorf("err = %v, want an InvalidError naming %q", err, tt.reason)
			}
		})
	}
	// No limit sent: nothing to raise.
	srv2 := newFakeServer(t, func(int, map[string]any) fakeReply {
		return fakeReply{status: 200, body: completion("The idea is", "length", &usageJSON{1, 1, 2})}
	})
	env2 := newTestClient(t, srv2, Config{InvalidRetries: -1})
	req := baseRequest()
	req.MaxTokens = 0
	_, err := env2.client.Complete(t.Context(), req)
	var ie *InvalidError
	if !errors.As(err, &ie) || ie.Raw != "The idea is" || !strings.Contains(ie.Reason, "finish_reason length") || srv2.calls() != 1 {
		t.Errorf("err = %v after %d calls", err, srv2.calls())
	}
}

// TestEmptyAndRefusal: an empty answer is invalid (followed up); a refusal
// is a named failure, not asked again of the same model, and asked of the
// fallback model when there is one.
func TestEmptyAndRefusal(t *testing.T) {
	for _, tt := range []struct {
		name    string
		message map[string]any
		reason  string
	}{
		{"empty", map[string]any{"role": "assistant", "content": ""}, "the answer is empty"},
		{"null", map[string]any{"role": "assistant", "content": nil}, "the answer is empty"},
		{"only think", map[string]any{"role": "assistant", "content": "<think>I could say"}, "the answer is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, func(int, map[string]any) fakeReply {
				return fakeReply{status: 200, body: map[string]any{
					"model":   "m",
					"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": tt.message}},
				}}
			})
			env := newTestClient(t, srv, Config{InvalidRetries: -1})
			_, err := env.client.Complete(t.Context(), baseRequest())
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Reason != tt.reason {
				t.Errorf("err = %v, want reason %q", err, tt.reason)
			}
		})
	}
	refusing := func(fallback string) *fakeServer {
		return newFakeServer(t, func(_ int, body map[string]any) fakeReply {
			if body["model"] == fallback {
				return ok("Two references matter.")
			}
			return fakeReply{status: 200, body: map[string]any{"model": body["model"], "choices": []any{map[string]any{
				"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": nil, "refusal": "I can't help with that."}}}}}
		})
	}
	srv := refusing("")
	env := newTestClient(t, srv, Config{})
	_, err := env.client.Complete(t.Context(), baseRequest())
	var re *RefusalError
	if !errors.As(err, &re) || re.Message != "I can't help with that." || srv.calls() != 1 || !strings.Contains(err.Error(), "refused") {
		t.Errorf("refusal: err %v after %d calls, want one *RefusalError", err, srv.calls())
	}
	srv = refusing("backup-model")
	env = newTestClient(t, srv, Config{FallbackModel: "backup-model"})
	r, err := env.client.Complete(t.Context(), baseRequest())
	if err != nil || r.Text != "Two references matter." || srv.calls() != 2 || srv.request(1).body["model"] != "backup-model" {
		t.Errorf("fallback: %+v, %v after %d calls", r, err, srv.calls())
	}
}

func TestRetryAfter429(t *testing.T) {
	srv := newFakeServer(t, func(n int, _ map[string]any) fakeReply {
		if n == 1 {
			r := apiError(429, "Rate limit reached for requests", "")
			r.header = map[string]string{"Retry-After": "1"}
			return r
		}
		return ok(validAnswer)
	})
	env := newTestClient(t, srv, Config{})
	start := time.Now()
	r, err := env.client.Complete(t.Context(), jsonRequest())
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < time.Second {
		t.Errorf("answered after %s, before the server's Retry-After of 1s", el)
	}
	if srv.calls() != 2 || r.Attempts != 1 {
		t.Errorf("server calls %d, attempts %d; want 2 and 1", srv.calls(), r.Attempts)
	}
	if gap := srv.request(1).at.Sub(srv.request(0).at); gap < time.Second {
		t.Errorf("retry came %s after the 429, want ≥ 1s", gap)
	}
	// The 429 slowed the service down for everyone.
	if d := env.svc.Interval(); d < firstSlowInterval {
		t.Errorf("interval after a 429 = %s, want ≥ %s", d, firstSlowInterval)
	}
	if !strings.Contains(env.logs.String(), "slowing down") {
		t.Errorf("no slow-down logged:\n%s", env.logs)
	}
}

func TestServerErrorThenOK(t *testing.T) {
	srv := newFakeServer(t, func(n int, _ map[string]any) fakeReply {
		if n == 1 {
			return fakeReply{status: 500, body: "upstream crashed"}
		}
		return ok(validAnswer)
	})
	env := newTestClient(t, srv, Config{})
	if _, err := env.client.Complete(t.Context(), jsonRequest()); err != nil {
		t.Fatal(err)
	}
	if srv.calls() != 2 {
		t.Errorf("server saw %d calls, want 2", srv.calls())
	}
	if st := env.svc.Stats(); st.Status5xx != 1 || st.Retries != 1 {
		t.Errorf("stats = %+v", st)
	}
}

func TestPersistentErrors(t *testing.T) {
	t.Run("5xx", func(t *testing.T) {
		srv := newFakeServer(t, func(int, map[string]any) fakeReply { return fakeReply{status: 503, body: "overloaded"} })
		env := newTestClient(t, srv, Config{})
		_, err := env.client.Complete(t.Context(), jsonRequest())
		var se *httpx.StatusError
		if !errors.As(err, &se) || se.Status != 503 || !strings.HasPrefix(err.Error(), "llm classify: chat completion with test-model: ") {
			t.Fatalf("err = %v, want a wrapped *httpx.StatusError 503", err)
		}
		if ta := env.client.Meter().Tallies()[0]; ta.Failures != 1 || ta.Calls != 0 {
			t.Errorf("tally = %+v", ta)
		}
	})
	t.Run("401", func(t *testing.T) {
		srv := newFakeServer(t, func(int, map[string]any) fakeReply { return apiError(401, "Invalid API key", "") })
		env := newTestClient(t, srv, Config{})
		_, err := env.client.Complete(t.Context(), jsonRequest())
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != 401 || ae.Message != "Invalid API key" {
			t.Fatalf("err = %v, want *APIError 401", err)
		}
		if srv.calls() != 1 {
			t.Errorf("a 401 was retried: %d calls", srv.calls())
		}
	})
	t.Run("error bodies", func(t *testing.T) {
		for body, want := range map[string]string{
			`{"error":"model 'x' not found"}`:                             "model 'x' not found",     // Ollama
			`{"object":"error","message":"bad seed","type":"BadRequest"}`: "bad seed",                // vLLM
			`{"detail":"Not Found"}`:                                      "Not Found",               // FastAPI
			`plain text`:                                                  "plain text",              // anything else
			`{"error":{"message":"context length exceeded","code":400}}`:  "context length exceeded", // OpenAI
		} {
			srv := newFakeServer(t, func(int, map[string]any) fakeReply { return fakeReply{status: 404, body: body} })
			env := newTestClient(t, srv, Config{})
			_, err := env.client.Complete(t.Context(), baseRequest())
			var ae *APIError
			if !errors.As(err, &ae) || ae.Message != want {
				t.Errorf("body %s: err = %v, want message %q", body, err, want)
			}
		}
	})
}

func TestResponseFormatFallback(t *testing.T) {
	srv := newFakeServer(t, func(_ int, body map[string]any) fakeReply {
		if _, ok := body["response_format"]; ok {
			return apiError(400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.", "response_format")
		}
		return ok(validAnswer)
	})
	env := newTestClient(t, srv, Config{StructuredOutput: true})
	for i := range 2 {
		r, err := env.client.Complete(t.Context(), jsonRequest())
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if r.Attempts != 1 || string(r.JSON) != validAnswer {
			t.Errorf("call %d: attempts %d, JSON %s", i, r.Attempts, r.JSON)
		}
	}
	// Rejected once, then remembered: 1 rejected + 2 plain requests.
	if srv.calls() != 3 {
		t.Fatalf("server saw %d calls, want 3", srv.calls())
	}
	for i := 1; i < 3; i++ {
		body := srv.request(i).body
		if _, ok := body["response_format"]; ok {
			t.Errorf("request %d still sends response_format", i)
		}
		if sys := messages(t, body)[0][1]; !strings.Contains(sys, "conforms to the JSON schema") {
			t.Errorf("request %d: system prompt lacks the schema instruction: %q", i, sys)
		}
	}
	if n := strings.Count(env.logs.String(), "rejects the structured output"); n != 1 {
		t.Errorf("fallback logged %d times, want once", n)
	}

	// A 400 about something else is not a format problem.
	srv2 := newFakeServer(t, func(int, map[string]any) fakeReply { return apiError(400, "max_tokens is too large", "max_tokens") })
	env2 := newTestClient(t, srv2, Config{StructuredOutput: true})
	_, err := env2.client.Complete(t.Context(), jsonRequest())
	var ae *APIError
	if !errors.As(err, &ae) || srv2.calls() != 1 {
		t.Errorf("err = %v after %d calls, want one *APIError", err, srv2.calls())
	}
}

func TestMaxCompletionTokensFallback(t *testing.T) {
	srv := newFakeServer(t, func(_ int, body map[string]any) fakeReply {
		if _, ok := body["max_tokens"]; ok {
			return apiError(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "max_tokens")
		}
		return ok("fine")
	})
	env := newTestClient(t, srv, Config{})
	for range 2 {
		if _, err := env.client.Complete(t.Context(), baseRequest()); err != nil {
			t.Fatal(err)
		}
	}
	if srv.calls() != 3 {
		t.Fatalf("server saw %d calls, want 3 (one rejected, then remembered)", srv.calls())
	}
	for i := 1; i < 3; i++ {
		if got := srv.request(i).body["max_completion_tokens"]; got != 200.0 {
			t.Errorf("request %d: max_completion_tokens = %v, want 200", i, got)
		}
	}
}

func TestCacheAcrossClients(t *testing.T) {
	srv := newFakeServer(t, func(n int, _ map[string]any) fakeReply { return ok(validAnswer) })
	dir := t.TempDir()

	// Process one: a miss, answered and cached.
	st1 := openStore(t, dir)
	env1 := newTestClient(t, srv, Config{Store: st1})
	r1, err := env1.client.Complete(t.Context(), jsonRequest())
	if err != nil || r1.Cached {
		t.Fatalf("first call: cached %v, err %v", r1 != nil && r1.Cached, err)
	}
	st1.Close()

	// Process two: a new store handle and client on the same directory.
	st2 := openStore(t, dir)
	env2 := newTestClient(t, srv, Config{Store: st2})
	r2, err := env2.client.Complete(t.Context(), jsonRequest())
	if err != nil {
		t.Fatal(err)
	}
	if srv.calls() != 1 {
		t.Fatalf("server saw %d calls, want 1: the repeat was not served from the cache", srv.calls())
	}
	want := *r1
	want.Cached = true
	if !reflect.DeepEqual(r2, &want) {
		t.Errorf("cached response = %+v\nwant %+v", r2, &want)
	}
	tallies := env2.client.Meter().Tallies()
	wantT := []Tally{{Stage: "classify", Model: "test-model", CachedCalls: 1, Saved: r1.Usage}}
	if !reflect.DeepEqual(tallies, wantT) {
		t.Errorf("tallies = %+v, want %+v", tallies, wantT)
	}

	// The record holds the request that was hashed and the answer.
	key := CacheKey("test-model", jsonRequest())
	var e cacheEntry
	if _, err := st2.GetJSON(t.Context(), "llm:"+key, CacheKind, &e); err != nil {
		t.Fatal(err)
	}
	if e.Key != key || e.Request.User != jsonRequest().User || string(e.Response.JSON) != validAnswer {
		t.Errorf("cache entry = %+v", e)
	}

	// Anything that changes the question is a miss.
	seed := 1
	changes := map[string]func(*Request){
		"prompt version": func(r *Request) { r.PromptVersion = "classify-v2" },
		"stage":          func(r *Request) { r.Stage = "summarize" },
		"system":         func(r *Request) { r.System += " Be brief." },
		"user":           func(r *Request) { r.User += " (2017)" },
		"temperature":    func(r *Request) { r.Temperature = 0.7 },
		"max tokens":     func(r *Request) { r.MaxTokens = 300 },
		"seed":           func(r *Request) { r.Seed = &seed },
		"schema":         func(r *Request) { r.Schema = MustSchema("classification", []byte(`{"type":"object"}`)) },
		"no schema":      func(r *Request) { r.Schema = nil; r.Validate = func(json.RawMessage) error { return nil } },
	}
	calls := srv.calls()
	for name, change := range changes {
		req := jsonRequest()
		change(&req)
		r, err := env2.client.Complete(t.Context(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		calls++
		if r.Cached || srv.calls() != calls {
			t.Errorf("%s: cached %v, server calls %d (want %d): change did not miss", name, r.Cached, srv.calls(), calls)
		}
	}
	// Another model misses too.
	env3 := newTestClient(t, srv, Config{Store: st2, Model: "other-model"})
	if r, err := env3.client.Complete(t.Context(), jsonRequest()); err != nil || r.Cached {
		t.Errorf("other model: cached %v, err %v", r != nil && r.Cached, err)
	}
}

// TestCacheRevalidates shows that a cached answer a tightened validator
// now rejects is asked for again rather than returned.
func TestCacheRevalidates(t *testing.T) {
	srv := newFakeServer(t, func(n int, _ map[string]any) fakeReply {
		if n == 1 {
			return ok(validAnswer)
		}
		return ok(`{"refs":[{"n":1,"role":"source"}]}`)
	})
	env := newTestClient(t, srv, Config{Store: openStore(t, t.TempDir())})
	if _, err := env.client.Complete(t.Context(), jsonRequest()); err != nil {
		t.Fatal(err)
	}
	noOther := func(doc json.RawMessage) error {
		if strings.Contains(string(doc), "other") {
			return errors.New("no other allowed")
		}
		return nil
	}
	r, err := env.client.CompleteJSON(t.Context(), jsonRequest(), noOther)
	if err != nil {
		t.Fatal(err)
	}
	if r.Cached || srv.calls() != 2 {
		t.Errorf("cached %v after %d calls: a cached answer failing the validator was used", r.Cached, srv.calls())
	}
	// The new answer replaced the entry.
	r, err = env.client.CompleteJSON(t.Context(), jsonRequest(), noOther)
	if err != nil || !r.Cached || srv.calls() != 2 {
		t.Errorf("third call: cached %v, calls %d, err %v", r != nil && r.Cached, srv.calls(), err)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	const limit, requests = 2, 8
	// The first request is held until a second one is in flight, so the
	// test also fails if the limit is stricter than configured.
	both := make(chan struct{})
	var once sync.Once
	srv := newFakeServer(t, func(int, map[string]any) fakeReply { return ok("fine") })
	srv.hold = func(int) {
		if srv.InFlight() >= limit {
			once.Do(func() { close(both) })
		}
		select {
		case <-both:
		case <-time.After(10 * time.Second):
			t.Error("a second request never arrived while the first was held")
		}
		// Slow answers let the other requests pile up, if they may.
		time.Sleep(20 * time.Millisecond)
	}
	env := newTestClient(t, srv, Config{Concurrency: limit})
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			req := baseRequest()
			req.User = fmt.Sprintf("paper %d", i)
			if _, err := env.client.Complete(t.Context(), req); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := srv.MaxInFlight(); got != limit {
		t.Errorf("max in flight = %d, want %d", got, limit)
	}
	if srv.calls() != requests {
		t.Errorf("server saw %d calls, want %d", srv.calls(), requests)
	}
}

func TestRequestsPerMinute(t *testing.T) {
	const rpm, requests = 600, 4 // 100ms apart
	srv := newFakeServer(t, func(int, map[string]any) fakeReply { return ok("fine") })
	env := newTestClient(t, srv, Config{RequestsPerMinute: rpm, Concurrency: requests})
	if d := env.svc.Interval(); d != httpx.Paced(100*time.Millisecond) {
		t.Errorf("service interval = %s, want 100ms and httpx's margin", d)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			req := baseRequest()
			req.User = fmt.Sprintf("paper %d", i)
			if _, err := env.client.Complete(t.Context(), req); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if el, lower := time.Since(start), (requests-1)*100*time.Millisecond; el < lower {
		t.Errorf("%d requests at %d/min took %s, want ≥ %s", requests, rpm, el, lower)
	}
}

func TestTokensPerMinute(t *testing.T) {
	// 60,000 tokens a minute is 1,000 a second. The first answer reports
	// 61,000 tokens, leaving the budget 1,000 in debt, so the second
	// request waits at least a second.
	srv := newFakeServer(t, func(n int, _ map[string]any) fakeReply {
		if n == 1 {
			return fakeReply{status: 200, body: completion("big", "stop", &usageJSON{60000, 1000, 61000})}
		}
		return ok("small")
	})
	env := newTestClient(t, srv, Config{TokensPerMinute: 60000})
	req := baseRequest()
	req.MaxTokens = 10
	if _, err := env.client.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	req.User += " again"
	if _, err := env.client.Complete(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Errorf("second request after %s, want ≥ ~1s of token debt", el)
	}

	// A context that ends while waiting for tokens fails the call.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	env.client.tpm.adjust(60000) // deep in debt
	req.User += " once more"
	if _, err := env.client.Complete(ctx, req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want a deadline error", err)
	}
}

func TestRequestChecks(t *testing.T) {
	srv := newFakeServer(t, func(int, map[string]any) fakeReply { return ok("x") })
	env := newTestClient(t, srv, Config{})
	for name, change := range map[string]func(*Request){
		"no stage":       func(r *Request) { r.Stage = "" },
		"no version":     func(r *Request) { r.PromptVersion = "" },
		"no user prompt": func(r *Request) { r.User = " " },
		"negative max":   func(r *Request) { r.MaxTokens = -1 },
	} {
		req := baseRequest()
		change(&req)
		if _, err := env.client.Complete(t.Context(), req); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if srv.calls() != 0 {
		t.Errorf("bad requests reached the server")
	}
}

func TestNew(t *testing.T) {
	hc, err := httpx.New(httpx.Config{UserAgent: "t"}, Config{BaseURL: "http://127.0.0.1:1/v1"}.ServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no model"},
		{Config{Model: HeuristicModel}, "heuristic"},
		{Config{Model: "m", Service: "nope"}, "unknown service"},
		{Config{Model: "m", Concurrency: -1}, "negative"},
	} {
		if _, err := New(hc, tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want error containing %q", tt.cfg, err, tt.want)
		}
	}
	c, err := New(hc, Config{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if c.cfg.Concurrency != defaultConcurrency || c.cfg.InvalidRetries != defaultInvalidRetries || c.cfg.Timeout != defaultTimeout {
		t.Errorf("defaults not applied: %+v", c.cfg)
	}
}

func TestServiceConfigAndEnv(t *testing.T) {
	sc := Config{BaseURL: "http://localhost:11434/v1"}.ServiceConfig()
	if sc.Name != "llm" || sc.BaseURL != "http://localhost:11434/v1" || sc.Header != nil {
		t.Errorf("keyless service config = %+v", sc)
	}
	sc = Config{Service: "teacher", APIKey: "sk-abc"}.ServiceConfig()
	if sc.Name != "teacher" || sc.Header.Get("Authorization") != "Bearer sk-abc" {
		t.Errorf("service config = %+v", sc)
	}
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, ""},
		{map[string]string{"OPENAI_API_KEY": "sk-o"}, "sk-o"},
		{map[string]string{"LLM_API_KEY": "sk-l", "OPENAI_API_KEY": "sk-o"}, "sk-l"},
		{map[string]string{"LLM_API_KEY": " ", "OPENAI_API_KEY": "sk-o\n"}, "sk-o"},
	} {
		if got := APIKeyFromEnv(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("APIKeyFromEnv(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}
