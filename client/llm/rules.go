package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// rules is what a Client sends to its model: the model table's row, and
// what the endpoint refused at run time of a model the table does not
// know, learned once and kept in the store (record.ModelRefusalSets), so
// that neither a later run nor the next batch sends it again.
type rules struct {
	provider, model string
	row             Model
	st              *store.Store
	log             *slog.Logger

	once sync.Once
	mu   sync.Mutex
	r    refusals
}

func newRules(provider, model string, row Model, st *store.Store, log *slog.Logger) *rules {
	return &rules{provider: provider, model: model, row: row, st: st, log: log,
		r: refusals{Provider: provider, Model: model}}
}

// load reads what earlier runs learned, once.
func (r *rules) load(ctx context.Context) {
	r.once.Do(func() {
		if r.st == nil {
			return
		}
		got, ok, err := record.ModelRefusalSets.Lookup(ctx, r.st, ModelRefusalsItem(r.provider, r.model))
		if err != nil {
			r.log.Warn("llm: what the endpoint refused before is unreadable; learning it again", "err", err)
			return
		}
		if ok {
			r.mu.Lock()
			r.r = *got
			r.mu.Unlock()
		}
	})
}

// snapshot returns what is learned so far.
func (r *rules) snapshot() refusals {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.r
	out.Learned = slices.Clone(r.r.Learned)
	return out
}

// temperature reports whether a temperature may be sent.
func (r *rules) temperature() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.row.Takes("temperature") && !r.r.NoTemperature
}

// seed reports whether a seed may be sent.
func (r *rules) seed() bool { return r.row.Takes("seed") }

// maxCompletion reports whether the answer limit is max_completion_tokens.
func (r *rules) maxCompletion() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.row.TokenParam == tokenMaxCompletion || r.r.MaxCompletionTokens
}

// refused reports whether the endpoint refused mode m for schema.
func (r *rules) refused(schema string, m formatMode) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := r.modeName(m)
	return slices.Contains(r.r.Formats[schema], name) || slices.Contains(r.r.Formats["*"], name)
}

// modeName names a structured-output mode as the provider calls it.
func (r *rules) modeName(m formatMode) string {
	switch m {
	case formatSchema:
		if r.provider == ProviderAnthropic {
			return "output_config"
		}
		return "response_format"
	case formatToolStrict:
		return "strict tool"
	case formatTool:
		return "tool"
	case formatInstruction:
		return "instruction"
	}
	return "none"
}

// learn records a refusal: change applies it and reports whether it
// changed anything. What changed is written to the store (a failure to
// write is logged: the refusal is still applied in this process).
func (r *rules) learn(ctx context.Context, what string, e *APIError, change func(*refusals) bool) bool {
	r.mu.Lock()
	if !change(&r.r) {
		r.mu.Unlock()
		return false
	}
	r.r.Learned = append(r.r.Learned, record.ModelRefusal{What: what, Status: e.Status, Message: e.Message, At: time.Now().UTC()})
	snap := r.r
	snap.Learned = slices.Clone(r.r.Learned)
	r.mu.Unlock()
	msg := "llm endpoint refused part of the request; sending without it from now on, and keeping that in the store"
	if strings.Contains(what, " for schema ") {
		msg = "llm endpoint rejects the structured output; falling back to the next mode from now on, and keeping that in the store"
	}
	r.log.Warn(msg, "refused", what, "status", e.Status, "message", e.Message)
	if r.st != nil {
		if _, err := record.ModelRefusalSets.Put(context.WithoutCancel(ctx), r.st, ModelRefusalsItem(r.provider, r.model), &snap,
			map[string]string{"provider": r.provider, "model": r.model}); err != nil {
			r.log.Warn("llm: could not keep the refusal in the store; a later run learns it again", "err", err)
		}
	}
	return true
}

// refuseFormat learns that mode m is refused for schema ("*": all).
func (r *rules) refuseFormat(ctx context.Context, schema string, m formatMode, e *APIError) bool {
	name := r.modeName(m)
	return r.learn(ctx, name+" for schema "+schema, e, func(x *refusals) bool {
		if slices.Contains(x.Formats[schema], name) {
			return false
		}
		if x.Formats == nil {
			x.Formats = map[string][]string{}
		}
		x.Formats[schema] = append(x.Formats[schema], name)
		return true
	})
}

// Answer limits: the first limit of a request and how it grows.
const (
	// defaultAnswerLimit is sent to Anthropic (which requires one) when a
	// request names no limit.
	defaultAnswerLimit = 4096
	// unknownOutputRaises bounds the doublings of a limit for a model
	// whose largest output the table does not know.
	unknownOutputRaises = 2
	// maxLimitRaises bounds the retries of an answer cut at its limit
	// (doublings up to the largest output take fewer).
	maxLimitRaises = 16
)

// firstLimit is a request's first answer limit: what the stage asked (0:
// none, or Anthropic's required default), with room for the model's
// reasoning when it reasons (reasoning counts as output), within its
// largest output.
func (r *rules) firstLimit(req *Request) int {
	n := req.MaxTokens
	if n == 0 && r.provider == ProviderAnthropic {
		n = defaultAnswerLimit
	}
	if n == 0 {
		return 0
	}
	if r.row.Reasoning != "" {
		n += r.row.ReasoningTokens
	}
	if m := r.row.MaxOutput; m > 0 {
		n = min(n, m)
	}
	return n
}

// raise returns the limit after an answer was cut at limit (first being
// the first limit): doubled, up to the model's largest output (or a few
// doublings when the table does not know it), and false when it cannot
// grow.
func (r *rules) raise(limit, first int) (int, bool) {
	if limit <= 0 {
		return 0, false
	}
	ceiling := r.row.MaxOutput
	if ceiling <= 0 {
		ceiling = first << unknownOutputRaises
	}
	if limit >= ceiling {
		return limit, false
	}
	return min(2*limit, ceiling), true
}

// fit checks a round against the model's context window: a prompt that
// does not fit is a *ContextWindowError before anything is sent, and a
// limit that would take the window past its end is cut to what is left.
// Token counts are estimated (four bytes a token), so a prompt is only
// refused here when its estimate is past the window.
func (r *rules) fit(stage string, promptEst int64, limit int) (int, error) {
	w := int64(r.row.ContextWindow)
	if w <= 0 {
		return limit, nil
	}
	if promptEst >= w {
		return limit, &ContextWindowError{Stage: stage, Model: r.model, Window: int(w), Prompt: int(promptEst),
			Message: "the prompt is estimated past the model's context window"}
	}
	if limit > 0 && promptEst+int64(limit) > w {
		limit = int(w - promptEst)
	}
	return limit, nil
}

// RefusalError is a model's refusal to answer (Anthropic's stop_reason
// refusal, OpenAI's message refusal or content filter): a named failure of
// the item, not retried on the same model (--llm-fallback-model may ask
// another).
type RefusalError struct {
	Stage, Model string
	Message      string
}

func (e *RefusalError) Error() string {
	return fmt.Sprintf("llm %s: %s refused to answer: %s", e.Stage, e.Model, e.Message)
}

// ContextWindowError says a prompt did not fit the model's context
// window: the stage shortens its text and asks again. Window and Prompt
// are in tokens, 0 when the endpoint did not say.
type ContextWindowError struct {
	Stage, Model   string
	Window, Prompt int
	Message        string
}

func (e *ContextWindowError) Error() string {
	s := fmt.Sprintf("llm %s: the prompt does not fit the context window of %s", e.Stage, e.Model)
	if e.Window > 0 {
		s += fmt.Sprintf(" (%d tokens", e.Window)
		if e.Prompt > 0 {
			s += fmt.Sprintf(", prompt about %d", e.Prompt)
		}
		s += ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// ErrContextWindow matches every *ContextWindowError with errors.Is.
var ErrContextWindow = errors.New("the prompt does not fit the model's context window")

// Is makes errors.Is(err, ErrContextWindow) hold.
func (e *ContextWindowError) Is(target error) bool { return target == ErrContextWindow }

// The endpoints' words for a prompt past the context window: OpenAI's and
// vLLM's "maximum context length is N tokens … resulted in M tokens" (or
// "you requested M tokens"), Anthropic's "prompt is too long: M tokens >
// N maximum", llama.cpp's "exceeds the available context size".
var (
	windowOpenAI    = regexp.MustCompile(`maximum context length is (\d+) tokens.*?(?:resulted in|requested) (\d+) tokens`)
	windowAnthropic = regexp.MustCompile(`prompt is too long: (\d+) tokens > (\d+) maximum`)
	// Anthropic's for a prompt that fits and a max_tokens that takes it
	// past the window: the limit is lowered, not the prompt.
	windowLimit = regexp.MustCompile("input length and `?max_tokens`? exceed context limit: (\\d+) \\+ (\\d+) > (\\d+)")
)

// contextWindow reads a refusal for the context window: ok, the window
// and prompt tokens when said, and for Anthropic's limit case the limit
// that fits.
func contextWindow(msg string) (ok bool, window, prompt, fitLimit int) {
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	if m := windowLimit.FindStringSubmatch(msg); m != nil {
		in, w := atoi(m[1]), atoi(m[3])
		if in < w {
			return true, w, in, w - in
		}
		return true, w, in, 0
	}
	if m := windowOpenAI.FindStringSubmatch(msg); m != nil {
		return true, atoi(m[1]), atoi(m[2]), 0
	}
	if m := windowAnthropic.FindStringSubmatch(msg); m != nil {
		return true, atoi(m[2]), atoi(m[1]), 0
	}
	l := strings.ToLower(msg)
	for _, w := range []string{"context_length_exceeded", "maximum context length", "context window", "exceeds the available context size", "context length"} {
		if strings.Contains(l, w) {
			return true, 0, 0, 0
		}
	}
	return false, 0, 0, 0
}

// The endpoints' words for a limit above the model's largest output:
// OpenAI's "supports at most N completion tokens", Anthropic's
// "max_tokens: M > N, which is the maximum allowed".
var (
	outputOpenAI    = regexp.MustCompile(`supports at most (\d+) completion tokens`)
	outputAnthropic = regexp.MustCompile(`max_tokens: \d+ > (\d+), which is the maximum allowed`)
)

// outputCap reads a refusal of the answer limit: the largest it allows.
func outputCap(msg string) (int, bool) {
	for _, re := range []*regexp.Regexp{outputOpenAI, outputAnthropic} {
		if m := re.FindStringSubmatch(msg); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// badRequest reports whether e is a refusal of the request as sent.
func badRequest(e *APIError) bool {
	return e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity
}

// Cache lifetimes of Anthropic's prompt cache.
const (
	TTL5m = "5m"
	TTL1h = "1h"
)

// pays reports whether marking a prefix for the prompt cache pays: written
// once at the write price of ttl and read reads times at the cached
// price instead of the input price. Without a price Anthropic's
// multipliers are taken (write 1.25× or 2×, read 0.1×).
func (r *rules) pays(ttl string, reads int, price *Price) bool {
	p := Price{Input: 1, Output: 1, CachedInput: ptrTo(0.1)}
	if price != nil && price.Input > 0 {
		p = *price
	}
	write := p.cacheWrite()
	if ttl == TTL1h {
		write = p.cacheWrite1h()
	}
	return write-p.Input < float64(reads)*(p.Input-p.cachedInput())
}

func ptrTo(f float64) *float64 { return &f }

// CachePlan is how the provider's prompt cache serves a run's requests by
// the rules the request builder and the Batcher follow: what an estimate
// prices, so that it and the run agree.
type CachePlan struct {
	// Shared: the prefix every request shares (the system prompt with the
	// schema, and the worked examples when they are sent) is read from
	// the cache by all requests but the one that writes it. SharedTokens
	// is its size; SharedWrite the lifetime its write is priced at ("5m",
	// "1h", or "" for a cache that prices no writes).
	Shared       bool
	SharedTokens int64
	SharedWrite  string
	// Paper: a target's second call (its gold card) reads the paper its
	// first (classify) wrote, at PaperWrite's price.
	Paper      bool
	PaperWrite string
	// Ahead: one request of a batch is sent ahead at the sync price to
	// write the shared prefix (Anthropic's batches, whose requests do not
	// see each other's writes).
	Ahead bool
}

// CachePlan returns the plan for requests like req, in batch mode or not.
// OpenAI's batches are planned cold: its automatic cache keeps a prefix
// minutes, a batch runs within a day.
func (c *Client) CachePlan(req Request, batch bool) CachePlan {
	row := c.rules.row
	if c.cfg.NoPromptCache || row.Cache == CacheNone || row.Cache == "" {
		return CachePlan{}
	}
	rd := round{mode: c.formatFor(&req), limit: c.rules.firstLimit(&req), batch: batch}
	var plan CachePlan
	switch row.Cache {
	case CacheBreakpoints:
		_, plan.SharedTokens = c.proto.prefix(c, &req, rd)
		plan.Shared = plan.SharedTokens > 0 && c.reaches(plan.SharedTokens)
		plan.SharedWrite = c.cacheTTL(batch)
		plan.Ahead = batch && plan.Shared
		if c.rules.pays(c.cacheTTL(batch), 1, c.price()) {
			plan.Paper, plan.PaperWrite = true, c.cacheTTL(batch)
		}
	case CacheAutomatic:
		if batch {
			return CachePlan{}
		}
		cr := chatProtocol{}.request(c, &req, nil, rd)
		if len(cr.Messages) > 0 && cr.Messages[0].Role == "system" {
			plan.SharedTokens = estimateTokens(len(cr.Messages[0].Content)) + messageOverhead
		}
		if rf := cr.ResponseFormat; rf != nil && rf.JSONSchema != nil {
			plan.SharedTokens += estimateTokens(len(rf.JSONSchema.Schema))
		}
		plan.Shared = plan.SharedTokens >= int64(row.MinCachePrefix)
		plan.Paper = true
	}
	return plan
}
