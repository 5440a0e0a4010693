package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/groundwork/curate/sim"
)

// The Anthropic invariants, from the API reference (docs.anthropic.com:
// messages, message batches, errors, rate limits) and the official SDK's
// types (anthropic-sdk-python, types/message.py, types/messages/
// message_batch.py): a request needs the anthropic-version header and
// max_tokens, and messages that start with the user; a message is 200
// {id "msg_…", type "message", role "assistant", model, content [blocks:
// text {text} or tool_use {id, name, input}], stop_reason one of
// end_turn, max_tokens, stop_sequence, tool_use, pause_turn, refusal,
// model_context_window_exceeded, usage {input_tokens, output_tokens,
// cache_creation_input_tokens, cache_read_input_tokens}}, with the
// anthropic-ratelimit-* headers; an error is {"type": "error", "error":
// {"type", "message"}} (invalid_request_error 400, not_found_error 404,
// rate_limit_error 429 with retry-after, overloaded_error 529); a batch
// is a message_batch, in_progress until ended, then with a results_url
// whose JSONL has one line per request {custom_id, result {type
// succeeded|errored|canceled|expired, message}}, in any order.

const anthropicMessagesPath = "/v1/messages"

var anthropicStops = []string{"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal", "model_context_window_exceeded"}

// Message is an Anthropic message as CheckAnthropicMessage reads it.
type Message struct {
	StopReason string
	// Text is the text of its text blocks; ToolInput the input of its
	// tool_use block, if any.
	Text      string
	ToolInput json.RawMessage
}

// CheckAnthropicMessage checks the body of a message answered 200.
func CheckAnthropicMessage(model string, body []byte) (*Message, error) {
	var m struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Role    string `json:"role"`
		Model   string `json:"model"`
		Content []struct {
			Type  string          `json:"type"`
			Text  *string         `json:"text"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      *struct {
			Input       *int `json:"input_tokens"`
			Output      *int `json:"output_tokens"`
			CacheWrites *int `json:"cache_creation_input_tokens"`
			CacheReads  *int `json:"cache_read_input_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("message: %w: %s", err, truncate(body))
	}
	var errs []error
	if !strings.HasPrefix(m.ID, "msg_") || m.Type != "message" || m.Role != "assistant" {
		errs = append(errs, fmt.Errorf("id %q, type %q, role %q: want msg_…, message, assistant", m.ID, m.Type, m.Role))
	}
	if m.Model == "" || !strings.HasPrefix(m.Model, model) {
		errs = append(errs, fmt.Errorf("model %q, asked %q", m.Model, model))
	}
	if !slices.Contains(anthropicStops, m.StopReason) {
		errs = append(errs, fmt.Errorf("stop_reason %q, want one of %v", m.StopReason, anthropicStops))
	}
	out := &Message{StopReason: m.StopReason}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			if b.Text == nil {
				errs = append(errs, errors.New("a text block without text"))
				continue
			}
			out.Text += *b.Text
		case "tool_use":
			if b.ID == "" || b.Name == "" || len(b.Input) == 0 || b.Input[0] != '{' {
				errs = append(errs, fmt.Errorf("tool_use block %q %q with input %s: want an id, a name and an object", b.ID, b.Name, b.Input))
			}
			out.ToolInput = b.Input
		case "thinking", "redacted_thinking":
		default:
			errs = append(errs, fmt.Errorf("a content block of type %q", b.Type))
		}
	}
	if (m.StopReason == "tool_use") != (out.ToolInput != nil) {
		errs = append(errs, fmt.Errorf("stop_reason %s with tool input %s", m.StopReason, out.ToolInput))
	}
	if u := m.Usage; u == nil || u.Input == nil || u.Output == nil || u.CacheWrites == nil || u.CacheReads == nil {
		errs = append(errs, errors.New("usage without input_tokens, output_tokens and the cache counts"))
	} else if *u.Input < 0 || *u.Output < 0 || *u.CacheWrites < 0 || *u.CacheReads < 0 || *u.Input+*u.CacheReads+*u.CacheWrites == 0 {
		errs = append(errs, fmt.Errorf("usage %d in, %d out, %d written, %d read", *u.Input, *u.Output, *u.CacheWrites, *u.CacheReads))
	}
	return out, errors.Join(errs...)
}

// CheckAnthropicError checks an error answer: status, and Anthropic's
// error object of the type.
func CheckAnthropicError(wantStatus int, wantType string, status int, body []byte) error {
	if status != wantStatus {
		return fmt.Errorf("status %d, want %d: %s", status, wantStatus, truncate(body))
	}
	var e struct {
		Type  string `json:"type"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Type != "error" || e.Error == nil || e.Error.Message == "" {
		return fmt.Errorf("error body %s: want {\"type\": \"error\", \"error\": {\"type\", \"message\"}}", truncate(body))
	}
	if e.Error.Type != wantType {
		return fmt.Errorf("error type %q, want %q", e.Error.Type, wantType)
	}
	return nil
}

// anthropicRateLimitHeaders are the headers every answer carries
// (docs.anthropic.com/en/api/rate-limits#response-headers).
var anthropicRateLimitHeaders = []string{"anthropic-ratelimit-requests-limit", "anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset",
	"anthropic-ratelimit-tokens-limit", "anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset"}

func (s *Suite) anthropicModel() string { return cmp(s.AnthropicModel, sim.Model) }

// messageBody is a message request: a system prompt, a user turn, and
// the answer's schema as the output format, as a forced tool, or none.
func messageBody(model, user, schema string) string {
	req := map[string]any{
		"model": model, "max_tokens": 2000, "system": "You answer in JSON.",
		"messages": []map[string]any{{"role": "user", "content": user}},
	}
	switch schema {
	case "format":
		req["output_config"] = map[string]any{"format": map[string]any{"type": "json_schema", "schema": json.RawMessage(answerSchema)}}
	case "tool":
		req["tools"] = []map[string]any{{"name": "answer", "description": "Give the answer.", "input_schema": json.RawMessage(answerSchema)}}
		req["tool_choice"] = map[string]string{"type": "tool", "name": "answer"}
	}
	b, _ := json.Marshal(req)
	return string(b)
}

// anthropicDo sends a request as Anthropic's clients do: with the version
// header (unless version is "") and a key.
func anthropicDo(t *testing.T, method, url, version, body string) response {
	t.Helper()
	h := http.Header{"X-Api-Key": {"sk-ant-conformance"}}
	if version != "" {
		h.Set("anthropic-version", version)
	}
	return doWith(t, method, url, body, h)
}

const anthropicVersion = "2023-06-01"

// TestAnthropicMessages asks for a free answer, one in an output format
// and one through a forced tool.
func (s *Suite) TestAnthropicMessages(t *testing.T) {
	base := s.url(t, sim.Anthropic)
	model := s.anthropicModel()
	for _, schema := range []string{"", "format", "tool"} {
		r := anthropicDo(t, http.MethodPost, base+anthropicMessagesPath, anthropicVersion, messageBody(model, "Classify reference [1]: it builds on the reader of [1]. Title: Quiet gradients.", schema))
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("%q: %d %q: %s", schema, r.status, r.header.Get("Content-Type"), truncate(r.body))
			continue
		}
		for _, h := range anthropicRateLimitHeaders {
			if r.header.Get(h) == "" {
				t.Errorf("%q: no %s header", schema, h)
			}
		}
		m, err := CheckAnthropicMessage(model, r.body)
		if err != nil {
			t.Errorf("%q: %v", schema, err)
			continue
		}
		switch schema {
		case "format":
			if err := CheckAnswerSchema([]byte(answerSchema), m.Text); err != nil {
				t.Errorf("output format answer: %v", err)
			}
		case "tool":
			if m.StopReason != "tool_use" {
				t.Errorf("forced tool: stop_reason %s", m.StopReason)
			} else if err := CheckAnswerSchema([]byte(answerSchema), string(m.ToolInput)); err != nil {
				t.Errorf("tool input: %v", err)
			}
		}
	}
}

// TestAnthropicErrors sends what Anthropic refuses.
func (s *Suite) TestAnthropicErrors(t *testing.T) {
	base := s.url(t, sim.Anthropic)
	model := s.anthropicModel()
	for _, tc := range []struct {
		name, version, path, body string
		status                    int
		typ                       string
	}{
		{"no anthropic-version", "", anthropicMessagesPath, messageBody(model, "Hello there, model.", ""), 400, "invalid_request_error"},
		{"no max_tokens", anthropicVersion, anthropicMessagesPath, `{"model":"` + model + `","messages":[{"role":"user","content":"Hello there."}]}`, 400, "invalid_request_error"},
		{"assistant first", anthropicVersion, anthropicMessagesPath, `{"model":"` + model + `","max_tokens":10,"messages":[{"role":"assistant","content":"Hi."}]}`, 400, "invalid_request_error"},
		{"system in the messages", anthropicVersion, anthropicMessagesPath, `{"model":"` + model + `","max_tokens":10,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi."}]}`, 400, "invalid_request_error"},
		{"not JSON", anthropicVersion, anthropicMessagesPath, `{"model":`, 400, "invalid_request_error"},
		{"no such batch", anthropicVersion, "/v1/messages/batches/msgbatch_none", "", 404, "not_found_error"},
	} {
		method := http.MethodPost
		if tc.body == "" {
			method = http.MethodGet
		}
		r := anthropicDo(t, method, base+tc.path, tc.version, tc.body)
		if err := CheckAnthropicError(tc.status, tc.typ, r.status, r.body); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestAnthropicThrottled: a request over a limit is 429 rate_limit_error
// with retry-after.
func (s *Suite) TestAnthropicThrottled(t *testing.T) {
	base := s.url(t, sim.Anthropic)
	if s.Service == nil {
		t.Skip("the backend gives no access to its services (Service)")
	}
	s.Service(sim.Anthropic).Script(anthropicMessagesPath, sim.TooManyRequests.WithRetryAfter("1"), 1)
	r := anthropicDo(t, http.MethodPost, base+anthropicMessagesPath, anthropicVersion, messageBody(s.anthropicModel(), "Hello there, model.", ""))
	if err := CheckAnthropicError(429, "rate_limit_error", r.status, r.body); err != nil {
		t.Error(err)
	}
	if r.header.Get("Retry-After") == "" {
		t.Error("429 without retry-after")
	}
}

// TestAnthropicBatch makes a batch of three requests, polls it to its end
// and reads its results.
func (s *Suite) TestAnthropicBatch(t *testing.T) {
	base := s.url(t, sim.Anthropic)
	ids := []string{"req-1", "req-2", "req-3"}
	var reqs []map[string]any
	for i, id := range ids {
		reqs = append(reqs, map[string]any{"custom_id": id, "params": json.RawMessage(messageBody(s.anthropicModel(), fmt.Sprintf("Answer request %d about Quiet gradients.", i+1), []string{"", "format", "tool"}[i]))})
	}
	body, _ := json.Marshal(map[string]any{"requests": reqs})
	type batch struct {
		ID               string         `json:"id"`
		Type             string         `json:"type"`
		ProcessingStatus string         `json:"processing_status"`
		RequestCounts    map[string]int `json:"request_counts"`
		ResultsURL       *string        `json:"results_url"`
		EndedAt          *string        `json:"ended_at"`
	}
	r := anthropicDo(t, http.MethodPost, base+"/v1/messages/batches", anthropicVersion, string(body))
	var b batch
	if err := json.Unmarshal(r.body, &b); r.status != 200 || err != nil || !strings.HasPrefix(b.ID, "msgbatch_") || b.Type != "message_batch" ||
		b.ProcessingStatus != "in_progress" || b.ResultsURL != nil || b.RequestCounts["processing"] != 3 {
		t.Fatalf("create: %d %s", r.status, truncate(r.body))
	}
	for poll := 0; b.ProcessingStatus != "ended"; poll++ {
		if poll > 200 {
			t.Fatalf("batch still %s after %d polls", b.ProcessingStatus, poll)
		}
		if s.BatchWait != nil {
			s.BatchWait()
		}
		r := anthropicDo(t, http.MethodGet, base+"/v1/messages/batches/"+b.ID, anthropicVersion, "")
		if err := json.Unmarshal(r.body, &b); r.status != 200 || err != nil || (b.ProcessingStatus != "in_progress" && b.ProcessingStatus != "ended") {
			t.Fatalf("poll: %d %s", r.status, truncate(r.body))
		}
	}
	n := 0
	for _, k := range []string{"processing", "succeeded", "errored", "canceled", "expired"} {
		n += b.RequestCounts[k]
	}
	if b.ResultsURL == nil || b.EndedAt == nil || b.RequestCounts["processing"] != 0 || n != 3 {
		t.Fatalf("ended batch: results %v, ended %v, counts %v", b.ResultsURL, b.EndedAt, b.RequestCounts)
	}
	res := anthropicDo(t, http.MethodGet, *b.ResultsURL, anthropicVersion, "")
	if res.status != 200 {
		t.Fatalf("results: %d %s", res.status, truncate(res.body))
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(res.body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			CustomID string `json:"custom_id"`
			Result   struct {
				Type    string          `json:"type"`
				Message json.RawMessage `json:"message"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || !slices.Contains([]string{"succeeded", "errored", "canceled", "expired"}, line.Result.Type) {
			t.Errorf("result line %s", truncate(sc.Bytes()))
			continue
		}
		seen[line.CustomID]++
		if line.Result.Type == "succeeded" {
			if _, err := CheckAnthropicMessage(s.anthropicModel(), line.Result.Message); err != nil {
				t.Errorf("%s: %v", line.CustomID, err)
			}
		}
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("custom_id %s in the results %d times", id, seen[id])
		}
	}
}

// TestAnthropicModels lists the models: model objects, the model the
// suite asks for among them, and the list's paging fields.
func (s *Suite) TestAnthropicModels(t *testing.T) {
	base := s.url(t, sim.Anthropic)
	r := anthropicDo(t, http.MethodGet, base+"/v1/models", anthropicVersion, "")
	var l struct {
		Data []struct {
			Type, ID    string
			DisplayName string `json:"display_name"`
		} `json:"data"`
		HasMore *bool   `json:"has_more"`
		FirstID *string `json:"first_id"`
	}
	if err := json.Unmarshal(r.body, &l); r.status != 200 || err != nil || l.HasMore == nil || l.FirstID == nil {
		t.Fatalf("models: %d %s", r.status, truncate(r.body))
	}
	found := false
	for _, m := range l.Data {
		found = found || m.ID == s.anthropicModel()
		if m.Type != "model" || m.ID == "" || m.DisplayName == "" {
			t.Errorf("model %+v: want type model, an id and a display name", m)
		}
	}
	if !found {
		t.Errorf("models %s lack %s", truncate(r.body), s.anthropicModel())
	}
}
