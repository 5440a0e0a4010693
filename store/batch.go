package store

import (
	"context"
	"database/sql"

	"fmt"
	"strings"
	"time"
)

// Batch is one submission to an LLM provider's batch API, as the llm
// package's Batcher records it: written before the provider is asked, so
// that a process that dies mid-submission leaves a trace the next one
// can look for.
type Batch struct {
	ID       string // curate's id, fixed before submission
	Remote   string // the provider's batch id; "" until known
	Provider string
	Model    string
	State    string // the Batcher's states
	Requests int
	Info     []byte // provider details (file ids), JSON
	// InputTokens is the estimated input tokens of its requests: what a
	// provider's queue limit counts while the batch is pending.
	InputTokens int64
	Created     time.Time
	Updated     time.Time
}

// BatchRequest is one LLM request in the batch ledger.
type BatchRequest struct {
	Key      string // the request's cache key
	CustomID string // its id within the batch
	Stage    string
	Batch    string // Batch.ID
	State    string
	Round    int    // 0 for the first ask, n for the n-th follow-up
	Result   []byte // the provider's answer, once collected
	Conv     []byte // the follow-up turns and usage so far, JSON
	Error    string
	Updated  time.Time
}

// PutBatch inserts or replaces b.
func (s *Store) PutBatch(ctx context.Context, b Batch) error {
	if err := checkKey("batch id", b.ID); err != nil {
		return fmt.Errorf("put batch %q: %w", b.ID, err)
	}
	now := formatTime(time.Now())
	created := now
	if !b.Created.IsZero() {
		created = formatTime(b.Created)
	}
	_, err := s.w.ExecContext(ctx,
		`INSERT INTO llm_batches (id, remote, provider, model, state, requests, info, input_tokens, created_at, updated_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		 ON CONFLICT (id) DO UPDATE SET remote = excluded.remote, state = excluded.state,
		   requests = excluded.requests, info = excluded.info, input_tokens = excluded.input_tokens, updated_at = excluded.updated_at`,
		b.ID, b.Remote, b.Provider, b.Model, b.State, b.Requests, b.Info, b.InputTokens, created, now)
	if err != nil {
		return fmt.Errorf("put batch %q: %w", b.ID, err)
	}
	return nil
}

// Batches returns the batches in any of states (all when none), oldest
// first.
func (s *Store) Batches(ctx context.Context, states ...string) ([]Batch, error) {
	q := `SELECT id, remote, provider, model, state, requests, info, input_tokens, created_at, updated_at FROM llm_batches`
	args := make([]any, len(states))
	if len(states) > 0 {
		q += ` WHERE state IN (?` + strings.Repeat(", ?", len(states)-1) + `)`
		for i, st := range states {
			args[i] = st
		}
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list batches: %w", err)
	}
	defer rows.Close()
	var out []Batch
	for rows.Next() {
		var b Batch
		var created, updated string
		if err := rows.Scan(&b.ID, &b.Remote, &b.Provider, &b.Model, &b.State, &b.Requests, &b.Info, &b.InputTokens, &created, &updated); err != nil {
			return nil, fmt.Errorf("list batches: %w", err)
		}
		b.Created, _ = parseTime(created)
		b.Updated, _ = parseTime(updated)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list batches: %w", err)
	}
	return out, nil
}

// PutBatchRequests inserts or replaces reqs in one transaction: a batch's
// requests change state together.
func (s *Store) PutBatchRequests(ctx context.Context, reqs []BatchRequest) (err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("put batch requests: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	stmt, err := tx.PrepareContext(ctx,
		`INSERT INTO llm_batch_requests (key, custom_id, stage, batch, state, round, result, conv, error, updated_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		 ON CONFLICT (key) DO UPDATE SET custom_id = excluded.custom_id, stage = excluded.stage, batch = excluded.batch,
		   state = excluded.state, round = excluded.round, result = excluded.result, conv = excluded.conv,
		   error = excluded.error, updated_at = excluded.updated_at`)
	if err != nil {
		return fmt.Errorf("put batch requests: %w", err)
	}
	defer stmt.Close()
	now := formatTime(time.Now())
	for _, r := range reqs {
		if err := checkKey("request key", r.Key); err != nil {
			return fmt.Errorf("put batch request %q: %w", r.Key, err)
		}
		if _, err := stmt.ExecContext(ctx, r.Key, r.CustomID, r.Stage, r.Batch, r.State, r.Round, r.Result, r.Conv, r.Error, now); err != nil {
			return fmt.Errorf("put batch request %q: %w", r.Key, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("put batch requests: %w", err)
	}
	return nil
}

const batchRequestColumns = `key, custom_id, stage, batch, state, round, result, conv, error, updated_at`

func scanBatchRequests(rows *sql.Rows) ([]BatchRequest, error) {
	defer rows.Close()
	var out []BatchRequest
	for rows.Next() {
		var r BatchRequest
		var updated string
		if err := rows.Scan(&r.Key, &r.CustomID, &r.Stage, &r.Batch, &r.State, &r.Round, &r.Result, &r.Conv, &r.Error, &updated); err != nil {
			return nil, err
		}
		r.Updated, _ = parseTime(updated)
		out = append(out, r)
	}
	return out, rows.Err()
}

// BatchRequest returns the ledger entry of the request with key; the
// error wraps ErrNotFound if there is none.
func (s *Store) BatchRequest(ctx context.Context, key string) (BatchRequest, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+batchRequestColumns+` FROM llm_batch_requests WHERE key = ?`, key)
	if err != nil {
		return BatchRequest{}, fmt.Errorf("get batch request %q: %w", key, err)
	}
	l, err := scanBatchRequests(rows)
	if err != nil {
		return BatchRequest{}, fmt.Errorf("get batch request %q: %w", key, err)
	}
	if len(l) == 0 {
		return BatchRequest{}, fmt.Errorf("get batch request %q: %w", key, ErrNotFound)
	}
	return l[0], nil
}

// BatchRequestsOf returns the requests recorded in batch id.
func (s *Store) BatchRequestsOf(ctx context.Context, id string) ([]BatchRequest, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+batchRequestColumns+` FROM llm_batch_requests WHERE batch = ? ORDER BY key`, id)
	if err != nil {
		return nil, fmt.Errorf("list requests of batch %q: %w", id, err)
	}
	l, err := scanBatchRequests(rows)
	if err != nil {
		return nil, fmt.Errorf("list requests of batch %q: %w", id, err)
	}
	return l, nil
}

// DeleteBatchRequests removes the ledger entries of keys.
func (s *Store) DeleteBatchRequests(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		if _, err := s.w.ExecContext(ctx, `DELETE FROM llm_batch_requests WHERE key = ?`, k); err != nil {
			return fmt.Errorf("delete batch request %q: %w", k, err)
		}
	}
	return nil
}

// BatchRequestCounts counts the ledger's requests by stage and state.
func (s *Store) BatchRequestCounts(ctx context.Context) (map[string]map[string]int, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT stage, state, COUNT(*) FROM llm_batch_requests GROUP BY stage, state`)
	if err != nil {
		return nil, fmt.Errorf("count batch requests: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]int{}
	for rows.Next() {
		var stage, state string
		var n int
		if err := rows.Scan(&stage, &state, &n); err != nil {
			return nil, fmt.Errorf("count batch requests: %w", err)
		}
		if out[stage] == nil {
			out[stage] = map[string]int{}
		}
		out[stage][state] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count batch requests: %w", err)
	}
	return out, nil
}
