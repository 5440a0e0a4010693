package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/groundwork/curate/httpx"
	"github.com/groundwork/curate/store"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultService        = "llm"
	defaultConcurrency    = 4
	defaultTimeout        = 10 * time.Minute
	defaultInvalidRetries = 2
	// defaultCompletionReserve is charged against the token budget for the
	// answer of a request without MaxTokens, until the real usage is known.
	defaultCompletionReserve = 1024
	// messageOverhead approximates the tokens a chat template adds per
	// message.
	messageOverhead = 4
	// maxMessageLen bounds the server error text put into an APIError.
	maxMessageLen = 300
	// minSecretLen matches httpx: shorter keys ("EMPTY", "none") are
	// placeholders for local servers, not secrets worth scrubbing.
	minSecretLen = 6
)

// Config configures a Client.
type Config struct {
	// Service is the name of the httpx service the Client sends through
	// (default "llm"); ServiceConfig builds it.
	Service string
	// BaseURL is the OpenAI-compatible API root including its version
	// path, e.g. "https://api.openai.com/v1" or "http://127.0.0.1:8000/v1"
	// (curate's --llm-base). Only ServiceConfig uses it.
	BaseURL string
	// Model is the model name sent with every request (--llm-model).
	Model string
	// APIKey is sent as "Authorization: Bearer …" when not empty (local
	// servers need none). It is secret: see ServiceConfig.
	APIKey string
	// StructuredOutput sends the request's schema as response_format
	// json_schema (strict). Servers that reject it with a 400 naming
	// response_format are remembered and get the schema as an instruction
	// in the system prompt instead. Answers are validated either way.
	StructuredOutput bool
	// Concurrency caps the chat requests in flight (default 4).
	Concurrency int
	// RequestsPerMinute paces request starts, retries included; 0 keeps
	// the httpx service's own interval. After 429s the pace slows down and
	// then recovers towards this rate.
	RequestsPerMinute int
	// TokensPerMinute caps prompt plus completion tokens; 0 means no cap.
	// Each request is charged its estimated prompt tokens plus MaxTokens
	// before it is sent, and corrected by the reported usage after.
	TokensPerMinute int
	// Timeout bounds one chat request, HTTP retries included, not the
	// waits for a concurrency slot or tokens (default 10 min). Note that
	// the httpx Client's per-attempt Timeout must also allow for slow
	// generations.
	Timeout time.Duration
	// InvalidRetries is how many follow-ups an invalid answer gets before
	// the request fails with an *InvalidError (default 2; negative: none).
	InvalidRetries int
	// Store holds the response cache; nil disables caching.
	Store *store.Store
	// Meter receives the usage of every request; nil gives the Client its
	// own (see Client.Meter).
	Meter *Meter
	// Logger receives Debug lines per request and Warn lines for invalid
	// answers, fallbacks and slow-downs; nil discards.
	Logger *slog.Logger
}

// APIKeyFromEnv returns the key in LLM_API_KEY, else in OPENAI_API_KEY,
// else "". getenv is os.Getenv outside tests.
func APIKeyFromEnv(getenv func(string) string) string {
	return cmp.Or(strings.TrimSpace(getenv("LLM_API_KEY")), strings.TrimSpace(getenv("OPENAI_API_KEY")))
}

// ServiceConfig returns the httpx service for cfg, to pass to httpx.New.
// The API key travels only as its secret Authorization header, which httpx
// sends to the endpoint's own origin and never logs.
func (cfg Config) ServiceConfig() httpx.ServiceConfig {
	sc := httpx.ServiceConfig{Name: cmp.Or(cfg.Service, DefaultService), BaseURL: cfg.BaseURL}
	if cfg.APIKey != "" {
		sc.Header = http.Header{"Authorization": {"Bearer " + cfg.APIKey}}
	}
	return sc
}

// Client calls one model on one OpenAI-compatible endpoint. It is safe for
// concurrent use.
type Client struct {
	cfg   Config // defaults applied
	svc   *httpx.Service
	log   *slog.Logger
	meter *Meter
	slots chan struct{}
	tpm   *tokenBudget // nil: no token cap
	pace  *pacer
	// What the endpoint was found to reject, see adapt.
	noFormat, maxCompletion atomic.Bool
}

// New returns a Client that sends through the service cfg.Service of hc,
// which should have been configured with cfg.ServiceConfig().
func New(hc *httpx.Client, cfg Config) (*Client, error) {
	cfg.Service = cmp.Or(cfg.Service, DefaultService)
	svc, err := hc.Service(cfg.Service)
	if err != nil {
		return nil, fmt.Errorf("new llm client: %w", err)
	}
	switch {
	case strings.TrimSpace(cfg.Model) == "":
		return nil, errors.New("new llm client: no model given")
	case IsHeuristic(cfg.Model):
		return nil, fmt.Errorf("new llm client: %q names the heuristic backend, not an endpoint model", cfg.Model)
	case cfg.Concurrency < 0 || cfg.RequestsPerMinute < 0 || cfg.TokensPerMinute < 0 || cfg.Timeout < 0:
		return nil, errors.New("new llm client: negative concurrency, rate or timeout")
	}
	cfg.Concurrency = cmp.Or(cfg.Concurrency, defaultConcurrency)
	cfg.Timeout = cmp.Or(cfg.Timeout, defaultTimeout)
	switch {
	case cfg.InvalidRetries == 0:
		cfg.InvalidRetries = defaultInvalidRetries
	case cfg.InvalidRetries < 0:
		cfg.InvalidRetries = 0
	}
	c := &Client{
		cfg:   cfg,
		svc:   svc,
		log:   cfg.Logger,
		meter: cfg.Meter,
		slots: make(chan struct{}, cfg.Concurrency),
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.log = c.log.With(slog.String("service", svc.Name()), slog.String("model", cfg.Model))
	if c.meter == nil {
		c.meter = new(Meter)
	}
	if cfg.TokensPerMinute > 0 {
		c.tpm = newTokenBudget(cfg.TokensPerMinute, time.Now)
	}
	if cfg.RequestsPerMinute > 0 {
		svc.SetInterval(time.Minute / time.Duration(cfg.RequestsPerMinute))
	}
	c.pace = &pacer{base: svc.Interval(), seen: svc.Stats().Status429, get: svc.Interval, set: svc.SetInterval}
	return c, nil
}

var _ Completer = (*Client)(nil)

// Model returns the configured model name.
func (c *Client) Model() string { return c.cfg.Model }

// Meter returns the Meter the Client records usage in.
func (c *Client) Meter() *Meter { return c.meter }

// Usage returns the usage so far summed per stage.
func (c *Client) Usage() map[string]Tally { return c.meter.ByStage() }

// CompleteJSON is Complete for a JSON answer that must pass validate (which
// may be nil when req.Schema says all there is to check).
func (c *Client) CompleteJSON(ctx context.Context, req Request, validate func(json.RawMessage) error) (*Response, error) {
	if validate != nil {
		req.Validate = validate
	}
	if !req.wantJSON() {
		req.Validate = func(json.RawMessage) error { return nil } // any JSON
	}
	return c.Complete(ctx, req)
}

// Complete answers req from the cache if an equal request was answered
// before, else from the endpoint. An answer that is unusable (see
// InvalidError) is retried with the reason as a follow-up message, at most
// Config.InvalidRetries times, and then returned as an *InvalidError.
// Non-retryable error statuses come back as *APIError, retryable ones that
// persisted as *httpx.StatusError. Only usable answers are cached.
func (c *Client) Complete(ctx context.Context, req Request) (*Response, error) {
	if err := checkRequest(&req); err != nil {
		return nil, err
	}
	cr := newCacheRequest(c.cfg.Model, &req)
	key := cr.key()
	if c.cfg.Store != nil {
		if r := c.fromCache(ctx, key, &req); r != nil {
			c.meter.add(req.Stage, c.cfg.Model, r.Usage, fromCache)
			c.log.Debug("llm answer from cache", "stage", req.Stage, "prompt_version", req.PromptVersion, "cache_key", key)
			return r, nil
		}
	}

	var (
		total Usage
		conv  []chatMessage // follow-up rounds after the first answer
	)
	for attempt := 1; ; attempt++ {
		a, err := c.exchange(ctx, &req, conv)
		if a != nil {
			total = total.Add(a.usage)
		}
		if err != nil {
			c.meter.add(req.Stage, c.cfg.Model, total, failed)
			return nil, err
		}
		r, reason := judge(&req, a)
		if reason == "" {
			r.Usage, r.Attempts = total, attempt
			c.meter.add(req.Stage, c.cfg.Model, total, answered)
			c.log.Debug("llm answer", "stage", req.Stage, "prompt_version", req.PromptVersion,
				"attempts", attempt, "prompt_tokens", total.PromptTokens,
				"completion_tokens", total.CompletionTokens, "estimated", total.Estimated)
			if c.cfg.Store != nil {
				c.cachePut(ctx, key, cr, r)
			}
			return r, nil
		}
		if attempt > c.cfg.InvalidRetries {
			c.meter.add(req.Stage, c.cfg.Model, total, invalid)
			c.log.Warn("llm answer invalid, giving up", "stage", req.Stage, "attempts", attempt, "reason", clip(reason, 300))
			return nil, &InvalidError{Stage: req.Stage, Model: c.cfg.Model, Attempts: attempt, Reason: reason, Raw: a.content}
		}
		c.log.Warn("llm answer invalid, asking again", "stage", req.Stage, "attempt", attempt, "reason", clip(reason, 300))
		conv = append(conv,
			chatMessage{Role: "assistant", Content: cmp.Or(a.answer, a.content)},
			chatMessage{Role: "user", Content: followUp(&req, reason)})
	}
}

func checkRequest(req *Request) error {
	switch {
	case req.Stage == "":
		return errors.New("llm: request without a stage")
	case req.PromptVersion == "":
		return fmt.Errorf("llm %s: request without a prompt version", req.Stage)
	case strings.TrimSpace(req.User) == "":
		return fmt.Errorf("llm %s: request with an empty user prompt", req.Stage)
	case req.MaxTokens < 0:
		return fmt.Errorf("llm %s: negative max tokens %d", req.Stage, req.MaxTokens)
	}
	return nil
}

// fromCache returns the cached answer to req if there is one that still
// passes the schema and the validator.
func (c *Client) fromCache(ctx context.Context, key string, req *Request) *Response {
	e := c.cacheGet(ctx, key)
	if e == nil {
		return nil
	}
	if req.wantJSON() {
		if reason := checkJSON(req, e.Response.JSON); reason != "" {
			c.log.Info("llm cached answer fails validation now; calling the model", "stage", req.Stage, "cache_key", key, "reason", clip(reason, 300))
			return nil
		}
	}
	return &Response{
		Text:      e.Response.Text,
		JSON:      e.Response.JSON,
		Reasoning: e.Response.Reasoning,
		Model:     e.Response.Model,
		Usage:     e.Response.Usage,
		Cached:    true,
		Attempts:  e.Response.Attempts,
	}
}

// answer is one round's reply from the endpoint.
type answer struct {
	content   string // message content as sent
	answer    string // content after a leading <think> block
	reasoning string
	refusal   string
	finish    string
	model     string
	usage     Usage
}

// judge turns an answer into a Response, or says why it is unusable.
func judge(req *Request, a *answer) (*Response, string) {
	switch {
	case a.refusal != "" && strings.TrimSpace(a.answer) == "":
		return nil, "the model refused: " + a.refusal
	case a.finish == "length":
		return nil, "the answer was cut off at the token limit (finish_reason length); answer more briefly"
	case strings.TrimSpace(a.answer) == "":
		return nil, "the answer is empty"
	}
	r := &Response{Text: a.answer, Reasoning: a.reasoning, Model: a.model}
	if !req.wantJSON() {
		return r, ""
	}
	doc, err := extractJSON(a.answer)
	if err != nil {
		return nil, err.Error()
	}
	if reason := checkJSON(req, doc); reason != "" {
		return nil, reason
	}
	r.JSON = doc
	return r, ""
}

// checkJSON applies the schema and the validator to a JSON answer.
func checkJSON(req *Request, doc json.RawMessage) string {
	if len(doc) == 0 {
		return "the answer is not JSON"
	}
	if req.Schema != nil {
		if err := req.Schema.Validate(doc); err != nil {
			return "the answer does not match the JSON schema: " + err.Error()
		}
	}
	if req.Validate != nil {
		if err := req.Validate(doc); err != nil {
			return "the answer failed validation: " + err.Error()
		}
	}
	return ""
}

func followUp(req *Request, reason string) string {
	if req.wantJSON() {
		return "Your previous answer could not be used: " + reason +
			"\nAnswer again with the complete, corrected JSON and nothing else."
	}
	return "Your previous answer could not be used: " + reason + "\nAnswer again."
}

// jsonInstruction is added to the system prompt when the schema cannot go
// as response_format.
func jsonInstruction(s *Schema) string {
	if s == nil {
		return "Answer with a single JSON value and nothing else: no prose, no code fence."
	}
	return "Answer with a single JSON value that conforms to the JSON schema below, and nothing else: no prose, no code fence.\nJSON schema \"" +
		s.name + "\":\n" + string(s.raw)
}

// chat builds the wire request for one round, shaped by what the
// endpoint has been found to accept.
func (c *Client) chat(req *Request, conv []chatMessage) *chatRequest {
	useFormat := c.useFormat(req)
	system := req.System
	if req.wantJSON() && !useFormat {
		system = strings.TrimSpace(system + "\n\n" + jsonInstruction(req.Schema))
	}
	msgs := make([]chatMessage, 0, 2+len(conv))
	if system != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: system})
	}
	msgs = append(msgs, chatMessage{Role: "user", Content: req.User})
	msgs = append(msgs, conv...)
	cr := &chatRequest{
		Model:       c.cfg.Model,
		Messages:    msgs,
		Temperature: req.Temperature,
		Seed:        req.Seed,
	}
	if c.maxCompletion.Load() {
		cr.MaxCompletionTokens = req.MaxTokens
	} else {
		cr.MaxTokens = req.MaxTokens
	}
	if useFormat {
		cr.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{
			Name: req.Schema.name, Schema: req.Schema.raw, Strict: true,
		}}
	}
	return cr
}

func (c *Client) useFormat(req *Request) bool {
	return c.cfg.StructuredOutput && req.Schema != nil && !c.noFormat.Load()
}

// exchange sends one round and reads the answer. When the endpoint rejects
// a parameter it has a substitute for, the Client remembers that and sends
// the round again; each adaptation happens once, so this ends.
func (c *Client) exchange(ctx context.Context, req *Request, conv []chatMessage) (*answer, error) {
	for {
		a, err := c.send(ctx, req, c.chat(req, conv))
		var ae *APIError
		if !errors.As(err, &ae) || !c.adapt(req, ae) {
			return a, err
		}
	}
}

// adapt reacts to a 400 that names a parameter: response_format (servers
// without structured output) is replaced by an instruction in the system
// prompt, max_tokens by max_completion_tokens (OpenAI's reasoning models).
// It reports whether the request should be sent again.
func (c *Client) adapt(req *Request, e *APIError) bool {
	if e.Status != http.StatusBadRequest && e.Status != http.StatusUnprocessableEntity {
		return false
	}
	m := strings.ToLower(e.Message)
	switch {
	case c.useFormat(req) && (strings.Contains(m, "response_format") || strings.Contains(m, "json_schema")):
		if !c.noFormat.Swap(true) {
			c.log.Warn("llm endpoint rejects response_format; sending the schema as an instruction from now on",
				"stage", req.Stage, "status", e.Status, "message", e.Message)
		}
		return true
	case req.MaxTokens > 0 && !c.maxCompletion.Load() && strings.Contains(m, "max_completion_tokens"):
		if !c.maxCompletion.Swap(true) {
			c.log.Warn("llm endpoint wants max_completion_tokens instead of max_tokens; using it from now on",
				"stage", req.Stage, "status", e.Status)
		}
		return true
	}
	return false
}

// send posts one chat request under the concurrency and token limits.
func (c *Client) send(ctx context.Context, req *Request, cr *chatRequest) (*answer, error) {
	body, err := json.Marshal(cr)
	if err != nil {
		return nil, fmt.Errorf("llm %s: encode chat request: %w", req.Stage, err)
	}
	promptEst := estimatePrompt(cr)
	charge := promptEst + int64(cmp.Or(req.MaxTokens, defaultCompletionReserve))

	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("llm %s: wait for a request slot: %w", req.Stage, ctx.Err())
	}
	defer func() { <-c.slots }()
	if c.tpm != nil {
		if err := c.tpm.take(ctx, charge); err != nil {
			return nil, fmt.Errorf("llm %s: wait for %d tokens of the per-minute budget: %w", req.Stage, charge, err)
		}
	}

	cctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	resp, err := c.svc.Do(cctx, httpx.Request{
		Method: http.MethodPost,
		Path:   "chat/completions",
		Body:   body,
		Header: http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}},
	})
	cancel()
	if d := c.pace.observe(c.svc.Stats().Status429); d > 0 {
		c.log.Warn("llm endpoint answered 429; slowing down", "interval", d)
	}

	var a *answer
	if err == nil {
		a, err = c.read(req, resp, promptEst)
	}
	if c.tpm != nil {
		used := int64(0)
		if a != nil {
			used = a.usage.TotalTokens
		}
		c.tpm.adjust(used - charge)
	}
	if err != nil {
		var se *httpx.StatusError
		if errors.As(err, &se) {
			se.Body = []byte(c.scrub(string(se.Body)))
		}
		var ae *APIError
		if errors.As(err, &ae) {
			return nil, err
		}
		return nil, fmt.Errorf("llm %s: chat completion with %s: %w", req.Stage, c.cfg.Model, err)
	}
	return a, nil
}

// read decodes a chat-completions response.
func (c *Client) read(req *Request, resp *httpx.Response, promptEst int64) (*answer, error) {
	if resp.Status < 200 || resp.Status > 299 {
		return nil, &APIError{
			Stage: req.Stage, Model: c.cfg.Model, Status: resp.Status,
			Message: clip(c.scrub(errorMessage(resp.Body)), maxMessageLen),
		}
	}
	var cr chatResponse
	if err := json.Unmarshal(resp.Body, &cr); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	if len(cr.Choices) == 0 {
		// Some proxies answer 200 with an error object.
		return nil, fmt.Errorf("response has no choices: %s", clip(c.scrub(errorMessage(resp.Body)), maxMessageLen))
	}
	ch := cr.Choices[0]
	// The model never sees the key, but a proxy that echoes the request
	// could put it into the content; scrubbed here, it cannot reach a
	// follow-up, the cache or an InvalidError.
	a := &answer{
		content: c.scrub(contentText(ch.Message.Content)),
		refusal: c.scrub(ch.Message.Refusal),
		finish:  ch.FinishReason,
		model:   cmp.Or(cr.Model, c.cfg.Model),
	}
	think, rest := splitThink(a.content)
	a.answer = rest
	a.reasoning = c.scrub(cmp.Or(ch.Message.ReasoningContent, ch.Message.Reasoning, think))
	if u := cr.Usage; u != nil && (u.PromptTokens > 0 || u.CompletionTokens > 0 || u.TotalTokens > 0) {
		a.usage = Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
		if a.usage.TotalTokens == 0 {
			a.usage.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
	} else {
		done := estimateTokens(len(a.content) + len(ch.Message.ReasoningContent) + len(ch.Message.Reasoning))
		a.usage = Usage{PromptTokens: promptEst, CompletionTokens: done, TotalTokens: promptEst + done, Estimated: true}
	}
	return a, nil
}

// estimatePrompt estimates the prompt tokens of a chat request.
func estimatePrompt(cr *chatRequest) int64 {
	n := int64(0)
	for _, m := range cr.Messages {
		n += estimateTokens(len(m.Content)) + messageOverhead
	}
	if cr.ResponseFormat != nil && cr.ResponseFormat.JSONSchema != nil {
		n += estimateTokens(len(cr.ResponseFormat.JSONSchema.Schema))
	}
	return n
}

// scrub removes the API key from text that came from the server, which may
// quote it back ("Incorrect API key provided: sk-…").
func (c *Client) scrub(s string) string {
	if k := c.cfg.APIKey; len(k) >= minSecretLen {
		s = strings.ReplaceAll(s, k, "REDACTED")
	}
	return s
}
