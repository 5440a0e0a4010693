package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// dirEntries lists every path under dir, relative to it.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	slices.Sort(out)
	return out
}

func TestOpenExistingCreatesNothing(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	for _, dir := range []string{filepath.Join(parent, "typo"), parent} {
		before := dirEntries(t, parent)
		s, err := OpenExisting(ctx, dir)
		if err == nil {
			s.Close()
			t.Fatalf("OpenExisting(%s) opened a store that does not exist", dir)
		}
		if !errors.Is(err, ErrNoStore) {
			t.Errorf("OpenExisting(%s) = %v, want ErrNoStore", dir, err)
		}
		if after := dirEntries(t, parent); !slices.Equal(before, after) {
			t.Errorf("OpenExisting(%s) changed the tree: %v -> %v", dir, before, after)
		}
	}
	// A store that exists opens.
	dir := filepath.Join(parent, "store")
	s := openTest(t, dir)
	if err := s.SetValue(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	s2, err := OpenExisting(ctx, dir)
	if err != nil {
		t.Fatalf("OpenExisting of a store: %v", err)
	}
	defer s2.Close()
	if v, err := s2.Value(ctx, "k"); err != nil || string(v) != "v" {
		t.Errorf("Value = %q, %v", v, err)
	}
}

// foreignDB writes a SQLite database that another program owns.
func foreignDB(t *testing.T, dir string, stmts ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ledger.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenRefusesForeignLedger(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		stmts []string
	}{
		{"other tables", []string{`CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)`, `INSERT INTO invoices VALUES (1, 9.5)`}},
		{"other application id", []string{`PRAGMA application_id = 1234`, `CREATE TABLE t (x)`}},
		{"a meta table of its own", []string{`CREATE TABLE meta (key TEXT, value TEXT)`, `INSERT INTO meta VALUES ('schema_version', '2')`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := foreignDB(t, dir, tt.stmts...)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			entries := dirEntries(t, dir)
			for _, open := range []func(context.Context, string) (*Store, error){Open, OpenExisting} {
				s, err := open(ctx, dir)
				if err == nil {
					s.Close()
					t.Fatal("opened another program's database as a store")
				}
				if !errors.Is(err, ErrForeign) {
					t.Errorf("err = %v, want ErrForeign", err)
				}
			}
			after, _ := os.ReadFile(path)
			if string(before) != string(after) {
				t.Error("the foreign database was modified")
			}
			if got := dirEntries(t, dir); !slices.Equal(got, entries) {
				t.Errorf("files created beside it: %v -> %v", entries, got)
			}
		})
	}
}

func TestOpenMarksLedger(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	var id int64
	if err := s.r.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if id != applicationID {
		t.Errorf("application_id = %#x, want %#x", id, applicationID)
	}
}

// A store written before the marker existed is curate's: it opens and is
// marked.
func TestOpenMarksLegacyStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := makeTree(dir); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, db, len(migrations)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := OpenExisting(ctx, dir)
	if err != nil {
		t.Fatalf("legacy store: %v", err)
	}
	defer s.Close()
	var id int64
	if err := s.w.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&id); err != nil || id != applicationID {
		t.Errorf("application_id = %#x, %v", id, err)
	}
}

func TestLockHeld(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	if held, _ := s.LockHeld(); held {
		t.Error("LockHeld before Lock")
	}
	unlock, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	other, err := OpenExisting(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if held, who := other.LockHeld(); !held || who == "" {
		t.Errorf("LockHeld while locked = %v, %q", held, who)
	}
	unlock()
	if held, _ := other.LockHeld(); held {
		t.Error("LockHeld after unlock")
	}
}

// A store opened read-only reads what a writer stored (while the writer
// has it open too), refuses every write, and leaves the ledger as it was;
// an empty ledger reads as an empty store and stays empty.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.PutBytes(ctx, "2401.00001", "raw", []byte("page"), nil); err != nil {
		t.Fatal(err)
	}
	if err := w.SetStatus(ctx, "2401.00001", "fetch", StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, _, err := r.GetBytes(ctx, "2401.00001", "raw"); err != nil || string(b) != "page" {
		t.Errorf("GetBytes: %q %v", b, err)
	}
	if c, err := r.Counts(ctx); err != nil || c["fetch"][StatusDone] != 1 {
		t.Errorf("Counts: %v %v", c, err)
	}
	if _, err := r.PutBytes(ctx, "x", "raw", []byte("y"), nil); err == nil {
		t.Error("PutBytes on a read-only store")
	}
	if err := r.SetValue(ctx, "k", []byte("v")); err == nil {
		t.Error("SetValue on a read-only store")
	}
	if err := r.SetStatus(ctx, "x", "fetch", StatusDone, ""); err == nil {
		t.Error("SetStatus on a read-only store")
	}
	if _, err := r.Lock(); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Lock: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "ledger.db")); !slices.Equal(after, before) {
		t.Error("the ledger changed")
	}

	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "ledger.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := OpenReadOnly(ctx, empty)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := e.Counts(ctx); err != nil || len(c) != 0 {
		t.Errorf("Counts of an empty ledger: %v %v", c, err)
	}
	e.Close()
	if got := dirEntries(t, empty); !slices.Equal(got, []string{".", "ledger.db"}) {
		t.Errorf("after a read-only open of an empty ledger: %v", got)
	}
	if _, err := OpenReadOnly(ctx, filepath.Join(empty, "none")); !errors.Is(err, ErrNoStore) {
		t.Errorf("OpenReadOnly of no store: %v", err)
	}
}
