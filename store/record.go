package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Record is the current value of one kind for one item, e.g. item
// "2507.11127", kind "raw": the raw HTML page.
type Record struct {
	Item      string
	Kind      string
	Blob      Hash
	UpdatedAt time.Time
	Meta      map[string]string // nil when the record has none
}

// PutJSON stores v marshalled to JSON as the kind record of item, replacing
// any earlier one, and returns the blob's hash.
func (s *Store) PutJSON(ctx context.Context, item, kind string, v any, meta map[string]string) (Hash, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("put %s record of %q: %w", kind, item, err)
	}
	return s.PutBytes(ctx, item, kind, data, meta)
}

// GetJSON unmarshals the kind record of item into v. The error wraps
// ErrNotFound if item has no such record, and is a *LostError wrapping
// ErrCorrupt if the record's blob is missing or damaged (the work that
// produced it must be redone; with Heal it wraps ErrNotFound too).
func (s *Store) GetJSON(ctx context.Context, item, kind string, v any) (Record, error) {
	data, rec, err := s.GetBytes(ctx, item, kind)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return rec, fmt.Errorf("get %s record of %q: blob %s: %w", kind, item, rec.Blob, err)
	}
	return rec, nil
}

// PutBytes stores data as the kind record of item, replacing any earlier
// one, and returns the blob's hash. The blob is written before the row, so a
// crash never leaves a row pointing at a missing blob.
func (s *Store) PutBytes(ctx context.Context, item, kind string, data []byte, meta map[string]string) (Hash, error) {
	if err := checkRecordKey(item, kind); err != nil {
		return "", fmt.Errorf("put %s record of %q: %w", kind, item, err)
	}
	var metaJSON sql.NullString
	if len(meta) > 0 {
		b, err := json.Marshal(meta)
		if err != nil {
			return "", fmt.Errorf("put %s record of %q: meta: %w", kind, item, err)
		}
		metaJSON = sql.NullString{String: string(b), Valid: true}
	}
	h, err := s.PutBlob(data)
	if err != nil {
		return "", fmt.Errorf("put %s record of %q: %w", kind, item, err)
	}
	_, err = s.w.ExecContext(ctx,
		`INSERT INTO records (item, kind, blob, updated_at, meta) VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT (item, kind) DO UPDATE SET
		   blob = excluded.blob, updated_at = excluded.updated_at, meta = excluded.meta`,
		item, kind, string(h), formatTime(time.Now()), metaJSON)
	if err != nil {
		return "", fmt.Errorf("put %s record of %q: %w", kind, item, err)
	}
	return h, nil
}

// GetBytes returns the bytes of the kind record of item, with errors as for
// [Store.GetJSON].
func (s *Store) GetBytes(ctx context.Context, item, kind string) ([]byte, Record, error) {
	if err := checkRecordKey(item, kind); err != nil {
		return nil, Record{}, fmt.Errorf("get %s record of %q: %w", kind, item, err)
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT item, kind, blob, updated_at, meta FROM records WHERE item = ? AND kind = ?`, item, kind)
	if err != nil {
		return nil, Record{}, fmt.Errorf("get %s record of %q: %w", kind, item, err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return nil, Record{}, fmt.Errorf("get %s record of %q: %w", kind, item, err)
	}
	if len(recs) == 0 {
		return nil, Record{}, fmt.Errorf("get %s record of %q: %w", kind, item, ErrNotFound)
	}
	rec := recs[0]
	data, err := s.Blob(rec.Blob)
	switch {
	case errors.Is(err, ErrNotFound):
		// The row exists, so the blob was written and has since been lost.
		return nil, rec, s.lost(rec, errMissing)
	case errors.Is(err, ErrCorrupt):
		return nil, rec, s.lost(rec, err)
	case err != nil:
		return nil, rec, fmt.Errorf("get %s record of %q: %w", kind, item, err)
	}
	return data, rec, nil
}

// Records returns every record of item, sorted by kind.
func (s *Store) Records(ctx context.Context, item string) ([]Record, error) {
	if err := checkKey("item id", item); err != nil {
		return nil, fmt.Errorf("list records of %q: %w", item, err)
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT item, kind, blob, updated_at, meta FROM records WHERE item = ? ORDER BY kind`, item)
	if err != nil {
		return nil, fmt.Errorf("list records of %q: %w", item, err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("list records of %q: %w", item, err)
	}
	return recs, nil
}

// Items returns the items that have a record of kind, sorted.
func (s *Store) Items(ctx context.Context, kind string) ([]string, error) {
	if err := checkKey("kind", kind); err != nil {
		return nil, fmt.Errorf("list items with %s record: %w", kind, err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT item FROM records WHERE kind = ? ORDER BY item`, kind)
	if err != nil {
		return nil, fmt.Errorf("list items with %s record: %w", kind, err)
	}
	defer rows.Close()
	var items []string
	for rows.Next() {
		var item string
		if err := rows.Scan(&item); err != nil {
			return nil, fmt.Errorf("list items with %s record: %w", kind, err)
		}
		items = append(items, item)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list items with %s record: %w", kind, err)
	}
	return items, nil
}

func checkRecordKey(item, kind string) error {
	if err := checkKey("item id", item); err != nil {
		return err
	}
	return checkKey("kind", kind)
}

func scanRecords(rows *sql.Rows) ([]Record, error) {
	defer rows.Close()
	var recs []Record
	for rows.Next() {
		var (
			r       Record
			blob    string
			updated string
			meta    sql.NullString
		)
		if err := rows.Scan(&r.Item, &r.Kind, &blob, &updated, &meta); err != nil {
			return nil, err
		}
		r.Blob = Hash(blob)
		var err error
		if r.UpdatedAt, err = parseTime(updated); err != nil {
			return nil, fmt.Errorf("%s record of %q: updated_at: %w", r.Kind, r.Item, err)
		}
		if meta.Valid {
			if err := json.Unmarshal([]byte(meta.String), &r.Meta); err != nil {
				return nil, fmt.Errorf("%s record of %q: meta: %w", r.Kind, r.Item, err)
			}
		}
		recs = append(recs, r)
	}
	return recs, rows.Err()
}
