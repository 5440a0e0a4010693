// Package llm is curate's layer for large-language-model calls: the
// classify, summarize, trace and tagging stages send a rendered prompt and
// get back a validated answer, its token usage and whether it came from the
// cache.
//
// A Client speaks OpenAI's chat-completions protocol (OpenAI, vLLM,
// Ollama, llama.cpp, LiteLLM) or Anthropic's native Messages API through
// an httpx.Service, so LLM calls share curate's one HTTP layer: its retries
// of 429 and 5xx with Retry-After, its rate limiter and its redaction of
// secret headers. On top of that the Client adds what is specific to LLMs:
// a concurrency limit, a tokens-per-minute budget fed by the provider's
// rate-limit headers, a request rate that slows down after 429s,
// structured output compiled for each endpoint (schemas derived from Go
// types, see SchemaFor) with local validation and bounded repair
// follow-ups, prompts laid out for the providers' prompt caches, token and
// cost accounting per stage (cached and batch tokens priced as such), and
// a response cache in the store keyed by everything that determines the
// answer.
//
// A Batcher sends the same requests through the providers' batch APIs at
// half price: it queues them, submits them in batches recorded in the
// store, and answers a request once its batch is done, so a process can
// exit while batches are pending and a later one collects them.
//
// Stages that can also run without a model (a heuristic backend) record
// HeuristicModel as their model, so their outputs never pass for an LLM's.
package llm

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/groundwork/curate/record"
)

// HeuristicModel is the model name a non-LLM backend records on its
// outputs. Such a backend is deterministic and free, so it is never cached
// or metered, and a Client refuses it as an endpoint model.
const HeuristicModel = "heuristic"

// IsHeuristic reports whether model names a heuristic backend rather than
// an LLM.
func IsHeuristic(model string) bool { return model == HeuristicModel }

// Request is one logical LLM call of a stage.
type Request struct {
	// Stage names the calling stage ("classify", "summarize", ...); usage
	// and cost are summed per stage. Required.
	Stage string
	// PromptVersion is the version of the prompt template that rendered
	// System and User (see package prompts). It is part of the cache key, so
	// bumping it re-runs the stage. Required.
	PromptVersion string
	// System is the instructions. Static, when set, is the part of the
	// user prompt that is the same across the stage's calls (a taxonomy,
	// examples); it goes before User. Both are sent first and marked for
	// the provider's prompt cache, so put everything static in them and
	// only the per-item text in Paper and User.
	System, Static string
	// Paper is the text the call is about, one delimited block sent after
	// System and Static and before User: calls about the same paper share
	// everything up to its end. PaperShared says another call will read
	// the same paper (a target's classify and gold-card calls); the paper
	// is then marked for the prompt cache when the write pays for it.
	Paper       string
	PaperShared bool
	// User is the task, after the shared parts.
	User string
	// Examples lengthens System (worked examples, not padding) for a
	// model whose least cacheable prefix System alone falls short of, so
	// that the calls sharing it read it from the cache; sent only then,
	// and only where the provider caches at breakpoints.
	Examples string
	// Schema, when set, asks for a JSON answer that conforms to it.
	Schema *Schema
	// Validate, when set, checks a JSON answer beyond the schema (e.g. that
	// every quote occurs in the paper). Setting either Schema or Validate
	// makes the answer JSON.
	Validate    func(json.RawMessage) error
	Temperature float64
	MaxTokens   int  // 0 leaves the server's default
	Seed        *int // nil sends none
}

func (r *Request) wantJSON() bool { return r.Schema != nil || r.Validate != nil }

// Response is the answer to a Request.
type Response struct {
	// Text is the answer's content without a leading <think> block.
	Text string
	// JSON is the parsed answer (fences and surrounding prose removed) when
	// the request asked for JSON; it passed the schema and the validator.
	JSON json.RawMessage
	// Reasoning is what a reasoning model thought before answering
	// (reasoning_content or a leading <think> block), if anything.
	Reasoning string
	// Model is the model the server says answered; a cached response keeps
	// the model of the original call.
	Model string
	// Usage is the token usage of all rounds that produced the answer. For
	// a cached answer it is the original call's usage, which cost nothing
	// this time.
	Usage  Usage
	Cached bool
	// Attempts counts the answers requested from the model: 1, plus one
	// per follow-up after an invalid answer. HTTP retries of 429 and 5xx
	// happen below this level and are not counted.
	Attempts int
}

// Usage is a token count. It is defined in record because stored records
// (a classification, an SFT row) carry the usage of the calls that made
// them.
type Usage = record.Usage

// Completer answers LLM requests. *Client implements it; stage tests use
// fakes.
type Completer interface {
	Complete(ctx context.Context, req Request) (*Response, error)
}

// InvalidError reports an answer that stayed unusable after the follow-ups:
// not JSON, failing the schema or the validator, truncated at the token
// limit, empty or refused. The stage records it as the item's failure and
// keeps Raw for inspection.
type InvalidError struct {
	Stage    string
	Model    string
	Attempts int
	Reason   string // why the last answer was rejected
	Raw      string // the last answer's content as the server sent it (an API key scrubbed)
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("llm %s: invalid answer from %s after %d attempts: %s", e.Stage, e.Model, e.Attempts, e.Reason)
}

// APIError is a non-retryable error status from the endpoint (400, 401,
// 404, ...): a configuration or request problem that retrying will not
// fix. Retryable statuses that persist come back as *httpx.StatusError.
type APIError struct {
	Stage   string
	Model   string
	Status  int
	Message string // the server's error message, secrets removed, shortened
	// What names the call: "chat completion" (the default) or "message".
	What string
}

func (e *APIError) Error() string {
	what := e.What
	if what == "" {
		what = "chat completion"
	}
	return fmt.Sprintf("llm %s: %s with %s: status %d: %s", e.Stage, what, e.Model, e.Status, e.Message)
}
