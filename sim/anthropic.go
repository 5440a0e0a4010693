package sim

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// anthropicAPI is the anthropic service: Anthropic's Messages API and its
// Message Batches, as Anthropic speaks them.
//
// A message request must carry anthropic-version and max_tokens, keep the
// system prompt out of the messages, and alternate user and assistant
// turns starting with the user; otherwise it gets Anthropic's 400. The
// answer is a text block, or a tool_use block whose input is the answer
// when the request forces a tool. Usage reports input_tokens beside
// cache_read_input_tokens and cache_creation_input_tokens (split by
// lifetime in cache_creation), computed from the cache_control
// breakpoints of the request and the model's least cacheable prefix (see
// promptCache), and every answer carries anthropic-ratelimit-* headers.
// The per-model rules of models.go apply by the model named: Opus 4.7 and
// later refuse temperature, top_p and top_k, models before 4.5 refuse
// output_config.format and strict tools, max_tokens past a model's
// largest output and prompts past its window are refused, an answer past
// its limit stops with max_tokens (model_context_window_exceeded when the
// window ended it), Faults.PRefusal makes it refuse (stop_reason
// refusal). A batch's requests do not see each other's cache writes.
//
// A batch (POST /v1/messages/batches) is in_progress until its third
// poll, then ended with a results_url; its results JSONL comes in an order
// of its own, with errored and expired entries as Faults draw them
// (PLineErrored, PLineExpired; PBatchExpired expires half the batch).
type anthropicAPI struct {
	svc   *Service
	cache *promptCache
	book  batchBook

	mu      sync.Mutex
	batches map[string]*anthropicBatch
	order   []string
}

// Batch limits of Anthropic's Message Batches.
const (
	AnthropicBatchMaxRequests = 100_000
	AnthropicBatchMaxBytes    = 256 << 20
)

type anthropicBatch struct {
	ID                string         `json:"id"`
	Type              string         `json:"type"`
	ProcessingStatus  string         `json:"processing_status"`
	RequestCounts     map[string]int `json:"request_counts"`
	CreatedAt         string         `json:"created_at"`
	EndedAt           *string        `json:"ended_at"`
	ExpiresAt         string         `json:"expires_at"`
	CancelInitiatedAt *string        `json:"cancel_initiated_at"`
	ResultsURL        *string        `json:"results_url"`

	polls    int
	created  time.Time
	gone     bool // results dropped (DropBatchResults)
	requests []anthropicBatchRequest
	results  []byte
	base     string
}

type anthropicBatchRequest struct {
	CustomID string          `json:"custom_id"`
	Params   json.RawMessage `json:"params"`
}

func newAnthropicAPI() *anthropicAPI {
	return &anthropicAPI{cache: newPromptCache(), batches: map[string]*anthropicBatch{}, book: newBatchBook()}
}

type anthropicBlockIn struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type anthropicIn struct {
	Model       string                       `json:"model"`
	MaxTokens   int                          `json:"max_tokens"`
	Temperature *float64                     `json:"temperature"`
	TopP        *float64                     `json:"top_p"`
	TopK        *int                         `json:"top_k"`
	System      json.RawMessage              `json:"system"`
	Messages    []anthropicMsgIn             `json:"messages"`
	Tools       []json.RawMessage            `json:"tools"`
	Choice      *struct{ Type, Name string } `json:"tool_choice"`
	Output      *struct {
		Format *struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
}

type anthropicMsgIn struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// blocks reads a content or system field: a string or a list of blocks.
func blocks(raw json.RawMessage) []anthropicBlockIn {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlockIn{{Type: "text", Text: s}}
	}
	var l []anthropicBlockIn
	json.Unmarshal(raw, &l)
	return l
}

// anthropicIdentity is llmIdentity for a Messages request.
func anthropicIdentity(body []byte) (key, task, note string) {
	var req anthropicIn
	if err := json.Unmarshal(body, &req); err != nil {
		return "unreadable", "unreadable", ""
	}
	h, t := sha256.New(), sha256.New()
	fmt.Fprintf(h, "%s\x00", req.Model)
	fmt.Fprintf(t, "%s\x00", req.Model)
	for _, b := range blocks(req.System) {
		fmt.Fprintf(h, "system\x00%s\x00", b.Text)
		fmt.Fprintf(t, "system\x00%s\x00", b.Text)
	}
	for i, m := range req.Messages {
		for _, b := range blocks(m.Content) {
			fmt.Fprintf(h, "%s\x00%s\x00", m.Role, b.Text)
			if i == 0 {
				fmt.Fprintf(t, "%s\x00%s\x00", m.Role, b.Text)
			}
		}
	}
	if len(req.Messages) > 0 {
		note = promptNote(firstUser(&req))
	}
	return "msg " + hex.EncodeToString(h.Sum(nil)[:12]), "task " + hex.EncodeToString(t.Sum(nil)[:12]), note
}

func firstUser(req *anthropicIn) string {
	var b strings.Builder
	for _, bl := range blocks(req.Messages[0].Content) {
		b.WriteString(bl.Text)
		b.WriteString("\n\n")
	}
	return b.String()
}

func (a *anthropicAPI) handle(rw http.ResponseWriter, r *http.Request, body []byte, invalid bool) {
	if r.Header.Get("anthropic-version") == "" {
		anthropicError(rw, http.StatusBadRequest, "invalid_request_error", "anthropic-version: header is required")
		return
	}
	p := r.URL.Path
	switch {
	case p == "/v1/messages" && r.Method == http.MethodPost:
		status, resp := a.message(body, invalid, nil)
		a.rateHeaders(rw)
		writeStatusJSON(rw, status, resp)
	case p == "/v1/messages/batches" && r.Method == http.MethodPost:
		a.create(rw, r, body)
	case p == "/v1/messages/batches" && r.Method == http.MethodGet:
		a.list(rw)
	case strings.HasPrefix(p, "/v1/messages/batches/"):
		id, action, _ := strings.Cut(strings.TrimPrefix(p, "/v1/messages/batches/"), "/")
		a.mu.Lock()
		b, ok := a.batches[id]
		a.mu.Unlock()
		switch {
		case !ok:
			anthropicError(rw, http.StatusNotFound, "not_found_error", "batch "+id+" not found")
		case action == "" && r.Method == http.MethodGet:
			writeJSON(rw, a.poll(b))
		case action == "results" && r.Method == http.MethodGet:
			a.mu.Lock()
			res, gone := b.results, b.gone
			a.mu.Unlock()
			if gone {
				anthropicError(rw, http.StatusNotFound, "not_found_error", "results of batch "+id+" are no longer available")
				return
			}
			if res == nil {
				anthropicError(rw, http.StatusBadRequest, "invalid_request_error", "batch "+id+" has not ended")
				return
			}
			writeBody(rw, "application/binary", res)
		case action == "cancel" && r.Method == http.MethodPost:
			a.mu.Lock()
			if b.ProcessingStatus == "in_progress" {
				b.ProcessingStatus = "canceling"
				now := time.Unix(1767225600, 0).UTC().Format(time.RFC3339)
				b.CancelInitiatedAt = &now
			}
			c := *b
			a.mu.Unlock()
			writeJSON(rw, &c)
		default:
			anthropicError(rw, http.StatusNotFound, "not_found_error", "not found")
		}
	default:
		anthropicError(rw, http.StatusNotFound, "not_found_error", "not found")
	}
}

func anthropicError(rw http.ResponseWriter, status int, typ, msg string) {
	writeStatusJSON(rw, status, anthropicErrorBody(typ, msg))
}

func anthropicErrorBody(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

// rateHeaders sends generous limits that reset a minute from now.
func (a *anthropicAPI) rateHeaders(rw http.ResponseWriter) {
	reset := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	h := rw.Header()
	h.Set("anthropic-ratelimit-requests-limit", "4000")
	h.Set("anthropic-ratelimit-requests-remaining", "3999")
	h.Set("anthropic-ratelimit-requests-reset", reset)
	h.Set("anthropic-ratelimit-tokens-limit", "4000000")
	h.Set("anthropic-ratelimit-tokens-remaining", "3990000")
	h.Set("anthropic-ratelimit-tokens-reset", reset)
}

var customIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// message answers one Messages request: the status and the body. A
// batch's requests pass their batch's cache writes (tx).
func (a *anthropicAPI) message(body []byte, invalid bool, tx *cacheTx) (int, any) {
	var req anthropicIn
	if err := json.Unmarshal(body, &req); err != nil {
		return http.StatusBadRequest, anthropicErrorBody("invalid_request_error", "request body is not valid JSON")
	}
	refuse := func(msg string) (int, any) {
		return http.StatusBadRequest, anthropicErrorBody("invalid_request_error", msg)
	}
	switch {
	case req.Model == "":
		return refuse("model: Field required")
	case req.MaxTokens <= 0:
		return refuse("max_tokens: Field required")
	case len(req.Messages) == 0:
		return refuse("messages: at least one message is required")
	}
	for i, m := range req.Messages {
		want := []string{"user", "assistant"}[i%2]
		if m.Role != want {
			return refuse(fmt.Sprintf("messages.%d.role: Input should be '%s' (roles must alternate, starting with user; the system prompt is the top-level system field)", i, want))
		}
	}
	rules := anthropicModel(req.Model)
	if rules.noSampling {
		for _, p := range []struct {
			name string
			set  bool
		}{{"temperature", req.Temperature != nil}, {"top_p", req.TopP != nil}, {"top_k", req.TopK != nil}} {
			if p.set {
				return refuse(anthropicSamplingError(p.name))
			}
		}
	}
	var tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
		Strict      bool            `json:"strict"`
	}
	for _, raw := range req.Tools {
		var t struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
			Strict      bool            `json:"strict"`
		}
		json.Unmarshal(raw, &t)
		tools = append(tools, t)
	}
	if rules.noStructured {
		if req.Output != nil && req.Output.Format != nil {
			return refuse(anthropicOutputFormatError(req.Model))
		}
		for _, t := range tools {
			if t.Strict {
				return refuse(anthropicStrictToolsError(req.Model))
			}
		}
	}
	if rules.maxOutput > 0 && req.MaxTokens > rules.maxOutput {
		return refuse(anthropicOutputError(req.MaxTokens, rules.maxOutput, req.Model))
	}
	// The prompt as the cache sees it: tools, output format, system, then
	// messages; a breakpoint after each block marked cache_control, with
	// its lifetime. A one-hour breakpoint may not follow a five-minute one.
	var prompt bytes.Buffer
	var marks []mark
	addMark := func(cc json.RawMessage) error {
		if len(cc) == 0 || string(cc) == "null" {
			return nil
		}
		var c struct {
			TTL string `json:"ttl"`
		}
		json.Unmarshal(cc, &c)
		ttl := 5 * time.Minute
		if c.TTL == "1h" {
			ttl = time.Hour
		}
		if n := len(marks); n > 0 && marks[n-1].ttl < ttl {
			return errors.New("a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block")
		}
		marks = append(marks, mark{end: prompt.Len(), ttl: ttl})
		return nil
	}
	for _, t := range req.Tools {
		prompt.Write(t)
	}
	if req.Output != nil && req.Output.Format != nil {
		prompt.Write(req.Output.Format.Schema)
	}
	for _, b := range blocks(req.System) {
		prompt.WriteString(b.Text)
		if err := addMark(b.CacheControl); err != nil {
			return refuse(err.Error())
		}
	}
	for _, m := range req.Messages {
		prompt.WriteString(m.Role)
		for _, b := range blocks(m.Content) {
			prompt.WriteString(b.Text)
			if err := addMark(b.CacheControl); err != nil {
				return refuse(err.Error())
			}
		}
	}
	if len(marks) > 4 {
		return refuse("A maximum of 4 blocks with cache_control may be provided.")
	}
	total := tokens(prompt.Len())
	switch {
	case rules.window > 0 && total > rules.window:
		return refuse(anthropicWindowError(total, rules.window))
	case rules.window > 0 && total+req.MaxTokens > rules.window && !rules.windowStop:
		return refuse(anthropicLimitWindowError(total, req.MaxTokens, rules.window))
	}
	read, w5, w1 := a.cache.breakpoints(prompt.Bytes(), marks, rules.minCache, tx)
	_, task, _ := anthropicIdentity(body)
	lr := LLMRequest{Service: Anthropic, Model: req.Model, Task: task, Invalid: invalid, Temperature: temperature(body), Body: body}
	for _, b := range blocks(req.System) {
		lr.System += b.Text
	}
	// The model reads a message's text blocks as separate passages (the
	// paper block, then the task): joined as curate's OpenAI requests join
	// the same parts, so the task's first line starts a line here too.
	for _, m := range req.Messages {
		var text []string
		for _, b := range blocks(m.Content) {
			text = append(text, b.Text)
		}
		lr.Messages = append(lr.Messages, LLMMessage{Role: m.Role, Content: strings.Join(text, "\n\n")})
	}
	if req.Output != nil && req.Output.Format != nil {
		lr.Schema = req.Output.Format.Schema
	}
	if req.Choice != nil && req.Choice.Type == "tool" {
		for _, t := range req.Tools {
			var tool struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"input_schema"`
			}
			if json.Unmarshal(t, &tool) == nil && tool.Name == req.Choice.Name {
				lr.Schema = tool.Schema
			}
		}
	}
	reply := a.svc.answer(lr)
	if rr := reply.override(Anthropic); rr != nil {
		return rr.status, rr
	}
	answer := reply.Text
	stop := "end_turn"
	limit := req.MaxTokens
	if rules.window > 0 && total+limit > rules.window {
		limit = rules.window - total // the window ends the answer first
	}
	out := tokens(len(answer))
	if u := reply.Usage; u != nil {
		total, out, read, w5, w1 = u.Prompt+u.CacheRead+u.CacheWrite, u.Completion, u.CacheRead, u.CacheWrite, 0
	}
	f := a.svc.faultsNow()
	switch {
	case reply.Refusal != "":
		stop, answer = "refusal", ""
	case reply.Finish != "":
		stop = map[string]string{"stop": "end_turn", "length": "max_tokens"}[reply.Finish]
		if stop == "" {
			stop = reply.Finish // already in Anthropic's words
		}
	case f.PRefusal > 0 && a.svc.draw(task, 0, "refusal") < f.PRefusal:
		stop, answer = "refusal", ""
	case out > limit:
		stop, answer, out = "max_tokens", cut(answer, limit), limit
		if limit < req.MaxTokens {
			stop = "model_context_window_exceeded"
		}
	}
	content := []map[string]any{{"type": "text", "text": answer}}
	if answer == "" || reply.Null {
		content = []map[string]any{}
	}
	if reply.Reasoning != "" {
		content = append([]map[string]any{{"type": "thinking", "thinking": reply.Reasoning, "signature": "sim"}}, content...)
	}
	if req.Choice != nil && req.Choice.Type == "tool" && stop == "end_turn" {
		var input map[string]any
		if json.Unmarshal([]byte(answer), &input) == nil {
			content = []map[string]any{{"type": "tool_use", "id": "toolu_sim_" + task[5:], "name": req.Choice.Name, "input": input}}
			stop = "tool_use"
		}
	}
	resp := map[string]any{
		"id": "msg_sim_" + task[5:], "type": "message", "role": "assistant", "model": cmpOr(reply.Model, req.Model),
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": max(total-read-w5-w1, 0), "output_tokens": out,
			"cache_read_input_tokens": read, "cache_creation_input_tokens": w5 + w1,
			"cache_creation": map[string]int{"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1},
		},
	}
	if reply.NoUsage {
		delete(resp, "usage")
	}
	return http.StatusOK, resp
}

func (a *anthropicAPI) create(rw http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Requests []anthropicBatchRequest `json:"requests"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Requests) == 0 {
		anthropicError(rw, http.StatusBadRequest, "invalid_request_error", "requests: at least one request is required")
		return
	}
	if len(req.Requests) > AnthropicBatchMaxRequests || len(body) > AnthropicBatchMaxBytes {
		anthropicError(rw, http.StatusRequestEntityTooLarge, "request_too_large", "a batch holds at most 100,000 requests and 256 MB")
		return
	}
	seen := map[string]bool{}
	ids := make([]string, 0, len(req.Requests))
	for _, q := range req.Requests {
		if !customIDPattern.MatchString(q.CustomID) || seen[q.CustomID] {
			anthropicError(rw, http.StatusBadRequest, "invalid_request_error", "custom_id "+strconv.Quote(q.CustomID)+" is invalid or not unique")
			return
		}
		seen[q.CustomID] = true
		ids = append(ids, q.CustomID)
	}
	a.mu.Lock()
	n := len(a.batches)
	created := time.Now().UTC()
	b := &anthropicBatch{
		ID: fmt.Sprintf("msgbatch_sim%06d", n+1), Type: "message_batch", ProcessingStatus: "in_progress",
		RequestCounts: map[string]int{"processing": len(req.Requests), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
		CreatedAt:     created.Format(time.RFC3339), ExpiresAt: created.Add(24 * time.Hour).Format(time.RFC3339),
		requests: req.Requests, base: "http://" + r.Host, created: created,
	}
	a.batches[b.ID] = b
	a.order = append(a.order, b.ID)
	c := *b
	a.mu.Unlock()
	a.book.submitted(b.ID, ids)
	writeJSON(rw, &c)
}

func (a *anthropicAPI) poll(b *anthropicBatch) *anthropicBatch {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.book.poll()
	b.polls++
	if (b.ProcessingStatus == "in_progress" && b.polls >= 3 && time.Since(b.created) >= a.svc.Limits().BatchDuration) || b.ProcessingStatus == "canceling" {
		a.finish(b)
	}
	c := *b
	return &c
}

// finish runs b's requests and writes its results, in an order of the
// batch's own.
func (a *anthropicAPI) finish(b *anthropicBatch) {
	f := a.svc.faultsNow()
	reqs := slices.Clone(b.requests)
	slices.SortFunc(reqs, func(x, y anthropicBatchRequest) int {
		return cmp.Compare(a.svc.draw(x.CustomID, 0, "order"), a.svc.draw(y.CustomID, 0, "order"))
	})
	half := b.ProcessingStatus == "canceling" || a.svc.draw(b.ID, 0, "batch-expired") < f.PBatchExpired
	// The batch's requests run in parallel: none sees another's cache
	// writes.
	tx := newCacheTx()
	defer a.cache.commit(tx)
	var out bytes.Buffer
	counts := map[string]int{"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
	for i, q := range reqs {
		key := b.ID + "\x00" + q.CustomID
		var result map[string]any
		switch {
		case half && i >= len(reqs)/2 && b.ProcessingStatus == "canceling":
			result = map[string]any{"type": "canceled"}
		case half && i >= len(reqs)/2, a.svc.draw(key, 0, "line-expired") < f.PLineExpired:
			result = map[string]any{"type": "expired"}
		case a.svc.draw(key, 0, "line-errored") < f.PLineErrored:
			result = map[string]any{"type": "errored", "error": anthropicErrorBody("api_error", "Internal server error")}
		default:
			invalid := f.PInvalid > 0 && a.svc.draw(key, 0, "invalid") < f.PInvalid
			status, msg := a.message(q.Params, invalid, tx)
			if status == http.StatusOK {
				result = map[string]any{"type": "succeeded", "message": msg}
			} else {
				result = map[string]any{"type": "errored", "error": msg}
			}
		}
		counts[result["type"].(string)]++
		writeLine(&out, map[string]any{"custom_id": q.CustomID, "result": result})
	}
	b.results = out.Bytes()
	b.RequestCounts = counts
	ended := time.Unix(1767225600+int64(b.polls), 0).UTC().Format(time.RFC3339)
	b.EndedAt = &ended
	url := b.base + "/v1/messages/batches/" + b.ID + "/results"
	b.ResultsURL = &url
	b.ProcessingStatus = "ended"
}

func (a *anthropicAPI) list(rw http.ResponseWriter) {
	a.mu.Lock()
	defer a.mu.Unlock()
	data := []anthropicBatch{}
	for i := len(a.order) - 1; i >= 0; i-- {
		data = append(data, *a.batches[a.order[i]])
	}
	resp := map[string]any{"data": data, "has_more": false, "first_id": nil, "last_id": nil}
	if len(data) > 0 {
		resp["first_id"], resp["last_id"] = data[0].ID, data[len(data)-1].ID
	}
	writeJSON(rw, resp)
}
