package damage

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/groundwork/curate/cmd/curate/internal/clitest"
	"github.com/groundwork/curate/sim/demo"
)

// storedRecord is a record's row as the ledger holds it.
type storedRecord struct{ item, kind, blob string }

// warning reads the item, kind and blob of a lost record's warning.
var warning = regexp.MustCompile(`item=(\S+) kind=(\S+) blob=(\S+)`)

// records lists the store's records of kind (every kind when empty).
func records(t *testing.T, storeDir, kind string) []storedRecord {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+storeDir+"/ledger.db?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(context.Background(), `SELECT item, kind, blob FROM records WHERE kind = ? OR ? = '' ORDER BY item`, kind, kind)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []storedRecord
	for rows.Next() {
		var r storedRecord
		if err := rows.Scan(&r.item, &r.kind, &r.blob); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// damageBlob loses (removes) or garbles a stored blob.
func damageBlob(t *testing.T, storeDir, blob, how string) {
	t.Helper()
	p := filepath.Join(storeDir, "blobs", blob[:2], blob+".zst")
	var err error
	switch how {
	case "lost":
		err = os.Remove(p)
	case "damaged":
		err = os.WriteFile(p, []byte("not zstd at all"), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A stored record that is lost or damaged and can be asked for again is
// asked for again, logged once, and the run goes on: the dataset it
// publishes is the one the intact store gives, and the next run asks
// nothing and warns of nothing. One lost robots.txt blob wedged every
// later run and fetch (exit 1 at start, forever).
func TestLostRecordsAreAskedAgain(t *testing.T) {
	base := t.TempDir()
	env, requests := clitest.DemoWorld(t, base)
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(base)...); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	want := clitest.Shards(t, base+"/ds")
	target := demo.TargetIDs()[0]
	tests := []struct {
		name  string
		kinds []string // the target's records of these kinds (robots-txt: every one)
		cmd   string   // run or fetch
	}{
		{"robots.txt", []string{"robots-txt"}, "run"},
		{"robots.txt, fetch", []string{"robots-txt"}, "fetch"},
		{"the page and its parse", []string{"raw", "document"}, "run"},
		{"the S2 record", []string{"s2-paper"}, "run"},
		{"the S2 references", []string{"s2-references"}, "run"},
		{"the S2 batch answer", []string{"s2-batch"}, "run"},
		{"the arXiv metadata", []string{"arxiv-meta"}, "run"},
	}
	for _, tt := range tests {
		for _, how := range []string{"lost", "damaged"} {
			if how == "damaged" && tt.name != "robots.txt" {
				continue // the store tells a garbled blob as it tells a lost one (store.TestLostRecord)
			}
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				dir := t.TempDir()
				if err := os.CopyFS(dir+"/store", os.DirFS(base+"/store")); err != nil {
					t.Fatal(err)
				}
				var damaged []storedRecord
				for _, kind := range tt.kinds {
					for _, r := range records(t, dir+"/store", kind) {
						if r.item == target || kind == "robots-txt" {
							damageBlob(t, dir+"/store", r.blob, how)
							damaged = append(damaged, r)
						}
					}
				}
				if len(damaged) == 0 {
					t.Fatalf("no %v record of %s", tt.kinds, target)
				}
				args := clitest.DemoRunArgs(dir, "--store", dir+"/store")
				if tt.cmd == "fetch" {
					args = append([]string{"fetch", "--store", dir + "/store", "--arxiv-interval", "1ms"}, demo.TargetIDs()...)
				}
				n := requests.Load()
				code, _, stderr := clitest.Run(t, env, args...)
				if code != 0 {
					t.Fatalf("exit %d with %s %v\n%s", code, how, tt.kinds, stderr)
				}
				if requests.Load() == n {
					t.Error("nothing was asked again")
				}
				// Blobs are content-addressed: a record of another item
				// holding the same bytes (the target's page copied to its
				// v1 item for a source pinned there) is lost with them, and
				// is warned of when the run reads it. Each lost record is
				// warned of once, every warning is of a damaged blob.
				blobs := map[string]bool{}
				for _, r := range damaged {
					blobs[r.blob] = true
				}
				warned := map[string]int{}
				for _, l := range strings.Split(stderr, "\n") {
					if !strings.Contains(l, "lost or damaged") {
						continue
					}
					m := warning.FindStringSubmatch(l)
					if m == nil || !blobs[m[3]] {
						t.Errorf("a warning not of a damaged blob: %s", l)
						continue
					}
					warned[m[1]+" "+m[2]]++
				}
				for rec, n := range warned {
					if n != 1 {
						t.Errorf("%d warnings of the lost record %s, want 1\n%s", n, rec, stderr)
					}
				}
				for _, r := range damaged {
					if warned[r.item+" "+r.kind] != 1 {
						t.Errorf("no warning of the lost %s %s\n%s", r.kind, r.item, stderr)
						break
					}
					if !strings.Contains(stderr, r.blob) {
						t.Errorf("the warning does not name the blob of %s %s:\n%s", r.kind, r.item, stderr)
					}
				}
				if tt.cmd == "run" && !reflect.DeepEqual(clitest.Shards(t, dir+"/ds"), want) {
					t.Error("the dataset differs from the one the intact store gives")
				}
				// Healed: the next run asks nothing and warns of nothing.
				n = requests.Load()
				if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir, "--store", dir+"/store")...); code != 0 || strings.Contains(stderr, "lost or damaged") || requests.Load() != n {
					t.Errorf("the next run: exit %d, %d requests\n%s", code, requests.Load()-n, stderr)
				}
			})
		}
	}
}

// What a command cannot ask for again is a failure that says which record
// is lost and what makes it again: curate dataset reads the store alone.
func TestLostRecordTheDatasetNeeds(t *testing.T) {
	dir := t.TempDir()
	env, _ := clitest.DemoWorld(t, dir)
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir)...); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	before := clitest.TreeDigest(t, dir+"/ds")
	target := demo.TargetIDs()[0]
	for _, kind := range []string{"selections", "summary", "edges", "document"} {
		for _, r := range records(t, dir+"/store", kind) {
			if r.item == target {
				damageBlob(t, dir+"/store", r.blob, "lost")
			}
		}
	}
	code, _, stderr := clitest.Run(t, env, "dataset", "--out", dir+"/ds", "--test-from", "2025-09-01")
	if code != 2 || !strings.Contains(stderr, "record of \""+target+"\" is lost or damaged") || !strings.Contains(stderr, "curate run") {
		t.Errorf("exit %d, want 2 naming the lost record and what makes it again:\n%s", code, stderr)
	}
	if clitest.TreeDigest(t, dir+"/ds") != before {
		t.Error("the published dataset changed")
	}
	// A run makes them again.
	if code, _, stderr := clitest.Run(t, env, clitest.DemoRunArgs(dir)...); code != 0 {
		t.Fatalf("run after the loss: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := clitest.Run(t, env, "dataset", "--out", dir+"/ds", "--test-from", "2025-09-01"); code != 0 {
		t.Errorf("dataset after the run: exit %d\n%s", code, stderr)
	}
}
