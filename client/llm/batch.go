package llm

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/groundwork/curate/store"
)

// Batch request and batch states in the store's batch ledger.
const (
	BatchSubmitting = "submitting" // written before the provider is asked
	BatchSubmitted  = "submitted"  // the provider has it
	BatchSucceeded  = "succeeded"  // an answer is in the ledger, not yet judged
	BatchErrored    = "errored"    // the provider could not answer it: resubmitted
	BatchExpired    = "expired"    // not done in the batch's window: resubmitted
	BatchCanceled   = "canceled"   // its batch was cancelled: resubmitted
	// BatchCollected is a batch whose results are all in the ledger.
	BatchCollected = "collected"
	// BatchFailed is a batch the provider refused as a whole.
	BatchFailed = "failed"
	// BatchRejected is a request whose batch the provider refused at
	// validation (or at submission, with a 4xx): kept with the reason and
	// not submitted again, since it would be refused again; a changed
	// request (another model, prompt or limit) is another request.
	BatchRejected = "rejected"
)

// Modes: how a run gets its answers.
const (
	ModeSync  = "sync"  // one request per answer, answered at once
	ModeBatch = "batch" // the provider's batch API, at the batch price, answered within its window
)

// Modes lists the modes.
func Modes() []string { return []string{ModeSync, ModeBatch} }

// HasBatchAPI reports whether provider offers a batch API a Batcher
// speaks (OpenAI's Batch API, Anthropic's Message Batches).
func HasBatchAPI(provider string) bool {
	return provider == ProviderOpenAI || provider == ProviderAnthropic
}

// ErrPending says an answer is not there yet: its request waits in a batch.
var ErrPending = errors.New("llm answer pending in a batch")

// PendingError is what Batcher.Complete returns for a request whose answer
// is not there yet. errors.Is(err, ErrPending) holds. The stage records
// the item as pending (not failed) and asks again on a later pass or run.
type PendingError struct {
	Stage string
	Key   string // the request's cache key
	State string // "queued" (not submitted yet), or a batch request state
	Batch string // the batch's id in the ledger; "" while queued
}

func (e *PendingError) Error() string {
	if e.Batch == "" {
		return fmt.Sprintf("llm %s: answer pending: request queued for the next batch", e.Stage)
	}
	return fmt.Sprintf("llm %s: answer pending: request %s in batch %s", e.Stage, e.State, e.Batch)
}

// Is makes errors.Is(err, ErrPending) hold.
func (e *PendingError) Is(target error) bool { return target == ErrPending }

// BatchConfig configures a Batcher.
type BatchConfig struct {
	// Store holds the batch ledger and the answers; required (it is also
	// the Client's response cache, when the Client has one).
	Store *store.Store
	// PollInterval is the least time between two looks at one batch
	// (default 30s); Wait sleeps this long between rounds.
	PollInterval time.Duration
	// MaxRequests and MaxBytes split submissions below the provider's
	// limits (defaults: OpenAI 50,000 lines and 200 MB a file, Anthropic
	// 100,000 requests and 256 MB a batch).
	MaxRequests int
	MaxBytes    int64
	// FlushBytes submits the queue as soon as it holds this many bytes of
	// requests (default DefaultFlushBytes, at most MaxBytes), so that a
	// run of papers' full texts never holds more than that in memory.
	FlushBytes int64
	// Budget is checked before each submission, with the submission's
	// estimated cost at the batch price added to what was spent.
	Budget Budget
	// MaxEnqueuedTokens is the provider's limit on the input tokens of one
	// model's batches that are pending (OpenAI's batch queue limit, which
	// depends on the account's tier); 0 sets none. A submission that would
	// pass it waits, queued, until earlier batches end: a batch past the
	// limit is refused by the provider as a whole.
	MaxEnqueuedTokens int64
}

// ErrQueueFull means requests wait for earlier batches to end before the
// provider's queue limit (BatchConfig.MaxEnqueuedTokens) takes them.
var ErrQueueFull = errors.New("the provider's batch queue limit is reached")

// Provider limits of a batch.
const (
	OpenAIBatchMaxRequests    = 50_000
	OpenAIBatchMaxBytes       = 200 << 20
	AnthropicBatchMaxRequests = 100_000
	AnthropicBatchMaxBytes    = 256 << 20
	defaultPollInterval       = 30 * time.Second
	// DefaultFlushBytes is BatchConfig.FlushBytes's default: some
	// thousand requests over full papers.
	DefaultFlushBytes = 32 << 20
)

// Batcher answers requests through the provider's batch API at the batch
// price. It is a Completer whose Complete returns a *PendingError until
// the answer is there:
//
//   - The first Complete of a request queues it (in memory). Flush, or a
//     queue that reaches the provider's limits, submits the queue as
//     batches; each batch and each request's state is recorded in the
//     store before and after the provider is asked.
//   - A later Complete of the same request (same cache key), in this
//     process or another one, finds it in the ledger; Poll (or Complete,
//     at most once a PollInterval per batch) collects the results of
//     ended batches into the ledger, matched by custom_id.
//   - An answer that passes the request's schema and validator is cached
//     like a synchronous one and returned; an invalid one gets its
//     follow-up queued for the next batch, up to the Client's
//     InvalidRetries; errored, expired and cancelled requests are queued
//     again. Nothing that the provider answered is ever submitted again.
//
// A process may exit with batches pending; the next one resumes them
// from the ledger, including a submission cut short by a crash (found by
// its id among the provider's batches).
type Batcher struct {
	c   *Client
	st  *store.Store
	api batchAPI
	cfg BatchConfig

	flushMu   sync.Mutex // one submission at a time
	mu        sync.Mutex
	queue     map[string]*queued // by key
	queuedB   int64              // bytes of the queue's lines
	polled    map[string]time.Time
	collected atomic.Int64 // batches this Batcher collected
	// outstanding are the estimates of the requests this Batcher
	// submitted whose answers are not metered yet: the budget counts
	// them as spent.
	outstanding map[string]Usage
	// warmed are the shared prefixes a request sent ahead wrote to the
	// prompt cache, and when.
	warmed map[string]time.Time
}

type queued struct {
	key, stage string
	round      int
	line       []byte // the provider's request, ready to send
	estimate   Usage  // for the budget
	conv       batchConv
	req        Request // for a warm-up sent ahead of its batch
	// prefix names the cached prefix the request shares with others (its
	// system prompt, schema and tools), prefixTokens its estimated size;
	// "" when nothing of it is marked for the cache.
	prefix       string
	prefixTokens int64
}

// batchConv is what a request carries from one round to the next.
type batchConv struct {
	Turns []chatMessage `json:"turns,omitempty"`
	Usage Usage         `json:"usage"`
	// MaxTokens is the answer limit of the next round after an answer was
	// cut at its limit; 0 is the first limit.
	MaxTokens int `json:"max_tokens,omitempty"`
}

// BatchRejectedError is a request whose batch the provider refused at
// validation: a named failure, not submitted again.
type BatchRejectedError struct {
	Stage, Batch, Reason string
}

func (e *BatchRejectedError) Error() string {
	return fmt.Sprintf("llm %s: the provider rejected batch %s and its requests are not submitted again: %s", e.Stage, e.Batch, e.Reason)
}

// NewBatcher returns a Batcher over c, whose provider must have a batch
// API (OpenAI or Anthropic).
func NewBatcher(c *Client, cfg BatchConfig) (*Batcher, error) {
	if cfg.Store == nil {
		return nil, errors.New("new llm batcher: no store for the batch ledger")
	}
	b := &Batcher{c: c, st: cfg.Store, cfg: cfg, queue: map[string]*queued{}, polled: map[string]time.Time{}, outstanding: map[string]Usage{},
		warmed: map[string]time.Time{}}
	switch c.cfg.provider() {
	case ProviderOpenAI:
		b.api = &openAIBatchAPI{c: c}
		b.cfg.MaxRequests = cmp.Or(cfg.MaxRequests, OpenAIBatchMaxRequests)
		b.cfg.MaxBytes = cmp.Or(cfg.MaxBytes, OpenAIBatchMaxBytes)
	case ProviderAnthropic:
		b.api = &anthropicBatchAPI{c: c}
		b.cfg.MaxRequests = cmp.Or(cfg.MaxRequests, AnthropicBatchMaxRequests)
		b.cfg.MaxBytes = cmp.Or(cfg.MaxBytes, AnthropicBatchMaxBytes)
	default:
		return nil, fmt.Errorf("new llm batcher: provider %q has no batch API (openai or anthropic)", c.cfg.provider())
	}
	b.cfg.PollInterval = cmp.Or(cfg.PollInterval, defaultPollInterval)
	b.cfg.FlushBytes = min(cmp.Or(cfg.FlushBytes, DefaultFlushBytes), b.cfg.MaxBytes)
	return b, nil
}

var _ Completer = (*Batcher)(nil)

// Model returns the Client's model.
func (b *Batcher) Model() string { return b.c.Model() }

// CompleteJSON is Complete with a validator, as *Client offers it.
func (b *Batcher) CompleteJSON(ctx context.Context, req Request, validate func(json.RawMessage) error) (*Response, error) {
	if validate != nil {
		req.Validate = validate
	}
	if !req.wantJSON() {
		req.Validate = func(json.RawMessage) error { return nil }
	}
	return b.Complete(ctx, req)
}

// customID names a request's round in a batch: the providers allow 64
// characters of [A-Za-z0-9_-].
func customID(key string, round int) string { return fmt.Sprintf("%s-r%d", key[:48], round) }

// Complete returns the answer to req if it is cached or collected, else
// queues or leaves it in its batch and returns a *PendingError.
func (b *Batcher) Complete(ctx context.Context, req Request) (*Response, error) {
	if err := checkRequest(&req); err != nil {
		return nil, err
	}
	c := b.c
	c.rules.load(ctx)
	cr := newCacheRequest(c.cfg.Model, &req)
	key := cr.key()
	if r := c.fromCache(ctx, b.st, key, &req); r != nil {
		c.meter.add(req.Stage, c.cfg.Model, r.Usage, fromCache, false)
		return r, nil
	}
	b.mu.Lock()
	_, inQueue := b.queue[key]
	b.mu.Unlock()
	if inQueue {
		return nil, &PendingError{Stage: req.Stage, Key: key, State: "queued"}
	}
	row, err := b.st.BatchRequest(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, b.enqueue(ctx, &req, key, 0, batchConv{})
	}
	if err != nil {
		return nil, fmt.Errorf("llm %s: %w", req.Stage, err)
	}
	if row.State == BatchSubmitting || row.State == BatchSubmitted {
		if err := b.pollBatch(ctx, row.Batch, false); err != nil {
			c.log.Warn("llm batch poll failed", "batch", row.Batch, "err", err)
		}
		if row, err = b.st.BatchRequest(ctx, key); err != nil {
			if errors.Is(err, store.ErrNotFound) { // a submission found never made
				return nil, b.enqueue(ctx, &req, key, 0, batchConv{})
			}
			return nil, fmt.Errorf("llm %s: %w", req.Stage, err)
		}
	}
	if row.State != BatchSubmitting && row.State != BatchSubmitted {
		b.mu.Lock()
		delete(b.outstanding, key) // its answer (or error) is in: metered below, or asked again
		b.mu.Unlock()
	}
	var conv batchConv
	if len(row.Conv) > 0 {
		if err := json.Unmarshal(row.Conv, &conv); err != nil {
			return nil, fmt.Errorf("llm %s: batch request %s: conversation: %w", req.Stage, key, err)
		}
	}
	switch row.State {
	case BatchSubmitting, BatchSubmitted:
		return nil, &PendingError{Stage: req.Stage, Key: key, State: row.State, Batch: row.Batch}
	case BatchRejected:
		// Kept in the ledger, so that no later run submits it again.
		return nil, &BatchRejectedError{Stage: req.Stage, Batch: row.Batch, Reason: row.Error}
	case BatchErrored, BatchExpired, BatchCanceled:
		if ae := lineAPIError(&req, c, row); ae != nil {
			// The endpoint refused the request itself: sent again as it
			// is, it would be refused again. What the model refused is
			// learned as in sync mode (and kept in the store for the
			// next batch); anything else is the request's failure.
			ok, err := b.adaptLine(ctx, &req, &conv, ae)
			if !ok {
				if err := b.st.DeleteBatchRequests(ctx, key); err != nil {
					c.log.Warn("llm batch ledger cleanup failed", "key", key, "err", err)
				}
				c.meter.add(req.Stage, c.cfg.Model, conv.Usage, failed, true)
				if err != nil {
					return nil, err
				}
				return nil, ae
			}
		}
		c.log.Info("llm batch request resubmitted", "stage", req.Stage, "state", row.State, "error", row.Error)
		return nil, b.enqueue(ctx, &req, key, row.Round, conv)
	case BatchSucceeded:
		return b.judge(ctx, &req, key, cr, row, conv)
	}
	return nil, fmt.Errorf("llm %s: batch request %s in unknown state %q", req.Stage, key, row.State)
}

// adaptLine is Client.adapt for a refused batch line: another line of the
// same batch may have made the adaptation already. It reports whether the
// request goes again (conv's limit changed where the context window asked
// for a lower one), or the error it ends with.
func (b *Batcher) adaptLine(ctx context.Context, req *Request, conv *batchConv, ae *APIError) (bool, error) {
	c := b.c
	rd := round{mode: c.formatFor(req), limit: cmp.Or(conv.MaxTokens, c.rules.firstLimit(req)), batch: true}
	next, retry, err := c.adapt(ctx, req, rd, ae)
	switch {
	case err != nil:
		return false, err
	case retry:
		if next != rd.limit {
			conv.MaxTokens = next
		}
		return true, nil
	}
	m := strings.ToLower(ae.Message)
	if req.Schema != nil {
		for _, mode := range []formatMode{formatSchema, formatToolStrict, formatTool} {
			if c.rules.refused(req.Schema.name, mode) && c.proto.formatRejected(m, mode) {
				return true, nil
			}
		}
	}
	switch {
	case strings.Contains(m, "temperature") && !c.rules.temperature():
		return true, nil
	case strings.Contains(m, "max_completion_tokens") && c.rules.maxCompletion():
		return true, nil
	}
	return false, nil
}

// lineAPIError returns the error of a batch line the endpoint refused
// with a status that asking again does not change (400, 404, 422, ...),
// or nil for a line worth resubmitting (a 5xx, a 429, an expiry).
func lineAPIError(req *Request, c *Client, row store.BatchRequest) *APIError {
	if row.State != BatchErrored {
		return nil
	}
	var status int
	var msg string
	if _, err := fmt.Sscanf(row.Error, "status %d:", &status); err != nil {
		return nil
	}
	switch {
	case status < 400 || status > 499, status == 408, status == 409, status == 429:
		return nil
	}
	_, msg, _ = strings.Cut(row.Error, ": ")
	return &APIError{Stage: req.Stage, Model: c.cfg.Model, Status: status, Message: msg, What: "batch " + c.proto.what()}
}

// judge reads a collected answer.
func (b *Batcher) judge(ctx context.Context, req *Request, key string, cr cacheRequest, row store.BatchRequest, conv batchConv) (*Response, error) {
	c := b.c
	a, err := c.proto.decode(c, row.Result, 0)
	if err != nil {
		// Not the API's answer: ask again, as a broken envelope is.
		return nil, b.enqueue(ctx, req, key, row.Round, conv)
	}
	total := conv.Usage.Add(a.usage)
	attempt := row.Round + 1
	drop := func() {
		if err := b.st.DeleteBatchRequests(ctx, key); err != nil {
			c.log.Warn("llm batch ledger cleanup failed", "key", key, "err", err)
		}
	}
	if err := stopError(req, c.cfg.Model, a); err != nil {
		c.meter.add(req.Stage, c.cfg.Model, total, failed, true)
		drop()
		var re *RefusalError
		if errors.As(err, &re) && c.fallback != nil {
			// Refusals are rare: the fallback answers at once rather than
			// in another batch.
			c.log.Warn("llm model refused to answer in a batch; asking the fallback model", "stage", req.Stage, "fallback", c.fallback.cfg.Model)
			r, ferr := c.fallback.ask(ctx, req, false)
			if ferr != nil {
				return nil, ferr
			}
			c.cachePut(ctx, b.st, key, cr, r)
			return r, nil
		}
		return nil, err
	}
	first := c.rules.firstLimit(req)
	limit := cmp.Or(conv.MaxTokens, first)
	if a.finish == finishLength {
		if next, ok := c.rules.raise(limit, first); ok && row.Round < c.cfg.InvalidRetries+maxLimitRaises {
			c.log.Warn("llm batch answer cut at its limit; asked again with a larger one in the next batch", "stage", req.Stage, "limit", limit, "now", next)
			conv.Usage, conv.MaxTokens = total, next
			return nil, b.enqueue(ctx, req, key, row.Round+1, conv)
		}
	}
	r, reason := judge(req, a, limit)
	if reason == "" {
		r.Usage, r.Attempts = total, attempt
		c.meter.add(req.Stage, c.cfg.Model, total, answered, true)
		c.cachePut(ctx, b.st, key, cr, r)
		drop()
		return r, nil
	}
	if len(conv.Turns)/2 >= c.cfg.InvalidRetries || a.finish == finishLength {
		c.meter.add(req.Stage, c.cfg.Model, total, invalid, true)
		drop()
		return nil, &InvalidError{Stage: req.Stage, Model: c.cfg.Model, Attempts: attempt, Reason: reason, Raw: a.content}
	}
	c.log.Warn("llm batch answer invalid, follow-up queued", "stage", req.Stage, "attempt", attempt, "reason", clip(reason, 300))
	conv.Turns = append(conv.Turns, followUpTurns(req, cmp.Or(a.answer, a.content), reason, c.cfg.FollowUpAnswerBytes)...)
	conv.Usage = total
	return nil, b.enqueue(ctx, req, key, row.Round+1, conv)
}

// enqueue queues a round of req and returns the PendingError saying so;
// a full queue is submitted at once.
func (b *Batcher) enqueue(ctx context.Context, req *Request, key string, rnd int, conv batchConv) error {
	c := b.c
	rd := round{mode: c.formatFor(req), limit: cmp.Or(conv.MaxTokens, c.rules.firstLimit(req)), batch: true}
	body, promptEst, err := c.proto.encode(c, req, conv.Turns, rd)
	if err != nil {
		return fmt.Errorf("llm %s: encode request: %w", req.Stage, err)
	}
	if fit, err := c.rules.fit(req.Stage, promptEst, rd.limit); err != nil {
		return err
	} else if fit != rd.limit {
		rd.limit, conv.MaxTokens = fit, fit
		if body, promptEst, err = c.proto.encode(c, req, conv.Turns, rd); err != nil {
			return fmt.Errorf("llm %s: encode request: %w", req.Stage, err)
		}
	}
	line, err := b.api.line(customID(key, rnd), body)
	if err != nil {
		return fmt.Errorf("llm %s: batch line: %w", req.Stage, err)
	}
	// The budget sees a follow-up's earlier rounds too: their tokens are
	// spent but metered only with the last answer.
	est := conv.Usage.Add(Usage{PromptTokens: promptEst, CompletionTokens: int64(cmp.Or(rd.limit, defaultCompletionReserve))})
	prefix, prefixTokens := c.proto.prefix(c, req, rd)
	b.mu.Lock()
	if old := b.queue[key]; old != nil {
		b.queuedB -= int64(len(old.line))
	}
	b.queue[key] = &queued{key: key, stage: req.Stage, round: rnd, line: line, estimate: est, conv: conv, req: *req,
		prefix: prefix, prefixTokens: prefixTokens}
	b.queuedB += int64(len(line))
	full := len(b.queue) >= b.cfg.MaxRequests || b.queuedB >= b.cfg.FlushBytes
	b.mu.Unlock()
	if full {
		if err := b.Flush(ctx); err != nil {
			c.log.Warn("llm batch submission failed; the requests stay queued", "err", err)
		}
	}
	return &PendingError{Stage: req.Stage, Key: key, State: "queued"}
}

// Collected returns the number of batches this Batcher has collected:
// when it grew, requests that were pending may have answers now.
func (b *Batcher) Collected() int64 { return b.collected.Load() }

// Queued returns the number of requests waiting for the next submission.
func (b *Batcher) Queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// Flush submits the queued requests, split into batches at the
// provider's limits, after checking the budget: what was spent, what is
// submitted and not answered yet, and the new batch's estimated cost at
// the batch price. When the budget cannot take all of them, the requests
// it can take are submitted and the error wraps ErrBudget. Requests whose
// submission failed or did not fit stay queued (until the process ends:
// the next run queues them again).
func (b *Batcher) Flush(ctx context.Context) error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	b.mu.Lock()
	all := make([]*queued, 0, len(b.queue))
	for _, q := range b.queue {
		all = append(all, q)
	}
	b.mu.Unlock()
	slices.SortFunc(all, func(x, y *queued) int { return cmp.Compare(x.key, y.key) })
	enqueued, err := b.enqueuedTokens(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, chunk := range b.split(all) {
		fit, err := b.fitBudget(chunk)
		if fit == 0 {
			return errors.Join(append(errs, err)...)
		}
		if fit < len(chunk) {
			chunk = chunk[:fit]
			errs = append(errs, err)
		}
		if n, err := b.fitQueue(chunk, enqueued); n < len(chunk) {
			if n == 0 {
				return errors.Join(append(errs, err)...)
			}
			chunk = chunk[:n]
			errs = append(errs, err)
		}
		enqueued += chunkInputTokens(chunk)
		if chunk = b.warm(ctx, chunk); len(chunk) == 0 {
			continue
		}
		if err := b.submit(ctx, chunk); err != nil {
			errs = append(errs, err)
			continue
		}
		b.mu.Lock()
		for _, q := range chunk {
			if b.queue[q.key] == q {
				delete(b.queue, q.key)
				b.queuedB -= int64(len(q.line))
			}
			b.outstanding[q.key] = q.estimate
		}
		b.mu.Unlock()
		if len(errs) > 0 && (errors.Is(errs[len(errs)-1], ErrBudget) || errors.Is(errs[len(errs)-1], ErrQueueFull)) {
			break // the budget or the queue is full: the later chunks do not fit either
		}
	}
	return errors.Join(errs...)
}

// warmMargin is taken off a cache lifetime before a prefix sent ahead is
// taken to have expired: a batch may start a while after it is submitted.
const warmMargin = 10 * time.Minute

// warm sends ahead, synchronously, one request of each group of a chunk
// that shares a prefix marked for the prompt cache, when that pays: the
// requests of one batch run in parallel and do not see each other's cache
// writes, so without it each writes the prefix. The request sent ahead is
// answered as in sync mode (at the sync price, cached like any answer)
// and leaves the chunk; the others read the prefix from the cache. Only
// Anthropic is warmed: OpenAI's automatic cache lives minutes, not the
// hours a batch may wait.
func (b *Batcher) warm(ctx context.Context, chunk []*queued) []*queued {
	c := b.c
	if c.cfg.Provider != ProviderAnthropic || c.cfg.NoPromptCache || c.rules.row.Cache != CacheBreakpoints {
		return chunk
	}
	ttl := time.Hour
	if c.cacheTTL(true) == TTL5m {
		ttl = 5 * time.Minute
	}
	groups := map[string][]int{}
	var order []string
	for i, q := range chunk {
		if q.prefix == "" || !c.reaches(q.prefixTokens) || q.round > 0 {
			continue
		}
		if _, ok := groups[q.prefix]; !ok {
			order = append(order, q.prefix)
		}
		groups[q.prefix] = append(groups[q.prefix], i)
	}
	sent := map[int]bool{}
	for _, prefix := range order {
		idx := groups[prefix]
		b.mu.Lock()
		at, ok := b.warmed[prefix]
		b.mu.Unlock()
		if ok && time.Since(at) < ttl-min(warmMargin, ttl/2) {
			continue // still in the cache
		}
		q := chunk[idx[0]]
		if !warmPays(len(idx), q, c.price(), c.cacheTTL(true)) {
			continue
		}
		r, err := c.ask(ctx, &q.req, true)
		if err != nil {
			c.log.Warn("llm request sent ahead of its batch failed; it goes in the batch", "stage", q.stage, "err", err)
			continue
		}
		c.cachePut(ctx, b.st, q.key, newCacheRequest(c.cfg.Model, &q.req), r)
		c.log.Info("llm request sent ahead of its batch to write the shared prefix to the prompt cache", "stage", q.stage,
			"requests", len(idx), "prefix_tokens", q.prefixTokens)
		b.mu.Lock()
		b.warmed[prefix] = time.Now()
		if b.queue[q.key] == q {
			delete(b.queue, q.key)
			b.queuedB -= int64(len(q.line))
		}
		b.mu.Unlock()
		sent[idx[0]] = true
	}
	if len(sent) == 0 {
		return chunk
	}
	out := chunk[:0:0]
	for i, q := range chunk {
		if !sent[i] {
			out = append(out, q)
		}
	}
	return out
}

// warmPays reports whether sending one of n requests that share a prefix
// ahead of their batch costs less than the batch alone: in a cold batch
// every request writes the prefix; sent ahead, one writes it at the sync
// price (the rest of that request costs the sync price too) and the
// others read it. Without a price Anthropic's multipliers are taken.
func warmPays(n int, q *queued, price *Price, ttl string) bool {
	if n < 2 {
		return false
	}
	p := Price{Input: 1, Output: 5, CachedInput: ptrTo(0.1)}
	if price != nil && price.Input > 0 {
		p = *price
	}
	write := p.cacheWrite()
	if ttl == TTL1h {
		write = p.cacheWrite1h()
	}
	f := p.batch()
	pre := float64(q.prefixTokens)
	rest := float64(max(q.estimate.PromptTokens-q.prefixTokens, 0))
	out := float64(q.estimate.CompletionTokens) / 4 // answers rarely reach their limit
	cold := float64(n) * pre * write * f
	ahead := pre*write + (rest*p.Input+out*p.Output)*(1-f) + float64(n-1)*pre*p.cachedInput()*f
	return ahead < cold
}

// split cuts the queue into batches below the request and byte limits.
func (b *Batcher) split(all []*queued) [][]*queued {
	var out [][]*queued
	var cur []*queued
	var size int64
	for _, q := range all {
		n := int64(len(q.line)) + 64 // separators and the batch envelope
		if len(cur) > 0 && (len(cur) >= b.cfg.MaxRequests || size+n > b.cfg.MaxBytes) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, q)
		size += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// fitBudget returns how many of chunk's requests, in order, the budget
// can take, and when not all of them the error saying why (wrapping
// ErrBudget).
func (b *Batcher) fitBudget(chunk []*queued) (int, error) {
	bud := b.cfg.Budget
	if bud.MaxTokens <= 0 && bud.MaxUSD <= 0 {
		return len(chunk), nil
	}
	model := b.c.cfg.Model
	var tokens int64
	var usd float64
	for _, t := range b.c.meter.Tallies() {
		tokens += t.Spent.TotalTokens
		if c, ok := bud.Prices.TallyCost(t); ok {
			usd += c
		}
	}
	b.mu.Lock()
	for _, u := range b.outstanding {
		tokens += u.PromptTokens + u.CompletionTokens
		c, _ := bud.Prices.BatchCost(model, u)
		usd += c
	}
	b.mu.Unlock()
	spentTokens, spentUSD := tokens, usd
	for i, q := range chunk {
		n := q.estimate.PromptTokens + q.estimate.CompletionTokens
		c, _ := bud.Prices.BatchCost(model, q.estimate)
		switch {
		case bud.MaxTokens > 0 && tokens+n > bud.MaxTokens:
			return i, fmt.Errorf("llm batch: %w: %d tokens spent or submitted and about %d more asked for %d requests, of %d: %d requests not submitted",
				ErrBudget, spentTokens, chunkTokens(chunk), len(chunk), bud.MaxTokens, len(chunk)-i)
		case bud.MaxUSD > 0 && usd+c > bud.MaxUSD:
			return i, fmt.Errorf("llm batch: %w: $%.4f spent or submitted and about $%.4f more asked for %d requests (at the batch price), of $%.4f: %d requests not submitted",
				ErrBudget, spentUSD, chunkUSD(bud.Prices, model, chunk), len(chunk), bud.MaxUSD, len(chunk)-i)
		}
		tokens += n
		usd += c
	}
	return len(chunk), nil
}

// enqueuedTokens sums the estimated input tokens of this model's batches
// that are pending at the provider, from the ledger (earlier runs' too).
func (b *Batcher) enqueuedTokens(ctx context.Context) (int64, error) {
	if b.cfg.MaxEnqueuedTokens <= 0 {
		return 0, nil
	}
	bs, err := b.st.Batches(ctx, BatchSubmitting, BatchSubmitted)
	if err != nil {
		return 0, fmt.Errorf("llm batch: %w", err)
	}
	var n int64
	for _, bt := range bs {
		if bt.Provider == b.c.cfg.Provider && bt.Model == b.c.cfg.Model {
			n += bt.InputTokens
		}
	}
	return n, nil
}

// fitQueue returns how many of chunk's requests, in order, the
// provider's queue limit takes beside the enqueued tokens, and when not
// all of them the error saying why (wrapping ErrQueueFull). With nothing
// enqueued at least one goes, so a request larger than the limit is the
// provider's to refuse rather than waiting forever.
func (b *Batcher) fitQueue(chunk []*queued, enqueued int64) (int, error) {
	limit := b.cfg.MaxEnqueuedTokens
	if limit <= 0 {
		return len(chunk), nil
	}
	n, tokens := 0, enqueued
	for _, q := range chunk {
		t := q.estimate.PromptTokens
		if tokens+t > limit && (n > 0 || enqueued > 0) {
			break
		}
		tokens += t
		n++
	}
	if n == len(chunk) {
		return n, nil
	}
	return n, fmt.Errorf("llm batch: %w: about %d input tokens of %s are in pending batches and the limit is %d: %d requests wait for them to end",
		ErrQueueFull, enqueued, b.c.cfg.Model, limit, len(chunk)-n)
}

func chunkInputTokens(chunk []*queued) int64 {
	var n int64
	for _, q := range chunk {
		n += q.estimate.PromptTokens
	}
	return n
}

func chunkTokens(chunk []*queued) int64 {
	var n int64
	for _, q := range chunk {
		n += q.estimate.PromptTokens + q.estimate.CompletionTokens
	}
	return n
}

func chunkUSD(p Prices, model string, chunk []*queued) float64 {
	var usd float64
	for _, q := range chunk {
		c, _ := p.BatchCost(model, q.estimate)
		usd += c
	}
	return usd
}

func newBatchID() string {
	var r [6]byte
	rand.Read(r[:])
	return "cb-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(r[:])
}

// submit records chunk as submitting, hands it to the provider and
// records the provider's id.
func (b *Batcher) submit(ctx context.Context, chunk []*queued) error {
	c := b.c
	bt := store.Batch{ID: newBatchID(), Provider: c.cfg.Provider, Model: c.cfg.Model, State: BatchSubmitting, Requests: len(chunk),
		InputTokens: chunkInputTokens(chunk), Created: time.Now()}
	if err := b.st.PutBatch(ctx, bt); err != nil {
		return err
	}
	rows := make([]store.BatchRequest, len(chunk))
	lines := make([][]byte, len(chunk))
	for i, q := range chunk {
		conv, _ := json.Marshal(q.conv)
		rows[i] = store.BatchRequest{Key: q.key, CustomID: customID(q.key, q.round), Stage: q.stage, Batch: bt.ID,
			State: BatchSubmitting, Round: q.round, Conv: conv}
		lines[i] = q.line
	}
	if err := b.st.PutBatchRequests(ctx, rows); err != nil {
		return err
	}
	remote, info, err := b.api.submit(ctx, bt.ID, lines)
	if err != nil {
		var ae *APIError
		switch {
		case errors.As(err, &ae) && badRequest(ae):
			// Refused as invalid: sent again it would be refused again.
			// The requests stay in the ledger with the reason, and their
			// stages fail them by name.
			bt.State = BatchFailed
			b.st.PutBatch(ctx, bt)
			for i := range rows {
				rows[i].State, rows[i].Error = BatchRejected, fmt.Sprintf("refused at submission (status %d): %s", ae.Status, ae.Message)
			}
			b.st.PutBatchRequests(ctx, rows)
			b.mu.Lock()
			for _, q := range chunk {
				if b.queue[q.key] == q {
					delete(b.queue, q.key)
					b.queuedB -= int64(len(q.line))
				}
			}
			b.mu.Unlock()
			c.log.Warn("llm batch refused at submission; its requests are not submitted again", "batch", bt.ID, "status", ae.Status, "message", ae.Message)
		case errors.As(err, &ae):
			// Refused for what a later run may not meet (a key, a size):
			// the provider has nothing; the rows go, the queue stays.
			bt.State = BatchFailed
			b.st.PutBatch(ctx, bt)
			keys := make([]string, len(rows))
			for i, r := range rows {
				keys[i] = r.Key
			}
			b.st.DeleteBatchRequests(ctx, keys...)
		}
		// Otherwise the provider may have it: the next poll looks for it.
		return fmt.Errorf("llm submit batch %s of %d requests: %w", bt.ID, len(chunk), err)
	}
	bt.Remote, bt.Info, bt.State = remote, info, BatchSubmitted
	if err := b.st.PutBatch(ctx, bt); err != nil {
		return err
	}
	for i := range rows {
		rows[i].State = BatchSubmitted
	}
	c.log.Info("llm batch submitted", "batch", bt.ID, "remote", remote, "requests", len(chunk))
	return b.st.PutBatchRequests(ctx, rows)
}

// Poll looks at every batch not yet collected: it finds submissions a
// crash cut short, and collects the results of ended batches into the
// ledger. It returns how many batches are still pending.
func (b *Batcher) Poll(ctx context.Context) (pending int, err error) {
	bs, err := b.st.Batches(ctx, BatchSubmitting, BatchSubmitted)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, bt := range bs {
		if bt.Provider != b.c.cfg.Provider {
			continue
		}
		if err := b.pollBatch(ctx, bt.ID, true); err != nil {
			errs = append(errs, err)
		}
	}
	left, err := b.st.Batches(ctx, BatchSubmitting, BatchSubmitted)
	if err != nil {
		return 0, err
	}
	return len(left), errors.Join(errs...)
}

// Wait polls until no batch is pending or ctx ends, PollInterval apart.
func (b *Batcher) Wait(ctx context.Context) error {
	for {
		n, err := b.Poll(ctx)
		if err != nil {
			b.c.log.Warn("llm batch poll failed", "err", err)
		}
		if n == 0 {
			return nil
		}
		t := time.NewTimer(b.cfg.PollInterval)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// pollBatch looks at batch id unless it was looked at within the poll
// interval (force skips that).
func (b *Batcher) pollBatch(ctx context.Context, id string, force bool) error {
	b.mu.Lock()
	last := b.polled[id]
	if !force && time.Since(last) < b.cfg.PollInterval {
		b.mu.Unlock()
		return nil
	}
	b.polled[id] = time.Now()
	b.mu.Unlock()

	bs, err := b.st.Batches(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(bs, func(x store.Batch) bool { return x.ID == id })
	if i < 0 {
		return fmt.Errorf("llm batch %s: not in the ledger", id)
	}
	bt := bs[i]
	switch bt.State {
	case BatchSubmitting:
		return b.recover(ctx, bt)
	case BatchSubmitted:
	default:
		return nil
	}
	st, err := b.api.status(ctx, bt.Remote, bt.Info)
	if err != nil {
		return fmt.Errorf("llm batch %s (%s): %w", bt.ID, bt.Remote, err)
	}
	if !st.ended {
		return nil
	}
	rows, err := b.st.BatchRequestsOf(ctx, bt.ID)
	if err != nil {
		return err
	}
	stored := make([]bool, len(rows)) // written as they were read
	if st.failed {
		b.reject(rows, st)
	} else if err := b.collect(ctx, bt, st, rows, stored); err != nil {
		return err
	}
	counts := map[string]int{}
	var rest []store.BatchRequest
	for i := range rows {
		counts[rows[i].State]++
		if !stored[i] {
			rest = append(rest, rows[i])
		}
	}
	if err := b.st.PutBatchRequests(ctx, rest); err != nil {
		return err
	}
	bt.State, bt.Info = BatchCollected, st.info
	if st.failed {
		bt.State = BatchFailed
	}
	b.c.log.Info("llm batch collected", "batch", bt.ID, "remote", bt.Remote, "status", st.status, "counts", counts)
	if err := b.st.PutBatch(ctx, bt); err != nil {
		return err
	}
	b.collected.Add(1)
	return nil
}

// resultFlush bounds what collect holds before it writes: a results file
// of 100,000 answers is stored as it is read.
const (
	resultFlushRows  = 256
	resultFlushBytes = 8 << 20
)

// collect streams an ended batch's results into the ledger, writing the
// answers as they are read; rows is the batch's requests, of which those
// without a result end expired. A row written here is marked in stored
// and its answer dropped from memory.
func (b *Batcher) collect(ctx context.Context, bt store.Batch, st *batchStatus, rows []store.BatchRequest, stored []bool) error {
	idx := make(map[string]int, len(rows))
	seen := make([]bool, len(rows))
	for i, r := range rows {
		idx[r.CustomID] = i
	}
	var pending []int
	size := 0
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		out := make([]store.BatchRequest, len(pending))
		for k, i := range pending {
			out[k] = rows[i]
		}
		if err := b.st.PutBatchRequests(ctx, out); err != nil {
			return err
		}
		for _, i := range pending {
			rows[i].Result, stored[i] = nil, true
		}
		pending, size = pending[:0], 0
		return nil
	}
	err := b.api.results(ctx, bt.Remote, st.info, func(id string, res lineResult) error {
		i, ok := idx[id]
		if !ok {
			return nil
		}
		if !seen[i] || stored[i] {
			// A line seen before and written (OpenAI's error file, then
			// its output file) is written again: the later outcome wins.
			pending = append(pending, i)
		}
		seen[i] = true
		rows[i].State, rows[i].Result, rows[i].Error = res.state, res.body, res.err
		size += len(res.body)
		if len(pending) >= resultFlushRows || size >= resultFlushBytes {
			return flush()
		}
		return nil
	})
	var ae *APIError
	switch {
	case errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Status == http.StatusGone):
		// The provider no longer keeps the results (Anthropic: 29 days;
		// OpenAI deletes files): every request not read is asked again.
		b.c.log.Warn("llm batch results are gone; its requests will be submitted again", "batch", bt.ID, "remote", bt.Remote, "err", err)
	case err != nil:
		return fmt.Errorf("llm batch %s (%s): results: %w", bt.ID, bt.Remote, err)
	}
	if err := flush(); err != nil {
		return err
	}
	for i := range rows {
		if !seen[i] {
			rows[i].State, rows[i].Error = BatchExpired, "no result for "+rows[i].CustomID
		}
	}
	return nil
}

// reject marks the requests of a batch the provider refused at
// validation: when its errors name lines, the requests on them are
// rejected with their line's reason and the others go again in another
// batch; when they name none, every request is rejected. A rejected
// request stays in the ledger with the reason and is not submitted again.
func (b *Batcher) reject(rows []store.BatchRequest, st *batchStatus) {
	named := len(st.lines) > 0
	for i := range rows {
		switch reason, bad := st.lines[i+1]; {
		case !named:
			rows[i].State, rows[i].Error = BatchRejected, "rejected at validation: "+cmp.Or(st.message, st.status)
		case bad:
			rows[i].State, rows[i].Error = BatchRejected, fmt.Sprintf("rejected at validation (line %d): %s", i+1, reason)
		default:
			rows[i].State, rows[i].Error = BatchErrored, "its batch was rejected for other requests' lines: "+cmp.Or(st.message, st.status)
		}
	}
	b.c.log.Warn("llm batch rejected by the provider at validation; its refused requests are not submitted again",
		"status", st.status, "reason", st.message, "lines", len(st.lines))
}

// recover settles a batch left submitting by a process that stopped
// between recording it and recording the provider's id: the provider's
// batch made from it is adopted, and if there is none its requests are
// dropped from the ledger, to be queued again.
func (b *Batcher) recover(ctx context.Context, bt store.Batch) error {
	all, err := b.st.Batches(ctx)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, x := range all {
		if x.Remote != "" {
			known[x.Remote] = true
		}
	}
	remote, err := b.api.find(ctx, bt.ID, bt.Created, bt.Requests, known)
	if err != nil {
		return fmt.Errorf("llm batch %s: look for the submission: %w", bt.ID, err)
	}
	rows, err := b.st.BatchRequestsOf(ctx, bt.ID)
	if err != nil {
		return err
	}
	if remote == "" {
		keys := make([]string, len(rows))
		for i, r := range rows {
			keys[i] = r.Key
		}
		if err := b.st.DeleteBatchRequests(ctx, keys...); err != nil {
			return err
		}
		bt.State = BatchFailed
		b.c.log.Info("llm batch was never submitted; its requests will be queued again", "batch", bt.ID, "requests", len(rows))
		return b.st.PutBatch(ctx, bt)
	}
	bt.Remote, bt.State = remote, BatchSubmitted
	if err := b.st.PutBatch(ctx, bt); err != nil {
		return err
	}
	for i := range rows {
		rows[i].State = BatchSubmitted
	}
	b.c.log.Info("llm batch submission found after a restart", "batch", bt.ID, "remote", remote)
	return b.st.PutBatchRequests(ctx, rows)
}

// BatchInfo is a batch as curate status shows it.
type BatchInfo struct {
	ID, Remote, Provider, Model, State string
	Requests                           int
	Created                            time.Time
	Age                                time.Duration
}

// PendingBatches lists the batches in st not yet collected, oldest first.
func PendingBatches(ctx context.Context, st *store.Store) ([]BatchInfo, error) {
	bs, err := st.Batches(ctx, BatchSubmitting, BatchSubmitted)
	if err != nil {
		return nil, err
	}
	out := make([]BatchInfo, len(bs))
	for i, b := range bs {
		out[i] = BatchInfo{ID: b.ID, Remote: b.Remote, Provider: b.Provider, Model: b.Model, State: b.State,
			Requests: b.Requests, Created: b.Created, Age: time.Since(b.Created)}
	}
	return out, nil
}

// batchStatus is what a provider says of a batch.
type batchStatus struct {
	status  string // the provider's word
	ended   bool
	failed  bool // refused as a whole at validation: no results
	message string
	// lines are the reasons of the input lines the validation named (by
	// line number, from 1), when it named any.
	lines map[int]string
	info  json.RawMessage
}

// lineResult is one request's outcome in a batch.
type lineResult struct {
	state string // BatchSucceeded, BatchErrored, BatchExpired, BatchCanceled
	body  []byte // the API's answer (a chat completion or a message)
	err   string
}

// batchAPI is a provider's batch protocol.
type batchAPI interface {
	// line wraps one request body as the provider's batch wants it.
	line(customID string, body []byte) ([]byte, error)
	submit(ctx context.Context, localID string, lines [][]byte) (remote string, info json.RawMessage, err error)
	// find returns the provider's batch made from localID, or "";
	// known are the provider ids the ledger has already.
	find(ctx context.Context, localID string, since time.Time, requests int, known map[string]bool) (string, error)
	status(ctx context.Context, remote string, info json.RawMessage) (*batchStatus, error)
	// results reads the results file line by line, calling each with a
	// request's outcome as it is read (a custom_id may come twice: the
	// later wins).
	results(ctx context.Context, remote string, info json.RawMessage, each func(customID string, r lineResult) error) error
}
