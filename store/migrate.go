package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
)

// migrations[i] takes the ledger from schema version i to i+1. Append only:
// a released step must never change, since stores on disk already ran it.
var migrations = []string{
	// 1: records and per-stage ledger.
	`CREATE TABLE records (
		item       TEXT NOT NULL,
		kind       TEXT NOT NULL,
		blob       TEXT NOT NULL,
		updated_at TEXT NOT NULL,
		meta       TEXT,
		PRIMARY KEY (item, kind)
	);
	CREATE TABLE ledger (
		item       TEXT NOT NULL,
		stage      TEXT NOT NULL,
		status     TEXT NOT NULL,
		attempts   INTEGER NOT NULL DEFAULT 0,
		error      TEXT NOT NULL DEFAULT '',
		updated_at TEXT NOT NULL,
		run_id     TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (item, stage)
	);`,
	// 2: run-level values, and indexes for "what is left in stage X" and
	// "which items have kind K".
	`CREATE TABLE kv (
		key        TEXT NOT NULL PRIMARY KEY,
		value      BLOB NOT NULL,
		updated_at TEXT NOT NULL
	);
	CREATE INDEX ledger_stage_status ON ledger (stage, status, item);
	CREATE INDEX records_kind ON records (kind, item);`,
	// 3: the LLM batch ledger: batches submitted to a provider's batch API
	// and the state of each request in them.
	`CREATE TABLE llm_batches (
		id         TEXT NOT NULL PRIMARY KEY,
		remote     TEXT NOT NULL DEFAULT '',
		provider   TEXT NOT NULL,
		model      TEXT NOT NULL,
		state      TEXT NOT NULL,
		requests   INTEGER NOT NULL,
		info       BLOB,
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL
	);
	CREATE TABLE llm_batch_requests (
		key        TEXT NOT NULL PRIMARY KEY,
		custom_id  TEXT NOT NULL,
		stage      TEXT NOT NULL,
		batch      TEXT NOT NULL,
		state      TEXT NOT NULL,
		round      INTEGER NOT NULL DEFAULT 0,
		result     BLOB,
		conv       BLOB,
		error      TEXT NOT NULL DEFAULT '',
		updated_at TEXT NOT NULL
	);
	CREATE INDEX llm_batch_requests_batch ON llm_batch_requests (batch);`,
	// 4: a batch's estimated input tokens, which the provider's queue
	// limit counts while the batch is pending.
	`ALTER TABLE llm_batches ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;`,
}

// migrate brings the ledger in db to schema version target in one
// transaction; concurrent Opens of the same store serialise on its write
// lock, and the later one finds nothing to do.
func migrate(ctx context.Context, db *sql.DB, target int) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate ledger: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if _, err := tx.ExecContext(ctx,
		`CREATE TABLE IF NOT EXISTS meta (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate ledger: create meta: %w", err)
	}
	version := 0
	var v string
	switch err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("migrate ledger: read schema_version: %w", err)
	default:
		if version, err = strconv.Atoi(v); err != nil {
			return fmt.Errorf("migrate ledger: schema_version %q: %w", v, err)
		}
	}
	if version > len(migrations) {
		return fmt.Errorf("migrate ledger: schema version %d is newer than this curate supports (%d); use a newer curate", version, len(migrations))
	}
	if version >= target {
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate ledger: %w", err)
		}
		return nil
	}
	for ; version < target; version++ {
		if _, err := tx.ExecContext(ctx, migrations[version]); err != nil {
			return fmt.Errorf("migrate ledger to schema version %d: %w", version+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO meta (key, value) VALUES ('schema_version', ?)
		 ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.Itoa(version)); err != nil {
		return fmt.Errorf("migrate ledger: write schema_version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate ledger: %w", err)
	}
	return nil
}
