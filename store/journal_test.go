package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crashImage leaves in dir the files a program killed in the middle of a
// write transaction on dir/ledger.db leaves: the database and its hot
// rollback journal, copied while the transaction is open. committed runs
// (and commits) first; the open transaction then creates a table and
// writes enough to spill pages to the database file.
func crashImage(t *testing.T, dir string, committed ...string) {
	t.Helper()
	live := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sql.Open("sqlite", "file:"+live+"?_pragma=cache_size(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range committed {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, s := range []string{`CREATE TABLE cut (x)`, `INSERT INTO cut SELECT randomblob(4000) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 50) SELECT i FROM n)`} {
		if _, err := tx.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ledger.db", "ledger.db-journal"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(live), name))
		if err != nil {
			t.Fatalf("no %s mid-transaction: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A curate killed during a new store's first write (the switch to WAL)
// leaves ledger.db beside a hot rollback journal whose database was empty
// before. Every later command refused the store, forever: the check that
// the ledger is curate's read it read-only, and SQLite cannot roll a
// journal back through a read-only connection ("attempt to write a
// readonly database (776)"). Now the store opens (rolled back, it is a new
// store) and reads as empty read-only, its files unchanged by the read;
// another program's database with a hot journal is still refused,
// unchanged, naming the journal.
func TestOpenAfterKilledFirstWrite(t *testing.T) {
	ctx := context.Background()
	t.Run("a new ledger", func(t *testing.T) {
		dir := t.TempDir()
		crashImage(t, dir)
		before := snapshot(t, dir)
		ro, err := OpenReadOnly(ctx, dir)
		if err != nil {
			t.Fatalf("OpenReadOnly: %v", err)
		}
		if c, err := ro.Counts(ctx); err != nil || len(c) != 0 {
			t.Errorf("read-only: counts %v, %v; want an empty store", c, err)
		}
		ro.Close()
		if after := snapshot(t, dir); after != before {
			t.Error("the read-only open changed the store's files")
		}
		s, err := Open(ctx, dir)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer s.Close()
		if err := s.SetValue(ctx, "k", []byte("v")); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Value(ctx, "k"); err != nil || string(v) != "v" {
			t.Errorf("Value = %q, %v", v, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "ledger.db-journal")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the journal is still there after a writing open (%v)", err)
		}
	})
	t.Run("another program's database", func(t *testing.T) {
		dir := t.TempDir()
		crashImage(t, dir, `CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)`, `INSERT INTO invoices VALUES (1, 9.5)`)
		before := snapshot(t, dir)
		for name, open := range map[string]func(context.Context, string) (*Store, error){"Open": Open, "OpenExisting": OpenExisting, "OpenReadOnly": OpenReadOnly} {
			s, err := open(ctx, dir)
			if err == nil {
				s.Close()
				t.Fatalf("%s opened another program's database", name)
			}
			if !strings.Contains(err.Error(), "ledger.db-journal") {
				t.Errorf("%s: %v, want the journal named", name, err)
			}
		}
		if after := snapshot(t, dir); after != before {
			t.Error("another program's database or journal was changed")
		}
	})
}

// snapshot is every file of dir and its bytes.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, rel := range dirEntries(t, dir) {
		p := filepath.Join(dir, rel)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			data, _ := os.ReadFile(p)
			b.WriteString(rel + "\n" + string(data) + "\n")
		}
	}
	return b.String()
}
