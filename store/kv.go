package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// SetValue stores a small run-level value under key, e.g. the date of the
// last harvest or a run summary as JSON.
func (s *Store) SetValue(ctx context.Context, key string, value []byte) error {
	if err := checkKey("key", key); err != nil {
		return fmt.Errorf("set value %q: %w", key, err)
	}
	if value == nil {
		value = []byte{} // the column is NOT NULL; nil and empty read back alike
	}
	_, err := s.w.ExecContext(ctx,
		`INSERT INTO kv (key, value, updated_at) VALUES (?, ?, ?)
		 ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		key, value, formatTime(time.Now()))
	if err != nil {
		return fmt.Errorf("set value %q: %w", key, err)
	}
	return nil
}

// Value returns the value stored under key; the error wraps ErrNotFound if
// there is none.
func (s *Store) Value(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey("key", key); err != nil {
		return nil, fmt.Errorf("get value %q: %w", key, err)
	}
	var value []byte
	err := s.r.QueryRowContext(ctx, `SELECT value FROM kv WHERE key = ?`, key).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("get value %q: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get value %q: %w", key, err)
	}
	return value, nil
}
