package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// An LLMMessage is one turn of a request: its role and its text.
type LLMMessage struct {
	Role, Content string
}

// An LLMRequest is a chat (OpenAI) or messages (Anthropic) request as the
// simulated model reads it.
type LLMRequest struct {
	// Service is LLM or Anthropic.
	Service string
	Model   string
	// System is the system prompt; Messages the turns, in order, as the
	// request sends them (OpenAI's system messages among them).
	System   string
	Messages []LLMMessage
	// Schema is the JSON schema the answer is asked to follow (OpenAI's
	// response_format, Anthropic's output_config.format or the forced
	// tool's input_schema), nil for a free answer.
	Schema json.RawMessage
	// Temperature is the sampling temperature asked for, nil when the
	// request leaves it to the model.
	Temperature *float64
	// Task identifies the task: a follow-up after an invalid answer is
	// the same task as the first request.
	Task string
	// Body is the request's body as sent, for what the fields above leave
	// out.
	Body json.RawMessage
	// Invalid says the service's faults drew an unusable answer for this
	// request (Faults.PInvalid); Obey that the model obeys an instruction
	// planted in the paper (Faults.PObey). A hook may honour both.
	Invalid, Obey bool
}

// User returns the first user message.
func (r LLMRequest) User() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// An LLMAnswer is a test's answer hook: it answers a request with a reply
// and true, or returns false to leave the request to the simulated
// model's own answer (SchemaModel). A test declares one per service
// (Options.LLMAnswer, Service.SetLLMAnswer) for the answers it needs;
// CurateModel is the one that plays a diligent model for curate's own
// prompts.
type LLMAnswer func(LLMRequest) (LLMReply, bool)

// An LLMReply is a hook's answer: its text, and what the service would
// otherwise work out itself. The zero value of each field leaves it to
// the service.
type LLMReply struct {
	Text string
	// Null sends the answer's content as null: an empty turn.
	Null bool
	// Reasoning is thinking returned beside the answer: the
	// reasoning_content of OpenAI-compatible reasoning servers (vLLM's
	// reasoning outputs, DeepSeek's API), a thinking block of Anthropic's.
	Reasoning string
	// Refusal is the model's refusal in place of an answer: OpenAI's
	// message.refusal with null content, Anthropic's stop_reason refusal.
	Refusal string
	// Finish is how the answer ended, in OpenAI's words: "stop" (it
	// finished), "length" (cut at the limit: Anthropic's max_tokens),
	// "content_filter"; "" leaves it to the service's own rules.
	Finish string
	// Model is the model the answer names (default: the one asked for).
	Model string
	// Usage, when set, is the token counts the answer reports: a test's
	// model with a price per call (default: counted from the prompt and
	// the answer, the prompt cache's hits apart). NoUsage leaves usage
	// out, as some OpenAI-compatible servers do.
	Usage   *LLMUsage
	NoUsage bool
	// Error, when set, answers with the provider's error object instead.
	Error *LLMError
	// Raw, when set, is sent as the body instead: what no provider sends
	// (a proxy's page, an envelope broken or of another server's shape).
	Raw *LLMRaw
}

// An LLMError is an error answer in the provider's shape: OpenAI's
// {"error": {"message", "type", "param", "code"}}, Anthropic's {"type":
// "error", "error": {"type", "message"}}.
type LLMError struct {
	Status int
	// Type defaults to the provider's type for the status.
	Type, Message, Param, Code string
	// RetryAfter is sent as Retry-After ("" sends none).
	RetryAfter string
}

// LLMRaw is a body sent as is, with its status (default 200) and
// Content-Type (default application/json).
type LLMRaw struct {
	Status      int
	ContentType string
	Body        string
}

// rawReply is an answer written as is: an error or a raw body a hook
// asked for. In a batch line its body is the JSON it holds, or a string.
type rawReply struct {
	status int
	header http.Header
	body   []byte
}

func (r *rawReply) MarshalJSON() ([]byte, error) {
	if json.Valid(r.body) {
		return r.body, nil
	}
	return json.Marshal(string(r.body))
}

func (r *rawReply) write(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(r.status)
	w.Write(r.body)
}

// override returns the answer that replaces the service's for an error
// or a raw body, nil for none.
func (r LLMReply) override(service string) *rawReply {
	switch {
	case r.Raw != nil:
		rr := &rawReply{status: cmpInt(r.Raw.Status, http.StatusOK), header: http.Header{}, body: []byte(r.Raw.Body)}
		rr.header.Set("Content-Type", cmpOr(r.Raw.ContentType, "application/json"))
		return rr
	case r.Error != nil:
		e := r.Error
		rr := &rawReply{status: e.Status, header: http.Header{}}
		if e.RetryAfter != "" {
			rr.header.Set("Retry-After", e.RetryAfter)
		}
		var body any
		if service == Anthropic {
			typ := cmpOr(e.Type, anthropicErrorType(e.Status))
			body = anthropicErrorBody(typ, cmpOr(e.Message, http.StatusText(e.Status)))
		} else {
			typ := cmpOr(e.Type, map[bool]string{true: "server_error", false: "invalid_request_error"}[e.Status >= 500])
			var param, code any
			if e.Param != "" {
				param = e.Param
			}
			if e.Code != "" {
				code = e.Code
			}
			body = map[string]any{"error": map[string]any{"message": cmpOr(e.Message, http.StatusText(e.Status)), "type": typ, "param": param, "code": code}}
		}
		rr.body, _ = json.Marshal(body)
		return rr
	}
	return nil
}

func cmpInt(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// LLMUsage is an answer's token counts as the provider reports them:
// Prompt is OpenAI's prompt_tokens (CacheRead, its cached_tokens, among
// them) or Anthropic's input_tokens (CacheRead and CacheWrite, its cache
// reads and writes, apart); Completion the answer's.
type LLMUsage struct {
	Prompt, Completion    int
	CacheRead, CacheWrite int
}

// Say is a reply of text alone.
func Say(text string) LLMReply { return LLMReply{Text: text} }

// Answers returns a hook that asks hooks in order, the first that answers
// giving the answer.
func Answers(hooks ...LLMAnswer) LLMAnswer {
	return func(r LLMRequest) (LLMReply, bool) {
		for _, h := range hooks {
			if h == nil {
				continue
			}
			if a, ok := h(r); ok {
				return a, true
			}
		}
		return LLMReply{}, false
	}
}

// CurateModel is the hook of a diligent model that knows curate's prompts
// (see Answer): the classification, the cards, the SFT teacher's, the
// topic tags and the idea-only rewrites, valid and grounded in the paper
// as a careful model would write them; an unusable one when the faults
// draw it (Invalid), and the planted instruction's answer when the model
// obeys it (Obey). It leaves any other prompt to the schema.
func CurateModel(r LLMRequest) (LLMReply, bool) {
	user := r.User()
	if r.Invalid && Answer(user, false, "") == unknownPrompt {
		return LLMReply{}, false
	}
	if r.Obey && !r.Invalid {
		return Say(ObeyingAnswer(user)), true
	}
	a := Answer(user, r.Invalid, r.Task+strconv.Itoa(len(r.Messages)))
	return Say(a), a != unknownPrompt
}

// unknownPrompt is Answer's answer to a prompt it does not know.
const unknownPrompt = "I can only classify references and write idea cards."

// SchemaModel is the simulated model's own answer, for a request no hook
// answered: made from the request's schema (SchemaAnswer) or, when the
// request sends none, from a JSON schema its prompt spells out (as an
// endpoint without structured output is told it); its free strings are
// sentences of the prompt, so that a quote asked of the paper is one. To
// a request without a schema it answers a few sentences of the prompt.
// With Invalid it answers as a model that ignores the schema: prose, or
// JSON that breaks it (a required property left out, the wrong type).
func SchemaModel(r LLMRequest) string {
	text := promptText(r)
	if r.Schema == nil {
		r.Schema = promptSchema(r)
	}
	if r.Invalid {
		switch draw3(r.Task + "\x00invalid") {
		case 0:
			return "I would rather describe this in prose than in JSON."
		case 1:
			if r.Schema != nil {
				return "[]" // an array where the schema asks for an object (or anything but an array)
			}
		}
	}
	if r.Schema != nil {
		a, err := SchemaAnswer(r.Schema, text, r.Task)
		if err != nil {
			return "I cannot answer in this schema: " + err.Error()
		}
		if r.Invalid {
			return breakAnswer(a)
		}
		return string(a)
	}
	s := sentences(text)
	if len(s) == 0 {
		return "I have nothing to say about this."
	}
	n := min(len(s), 3)
	i := int(drawN(r.Task, uint64(len(s)-n+1)))
	return strings.Join(s[i:i+n], " ")
}

// promptSchema returns the first JSON schema the prompt holds: a JSON
// object with "properties" or "type" written out in the system prompt or a
// turn, or nil.
func promptSchema(r LLMRequest) json.RawMessage {
	texts := []string{r.System}
	for _, m := range r.Messages {
		texts = append(texts, m.Content)
	}
	for _, t := range texts {
		for i, tries := strings.IndexByte(t, '{'), 0; i >= 0 && tries < 64; tries++ {
			dec := json.NewDecoder(strings.NewReader(t[i:]))
			var m map[string]json.RawMessage
			if dec.Decode(&m) == nil && (m["properties"] != nil || m["type"] != nil) {
				return json.RawMessage(t[i : i+int(dec.InputOffset())])
			}
			j := strings.IndexByte(t[i+1:], '{')
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	return nil
}

// promptText is the text an answer draws its sentences from: the turns
// the user wrote (the paper is in them), then the system prompt.
func promptText(r LLMRequest) string {
	var b strings.Builder
	for _, m := range r.Messages {
		if m.Role == "user" {
			b.WriteString(m.Content)
			b.WriteByte('\n')
		}
	}
	if b.Len() == 0 {
		b.WriteString(r.System)
	}
	return b.String()
}

// breakAnswer returns a, an object valid against its schema, with its
// first property left out: JSON the schema refuses when it requires it.
func breakAnswer(a []byte) string {
	o, err := parseObject(a)
	if err != nil || len(o) == 0 {
		return `{"answer": null}`
	}
	out, _ := json.Marshal(map[string]json.RawMessage{"unexpected": o[0].val})
	return string(out)
}

func draw3(salt string) int { return int(drawN(salt, 3)) }

func drawN(salt string, n uint64) uint64 {
	sum := sha256.Sum256([]byte(salt))
	return binary.LittleEndian.Uint64(sum[:]) % n
}

// answer is what the service answers a request: the test's hook's reply,
// or the simulated model's own.
func (s *Service) answer(r LLMRequest) LLMReply {
	s.mu.Lock()
	hook := s.llmAnswer
	s.mu.Unlock()
	if hook != nil {
		if a, ok := hook(r); ok {
			return a
		}
	}
	return Say(SchemaModel(r))
}

// SetLLMAnswer declares the hook that answers the service's LLM requests
// before the simulated model does (nil: the model answers all from their
// schema). Only the LLM services ask it.
func (s *Service) SetLLMAnswer(h LLMAnswer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.llmAnswer = h
}

// openAIFault is OpenAI's answer for an error status: its error object
// (platform.openai.com/docs/guides/error-codes), with the type and code
// the API gives a 429 (rate_limit_exceeded) and a server error.
func openAIFault(w http.ResponseWriter, status int) {
	typ, code, msg := "server_error", any(nil), "The server had an error while processing your request. Sorry about that!"
	switch {
	case status == http.StatusTooManyRequests:
		typ, code, msg = "requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again later."
	case status < 500:
		typ, msg = "invalid_request_error", http.StatusText(status)
	}
	writeStatusJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

// anthropicFault is Anthropic's answer for an error status: its error
// object of the type the status has (docs.anthropic.com/en/api/errors).
func anthropicFault(w http.ResponseWriter, status int) {
	writeStatusJSON(w, status, anthropicErrorBody(anthropicErrorType(status), http.StatusText(status)))
}

// anthropicErrorType is Anthropic's error type for a status.
func anthropicErrorType(status int) string {
	if typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
		413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error"}[status]; typ != "" {
		return typ
	}
	return "api_error"
}

// withLLMKey makes an LLM service refuse a request without key, as the
// providers refuse a wrong key: OpenAI 401 invalid_api_key for an
// Authorization that is not "Bearer KEY" (platform.openai.com/docs/guides/
// error-codes), Anthropic 401 authentication_error for another x-api-key
// (docs.anthropic.com/en/api/errors).
func withLLMKey(name, key string, next handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, body []byte, invalid bool) {
		switch {
		case name == LLM && r.Header.Get("Authorization") != "Bearer "+key:
			writeStatusJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
				"message": "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
				"type":    "invalid_request_error", "param": nil, "code": "invalid_api_key"}})
		case name == Anthropic && r.Header.Get("x-api-key") != key:
			writeStatusJSON(w, http.StatusUnauthorized, anthropicErrorBody("authentication_error", "invalid x-api-key"))
		default:
			next(w, r, body, invalid)
		}
	}
}

// temperature returns the temperature a request's body asks for, if any.
func temperature(body []byte) *float64 {
	var r struct {
		Temperature *float64 `json:"temperature"`
	}
	json.Unmarshal(body, &r)
	return r.Temperature
}

// withModels serves GET /v1/models in front of an LLM service: the models
// the account may use, as OpenAI lists them ({"object": "list", "data":
// [{"id", "object": "model", "created", "owned_by"}]}, platform.openai.com/
// docs/api-reference/models/list) or Anthropic does ({"data": [{"type":
// "model", "id", "display_name", "created_at"}], "has_more", "first_id",
// "last_id"}, docs.anthropic.com/en/api/models-list).
func withModels(name string, models []string, next handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, body []byte, invalid bool) {
		if r.URL.Path != "/v1/models" || r.Method != http.MethodGet {
			next(w, r, body, invalid)
			return
		}
		var data []map[string]any
		for _, m := range models {
			if name == Anthropic {
				data = append(data, map[string]any{"type": "model", "id": m, "display_name": m, "created_at": "2026-01-01T00:00:00Z"})
			} else {
				data = append(data, map[string]any{"id": m, "object": "model", "created": 1767225600, "owned_by": "sim"})
			}
		}
		if name == Anthropic {
			first, last := "", ""
			if len(models) > 0 {
				first, last = models[0], models[len(models)-1]
			}
			writeJSON(w, map[string]any{"data": data, "has_more": false, "first_id": first, "last_id": last})
			return
		}
		writeJSON(w, map[string]any{"object": "list", "data": data})
	}
}

func cmpSlice[T any](a, b []T) []T {
	if len(a) > 0 {
		return a
	}
	return b
}
