package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/groundwork/curate/sim"
)

// The OpenAI invariants, from the API reference (platform.openai.com/docs/
// api-reference: chat, files, batch) and the official SDK's types
// (openai-python, types/chat/chat_completion.py, types/batch.py): a chat
// completion is 200 application/json {id, object "chat.completion",
// created, model, choices [{index, message {role "assistant", content
// (null when refusal is set)}, finish_reason one of stop, length,
// tool_calls, content_filter, function_call}], usage {prompt_tokens,
// completion_tokens, total_tokens their sum}}, its content JSON that
// conforms to the schema a json_schema response_format asked for; an
// error is {"error": {"message", "type", "param", "code"}} with the
// status (400 for a malformed request, 404 for a path or object there is
// none of, 429 with Retry-After for a limit); a batch is made from a file
// uploaded with purpose "batch", moves validating → in_progress →
// finalizing → completed (or failed, expired, cancelling → cancelled) and
// never back, and its output file holds one line per request {id,
// custom_id, response {status_code, request_id, body}, error}, every
// custom_id once.

// openAIChatPath is the chat completions endpoint under the service.
const openAIChatPath = "/v1/chat/completions"

// Chat is a chat completion as CheckOpenAIChat reads it.
type Chat struct {
	Content      *string
	Refusal      string
	FinishReason string
	Usage        struct{ Prompt, Completion, Total int }
}

var openAIFinish = []string{"stop", "length", "tool_calls", "content_filter", "function_call"}

// CheckOpenAIChat checks the body of a chat completion answered 200 to a
// request for model, and returns it.
func CheckOpenAIChat(model string, body []byte) (*Chat, error) {
	var c struct {
		ID      *string `json:"id"`
		Object  string  `json:"object"`
		Created *int64  `json:"created"`
		Model   string  `json:"model"`
		Choices []struct {
			Index   *int `json:"index"`
			Message *struct {
				Role    string  `json:"role"`
				Content *string `json:"content"`
				Refusal *string `json:"refusal"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			Prompt     *int `json:"prompt_tokens"`
			Completion *int `json:"completion_tokens"`
			Total      *int `json:"total_tokens"`
			Details    *struct {
				Cached *int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, fmt.Errorf("chat completion: %w: %s", err, truncate(body))
	}
	var errs []error
	if c.ID == nil || *c.ID == "" || c.Object != "chat.completion" || c.Created == nil {
		errs = append(errs, fmt.Errorf("id %v, object %q, created %v: want an id, chat.completion and a time", c.ID, c.Object, c.Created))
	}
	if c.Model == "" || !strings.HasPrefix(c.Model, model) {
		errs = append(errs, fmt.Errorf("model %q, asked %q", c.Model, model))
	}
	if len(c.Choices) != 1 || c.Choices[0].Message == nil || c.Choices[0].Index == nil || *c.Choices[0].Index != 0 {
		return nil, errors.Join(append(errs, fmt.Errorf("choices %s: want one, index 0, with a message", truncate(body)))...)
	}
	ch := c.Choices[0]
	out := &Chat{Content: ch.Message.Content, FinishReason: ch.FinishReason}
	if ch.Message.Refusal != nil {
		out.Refusal = *ch.Message.Refusal
	}
	switch {
	case ch.Message.Role != "assistant":
		errs = append(errs, fmt.Errorf("message role %q, want assistant", ch.Message.Role))
	case !slices.Contains(openAIFinish, ch.FinishReason):
		errs = append(errs, fmt.Errorf("finish_reason %q, want one of %v", ch.FinishReason, openAIFinish))
	case (ch.Message.Content == nil) == (out.Refusal == ""):
		errs = append(errs, fmt.Errorf("content %v and refusal %q: want exactly one", ch.Message.Content, out.Refusal))
	}
	u := c.Usage
	if u == nil || u.Prompt == nil || u.Completion == nil || u.Total == nil {
		errs = append(errs, errors.New("usage without prompt_tokens, completion_tokens and total_tokens"))
	} else {
		out.Usage.Prompt, out.Usage.Completion, out.Usage.Total = *u.Prompt, *u.Completion, *u.Total
		if *u.Total != *u.Prompt+*u.Completion || *u.Prompt <= 0 {
			errs = append(errs, fmt.Errorf("usage %d + %d = %d", *u.Prompt, *u.Completion, *u.Total))
		}
		if u.Details != nil && u.Details.Cached != nil && (*u.Details.Cached < 0 || *u.Details.Cached > *u.Prompt) {
			errs = append(errs, fmt.Errorf("cached_tokens %d of %d prompt tokens", *u.Details.Cached, *u.Prompt))
		}
	}
	return out, errors.Join(errs...)
}

// CheckOpenAIError checks an error answer: status, and OpenAI's error
// object.
func CheckOpenAIError(wantStatus, status int, body []byte) error {
	if status != wantStatus {
		return fmt.Errorf("status %d, want %d: %s", status, wantStatus, truncate(body))
	}
	var e struct {
		Error map[string]json.RawMessage `json:"error"`
	}
	var msg, typ string
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || json.Unmarshal(e.Error["message"], &msg) != nil || msg == "" ||
		json.Unmarshal(e.Error["type"], &typ) != nil {
		return fmt.Errorf("error body %s: want {\"error\": {\"message\", \"type\", \"param\", \"code\"}}", truncate(body))
	}
	if _, ok := e.Error["param"]; !ok {
		return fmt.Errorf("error body %s: param is always present (null if none)", truncate(body))
	}
	if _, ok := e.Error["code"]; !ok {
		return fmt.Errorf("error body %s: code is always present (null if none)", truncate(body))
	}
	return nil
}

// CheckAnswerSchema checks that an answer conforms to the JSON schema the
// request asked for.
func CheckAnswerSchema(schema []byte, answer string) error {
	var js jsonschema.Schema
	if err := json.Unmarshal(schema, &js); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	rs, err := js.Resolve(nil)
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	var v any
	if err := json.Unmarshal([]byte(answer), &v); err != nil {
		return fmt.Errorf("answer %q is not JSON: %w", truncate([]byte(answer)), err)
	}
	if err := rs.Validate(v); err != nil {
		return fmt.Errorf("answer %s: %w", truncate([]byte(answer)), err)
	}
	return nil
}

// answerSchema is the schema the suite asks answers in.
const answerSchema = `{"type":"object","properties":{"title":{"type":"string"},"labels":{"type":"array","items":{"type":"string","enum":["motivates","extends"]}},"n":{"type":"integer"}},"required":["title","labels","n"],"additionalProperties":false}`

// chatBody is a chat request: a system and a user message, and with
// schema a strict json_schema response_format.
func chatBody(model, user string, schema bool) string {
	req := map[string]any{
		"model":                 model,
		"messages":              []map[string]string{{"role": "system", "content": "You answer in JSON."}, {"role": "user", "content": user}},
		"max_completion_tokens": 2000,
	}
	if schema {
		req["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "answer", "strict": true, "schema": json.RawMessage(answerSchema)}}
	}
	b, _ := json.Marshal(req)
	return string(b)
}

func (s *Suite) openAIModel() string { return cmp(s.OpenAIModel, sim.Model) }

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestOpenAIChat asks for a free answer and for one in a schema.
func (s *Suite) TestOpenAIChat(t *testing.T) {
	base := s.url(t, sim.LLM)
	model := s.openAIModel()
	for _, schema := range []bool{false, true} {
		r := do(t, http.MethodPost, base+openAIChatPath, chatBody(model, "Classify reference [1]: it builds on the reader of [1]. Title: Quiet gradients.", schema))
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("schema %v: %d %q: %s", schema, r.status, r.header.Get("Content-Type"), truncate(r.body))
			continue
		}
		c, err := CheckOpenAIChat(model, r.body)
		if err != nil {
			t.Errorf("schema %v: %v", schema, err)
			continue
		}
		if schema && c.Content != nil {
			if err := CheckAnswerSchema([]byte(answerSchema), *c.Content); err != nil {
				t.Errorf("json_schema answer: %v", err)
			}
		}
	}
}

// TestOpenAIErrors sends what OpenAI refuses.
func (s *Suite) TestOpenAIErrors(t *testing.T) {
	base := s.url(t, sim.LLM)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"not JSON", http.MethodPost, openAIChatPath, `{"model":`, 400},
		{"no messages", http.MethodPost, openAIChatPath, `{"model":"` + s.openAIModel() + `","messages":[]}`, 400},
		{"no such path", http.MethodPost, "/v1/nothing", `{}`, 404},
		{"no such batch", http.MethodGet, "/v1/batches/batch_none", "", 404},
		{"no such file", http.MethodGet, "/v1/files/file-none/content", "", 404},
	} {
		r := do(t, tc.method, base+tc.path, tc.body)
		if err := CheckOpenAIError(tc.status, r.status, r.body); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestOpenAIThrottled: a request over a limit is 429 with Retry-After and
// OpenAI's error object.
func (s *Suite) TestOpenAIThrottled(t *testing.T) {
	base := s.url(t, sim.LLM)
	if s.Service == nil {
		t.Skip("the backend gives no access to its services (Service)")
	}
	s.Service(sim.LLM).Script(openAIChatPath, sim.TooManyRequests.WithRetryAfter("1"), 1)
	r := do(t, http.MethodPost, base+openAIChatPath, chatBody(s.openAIModel(), "Hello there, model.", false))
	if err := CheckOpenAIError(429, r.status, r.body); err != nil {
		t.Error(err)
	}
	if r.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	if r := do(t, http.MethodPost, base+openAIChatPath, chatBody(s.openAIModel(), "Hello there, model.", false)); r.status != 200 {
		t.Errorf("after the 429: %d", r.status)
	}
}

// openAIBatchStates are the states a batch passes through, in order.
var openAIBatchStates = []string{"validating", "in_progress", "finalizing", "completed"}

// TestOpenAIBatch uploads three requests, makes a batch of them, polls it
// to its end and reads its output file.
func (s *Suite) TestOpenAIBatch(t *testing.T) {
	base := s.url(t, sim.LLM)
	var jsonl bytes.Buffer
	ids := []string{"req-1", "req-2", "req-3"}
	for i, id := range ids {
		line, _ := json.Marshal(map[string]any{"custom_id": id, "method": "POST", "url": openAIChatPath,
			"body": json.RawMessage(chatBody(s.openAIModel(), fmt.Sprintf("Answer request %d about the paper Quiet gradients.", i+1), i == 0))})
		jsonl.Write(line)
		jsonl.WriteByte('\n')
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("purpose", "batch")
	fw, _ := mw.CreateFormFile("file", "batch.jsonl")
	fw.Write(jsonl.Bytes())
	mw.Close()
	resp, err := http.Post(base+"/v1/files", mw.FormDataContentType(), &form)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		ID, Object, Purpose string
		Bytes               int `json:"bytes"`
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := json.Unmarshal(b, &file); resp.StatusCode != 200 || err != nil || file.ID == "" || file.Object != "file" || file.Purpose != "batch" || file.Bytes != jsonl.Len() {
		t.Fatalf("upload: %d %s", resp.StatusCode, truncate(b))
	}
	r := do(t, http.MethodPost, base+"/v1/batches", `{"input_file_id":"`+file.ID+`","endpoint":"`+openAIChatPath+`","completion_window":"24h"}`)
	type batch struct {
		ID, Object, Status, Endpoint string
		InputFileID                  string                                  `json:"input_file_id"`
		CompletionWindow             string                                  `json:"completion_window"`
		OutputFileID                 *string                                 `json:"output_file_id"`
		RequestCounts                *struct{ Total, Completed, Failed int } `json:"request_counts"`
	}
	var bt batch
	if err := json.Unmarshal(r.body, &bt); r.status != 200 || err != nil || bt.ID == "" || bt.Object != "batch" || bt.Status != "validating" ||
		bt.InputFileID != file.ID || bt.CompletionWindow != "24h" || bt.Endpoint != openAIChatPath || bt.RequestCounts == nil {
		t.Fatalf("create: %d %s", r.status, truncate(r.body))
	}
	state := 0
	for poll := 0; bt.Status != "completed"; poll++ {
		if poll > 200 {
			t.Fatalf("batch still %s after %d polls", bt.Status, poll)
		}
		if s.BatchWait != nil {
			s.BatchWait()
		}
		r := get(t, base+"/v1/batches/"+bt.ID)
		if err := json.Unmarshal(r.body, &bt); r.status != 200 || err != nil {
			t.Fatalf("poll: %d %s", r.status, truncate(r.body))
		}
		i := slices.Index(openAIBatchStates, bt.Status)
		if i < state {
			t.Fatalf("batch went from %s to %s", openAIBatchStates[state], bt.Status)
		}
		state = i
	}
	if bt.OutputFileID == nil || bt.RequestCounts.Total != 3 || bt.RequestCounts.Completed+bt.RequestCounts.Failed != 3 {
		t.Fatalf("completed batch: output %v, counts %+v", bt.OutputFileID, bt.RequestCounts)
	}
	out := get(t, base+"/v1/files/"+*bt.OutputFileID+"/content")
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out.body))
	for sc.Scan() {
		var line struct {
			ID       string `json:"id"`
			CustomID string `json:"custom_id"`
			Response *struct {
				StatusCode int             `json:"status_code"`
				RequestID  string          `json:"request_id"`
				Body       json.RawMessage `json:"body"`
			} `json:"response"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.ID == "" || line.Response == nil || line.Response.RequestID == "" {
			t.Errorf("output line %s", truncate(sc.Bytes()))
			continue
		}
		seen[line.CustomID]++
		if line.Response.StatusCode == 200 {
			if _, err := CheckOpenAIChat(s.openAIModel(), line.Response.Body); err != nil {
				t.Errorf("%s: %v", line.CustomID, err)
			}
			if string(line.Error) != "null" {
				t.Errorf("%s: error %s beside a 200", line.CustomID, line.Error)
			}
		}
	}
	for _, id := range ids {
		if seen[id] != 1 && bt.RequestCounts.Failed == 0 {
			t.Errorf("custom_id %s in the output %d times", id, seen[id])
		}
	}
}

// TestOpenAIModels lists the models: a list object of model objects, the
// model the suite asks for among them.
func (s *Suite) TestOpenAIModels(t *testing.T) {
	base := s.url(t, sim.LLM)
	r := get(t, base+"/v1/models")
	var l struct {
		Object string `json:"object"`
		Data   []struct {
			ID, Object string
			OwnedBy    string `json:"owned_by"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.body, &l); r.status != 200 || err != nil || l.Object != "list" {
		t.Fatalf("models: %d %s", r.status, truncate(r.body))
	}
	found := false
	for _, m := range l.Data {
		found = found || m.ID == s.openAIModel()
		if m.ID == "" || m.Object != "model" || m.OwnedBy == "" {
			t.Errorf("model %+v: want an id, object model and an owner", m)
		}
	}
	if !found {
		t.Errorf("models %s lack %s", truncate(r.body), s.openAIModel())
	}
}
