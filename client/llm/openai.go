package llm

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// protocol is one API's request and answer shapes.
type protocol interface {
	// what names a call in errors: "chat completion", "message".
	what() string
	// path is the request path below the base URL.
	path() string
	header(c *Client) http.Header
	// modes are the structured-output modes to try for a schema, best
	// first; formatInstruction is the last resort of all.
	modes(c *Client) []formatMode
	// formatRejected reports whether a 400 message is about mode m.
	formatRejected(msg string, m formatMode) bool
	// encode builds the body of one round and estimates its prompt tokens.
	encode(c *Client, req *Request, conv []chatMessage, rd round) ([]byte, int64, error)
	// prefix names the prefix of a round that is marked for the prompt
	// cache and shared with other requests (the system prompt with what
	// precedes it), and estimates its tokens; "" when none is marked.
	prefix(c *Client, req *Request, rd round) (string, int64)
	// decode reads a 2xx body; an error means the body is not the API's.
	decode(c *Client, body []byte, promptEst int64) (*answer, error)
}

// chatProtocol is OpenAI's chat completions, also spoken by vLLM, Ollama,
// llama.cpp and LiteLLM.
type chatProtocol struct{}

func (chatProtocol) what() string { return "chat completion" }
func (chatProtocol) path() string { return "chat/completions" }

func (chatProtocol) header(*Client) http.Header {
	return http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
}

func (chatProtocol) modes(c *Client) []formatMode {
	if c.rules.row.Structured == StructuredPrompt {
		return nil
	}
	return []formatMode{formatSchema}
}

func (chatProtocol) formatRejected(m string, _ formatMode) bool {
	for _, w := range []string{"response_format", "json_schema", "schema", "'format'", "structured output"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// userContent is the user message: what calls share first (the static
// part, then the paper), the task after, so that the provider's prefix
// cache covers the shared part.
func userContent(req *Request) string {
	var parts []string
	for _, p := range []string{req.Static, req.Paper, req.User} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "\n\n")
}

func (p chatProtocol) encode(c *Client, req *Request, conv []chatMessage, rd round) ([]byte, int64, error) {
	cr := p.request(c, req, conv, rd)
	body, err := json.Marshal(cr)
	return body, estimateChat(cr), err
}

func (chatProtocol) request(c *Client, req *Request, conv []chatMessage, rd round) *chatRequest {
	m := rd.mode
	msgs := make([]chatMessage, 0, 2+len(conv))
	if s := system(req, m); s != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: s})
	}
	msgs = append(msgs, chatMessage{Role: "user", Content: userContent(req)})
	msgs = append(msgs, conv...)
	cr := &chatRequest{
		Model:    c.cfg.Model,
		Messages: msgs,
	}
	if c.rules.temperature() {
		t := req.Temperature
		cr.Temperature = &t
	}
	if c.rules.seed() {
		cr.Seed = req.Seed
	}
	if c.rules.maxCompletion() {
		cr.MaxCompletionTokens = rd.limit
	} else {
		cr.MaxTokens = rd.limit
	}
	if c.cfg.Provider == ProviderOpenAI && !c.cfg.NoPromptCache {
		cr.PromptCacheKey = cacheKeyOf(req)
	}
	if m != formatSchema {
		return cr
	}
	strict := true
	s := req.Schema
	switch d := c.cfg.Dialect; d {
	case DialectOllama:
		cr.Format = s.WireSchema(d)
		cr.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: s.name, Schema: s.WireSchema(d)}}
	case DialectLlamaCpp:
		cr.ResponseFormat = &responseFormat{Type: "json_object", Schema: s.WireSchema(d)}
	case DialectVLLM:
		cr.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: s.name, Schema: s.WireSchema(d)}}
	default:
		cr.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: s.name, Schema: s.WireSchema(d), Strict: &strict}}
	}
	return cr
}

// prefix: OpenAI's cache is automatic, nothing is marked.
func (chatProtocol) prefix(*Client, *Request, round) (string, int64) { return "", 0 }

// cacheKeyOf is OpenAI's prompt_cache_key of a request, which routes
// requests with the same key and prefix to the same cache: the paper's
// for a call about a paper (its calls share the paper), else the stage's.
func cacheKeyOf(req *Request) string {
	if req.Paper != "" {
		sum := sha256.Sum256([]byte(req.Paper))
		return "paper-" + hex.EncodeToString(sum[:8])
	}
	return req.Stage + "/" + req.PromptVersion
}

// estimateChat estimates the prompt tokens of a chat request.
func estimateChat(cr *chatRequest) int64 {
	n := int64(0)
	for _, m := range cr.Messages {
		n += estimateTokens(len(m.Content)) + messageOverhead
	}
	if rf := cr.ResponseFormat; rf != nil {
		if rf.JSONSchema != nil {
			n += estimateTokens(len(rf.JSONSchema.Schema))
		}
		n += estimateTokens(len(rf.Schema))
	}
	return n
}

func (chatProtocol) decode(c *Client, body []byte, promptEst int64) (*answer, error) {
	var cr chatResponse
	if err := json.Unmarshal(body, &cr); err != nil {
		return nil, errors.New("the body is not JSON: " + clip(strings.TrimSpace(string(body)), 80))
	}
	if len(cr.Choices) == 0 {
		// Some proxies answer 200 with an error object.
		return nil, errors.New("the response has no choices: " + clip(c.scrub(errorMessage(body)), maxMessageLen))
	}
	ch := cr.Choices[0]
	// The model never sees the key, but a proxy that echoes the request
	// could put it into the content; scrubbed here, it cannot reach a
	// follow-up, the cache or an InvalidError.
	a := &answer{
		content: c.scrub(contentText(ch.Message.Content)),
		refusal: c.scrub(ch.Message.Refusal),
		finish:  cmp.Or(ch.FinishReason, finishStop),
		model:   cmp.Or(cr.Model, c.cfg.Model),
	}
	if a.finish == "content_filter" && a.refusal == "" {
		a.refusal = "finish_reason content_filter"
	}
	think, rest := splitThink(a.content)
	a.answer = rest
	a.reasoning = c.scrub(cmp.Or(ch.Message.ReasoningContent, ch.Message.Reasoning, think))
	if u := cr.Usage; u != nil && (u.PromptTokens > 0 || u.CompletionTokens > 0 || u.TotalTokens > 0) {
		a.usage = Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
		if a.usage.TotalTokens == 0 {
			a.usage.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
		if d := u.PromptTokensDetails; d != nil {
			a.usage.CachedTokens = min(d.CachedTokens, u.PromptTokens)
		}
	} else {
		done := estimateTokens(len(a.content) + len(ch.Message.ReasoningContent) + len(ch.Message.Reasoning))
		a.usage = Usage{PromptTokens: promptEst, CompletionTokens: done, TotalTokens: promptEst + done, Estimated: true}
	}
	return a, nil
}
