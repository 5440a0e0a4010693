package arxivmeta_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/parse/arxivmeta"
)

// TestCheck: the quick look a command takes before anything else tells a
// snapshot, plain or gzip, from what is none, naming the file and what is
// expected, and reads no further than the first paper's line.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	data := readTestdata(t)
	// A snapshot whose later lines are not its papers' still passes the
	// check: the index skips them, and counts them.
	tail := append(append([]byte{}, data...), []byte("not json at all\n")...)
	for _, tc := range []struct {
		name string
		body []byte
		want string // "" for a snapshot
	}{
		{"snapshot.jsonl", data, ""},
		{"snapshot.jsonl.gz", gz(t, data), ""},
		{"tail.jsonl", tail, ""},
		{"leading-blank.jsonl", append([]byte("\n\n"), data...), ""},
		{"empty.json", nil, "empty"},
		{"array.json", []byte(`[{"id": "2401.00001"}]`), "JSON array"},
		{"other.json", []byte(`{"paperId": "abc", "title": "x"}` + "\n"), `no "id" and "versions"`},
		{"text.txt", []byte("2401.00001\n2401.00002\n"), "not a JSON object"},
		{"kaggle.zip", []byte("PK\x03\x04 rest of a zip"), "zip archive"},
		{"blank.jsonl", []byte("\n  \n"), "no paper's line"},
		{"bad.gz", append([]byte{0x1f, 0x8b}, "not gzip"...), "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, dir, tc.name, tc.body)
			err := arxivmeta.Check(path)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("a snapshot refused: %v", err)
				}
				return
			}
			if !errors.Is(err, arxivmeta.ErrNotSnapshot) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("got %v, want ErrNotSnapshot naming %s and saying %q", err, path, tc.want)
			}
		})
	}
	if err := arxivmeta.Check(filepath.Join(dir, "absent.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if err := arxivmeta.Check(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("a directory: %v", err)
	}
}

// TestNoBuild: under NoBuild a file without a current index is not
// indexed (nothing is written) and says so; once indexed it opens.
func TestNoBuild(t *testing.T) {
	dir, idx := t.TempDir(), filepath.Join(t.TempDir(), "index")
	path := write(t, dir, "snapshot.jsonl", readTestdata(t))
	_, err := arxivmeta.Open(context.Background(), path, arxivmeta.Options{IndexDir: idx, NoBuild: true})
	if !errors.Is(err, arxivmeta.ErrNotIndexed) {
		t.Fatalf("got %v, want ErrNotIndexed", err)
	}
	if _, err := os.Stat(idx); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the index directory was made: %v", err)
	}
	open(t, path, idx)
	s, err := arxivmeta.Open(context.Background(), path, arxivmeta.Options{IndexDir: idx, NoBuild: true})
	if err != nil {
		t.Fatalf("an indexed snapshot under NoBuild: %v", err)
	}
	s.Close()
}
