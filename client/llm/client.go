package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultService        = "llm"
	defaultConcurrency    = 4
	defaultTimeout        = 10 * time.Minute
	defaultInvalidRetries = 2
	// DefaultAttemptTimeout bounds one HTTP attempt when
	// Config.AttemptTimeout is zero: long enough for a slow generation,
	// short enough that a hung attempt leaves time for a retry.
	DefaultAttemptTimeout = 5 * time.Minute
	// DefaultAnthropicVersion is the anthropic-version header sent.
	DefaultAnthropicVersion = "2023-06-01"
	defaultEnvelopeRetries  = 3
	defaultEnvelopeWait     = time.Second
	maxEnvelopeWait         = 30 * time.Second
	defaultDrainGrace       = time.Minute
	// defaultFollowUpAnswer bounds the bytes of an invalid answer quoted
	// back in a follow-up; a longer one is cut with a note.
	defaultFollowUpAnswer = 16 << 10
	// defaultCompletionReserve is charged against the token budget for the
	// answer of a request without MaxTokens, until the real usage is known.
	defaultCompletionReserve = 1024
	// defaultAnthropicMaxTokens is sent when a request has no MaxTokens:
	// the Messages API requires one.
	defaultAnthropicMaxTokens = 4096
	// messageOverhead approximates the tokens a chat template adds per
	// message.
	messageOverhead = 4
	// maxMessageLen bounds the server error text put into an APIError.
	maxMessageLen = 300
	// minSecretLen matches httpx: shorter keys ("EMPTY", "none") are
	// placeholders for local servers, not secrets worth scrubbing.
	minSecretLen = 6
)

// Providers: the API protocol a Client speaks.
const (
	ProviderOpenAI     = "openai"     // OpenAI's chat completions
	ProviderAnthropic  = "anthropic"  // Anthropic's native Messages API
	ProviderCompatible = "compatible" // an OpenAI-compatible server: vLLM, Ollama, llama.cpp, LiteLLM
)

// Providers lists the provider names.
func Providers() []string { return []string{ProviderOpenAI, ProviderAnthropic, ProviderCompatible} }

// ErrDrained is returned by a call abandoned because the run is stopping
// (Config.Drain): it did not fail, it was not finished.
var ErrDrained = errors.New("llm call abandoned: the run is stopping")

// Config configures a Client.
type Config struct {
	// Service is the name of the httpx service the Client sends through
	// (default "llm"); ServiceConfig builds it.
	Service string
	// BaseURL is the API root including its version path, e.g.
	// "https://api.openai.com/v1", "https://api.anthropic.com/v1" or
	// "http://127.0.0.1:8000/v1" (curate's --llm-base). For Anthropic a
	// root without /v1 gets it added.
	BaseURL string
	// Provider is the protocol: ProviderOpenAI, ProviderAnthropic or
	// ProviderCompatible; "" infers it from BaseURL (see InferProvider).
	Provider string
	// Dialect is what the endpoint accepts as structured output; ""
	// infers it from the provider and BaseURL (see InferDialect).
	Dialect Dialect
	// Model is the model name sent with every request (--llm-model).
	Model string
	// APIKey is sent as "Authorization: Bearer …" (Anthropic: x-api-key)
	// when not empty; local servers need none. It is secret: see
	// ServiceConfig.
	APIKey string
	// AnthropicVersion is the anthropic-version header (default
	// DefaultAnthropicVersion).
	AnthropicVersion string
	// StructuredOutput sends the request's schema as the endpoint's
	// structured output (see Dialect), in the mode the model table gives
	// the model. A mode the endpoint refuses with a 400 (a model the table
	// does not know) is learned, for that schema or for every schema as
	// the refusal says, kept in the store, and the next mode taken, down
	// to the schema as an instruction in the system prompt. Answers are
	// validated either way.
	StructuredOutput bool
	// Models is the model table (nil: DefaultModels()): what the model
	// takes (sampling parameters, the name of the answer limit, the
	// structured-output mode), its least cacheable prefix, context window
	// and largest output. Nothing the table says the model refuses is
	// sent.
	Models *Models
	// FallbackModel, when set, answers a request the model refused to
	// answer (a refusal stop reason), once, on the same endpoint.
	FallbackModel string
	// Prices, when set, price the model for the prompt cache's choices
	// (whether marking a block pays) ahead of the table's price.
	Prices Prices
	// NoPromptCache leaves out Anthropic's cache_control breakpoints and
	// OpenAI's prompt_cache_key (OpenAI's automatic prefix cache cannot be
	// turned off).
	NoPromptCache bool
	// PromptCacheTTL is Anthropic's cache lifetime: "5m", "1h", or "" for
	// five minutes in sync mode and an hour for batch lines (requests in
	// a batch may run an hour apart; Anthropic suggests the hour for
	// batches). Writes are priced by lifetime.
	PromptCacheTTL string
	// Concurrency caps the requests in flight (default 4).
	Concurrency int
	// RequestsPerMinute paces request starts, retries included; 0 keeps
	// the httpx service's own interval. After 429s the pace slows down and
	// then recovers towards this rate.
	RequestsPerMinute int
	// TokensPerMinute caps prompt plus completion tokens; 0 means no cap.
	// Each request is charged its estimated prompt tokens plus MaxTokens
	// before it is sent, and corrected by the reported usage after. The
	// provider's rate-limit headers, when it sends them, hold requests
	// back too.
	TokensPerMinute int
	// Timeout bounds one logical call from its first attempt: HTTP
	// retries, retries of broken answers and follow-ups included, not the
	// waits for a concurrency slot or tokens (default 10 min).
	Timeout time.Duration
	// AttemptTimeout bounds one HTTP attempt, so that a hung or trickling
	// answer is retried within Timeout (default DefaultAttemptTimeout). It
	// takes effect through ServiceConfig.
	AttemptTimeout time.Duration
	// EnvelopeRetries is how often a 200 answer whose body is not the
	// API's JSON (an HTML page from a proxy, a cut body, an error object)
	// is asked again, like a 5xx (default 3; negative: never).
	EnvelopeRetries int
	// EnvelopeWait is the first wait before such a retry, doubled each
	// time (default 1s).
	EnvelopeWait time.Duration
	// InvalidRetries is how many follow-ups an invalid answer gets before
	// the request fails with an *InvalidError (default 2; negative: none).
	InvalidRetries int
	// FollowUpAnswerBytes bounds how much of an invalid answer is quoted
	// back in a follow-up (default 16 KiB); the rest is cut with a note.
	FollowUpAnswerBytes int
	// Drain, when closed, stops the Client from starting retries and
	// follow-ups, and abandons calls still running DrainGrace later
	// (default 1 min) with ErrDrained: the first Ctrl-C ends in bounded
	// time even when the endpoint is failing.
	Drain      <-chan struct{}
	DrainGrace time.Duration
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

// APIKeyForProvider returns the key for provider: ANTHROPIC_API_KEY for
// Anthropic, else LLM_API_KEY, else OPENAI_API_KEY (APIKeyFromEnv).
func APIKeyForProvider(provider string, getenv func(string) string) string {
	if provider == ProviderAnthropic {
		if k := strings.TrimSpace(getenv("ANTHROPIC_API_KEY")); k != "" {
			return k
		}
		return strings.TrimSpace(getenv("LLM_API_KEY"))
	}
	return APIKeyFromEnv(getenv)
}

// InferProvider names the provider of a base URL: Anthropic's and
// OpenAI's own hosts, else compatible.
func InferProvider(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return ProviderCompatible
	}
	h := strings.ToLower(u.Hostname())
	switch {
	case h == "api.anthropic.com" || strings.HasSuffix(h, ".anthropic.com"):
		return ProviderAnthropic
	case h == "api.openai.com" || strings.HasSuffix(h, ".openai.azure.com"):
		return ProviderOpenAI
	}
	return ProviderCompatible
}

// InferDialect returns the structured-output dialect of an endpoint: the
// provider's own for OpenAI and Anthropic; for compatible servers Ollama
// on its port 11434, else the generic OpenAI-compatible one.
func InferDialect(provider, baseURL string) Dialect {
	switch provider {
	case ProviderOpenAI:
		return DialectOpenAI
	case ProviderAnthropic:
		return DialectAnthropic
	}
	if u, err := url.Parse(baseURL); err == nil && u.Port() == "11434" {
		return DialectOllama
	}
	return DialectCompatible
}

func (cfg Config) provider() string { return cmp.Or(cfg.Provider, InferProvider(cfg.BaseURL)) }

// ServiceConfig returns the httpx service for cfg, to pass to httpx.New.
// The API key travels only as its secret header (Authorization, or
// x-api-key for Anthropic), which httpx sends to the endpoint's own origin
// and never logs.
func (cfg Config) ServiceConfig() httpx.ServiceConfig {
	sc := httpx.ServiceConfig{
		Name:    cmp.Or(cfg.Service, DefaultService),
		BaseURL: cfg.BaseURL,
		Timeout: cmp.Or(cfg.AttemptTimeout, DefaultAttemptTimeout),
		// The call's deadline (Timeout) spans the attempts; a hung
		// attempt is retried within it.
		TimeoutPerAttempt: true,
	}
	p := cfg.provider()
	if p == ProviderAnthropic && sc.BaseURL != "" && !strings.HasSuffix(strings.TrimRight(sc.BaseURL, "/"), "/v1") {
		sc.BaseURL = strings.TrimRight(sc.BaseURL, "/") + "/v1"
	}
	if cfg.APIKey != "" {
		if p == ProviderAnthropic {
			sc.Header = http.Header{"X-Api-Key": {cfg.APIKey}}
		} else {
			sc.Header = http.Header{"Authorization": {"Bearer " + cfg.APIKey}}
		}
	}
	return sc
}

// Client calls one model on one endpoint. It is safe for concurrent use.
type Client struct {
	cfg   Config // defaults applied
	proto protocol
	svc   *httpx.Service
	log   *slog.Logger
	meter *Meter
	slots chan struct{}
	tpm   *tokenBudget // nil: no token cap
	pace  *pacer
	room  *headroom
	// rules are what the model takes: the table's row and what the
	// endpoint was found to refuse (see adapt).
	rules *rules
	// fallback answers what the model refused to (Config.FallbackModel);
	// nil without one.
	fallback *Client
}

// New returns a Client that sends through the service cfg.Service of hc,
// which should have been configured with cfg.ServiceConfig().
func New(hc *httpx.Client, cfg Config) (*Client, error) {
	cfg.Service = cmp.Or(cfg.Service, DefaultService)
	svc, err := hc.Service(cfg.Service)
	if err != nil {
		return nil, fmt.Errorf("new llm client: %w", err)
	}
	cfg.Provider = cfg.provider()
	switch {
	case strings.TrimSpace(cfg.Model) == "":
		return nil, errors.New("new llm client: no model given")
	case IsHeuristic(cfg.Model):
		return nil, fmt.Errorf("new llm client: %q names the heuristic backend, not an endpoint model", cfg.Model)
	case cfg.Concurrency < 0 || cfg.RequestsPerMinute < 0 || cfg.TokensPerMinute < 0 || cfg.Timeout < 0 ||
		cfg.AttemptTimeout < 0 || cfg.DrainGrace < 0 || cfg.EnvelopeWait < 0 || cfg.FollowUpAnswerBytes < 0:
		return nil, errors.New("new llm client: negative concurrency, rate, timeout, wait or size")
	case cfg.Provider != ProviderOpenAI && cfg.Provider != ProviderAnthropic && cfg.Provider != ProviderCompatible:
		return nil, fmt.Errorf("new llm client: provider %q: want openai, anthropic or compatible", cfg.Provider)
	case cfg.PromptCacheTTL != "" && cfg.PromptCacheTTL != "5m" && cfg.PromptCacheTTL != "1h":
		return nil, fmt.Errorf("new llm client: prompt cache ttl %q: want 5m or 1h", cfg.PromptCacheTTL)
	}
	if cfg.Dialect == "" {
		cfg.Dialect = InferDialect(cfg.Provider, cfg.BaseURL)
	}
	if !validDialect(cfg.Dialect) {
		return nil, fmt.Errorf("new llm client: dialect %q: want one of %v", cfg.Dialect, Dialects())
	}
	cfg.Concurrency = cmp.Or(cfg.Concurrency, defaultConcurrency)
	cfg.Timeout = cmp.Or(cfg.Timeout, defaultTimeout)
	cfg.AnthropicVersion = cmp.Or(cfg.AnthropicVersion, DefaultAnthropicVersion)
	cfg.EnvelopeWait = cmp.Or(cfg.EnvelopeWait, defaultEnvelopeWait)
	cfg.DrainGrace = cmp.Or(cfg.DrainGrace, defaultDrainGrace)
	cfg.FollowUpAnswerBytes = cmp.Or(cfg.FollowUpAnswerBytes, defaultFollowUpAnswer)
	switch {
	case cfg.InvalidRetries == 0:
		cfg.InvalidRetries = defaultInvalidRetries
	case cfg.InvalidRetries < 0:
		cfg.InvalidRetries = 0
	}
	switch {
	case cfg.EnvelopeRetries == 0:
		cfg.EnvelopeRetries = defaultEnvelopeRetries
	case cfg.EnvelopeRetries < 0:
		cfg.EnvelopeRetries = 0
	}
	c := &Client{
		cfg:   cfg,
		svc:   svc,
		log:   cfg.Logger,
		meter: cfg.Meter,
		slots: make(chan struct{}, cfg.Concurrency),
		room:  newHeadroom(time.Now),
	}
	if cfg.Provider == ProviderAnthropic {
		c.proto = anthropicProtocol{}
	} else {
		c.proto = chatProtocol{}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.log = c.log.With(slog.String("service", svc.Name()), slog.String("model", cfg.Model))
	if c.cfg.Models == nil {
		c.cfg.Models = DefaultModels()
	}
	c.rules = newRules(cfg.Provider, cfg.Model, c.cfg.Models.Lookup(cfg.Provider, cfg.Model), cfg.Store, c.log)
	if c.meter == nil {
		c.meter = new(Meter)
	}
	if cfg.TokensPerMinute > 0 {
		c.tpm = newTokenBudget(cfg.TokensPerMinute, time.Now)
	}
	if cfg.RequestsPerMinute > 0 {
		svc.SetInterval(time.Minute / time.Duration(cfg.RequestsPerMinute))
	}
	// The pacer works on configured spacings; httpx keeps each with its
	// margin.
	c.pace = &pacer{base: svc.Configured(), seen: svc.Stats().Status429, get: svc.Configured, set: svc.SetInterval}
	if fb := strings.TrimSpace(cfg.FallbackModel); fb != "" && fb != cfg.Model {
		// The fallback shares the endpoint, its limits and the meter.
		f := *c
		f.cfg.Model, f.cfg.FallbackModel = fb, ""
		f.log = c.log.With(slog.String("fallback_for", cfg.Model), slog.String("model", fb))
		f.rules = newRules(cfg.Provider, fb, c.cfg.Models.Lookup(cfg.Provider, fb), cfg.Store, f.log)
		c.fallback = &f
	}
	return c, nil
}

// Row returns the model table's row the Client follows.
func (c *Client) Row() Model { return c.rules.row }

// Body returns the body of req's first request as the Client would send
// it (a batch line's when batch), without sending it: for curate models
// to show what goes to a model.
func (c *Client) Body(ctx context.Context, req Request, batch bool) ([]byte, error) {
	c.rules.load(ctx)
	rd := round{mode: c.formatFor(&req), limit: c.rules.firstLimit(&req), batch: batch}
	body, est, err := c.proto.encode(c, &req, nil, rd)
	if err != nil {
		return nil, err
	}
	if fit, ferr := c.rules.fit(req.Stage, est, rd.limit); ferr == nil && fit != rd.limit {
		rd.limit = fit
		body, _, err = c.proto.encode(c, &req, nil, rd)
	}
	return body, err
}

// Learned returns what the endpoint was found to refuse of the model, in
// this run or an earlier one (kept in the store).
func (c *Client) Learned(ctx context.Context) record.ModelRefusals {
	c.rules.load(ctx)
	return c.rules.snapshot()
}

// price is the model's price: Config.Prices', else the table's; nil when
// neither has one.
func (c *Client) price() *Price {
	if p, ok := c.cfg.Prices.Lookup(c.cfg.Model); ok {
		return &p
	}
	return c.rules.row.Price
}

func validDialect(d Dialect) bool {
	for _, x := range Dialects() {
		if d == x {
			return true
		}
	}
	return false
}

var _ Completer = (*Client)(nil)

// Model returns the configured model name.
func (c *Client) Model() string { return c.cfg.Model }

// Provider returns the protocol the Client speaks.
func (c *Client) Provider() string { return c.cfg.Provider }

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
// Config.InvalidRetries times, and then returned as an *InvalidError; an
// answer cut at its limit is asked again with a larger limit, up to the
// model's largest output. A refusal is a *RefusalError (asked once of
// Config.FallbackModel when there is one), a prompt past the context
// window a *ContextWindowError. Non-retryable error statuses come back as
// *APIError, retryable ones that persisted as *httpx.StatusError. Only
// usable answers are cached.
func (c *Client) Complete(ctx context.Context, req Request) (*Response, error) {
	if err := checkRequest(&req); err != nil {
		return nil, err
	}
	cr := newCacheRequest(c.cfg.Model, &req)
	key := cr.key()
	if c.cfg.Store != nil {
		if r := c.fromCache(ctx, c.cfg.Store, key, &req); r != nil {
			c.meter.add(req.Stage, c.cfg.Model, r.Usage, fromCache, false)
			c.log.Debug("llm answer from cache", "stage", req.Stage, "prompt_version", req.PromptVersion, "cache_key", key)
			return r, nil
		}
	}
	r, err := c.ask(ctx, &req, false)
	var re *RefusalError
	if errors.As(err, &re) && c.fallback != nil {
		c.log.Warn("llm model refused to answer; asking the fallback model", "stage", req.Stage, "fallback", c.fallback.cfg.Model, "refusal", clip(re.Message, 200))
		r, err = c.fallback.ask(ctx, &req, false)
	}
	if err != nil {
		return nil, err
	}
	if c.cfg.Store != nil {
		c.cachePut(ctx, c.cfg.Store, key, cr, r)
	}
	return r, nil
}

// ask asks the model for req until its answer is usable or the retries
// are spent; batch sends it as a batch's lines would be (the warm-up of a
// batch's shared prefix: the same cache lifetime).
func (c *Client) ask(ctx context.Context, req *Request, batch bool) (*Response, error) {
	c.rules.load(ctx)
	cl := &call{}
	var (
		total  Usage
		conv   []chatMessage // follow-up rounds after the first answer
		first  = c.rules.firstLimit(req)
		limit  = first
		raises = 0
		follow = 0
	)
	for attempt := 1; ; attempt++ {
		a, err := c.exchange(ctx, cl, req, conv, limit, batch)
		if a != nil {
			total = total.Add(a.usage)
		}
		if err != nil {
			c.meter.add(req.Stage, c.cfg.Model, total, failed, false)
			return nil, err
		}
		if err := stopError(req, c.cfg.Model, a); err != nil {
			c.meter.add(req.Stage, c.cfg.Model, total, failed, false)
			c.log.Warn("llm answer ended without one", "stage", req.Stage, "err", err)
			return nil, err
		}
		if a.finish == finishLength {
			if next, ok := c.rules.raise(limit, first); ok && raises < maxLimitRaises && !c.draining() {
				c.log.Warn("llm answer cut at its limit; asking again with a larger one", "stage", req.Stage, "limit", limit, "now", next)
				limit, raises = next, raises+1
				continue
			}
		}
		r, reason := judge(req, a, limit)
		if reason == "" {
			r.Usage, r.Attempts = total, attempt
			c.meter.add(req.Stage, c.cfg.Model, total, answered, false)
			c.log.Debug("llm answer", "stage", req.Stage, "prompt_version", req.PromptVersion,
				"attempts", attempt, "prompt_tokens", total.PromptTokens, "cached_tokens", total.CachedTokens,
				"completion_tokens", total.CompletionTokens, "estimated", total.Estimated)
			return r, nil
		}
		if follow >= c.cfg.InvalidRetries || a.finish == finishLength || c.draining() {
			c.meter.add(req.Stage, c.cfg.Model, total, invalid, false)
			c.log.Warn("llm answer invalid, giving up", "stage", req.Stage, "attempts", attempt, "reason", clip(reason, 300))
			return nil, &InvalidError{Stage: req.Stage, Model: c.cfg.Model, Attempts: attempt, Reason: reason, Raw: a.content}
		}
		follow++
		c.log.Warn("llm answer invalid, asking again", "stage", req.Stage, "attempt", attempt, "reason", clip(reason, 300))
		conv = append(conv, followUpTurns(req, cmp.Or(a.answer, a.content), reason, c.cfg.FollowUpAnswerBytes)...)
	}
}

// stopError is the error of an answer that ended without one: the model
// refused, or the context window ended it.
func stopError(req *Request, model string, a *answer) error {
	switch {
	case a.finish == finishContextWindow:
		return &ContextWindowError{Stage: req.Stage, Model: model, Message: "the model stopped at the end of its context window (stop_reason model_context_window_exceeded)"}
	case a.refusal != "" && strings.TrimSpace(a.answer) == "":
		return &RefusalError{Stage: req.Stage, Model: model, Message: a.refusal}
	}
	return nil
}

// call is the state of one logical call across its rounds.
type call struct {
	deadline time.Time // set when the first attempt starts
}

func (c *Client) draining() bool {
	if c.cfg.Drain == nil {
		return false
	}
	select {
	case <-c.cfg.Drain:
		return true
	default:
		return false
	}
}

func checkRequest(req *Request) error {
	switch {
	case req.Stage == "":
		return errors.New("llm: request without a stage")
	case req.PromptVersion == "":
		return fmt.Errorf("llm %s: request without a prompt version", req.Stage)
	case strings.TrimSpace(req.User) == "" && strings.TrimSpace(req.Paper) == "":
		return fmt.Errorf("llm %s: request with an empty user prompt", req.Stage)
	case req.MaxTokens < 0:
		return fmt.Errorf("llm %s: negative max tokens %d", req.Stage, req.MaxTokens)
	}
	return nil
}

// fromCache returns the cached answer to req if there is one that still
// passes the schema and the validator.
func (c *Client) fromCache(ctx context.Context, st *store.Store, key string, req *Request) *Response {
	e := c.cacheGet(ctx, st, key)
	if e == nil {
		return nil
	}
	if req.wantJSON() {
		if _, reason := checkJSON(req, e.Response.JSON); reason != "" {
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
	content   string // message content as sent (a tool's input as JSON)
	answer    string // content after a leading <think> block
	reasoning string
	refusal   string
	finish    string // finishStop, finishLength, finishContextWindow, or the server's word
	model     string
	usage     Usage
}

// How an answer ended.
const (
	finishStop          = "stop"
	finishLength        = "length"         // cut at the answer limit (Anthropic's max_tokens)
	finishContextWindow = "context_window" // cut at the end of the context window
)

// judge turns an answer into a Response, or says why it is unusable;
// limit is the answer limit it was asked with.
func judge(req *Request, a *answer, limit int) (*Response, string) {
	switch {
	case a.finish == finishLength:
		if limit > 0 {
			return nil, fmt.Sprintf("the answer was cut off at the largest output allowed (%d tokens)", limit)
		}
		return nil, "the answer was cut off at the token limit (finish_reason length)"
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
	doc, reason := checkJSON(req, doc)
	if reason != "" {
		return nil, reason
	}
	r.JSON = doc
	return r, ""
}

// checkJSON applies the schema and the validator to a JSON answer. It
// returns the answer with the nulls strict mode puts in optional
// properties removed.
func checkJSON(req *Request, doc json.RawMessage) (json.RawMessage, string) {
	if len(doc) == 0 {
		return nil, "the answer is not JSON"
	}
	if req.Schema != nil {
		doc = req.Schema.normalize(doc)
		if err := req.Schema.Validate(doc); err != nil {
			return nil, "the answer does not match the JSON schema: " + err.Error()
		}
	}
	if req.Validate != nil {
		if err := req.Validate(doc); err != nil {
			return nil, "the answer failed validation: " + err.Error()
		}
	}
	return doc, ""
}

// followUpTurns are the two messages after an unusable answer: the answer
// (cut when huge: the model needs its start and the reason, not 20 MB
// back) and what was wrong with it.
func followUpTurns(req *Request, prev, reason string, limit int) []chatMessage {
	note := ""
	if len(prev) > limit {
		head, tail := limit*3/4, limit/4
		for head > 0 && !utf8Start(prev[head]) {
			head--
		}
		start := len(prev) - tail
		for start < len(prev) && !utf8Start(prev[start]) {
			start++
		}
		prev = prev[:head] + fmt.Sprintf("\n[… %d bytes of this answer left out …]\n", start-head) + prev[start:]
		note = fmt.Sprintf("\n(Your previous answer was %d bytes long; only its start and end are quoted above.)", len(prev)+start-head)
	}
	return []chatMessage{
		{Role: "assistant", Content: prev},
		{Role: "user", Content: followUp(req, reason) + note},
	}
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func followUp(req *Request, reason string) string {
	if req.wantJSON() {
		return "Your previous answer could not be used: " + reason +
			"\nAnswer again with the complete, corrected JSON and nothing else."
	}
	return "Your previous answer could not be used: " + reason + "\nAnswer again."
}

// jsonInstruction is added to the system prompt when the schema cannot go
// as structured output.
func jsonInstruction(s *Schema) string {
	if s == nil {
		return "Answer with a single JSON value and nothing else: no prose, no code fence."
	}
	return "Answer with a single JSON value that conforms to the JSON schema below, and nothing else: no prose, no code fence.\nJSON schema \"" +
		s.name + "\":\n" + string(s.raw)
}

// formatMode is how one round asks for structured output.
type formatMode int

const (
	formatNone        formatMode = iota // plain text, or JSON asked for in the prompt
	formatSchema                        // the endpoint's schema field (response_format, output_config)
	formatToolStrict                    // Anthropic: a strict tool the model must call
	formatTool                          // Anthropic: a forced tool without strict (models before 4.5)
	formatInstruction                   // the schema as an instruction in the system prompt
)

// formatFor returns the mode of req's next round: the first the model
// table gives the model that the endpoint has not refused.
func (c *Client) formatFor(req *Request) formatMode {
	if req.Schema == nil {
		if req.wantJSON() {
			return formatInstruction
		}
		return formatNone
	}
	if !c.cfg.StructuredOutput {
		return formatInstruction
	}
	for _, m := range c.proto.modes(c) {
		if !c.rules.refused(req.Schema.name, m) {
			return m
		}
	}
	return formatInstruction
}

// system returns the system prompt for a round in mode m.
func system(req *Request, m formatMode) string {
	if m == formatInstruction {
		return strings.TrimSpace(req.System + "\n\n" + jsonInstruction(req.Schema))
	}
	return req.System
}

// round is how one round is sent.
type round struct {
	mode  formatMode
	limit int  // the answer limit, 0 for none
	batch bool // a batch line: the hour-long prompt cache by default
}

// exchange sends one round and reads the answer. When the endpoint refuses
// a part of the request it has a substitute for, the Client learns that
// (see adapt) and sends the round again; each refusal is learned once, so
// this ends. An answer whose envelope is broken is asked again after a
// pause, a few times.
func (c *Client) exchange(ctx context.Context, cl *call, req *Request, conv []chatMessage, limit int, batch bool) (*answer, error) {
	broken := 0
	for {
		rd := round{mode: c.formatFor(req), limit: limit, batch: batch}
		body, promptEst, err := c.proto.encode(c, req, conv, rd)
		if err != nil {
			return nil, fmt.Errorf("llm %s: encode request: %w", req.Stage, err)
		}
		if fit, err := c.rules.fit(req.Stage, promptEst, rd.limit); err != nil {
			return nil, err
		} else if fit != rd.limit {
			rd.limit, limit = fit, fit
			if body, promptEst, err = c.proto.encode(c, req, conv, rd); err != nil {
				return nil, fmt.Errorf("llm %s: encode request: %w", req.Stage, err)
			}
		}
		a, err := c.send(ctx, cl, req, body, promptEst, rd.limit)
		var ae *APIError
		if errors.As(err, &ae) {
			switch next, retry, werr := c.adapt(ctx, req, rd, ae); {
			case werr != nil:
				return nil, werr
			case retry:
				limit = next
				continue
			}
		}
		var be *envelopeError
		if errors.As(err, &be) && broken < c.cfg.EnvelopeRetries && !c.draining() {
			broken++
			wait := jitter(c.cfg.EnvelopeWait, broken)
			c.log.Warn("llm answer envelope broken; asking again", "stage", req.Stage, "retry", broken, "wait", wait, "err", clip(be.Error(), 200))
			if err := sleep(ctx, cl, wait); err != nil {
				return nil, fmt.Errorf("llm %s: %s with %s: %w (after: %w)", req.Stage, c.proto.what(), c.cfg.Model, err, be)
			}
			continue
		}
		return a, err
	}
}

// jitter is base·2ⁿ⁻¹ stretched by up to half again, capped.
func jitter(base time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < maxEnvelopeWait; i++ {
		d *= 2
	}
	d += rand.N(d/2 + 1)
	return min(d, maxEnvelopeWait)
}

// sleep waits d unless ctx ends or the call's deadline would pass.
func sleep(ctx context.Context, cl *call, d time.Duration) error {
	if !cl.deadline.IsZero() && time.Now().Add(d).After(cl.deadline) {
		return fmt.Errorf("no time left for a retry: %w", context.DeadlineExceeded)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// adapt reacts to a 400 that names a part of the request: a
// structured-output mode the endpoint refuses is replaced by the next one
// (for that schema, or for every schema when the refusal is about the
// model), a temperature the model does not take is left out, max_tokens
// becomes max_completion_tokens, and a limit that takes the prompt past
// the context window is lowered; each is learned and kept in the store.
// It returns the limit to send and whether to send again, or the error a
// context window refusal is.
func (c *Client) adapt(ctx context.Context, req *Request, rd round, e *APIError) (limit int, retry bool, err error) {
	if !badRequest(e) {
		return rd.limit, false, nil
	}
	m := strings.ToLower(e.Message)
	if ok, window, prompt, fit := contextWindow(e.Message); ok {
		if fit > 0 && fit < rd.limit {
			c.log.Warn("llm answer limit takes the prompt past the context window; lowering it", "stage", req.Stage, "limit", rd.limit, "now", fit)
			return fit, true, nil
		}
		return rd.limit, false, &ContextWindowError{Stage: req.Stage, Model: c.cfg.Model, Window: window, Prompt: prompt, Message: e.Message}
	}
	if n, ok := outputCap(e.Message); ok && rd.limit > n {
		c.log.Warn("llm answer limit above the model's largest output; lowering it", "stage", req.Stage, "limit", rd.limit, "now", n)
		return n, true, nil
	}
	r := c.rules
	switch {
	case (rd.mode == formatSchema || rd.mode == formatToolStrict || rd.mode == formatTool) && c.proto.formatRejected(m, rd.mode):
		scope := req.Schema.name
		if aboutModel(m) {
			scope = "*"
		}
		r.refuseFormat(ctx, scope, rd.mode, e)
		return rd.limit, true, nil
	case strings.Contains(m, "temperature") && r.temperature():
		return rd.limit, r.learn(ctx, "temperature", e, func(x *refusals) bool {
			if x.NoTemperature {
				return false
			}
			x.NoTemperature = true
			return true
		}), nil
	case rd.limit > 0 && strings.Contains(m, "max_completion_tokens") && !r.maxCompletion():
		return rd.limit, r.learn(ctx, "max_tokens", e, func(x *refusals) bool {
			if x.MaxCompletionTokens {
				return false
			}
			x.MaxCompletionTokens = true
			return true
		}), nil
	}
	return rd.limit, false, nil
}

// aboutModel reports whether a refusal of structured output is about the
// model ("does not support …") rather than about one schema.
func aboutModel(msg string) bool {
	for _, w := range []string{"does not support", "not supported for", "not supported with this model", "not available for"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// send posts one request under the concurrency and token limits.
func (c *Client) send(ctx context.Context, cl *call, req *Request, body []byte, promptEst int64, limit int) (*answer, error) {
	charge := promptEst + int64(cmp.Or(limit, defaultCompletionReserve))

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
	if err := c.room.wait(ctx, charge); err != nil {
		return nil, fmt.Errorf("llm %s: wait for the provider's rate limit to reset: %w", req.Stage, err)
	}
	if cl.deadline.IsZero() {
		cl.deadline = time.Now().Add(c.cfg.Timeout)
	}

	cctx, cancel := context.WithDeadline(ctx, cl.deadline)
	stop := c.onDrain(cancel)
	resp, err := c.svc.Do(cctx, httpx.Request{
		Method: http.MethodPost,
		Path:   c.proto.path(),
		Body:   body,
		Header: c.proto.header(c),
	})
	drained := stop()
	cancel()
	if d := c.pace.observe(c.svc.Stats().Status429); d > 0 {
		c.log.Warn("llm endpoint answered 429; slowing down", "interval", d)
	}
	if resp != nil {
		c.room.observe(resp.Header)
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
		if drained && ctx.Err() == nil {
			return nil, fmt.Errorf("llm %s: %s with %s: %w", req.Stage, c.proto.what(), c.cfg.Model, ErrDrained)
		}
		var se *httpx.StatusError
		if errors.As(err, &se) {
			se.Body = []byte(c.scrub(string(se.Body)))
			if se.RetryAfter > 0 {
				// httpx gave up on a wait longer than its clamp: the other
				// calls of this Client hold back instead of meeting the
				// same answer.
				c.room.pause(se.RetryAfter)
				c.log.Warn("llm endpoint asks to wait; holding every call back", "retry_after", se.RetryAfter)
			}
			if se.Status == statusOverloaded {
				return nil, fmt.Errorf("llm %s: %s with %s: overloaded: %w", req.Stage, c.proto.what(), c.cfg.Model, err)
			}
		}
		var ae *APIError
		if errors.As(err, &ae) {
			return nil, err
		}
		return nil, fmt.Errorf("llm %s: %s with %s: %w", req.Stage, c.proto.what(), c.cfg.Model, err)
	}
	return a, nil
}

// statusOverloaded is Anthropic's 529: retried like a 5xx by httpx.
const statusOverloaded = 529

// onDrain arranges for cancel to run DrainGrace after Config.Drain closes.
// The returned stop ends that and reports whether it fired.
func (c *Client) onDrain(cancel context.CancelFunc) (stop func() bool) {
	if c.cfg.Drain == nil {
		return func() bool { return false }
	}
	done := make(chan struct{})
	var fired atomic.Bool
	go func() {
		select {
		case <-c.cfg.Drain:
		case <-done:
			return
		}
		t := time.NewTimer(c.cfg.DrainGrace)
		defer t.Stop()
		select {
		case <-t.C:
			fired.Store(true)
			cancel()
		case <-done:
		}
	}()
	return func() bool {
		close(done)
		return fired.Load()
	}
}

// envelopeError is a 2xx answer that is not the API's JSON: retried like a
// server error.
type envelopeError struct{ err error }

func (e *envelopeError) Error() string { return "broken answer envelope: " + e.err.Error() }
func (e *envelopeError) Unwrap() error { return e.err }

// read decodes a response.
func (c *Client) read(req *Request, resp *httpx.Response, promptEst int64) (*answer, error) {
	if resp.Status < 200 || resp.Status > 299 {
		return nil, &APIError{
			Stage: req.Stage, Model: c.cfg.Model, Status: resp.Status, What: c.proto.what(),
			Message: clip(c.scrub(errorMessage(resp.Body)), maxMessageLen),
		}
	}
	a, err := c.proto.decode(c, resp.Body, promptEst)
	if err != nil {
		return nil, &envelopeError{err}
	}
	return a, nil
}

// scrub removes the API key from text that came from the server, which may
// quote it back ("Incorrect API key provided: sk-…").
func (c *Client) scrub(s string) string {
	if k := c.cfg.APIKey; len(k) >= minSecretLen {
		s = strings.ReplaceAll(s, k, "REDACTED")
	}
	return s
}
