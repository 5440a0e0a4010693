package publishing

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
)

// storeFiles lists every file under dir with its size, content hash and
// modification time, leaving out SQLite's -wal and -shm files (any reader
// of a WAL database shares them).
func storeFiles(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasSuffix(rel, "-wal") || strings.HasSuffix(rel, "-shm") {
			return nil
		}
		line := rel + "/"
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			fi, _ := d.Info()
			sum := sha256.Sum256(b)
			line = rel + " " + hex.EncodeToString(sum[:8]) + " " + fi.ModTime().String()
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// curate status (and show and stats) only read: an empty ledger.db stays empty (it said
// "nothing done yet" after writing a schema into it), a store's files are
// byte for byte what they were, a ledger of an older schema is not
// migrated (exit 2, saying which command does), and a path without a store
// gets nothing created.
func TestStatusNeverWrites(t *testing.T) {
	dir := t.TempDir()
	env, _ := clitest.DemoWorld(t, dir)
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir)...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	old := t.TempDir()
	if err := os.CopyFS(old, os.DirFS(dir+"/store")); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+old+"/ledger.db")
	if err == nil {
		_, err = db.ExecContext(context.Background(), `UPDATE meta SET value = '3' WHERE key = 'schema_version'`)
		db.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	if err := os.WriteFile(empty+"/ledger.db", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, store string
		code        int
		want        string
	}{
		{"a store", dir + "/store", 0, "summarize"},
		{"an empty ledger", empty, 0, "nothing done yet"},
		{"an older schema", old, 2, "schema version 3 is older than this curate's"},
		{"no store", dir + "/none", 2, "no curate store"},
	}
	for _, tt := range tests {
		for _, args := range [][]string{{"status"}, {"status", "--json"}} {
			t.Run(tt.name+"/"+strings.Join(args, " "), func(t *testing.T) {
				before := storeFiles(t, tt.store)
				code, stdout, stderr := clitest.Run(t, nil, append(args, "--store", tt.store)...)
				if code != tt.code || !strings.Contains(stdout+stderr, tt.want) && (len(args) == 1 || tt.code != 0) {
					t.Errorf("exit %d, want %d with %q:\n%s%s", code, tt.code, tt.want, stdout, stderr)
				}
				if after := storeFiles(t, tt.store); after != before {
					t.Errorf("status changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
				}
			})
		}
	}
	// show and stats only look too.
	for _, args := range [][]string{{"show", "--store", dir + "/store", "2503.07215"}, {"stats", "labels", "--store", dir + "/store"}} {
		before := storeFiles(t, dir+"/store")
		if code, _, stderr := clitest.Run(t, nil, args...); code != 0 {
			t.Errorf("curate %s: exit %d\n%s", args[0], code, stderr)
		}
		if after := storeFiles(t, dir+"/store"); after != before {
			t.Errorf("curate %s changed the store", args[0])
		}
	}
	if fi, err := os.Stat(empty + "/ledger.db"); err != nil || fi.Size() != 0 {
		t.Errorf("the empty ledger.db: %v, %v", fi, err)
	}
	if _, err := os.Stat(dir + "/none"); !os.IsNotExist(err) {
		t.Errorf("status created a store: %v", err)
	}
}
