package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/groundwork/curate/store"
)

// The cache lives in the store: one record per answered request, item
// "llm:"+key, kind CacheKind. The record's blob is a cacheEntry, which
// holds the request that was hashed and the answer, so one PutJSON writes
// both atomically (blob first, then the row) and a later reader can see
// exactly what produced an answer. Headers are never part of it.
const (
	// CacheKind is the store record kind of cached LLM answers.
	CacheKind = "llm-response"
	// cacheItemPrefix starts the item id of a cached answer.
	cacheItemPrefix = "llm:"
	// cacheFormat is hashed into every key; bump it when the key's inputs
	// or their meaning change, so old entries stop matching.
	cacheFormat = 1
)

// cacheRequest is everything that determines an answer, hashed into the
// cache key. The endpoint URL and whether structured output was used are
// left out: they change how the answer is obtained, not what is asked. The
// validator is left out too: a cached answer is validated again on every
// hit, so tightening a validator needs no new prompt version.
type cacheRequest struct {
	Format        int             `json:"cache_format"`
	Model         string          `json:"model"`
	Stage         string          `json:"stage"`
	PromptVersion string          `json:"prompt_version"`
	System        string          `json:"system"`
	Static        string          `json:"static,omitempty"` // omitted when empty: older keys stay valid
	Paper         string          `json:"paper,omitempty"`
	Examples      string          `json:"examples,omitempty"`
	User          string          `json:"user"`
	Answer        string          `json:"answer"` // "text" or "json"
	SchemaName    string          `json:"schema_name,omitempty"`
	Schema        json.RawMessage `json:"schema,omitempty"`
	Temperature   float64         `json:"temperature"`
	MaxTokens     int             `json:"max_tokens"`
	Seed          *int            `json:"seed"`
}

type cacheEntry struct {
	Key       string        `json:"key"`
	Request   cacheRequest  `json:"request"`
	Response  cacheResponse `json:"response"`
	CreatedAt time.Time     `json:"created_at"`
}

type cacheResponse struct {
	Text      string          `json:"text"`
	JSON      json.RawMessage `json:"json,omitempty"`
	Reasoning string          `json:"reasoning,omitempty"`
	Model     string          `json:"model"`
	Usage     Usage           `json:"usage"`
	Attempts  int             `json:"attempts"`
}

func newCacheRequest(model string, req *Request) cacheRequest {
	cr := cacheRequest{
		Format:        cacheFormat,
		Model:         model,
		Stage:         req.Stage,
		PromptVersion: req.PromptVersion,
		System:        req.System,
		Static:        req.Static,
		Paper:         req.Paper,
		Examples:      req.Examples,
		User:          req.User,
		Answer:        "text",
		Temperature:   req.Temperature,
		MaxTokens:     req.MaxTokens,
		Seed:          req.Seed,
	}
	if req.wantJSON() {
		cr.Answer = "json"
	}
	if req.Schema != nil {
		cr.SchemaName, cr.Schema = req.Schema.name, req.Schema.raw
	}
	return cr
}

// key is the hex SHA-256 of the request's JSON encoding, which is
// deterministic: struct fields in order, strings escaped one way.
func (cr *cacheRequest) key() string {
	b, err := json.Marshal(cr)
	if err != nil {
		panic(fmt.Sprintf("llm: marshal cache request: %v", err)) // only strings, numbers and valid JSON
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// CacheKey returns the key under which the answer to req from model is
// cached (the store item is "llm:"+key). Stages may record it as the
// provenance of an output.
func CacheKey(model string, req Request) string {
	cr := newCacheRequest(model, &req)
	return cr.key()
}

// cacheGet returns the cached answer under key, or nil if there is none or
// it cannot be read.
func (c *Client) cacheGet(ctx context.Context, st *store.Store, key string) *cacheEntry {
	var e cacheEntry
	_, err := st.GetJSON(ctx, cacheItemPrefix+key, CacheKind, &e)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		c.log.Warn("llm cache read failed; calling the model", "key", key, "err", err)
		return nil
	case e.Key != key:
		c.log.Warn("llm cache entry under the wrong key; calling the model", "key", key, "entry_key", e.Key)
		return nil
	}
	return &e
}

func (c *Client) cachePut(ctx context.Context, st *store.Store, key string, cr cacheRequest, r *Response) {
	e := cacheEntry{
		Key:     key,
		Request: cr,
		Response: cacheResponse{
			Text: r.Text, JSON: r.JSON, Reasoning: r.Reasoning,
			Model: r.Model, Usage: r.Usage, Attempts: r.Attempts,
		},
		CreatedAt: time.Now().UTC(),
	}
	meta := map[string]string{"stage": cr.Stage, "model": cr.Model, "prompt_version": cr.PromptVersion}
	if _, err := st.PutJSON(ctx, cacheItemPrefix+key, CacheKind, e, meta); err != nil {
		// The answer is good and paid for; losing only its cache entry
		// costs a repeat call on the next run, so report and go on.
		c.log.Warn("llm cache write failed", "stage", cr.Stage, "key", key, "err", err)
	}
}
