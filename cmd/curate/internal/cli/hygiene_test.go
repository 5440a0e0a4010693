package cli_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/store"
)

// Commands that only look at a store create nothing where there is none.
func TestLookingCreatesNoStore(t *testing.T) {
	parent := t.TempDir()
	typo := filepath.Join(parent, "TYPO")
	for _, args := range [][]string{
		{"status", "--store", typo},
		{"status", "--store", typo, "--json"},
		{"show", "--store", typo, "2507.11127"},
		{"stats", "labels", "--store", typo},
		{"dataset", "--store", typo, "--out", filepath.Join(parent, "out")},
	} {
		code, _, stderr := clitest.Run(t, nil, args...)
		if code != 2 || !strings.Contains(stderr, "no curate store") || !strings.Contains(stderr, typo) {
			t.Errorf("curate %v: exit %d, stderr %q; want exit 2 naming %s as no store", args, code, stderr, typo)
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 0 {
			t.Fatalf("curate %v created %v", args, entries)
		}
	}
}

// A ledger.db that is not curate's is refused, never migrated.
func TestForeignLedgerRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'mine')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	for _, args := range [][]string{
		{"status", "--store", dir},
		{"classify", "--store", dir, "2507.11127"},
	} {
		code, _, stderr := clitest.Run(t, nil, args...)
		if code != 2 || !strings.Contains(stderr, "not a curate ledger") {
			t.Errorf("curate %v: exit %d, stderr %q; want exit 2, not a curate ledger", args, code, stderr)
		}
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Error("the foreign ledger.db changed")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files created beside the foreign ledger: %v", entries)
	}
}

// Items a run left "running" are interrupted once no process holds the
// lock, and running while one does.
func TestStatusInterrupted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, k := range []string{"2507.11127", "2507.11128"} {
		if err := st.SetStatus(ctx, k, "summarize", store.StatusRunning, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetStatus(ctx, "2507.11127", "fetch", store.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := clitest.Run(t, nil, "status", "--store", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "interrupted") || !regexpLine(out, `summarize\s+0\s+0\s+0\s+0\s+2\s`) {
		t.Errorf("without a run, running items are not shown interrupted:\n%s", out)
	}
	// Pipeline order: fetch before summarize.
	if strings.Index(out, "\nfetch") > strings.Index(out, "\nsummarize") {
		t.Errorf("stages out of pipeline order:\n%s", out)
	}
	unlock, err := st.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, out, _ = clitest.Run(t, nil, "status", "--store", dir)
	if !strings.Contains(out, "a run is in progress") || !regexpLine(out, `summarize\s+0\s+0\s+0\s+2\s+0\s`) {
		t.Errorf("with a run holding the lock:\n%s", out)
	}
}

// regexpLine reports whether some line of s matches the expression.
func regexpLine(s, expr string) bool {
	re := regexp.MustCompile(expr)
	for _, l := range strings.Split(s, "\n") {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

// The JSON of status and show names every field in snake_case, like the
// dataset's schema; only Semantic Scholar's responses, kept as S2 sent
// them, use S2's camelCase names.
func TestJSONFieldCase(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := clitest.Run(t, nil, "demo", "--store", dir+"/store", "--out", dir+"/ds"); code != 0 {
		t.Fatalf("demo: exit %d\n%s", code, stderr)
	}
	upper := regexp.MustCompile(`[A-Z]`)
	for _, args := range [][]string{
		{"status", "--store", dir + "/store", "--json"},
		{"show", "--store", dir + "/store", "2601.03318"},
	} {
		code, stdout, stderr := clitest.Run(t, nil, args...)
		if code != 0 {
			t.Fatalf("curate %v: exit %d\n%s", args, code, stderr)
		}
		var v any
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			t.Fatalf("curate %v: %v\n%s", args, err, stdout)
		}
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					if strings.HasPrefix(k, "s2-") && strings.HasSuffix(path, ".records") {
						continue
					}
					if upper.MatchString(k) {
						t.Errorf("curate %v: field %s.%s is not snake_case", args, path, k)
					}
					walk(path+"."+k, x)
				}
			case []any:
				for _, x := range v {
					walk(path+"[]", x)
				}
			}
		}
		walk("", v)
	}
}
