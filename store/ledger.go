package store

import (
	"context"
	"fmt"
	"time"

	"github.com/groundwork/curate/internal/pipeline"
)

// Statuses of an item in a stage.
// Running is the ledger's own; the others are how the stage lifecycle
// (package pipeline) ends an item's work.
const (
	StatusPending = pipeline.StatusPending
	StatusRunning = "running"
	StatusDone    = pipeline.StatusDone
	StatusFailed  = pipeline.StatusFailed
	StatusSkipped = pipeline.StatusSkipped
	// StatusSuspect: the stage's result is stored but held back as
	// implausible (an injected instruction obeyed, say); the entry's error
	// says why.
	StatusSuspect = pipeline.StatusSuspect
)

// Entry is the status of one item in one stage.
type Entry struct {
	Item      string
	Stage     string
	Status    string
	Attempts  int // how many times the stage worked on the item (set it running, or ended work begun with Begin)
	Error     string
	UpdatedAt time.Time
	RunID     string // [Store.RunID] of the run that last set the status
}

func checkStatus(status string) error {
	switch status {
	case StatusPending, StatusRunning, StatusDone, StatusFailed, StatusSkipped, StatusSuspect:
		return nil
	}
	return fmt.Errorf("unknown status %q", status)
}

// SetStatus records status for item in stage, with errMsg as the entry's
// error (callers pass "" unless the item failed). Setting an item running
// counts an attempt.
func (s *Store) SetStatus(ctx context.Context, item, stage, status, errMsg string) error {
	attempt := 0
	if status == StatusRunning {
		attempt = 1
	}
	return s.setStatus(ctx, item, stage, status, errMsg, attempt)
}

// Begin sets item running in stage without counting an attempt, for a
// stage that may find its whole result already stored: End then says
// whether the item was worked on, so a rerun that only reuses stored
// work leaves the count alone.
func (s *Store) Begin(ctx context.Context, item, stage string) error {
	return s.setStatus(ctx, item, stage, StatusRunning, "", 0)
}

// End records the status an item begun with [Store.Begin] ended in,
// counting an attempt if the stage did work for it (asked a service,
// wrote a result, or failed trying).
func (s *Store) End(ctx context.Context, item, stage, status, errMsg string, worked bool) error {
	attempt := 0
	if worked {
		attempt = 1
	}
	return s.setStatus(ctx, item, stage, status, errMsg, attempt)
}

func (s *Store) setStatus(ctx context.Context, item, stage, status, errMsg string, attempt int) error {
	if err := checkLedgerKey(item, stage); err != nil {
		return fmt.Errorf("set %s status of %q: %w", stage, item, err)
	}
	if err := checkStatus(status); err != nil {
		return fmt.Errorf("set %s status of %q: %w", stage, item, err)
	}
	_, err := s.w.ExecContext(ctx,
		`INSERT INTO ledger (item, stage, status, attempts, error, updated_at, run_id)
		 VALUES (?, ?, ?, ?, ?, ?, ?)
		 ON CONFLICT (item, stage) DO UPDATE SET
		   status = excluded.status, attempts = attempts + excluded.attempts,
		   error = excluded.error, updated_at = excluded.updated_at, run_id = excluded.run_id`,
		item, stage, status, attempt, errMsg, formatTime(time.Now()), s.runID)
	if err != nil {
		return fmt.Errorf("set %s status of %q: %w", stage, item, err)
	}
	return nil
}

// Status returns the entry of item in stage; the error wraps ErrNotFound if
// there is none.
func (s *Store) Status(ctx context.Context, item, stage string) (Entry, error) {
	if err := checkLedgerKey(item, stage); err != nil {
		return Entry{}, fmt.Errorf("get %s status of %q: %w", stage, item, err)
	}
	es, err := s.queryEntries(ctx, `WHERE item = ? AND stage = ?`, item, stage)
	if err != nil {
		return Entry{}, fmt.Errorf("get %s status of %q: %w", stage, item, err)
	}
	if len(es) == 0 {
		return Entry{}, fmt.Errorf("get %s status of %q: %w", stage, item, ErrNotFound)
	}
	return es[0], nil
}

// Entries returns the entries of item in every stage, sorted by stage.
func (s *Store) Entries(ctx context.Context, item string) ([]Entry, error) {
	if err := checkKey("item id", item); err != nil {
		return nil, fmt.Errorf("list ledger entries of %q: %w", item, err)
	}
	es, err := s.queryEntries(ctx, `WHERE item = ? ORDER BY stage`, item)
	if err != nil {
		return nil, fmt.Errorf("list ledger entries of %q: %w", item, err)
	}
	return es, nil
}

// ByStatus returns the entries with status in stage, sorted by item.
func (s *Store) ByStatus(ctx context.Context, stage, status string) ([]Entry, error) {
	if err := checkKey("stage", stage); err != nil {
		return nil, fmt.Errorf("list %s %s entries: %w", stage, status, err)
	}
	if err := checkStatus(status); err != nil {
		return nil, fmt.Errorf("list %s %s entries: %w", stage, status, err)
	}
	es, err := s.queryEntries(ctx, `WHERE stage = ? AND status = ? ORDER BY item`, stage, status)
	if err != nil {
		return nil, fmt.Errorf("list %s %s entries: %w", stage, status, err)
	}
	return es, nil
}

// Counts returns how many items each stage has in each status.
func (s *Store) Counts(ctx context.Context) (map[string]map[string]int, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT stage, status, count(*) FROM ledger GROUP BY stage, status`)
	if err != nil {
		return nil, fmt.Errorf("count ledger entries: %w", err)
	}
	defer rows.Close()
	counts := make(map[string]map[string]int)
	for rows.Next() {
		var stage, status string
		var n int
		if err := rows.Scan(&stage, &status, &n); err != nil {
			return nil, fmt.Errorf("count ledger entries: %w", err)
		}
		if counts[stage] == nil {
			counts[stage] = make(map[string]int)
		}
		counts[stage][status] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count ledger entries: %w", err)
	}
	return counts, nil
}

func checkLedgerKey(item, stage string) error {
	if err := checkKey("item id", item); err != nil {
		return err
	}
	return checkKey("stage", stage)
}

// queryEntries selects ledger rows; where is a constant clause, never user
// input.
func (s *Store) queryEntries(ctx context.Context, where string, args ...any) ([]Entry, error) {
	rows, err := s.r.QueryContext(ctx,
		`SELECT item, stage, status, attempts, error, updated_at, run_id FROM ledger `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var es []Entry
	for rows.Next() {
		var e Entry
		var updated string
		if err := rows.Scan(&e.Item, &e.Stage, &e.Status, &e.Attempts, &e.Error, &updated, &e.RunID); err != nil {
			return nil, err
		}
		var err error
		if e.UpdatedAt, err = parseTime(updated); err != nil {
			return nil, fmt.Errorf("%s entry of %q: updated_at: %w", e.Stage, e.Item, err)
		}
		es = append(es, e)
	}
	return es, rows.Err()
}
