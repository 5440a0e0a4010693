package sim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// openAIAPI is the llm service: OpenAI's chat completions, files and
// batches, as OpenAI speaks them.
//
// Chat answers report the prompt tokens served from the automatic prefix
// cache in usage.prompt_tokens_details.cached_tokens. A strict
// response_format whose schema OpenAI would refuse (a property not
// required, an object without additionalProperties false, minLength and
// the other keywords strict mode rejects) gets OpenAI's 400, for the
// OpenAI models it knows and, with Options.StrictOpenAI, for any. The
// per-model rules of models.go apply by the model named: gpt-5* and
// o1/o3/o4* refuse a temperature other than 1 and max_tokens, reason
// before answering (reasoning_tokens, within the limit), and every model
// it knows has its context window and largest output; an answer past its
// limit ends with finish_reason length, cut; Faults.PRefusal makes it
// refuse.
//
// A batch is created from an uploaded JSONL file (POST /v1/files,
// multipart, purpose=batch) and moves one state on each GET of it:
// validating, in_progress, finalizing, then completed — or failed (its
// file did not validate, or Faults.PBatchFailed), or expired
// (Faults.PBatchExpired: half its lines done, the rest in the error file
// with batch_expired). Lines come out in the output file in an order of
// their own; a line drawn by Faults.PLineErrored gets a 500 in the error
// file, one drawn by PLineExpired batch_expired.
type openAIAPI struct {
	svc    *Service
	cache  *promptCache
	strict bool
	book   batchBook

	mu      sync.Mutex
	files   map[string][]byte
	batches map[string]*openAIBatch
	order   []string // batch ids, oldest first
}

type openAIBatch struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	Endpoint         string            `json:"endpoint"`
	InputFileID      string            `json:"input_file_id"`
	CompletionWindow string            `json:"completion_window"`
	Status           string            `json:"status"`
	OutputFileID     *string           `json:"output_file_id"`
	ErrorFileID      *string           `json:"error_file_id"`
	CreatedAt        int64             `json:"created_at"`
	Metadata         map[string]string `json:"metadata,omitempty"`
	Errors           *struct {
		Data []map[string]any `json:"data"`
	} `json:"errors,omitempty"`
	RequestCounts struct {
		Total     int `json:"total"`
		Completed int `json:"completed"`
		Failed    int `json:"failed"`
	} `json:"request_counts"`

	polls   int
	created time.Time
	lines   []openAILine
}

type openAILine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// Batch limits of OpenAI's Batch API.
const (
	OpenAIBatchMaxLines = 50_000
	OpenAIBatchMaxBytes = 200 << 20
)

func newOpenAIAPI() *openAIAPI {
	return &openAIAPI{cache: newPromptCache(), files: map[string][]byte{}, batches: map[string]*openAIBatch{}, book: newBatchBook()}
}

func (a *openAIAPI) handle(rw http.ResponseWriter, r *http.Request, body []byte, invalid bool) {
	p := r.URL.Path
	switch {
	case p == "/v1/chat/completions" && r.Method == http.MethodPost:
		status, resp := a.complete(body, invalid, nil)
		writeStatusJSON(rw, status, resp)
	case p == "/v1/files" && r.Method == http.MethodPost:
		a.upload(rw, r, body)
	case strings.HasPrefix(p, "/v1/files/") && strings.HasSuffix(p, "/content") && r.Method == http.MethodGet:
		a.mu.Lock()
		data, ok := a.files[strings.TrimSuffix(strings.TrimPrefix(p, "/v1/files/"), "/content")]
		a.mu.Unlock()
		if !ok {
			openAIError(rw, http.StatusNotFound, "No such File object")
			return
		}
		writeBody(rw, "application/octet-stream", data)
	case p == "/v1/batches" && r.Method == http.MethodPost:
		a.create(rw, body)
	case p == "/v1/batches" && r.Method == http.MethodGet:
		a.list(rw, r)
	case strings.HasPrefix(p, "/v1/batches/"):
		id, action, _ := strings.Cut(strings.TrimPrefix(p, "/v1/batches/"), "/")
		a.mu.Lock()
		b, ok := a.batches[id]
		a.mu.Unlock()
		switch {
		case !ok:
			openAIError(rw, http.StatusNotFound, "No batch found with id '"+id+"'.")
		case action == "" && r.Method == http.MethodGet:
			writeJSON(rw, a.poll(b))
		case action == "cancel" && r.Method == http.MethodPost:
			writeJSON(rw, a.cancel(b))
		default:
			openAIError(rw, http.StatusNotFound, "not found")
		}
	default:
		openAIError(rw, http.StatusNotFound, "not found")
	}
}

func writeStatusJSON(rw http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	rw.Write(b)
}

func openAIError(rw http.ResponseWriter, status int, msg string) {
	writeStatusJSON(rw, status, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
}

type openAIChat struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Temperature         *float64 `json:"temperature"`
	MaxTokens           *int     `json:"max_tokens"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
	ResponseFormat      *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

// complete answers one chat request: the status and the body. A batch's
// requests pass their batch's cache writes (tx).
func (a *openAIAPI) complete(body []byte, invalid bool, tx *cacheTx) (int, any) {
	var req openAIChat
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		return http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "malformed request", "type": "invalid_request_error"}}
	}
	rules := openAIModel(req.Model)
	refuse := func(msg, param, code string) (int, any) {
		return http.StatusBadRequest, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": param, "code": code}}
	}
	switch {
	case rules.defaultTemperature && req.Temperature != nil && *req.Temperature != 1:
		return refuse(openAITemperatureError(*req.Temperature), "temperature", "unsupported_value")
	case rules.noMaxTokens && req.MaxTokens != nil:
		return refuse(openAIMaxTokensError, "max_tokens", "unsupported_parameter")
	}
	limit := 0
	for _, l := range []*int{req.MaxCompletionTokens, req.MaxTokens} {
		if l != nil && *l > 0 {
			limit = *l
			break
		}
	}
	if rules.maxOutput > 0 && limit > rules.maxOutput {
		return refuse(openAIOutputError(limit, rules.maxOutput), "max_tokens", "invalid_value")
	}
	var prompt bytes.Buffer
	if rf := req.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		// OpenAI's strict mode refuses what it does not take, for every
		// model it serves; the tests' own model does so with StrictOpenAI.
		if (a.strict || rules.window > 0) && rf.JSONSchema.Strict {
			if msg := strictProblem(rf.JSONSchema.Schema); msg != "" {
				return refuse(fmt.Sprintf("Invalid schema for response_format '%s': %s", rf.JSONSchema.Name, msg), "response_format", "")
			}
		}
		// The schema is the prefix of the system message in the cache.
		prompt.Write(rf.JSONSchema.Schema)
	}
	user := ""
	for _, m := range req.Messages {
		fmt.Fprintf(&prompt, "%s\n%s\n", m.Role, m.Content)
		if m.Role == "user" && user == "" {
			user = m.Content
		}
	}
	promptTokens := tokens(prompt.Len())
	if rules.window > 0 && promptTokens > rules.window {
		return refuse(openAIWindowError(rules.window, promptTokens), "messages", "context_length_exceeded")
	}
	_, task, _ := llmIdentity(body)
	answer := Answer(user, invalid, task+strconv.Itoa(len(req.Messages)))
	f := a.svc.faultsNow()
	if !invalid && f.PObey > 0 && a.svc.draw(task, 0, "obey") < f.PObey {
		answer = ObeyingAnswer(user)
	}
	cached := a.cache.automatic(prompt.Bytes(), rules.minCache, tx)
	msg := map[string]any{"role": "assistant", "content": answer}
	finish := "stop"
	reasoning := rules.reasoning
	done := tokens(len(answer)) + reasoning
	switch {
	case f.PRefusal > 0 && a.svc.draw(task, 0, "refusal") < f.PRefusal:
		// A refusal: the content is null and the refusal says why.
		msg = map[string]any{"role": "assistant", "content": nil, "refusal": "I'm sorry, I can't help with that request."}
		done = reasoning + 12
	case limit > 0 && done > limit:
		// Cut at the limit; a reasoning model's thinking comes first.
		finish, done = "length", limit
		msg["content"] = cut(answer, limit-reasoning)
		reasoning = min(reasoning, limit)
	}
	return http.StatusOK, map[string]any{
		"id": "chatcmpl-sim-" + task[5:], "object": "chat.completion", "created": 1767225600, "model": req.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": finish, "message": msg}},
		"usage": map[string]any{
			"prompt_tokens": promptTokens, "completion_tokens": done,
			"total_tokens":              promptTokens + done,
			"prompt_tokens_details":     map[string]int{"cached_tokens": cached},
			"completion_tokens_details": map[string]int{"reasoning_tokens": reasoning},
		},
	}
}

// strictProblem says why OpenAI's strict mode would refuse schema, in
// OpenAI's words, or "".
func strictProblem(schema json.RawMessage) string {
	var root any
	if json.Unmarshal(schema, &root) != nil {
		return "schema is not JSON"
	}
	var walk func(v any, ctx []string) string
	walk = func(v any, ctx []string) string {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		where := "In context=(" + strings.Join(ctx, ", ") + ")"
		for _, k := range []string{"minLength", "maxLength", "minProperties", "maxProperties", "patternProperties",
			"unevaluatedProperties", "propertyNames", "uniqueItems", "contains", "allOf", "not", "if", "then", "else",
			"dependentRequired", "dependentSchemas", "default"} {
			if _, ok := m[k]; ok {
				return fmt.Sprintf("%s, '%s' is not permitted.", where, k)
			}
		}
		if props, ok := m["properties"].(map[string]any); ok {
			if m["additionalProperties"] != false {
				return where + ", 'additionalProperties' is required to be supplied and to be false."
			}
			req, _ := m["required"].([]any)
			for _, k := range sortedAnyKeys(props) {
				if !slices.Contains(req, any(k)) {
					return fmt.Sprintf("%s, 'required' is required to be supplied and to be an array including every key in properties. Missing '%s'.", where, k)
				}
				if msg := walk(props[k], append(slices.Clone(ctx), "'properties'", "'"+k+"'")); msg != "" {
					return msg
				}
			}
		}
		if it, ok := m["items"]; ok {
			if msg := walk(it, append(slices.Clone(ctx), "'items'")); msg != "" {
				return msg
			}
		}
		for _, k := range []string{"anyOf"} {
			if l, ok := m[k].([]any); ok {
				for i, e := range l {
					if msg := walk(e, append(slices.Clone(ctx), "'"+k+"'", strconv.Itoa(i))); msg != "" {
						return msg
					}
				}
			}
		}
		for _, k := range []string{"$defs", "definitions"} {
			if d, ok := m[k].(map[string]any); ok {
				for _, dk := range sortedAnyKeys(d) {
					if msg := walk(d[dk], append(slices.Clone(ctx), "'"+k+"'", "'"+dk+"'")); msg != "" {
						return msg
					}
				}
			}
		}
		return ""
	}
	return walk(root, nil)
}

func sortedAnyKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// upload takes a multipart file upload.
func (a *openAIAPI) upload(rw http.ResponseWriter, r *http.Request, body []byte) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		openAIError(rw, http.StatusBadRequest, "Expected a multipart/form-data request")
		return
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	purpose, name := "", ""
	var data []byte
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			openAIError(rw, http.StatusBadRequest, "Malformed multipart body: "+err.Error())
			return
		}
		b, _ := io.ReadAll(part)
		switch part.FormName() {
		case "purpose":
			purpose = string(b)
		case "file":
			data, name = b, part.FileName()
		}
	}
	switch {
	case purpose != "batch":
		openAIError(rw, http.StatusBadRequest, "'purpose' must be 'batch' for a batch input file")
		return
	case data == nil:
		openAIError(rw, http.StatusBadRequest, "No file was uploaded")
		return
	case len(data) > OpenAIBatchMaxBytes:
		openAIError(rw, http.StatusBadRequest, "File is too large for a batch")
		return
	}
	a.mu.Lock()
	id := fmt.Sprintf("file-sim%06d", len(a.files)+1)
	a.files[id] = data
	a.mu.Unlock()
	writeJSON(rw, map[string]any{"id": id, "object": "file", "bytes": len(data), "created_at": 1767225600, "filename": name, "purpose": "batch"})
}

func (a *openAIAPI) create(rw http.ResponseWriter, body []byte) {
	var req struct {
		InputFileID      string            `json:"input_file_id"`
		Endpoint         string            `json:"endpoint"`
		CompletionWindow string            `json:"completion_window"`
		Metadata         map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		openAIError(rw, http.StatusBadRequest, "malformed request")
		return
	}
	switch {
	case req.Endpoint != "/v1/chat/completions":
		openAIError(rw, http.StatusBadRequest, "endpoint must be /v1/chat/completions")
		return
	case req.CompletionWindow != "24h":
		openAIError(rw, http.StatusBadRequest, "completion_window must be 24h")
		return
	case len(req.Metadata) > 16:
		openAIError(rw, http.StatusBadRequest, "metadata has more than 16 pairs")
		return
	}
	a.mu.Lock()
	data, ok := a.files[req.InputFileID]
	if !ok {
		a.mu.Unlock()
		openAIError(rw, http.StatusBadRequest, "No such File object: "+req.InputFileID)
		return
	}
	b := &openAIBatch{
		ID: fmt.Sprintf("batch_sim%06d", len(a.batches)+1), Object: "batch", Endpoint: req.Endpoint,
		InputFileID: req.InputFileID, CompletionWindow: "24h", Status: "validating", CreatedAt: time.Now().Unix(),
		Metadata: req.Metadata, created: time.Now(),
	}
	a.batches[b.ID] = b
	a.order = append(a.order, b.ID)
	a.mu.Unlock()
	// Validation reads the file now; the verdict shows at the next poll.
	seen := map[string]bool{}
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var l openAILine
		msg := ""
		switch {
		case json.Unmarshal(line, &l) != nil:
			msg = "line is not JSON"
		case l.CustomID == "" || seen[l.CustomID]:
			msg = "custom_id is empty or not unique: " + l.CustomID
		case l.Method != "POST" || l.URL != req.Endpoint:
			msg = "method must be POST and url the batch's endpoint"
		case i >= OpenAIBatchMaxLines:
			msg = "the file has more than 50,000 requests"
		}
		if msg != "" {
			if b.Errors == nil {
				b.Errors = &struct {
					Data []map[string]any `json:"data"`
				}{}
			}
			b.Errors.Data = append(b.Errors.Data, map[string]any{"code": "invalid_request", "message": msg, "line": i + 1})
			continue
		}
		seen[l.CustomID] = true
		b.lines = append(b.lines, l)
	}
	b.RequestCounts.Total = len(b.lines)
	ids := make([]string, len(b.lines))
	for i, l := range b.lines {
		ids[i] = l.CustomID
	}
	a.book.submitted(b.ID, ids)
	writeJSON(rw, b)
}

// poll moves b one state on and returns it.
func (a *openAIAPI) poll(b *openAIBatch) *openAIBatch {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.book.poll()
	f := a.svc.faultsNow()
	b.polls++
	switch b.Status {
	case "validating":
		if b.Errors != nil || a.svc.draw(b.ID, 0, "batch-failed") < f.PBatchFailed {
			b.Status = "failed"
			if b.Errors == nil {
				b.Errors = &struct {
					Data []map[string]any `json:"data"`
				}{Data: []map[string]any{{"code": "invalid_file", "message": "The batch input file could not be validated."}}}
			}
		} else {
			b.Status = "in_progress"
		}
	case "in_progress":
		if b.polls >= 3 && time.Since(b.created) >= a.svc.Limits().BatchDuration {
			b.Status = "finalizing"
		}
	case "finalizing":
		expired := a.svc.draw(b.ID, 0, "batch-expired") < f.PBatchExpired
		a.finish(b, f, expired)
	case "cancelling":
		a.finish(b, f, false)
		b.Status = "cancelled"
	}
	c := *b
	return &c
}

func (a *openAIAPI) cancel(b *openAIBatch) *openAIBatch {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch b.Status {
	case "validating", "in_progress", "finalizing":
		b.Status = "cancelling"
	}
	c := *b
	return &c
}

// finish writes b's output and error files. An expired or cancelled batch
// does only its first half of the lines.
func (a *openAIAPI) finish(b *openAIBatch, f Faults, cut bool) {
	var out, errs bytes.Buffer
	lines := slices.Clone(b.lines)
	// The output file's order is the batch's own, not the input's.
	slices.SortFunc(lines, func(x, y openAILine) int {
		return cmp.Compare(a.svc.draw(x.CustomID, 0, "order"), a.svc.draw(y.CustomID, 0, "order"))
	})
	done := len(lines)
	if cut || b.Status == "cancelling" {
		done = len(lines) / 2
	}
	// The batch's requests read nothing from the prompt cache (see
	// newColdTx).
	tx := newColdTx()
	for i, l := range lines {
		key := b.ID + "\x00" + l.CustomID
		reqID := "req_sim_" + strconv.Itoa(i)
		switch {
		case i >= done:
			code, msg := "batch_expired", "This request could not be executed before the completion window expired."
			if b.Status == "cancelling" {
				code, msg = "batch_cancelled", "This request was cancelled with its batch."
			}
			writeLine(&errs, map[string]any{"id": "batch_req_" + strconv.Itoa(i), "custom_id": l.CustomID, "response": nil,
				"error": map[string]any{"code": code, "message": msg}})
		case a.svc.draw(key, 0, "line-expired") < f.PLineExpired:
			writeLine(&errs, map[string]any{"id": "batch_req_" + strconv.Itoa(i), "custom_id": l.CustomID, "response": nil,
				"error": map[string]any{"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}})
		case a.svc.draw(key, 0, "line-errored") < f.PLineErrored:
			writeLine(&errs, map[string]any{"id": "batch_req_" + strconv.Itoa(i), "custom_id": l.CustomID,
				"response": map[string]any{"status_code": 500, "request_id": reqID,
					"body": map[string]any{"error": map[string]any{"message": "The server had an error processing your request.", "type": "server_error"}}},
				"error": nil})
		default:
			invalid := f.PInvalid > 0 && a.svc.draw(key, 0, "invalid") < f.PInvalid
			status, body := a.complete(l.Body, invalid, tx)
			line := map[string]any{"id": "batch_req_" + strconv.Itoa(i), "custom_id": l.CustomID,
				"response": map[string]any{"status_code": status, "request_id": reqID, "body": body}, "error": nil}
			if status == http.StatusOK {
				writeLine(&out, line)
				b.RequestCounts.Completed++
				continue
			}
			writeLine(&errs, line)
		}
		b.RequestCounts.Failed++
	}
	if out.Len() > 0 {
		id := fmt.Sprintf("file-sim%06d", len(a.files)+1)
		a.files[id] = out.Bytes()
		b.OutputFileID = &id
	}
	if errs.Len() > 0 {
		id := fmt.Sprintf("file-sim%06d", len(a.files)+1)
		a.files[id] = errs.Bytes()
		b.ErrorFileID = &id
	}
	b.Status = "completed"
	if cut {
		b.Status = "expired"
	}
}

func writeLine(w *bytes.Buffer, v any) {
	b, _ := json.Marshal(v)
	w.Write(b)
	w.WriteByte('\n')
}

func (a *openAIAPI) list(rw http.ResponseWriter, r *http.Request) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 20
	}
	after := r.URL.Query().Get("after")
	a.mu.Lock()
	defer a.mu.Unlock()
	// Newest first, as OpenAI lists them.
	var data []openAIBatch
	started := after == ""
	for i := len(a.order) - 1; i >= 0; i-- {
		id := a.order[i]
		if !started {
			started = id == after
			continue
		}
		data = append(data, *a.batches[id])
	}
	more := len(data) > limit
	if more {
		data = data[:limit]
	}
	resp := map[string]any{"object": "list", "data": data, "has_more": more}
	if len(data) > 0 {
		resp["first_id"], resp["last_id"] = data[0].ID, data[len(data)-1].ID
	}
	writeJSON(rw, resp)
}
