package atomicdir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// userFiles are what a user keeps beside a publication: a history, notes,
// a private file, a symlink and an empty directory.
var userFiles = map[string]string{
	".git/HEAD":              "ref: refs/heads/main\n",
	".git/objects/ab/cdef01": "blob",
	"notes.md":               "my notes",
	"private":                "secret",
}

// plantUser puts the user's files into dir and returns, per path, the
// file's identity to compare after the publication.
func plantUser(t *testing.T, dir string) map[string]os.FileInfo {
	t.Helper()
	for rel, body := range userFiles {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "private"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("notes.md", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	ids := map[string]os.FileInfo{}
	for rel := range userFiles {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		ids[rel] = fi
	}
	return ids
}

// checkUser reports any of the user's files that dir lacks or changed.
func checkUser(t *testing.T, dir string, ids map[string]os.FileInfo) {
	t.Helper()
	for rel, body := range userFiles {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		b, err := os.ReadFile(p)
		if err != nil || string(b) != body {
			t.Errorf("%s: %q, %v; want %q", rel, b, err, body)
			continue
		}
		if fi, err := os.Stat(p); err != nil || !os.SameFile(fi, ids[rel]) || fi.Mode() != ids[rel].Mode() {
			t.Errorf("%s is not the user's file any more (%v, %v)", rel, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, ".git")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf(".git mode: %v %v", fi, err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "link")); err != nil || target != "notes.md" {
		t.Errorf("link: %q %v", target, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "empty")); err != nil || !fi.IsDir() {
		t.Errorf("empty directory: %v", err)
	}
}

// holdsUser reports whether dir holds any of the user's entries.
func holdsUser(dir string) []string {
	var found []string
	for _, rel := range []string{".git", "notes.md", "private", "link", "empty"} {
		if _, err := os.Lstat(filepath.Join(dir, rel)); err == nil {
			found = append(found, rel)
		}
	}
	return found
}

// A publication replaced keeps every entry of the user's, the same files
// with their modes, whether the swap is an exchange or two renames and
// whatever step it stopped at; the old one (OUT.prev) keeps none of them,
// and nothing is left beside OUT.
func TestReplaceKeepsUserFiles(t *testing.T) {
	for _, keepPrev := range []bool{true, false} {
		for _, ex := range []struct {
			name string
			fn   func(a, b string) error
		}{{"exchange", nil}, {"fallback", noExchange}} {
			for _, step := range []string{"", "built", "swap", "exchanged", "moved-aside"} {
				if (step == "exchanged" && ex.fn != nil) || (step == "moved-aside" && ex.fn == nil) {
					continue
				}
				name := ex.name + "/stop at " + step
				if keepPrev {
					name += "/prev"
				}
				t.Run(name, func(t *testing.T) {
					if ex.fn == nil && step == "exchanged" {
						probe(t)
					}
					dir := t.TempDir()
					out := filepath.Join(dir, "out")
					if err := Replace(context.Background(), out, Options{Written: written}, build("old")); err != nil {
						t.Fatal(err)
					}
					ids := plantUser(t, out)
					opts := Options{Written: written, KeepPrev: keepPrev, Exchange: ex.fn, Hook: func(s string) error {
						if s == step {
							return ErrSimulatedCrash
						}
						return nil
					}}
					err := Replace(context.Background(), out, opts, build("new"))
					if step == "" && err != nil || step != "" && !errors.Is(err, ErrSimulatedCrash) {
						t.Fatalf("Replace: %v", err)
					}
					switch step {
					case "", "exchanged":
						checkUser(t, out, ids)
					case "moved-aside": // out is absent; the old directory, whole, is aside
					default:
						checkUser(t, out, ids)
						if read(out) != "old" {
							t.Errorf("out holds %q", read(out))
						}
					}
					// The next publication, from whatever the stop left.
					if err := Replace(context.Background(), out, Options{Written: written, KeepPrev: keepPrev, Exchange: ex.fn}, build("next")); err != nil {
						t.Fatalf("next Replace: %v", err)
					}
					checkUser(t, out, ids)
					if read(out) != "next" {
						t.Errorf("out holds %q", read(out))
					}
					if keepPrev {
						if got := holdsUser(out + PrevSuffix); len(got) > 0 {
							t.Errorf("out.prev holds the user's %v", got)
						}
						if read(out+PrevSuffix) == "" {
							t.Error("no previous publication kept")
						}
					}
					if got := beside(t, dir); len(got) != 0 {
						t.Errorf("left beside out: %v", got)
					}
				})
			}
		}
	}
}

// probe skips when the file system cannot exchange directories.
func probe(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.Mkdir(a, 0o755)
	os.Mkdir(b, 0o755)
	if err := exchange(a, b); err != nil {
		t.Skipf("no exchange here: %v", err)
	}
}

// What cannot be kept is refused before anything is built, naming it, and
// nothing is touched: a file of the user's inside a directory the
// publication writes, one at a path the new publication writes, one in
// OUT.prev, one in a temporary directory a stop left, a directory that is
// no publication.
func TestReplaceRefusesWhatItCannotKeep(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, out string)
		build   func(tmp string) error
		want    string
		touches bool // built before refusing (the clash shows only then)
	}{
		{name: "a file in the publication's own directory", setup: func(t *testing.T, out string) {
			os.WriteFile(filepath.Join(out, "sub", "mine.txt"), []byte("x"), 0o644)
		}, want: "sub/mine.txt, inside the directories it publishes, is not in its manifest"},
		{name: "an empty directory in the publication's own directory", setup: func(t *testing.T, out string) {
			os.Mkdir(filepath.Join(out, "sub", "d"), 0o755)
		}, want: "sub/d/, inside"},
		{name: "a file where the new publication writes one", setup: func(t *testing.T, out string) {
			os.WriteFile(filepath.Join(out, "report.html"), []byte("mine"), 0o644)
		}, build: func(tmp string) error {
			if err := build("new")(tmp); err != nil {
				return err
			}
			return WriteFileSync(filepath.Join(tmp, "report.html"), []byte("curate's"))
		}, want: "report.html: not this program's to replace: the new publication writes a file of that name", touches: true},
		{name: "a file in out.prev", setup: func(t *testing.T, out string) {
			put(t, out+PrevSuffix, "older")
			os.WriteFile(filepath.Join(out+PrevSuffix, "keep.txt"), []byte("x"), 0o644)
		}, want: "it holds keep.txt, not in its manifest"},
		{name: "a file in a stopped publication's directory", setup: func(t *testing.T, out string) {
			s := filepath.Join(filepath.Dir(out), ".out.tmp-1.old")
			put(t, s, "older")
			os.WriteFile(filepath.Join(s, "late.txt"), []byte("x"), 0o644)
		}, want: ".out.tmp-1.old, left by a publication"},
		{name: "no publication", setup: func(t *testing.T, out string) {
			os.Remove(filepath.Join(out, mark))
		}, want: "it is not empty and not a test directory (it holds sub/x, v)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			if err := Replace(context.Background(), out, Options{Written: written}, build("old")); err != nil {
				t.Fatal(err)
			}
			tt.setup(t, out)
			before := snapshot(t, dir)
			built := false
			b := tt.build
			if b == nil {
				b = build("new")
			}
			err := Replace(context.Background(), out, Options{Written: written, Describe: "a test directory", KeepPrev: true},
				func(tmp string) error { built = true; return b(tmp) })
			if !errors.Is(err, ErrNotOurs) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Replace: %v, want ErrNotOurs naming %q", err, tt.want)
			}
			if built != tt.touches {
				t.Errorf("built %v, want %v", built, tt.touches)
			}
			if after := snapshot(t, dir); !slices.Equal(after, before) {
				t.Errorf("touched:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// snapshot lists every path under dir with its content.
func snapshot(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel += "=" + string(b)
		}
		out = append(out, rel)
		return nil
	})
	return out
}

// An empty directory the old publication had (a split without rows) that
// the new one writes into is no clash.
func TestReplaceEmptyDirectoryWrittenAgain(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	empty := func(tmp string) error {
		if err := build("old")(tmp); err != nil {
			return err
		}
		return os.Mkdir(filepath.Join(tmp, "rows"), 0o755)
	}
	if err := Replace(context.Background(), out, Options{Written: written}, empty); err != nil {
		t.Fatal(err)
	}
	full := func(tmp string) error {
		if err := build("new")(tmp); err != nil {
			return err
		}
		if err := os.Mkdir(filepath.Join(tmp, "rows"), 0o755); err != nil {
			return err
		}
		return WriteFileSync(filepath.Join(tmp, "rows", "1"), []byte("row"))
	}
	if err := Replace(context.Background(), out, Options{Written: written, KeepPrev: true}, full); err != nil {
		t.Fatalf("Replace: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "rows", "1")); err != nil || string(b) != "row" {
		t.Errorf("rows/1: %q %v", b, err)
	}
}

// A file the user writes into OUT while the new publication is built is
// carried too.
func TestReplaceKeepsFileWrittenDuringBuild(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := Replace(context.Background(), out, Options{Written: written}, build("old")); err != nil {
		t.Fatal(err)
	}
	err := Replace(context.Background(), out, Options{Written: written, KeepPrev: true}, func(tmp string) error {
		if err := os.WriteFile(filepath.Join(out, "late.md"), []byte("late"), 0o644); err != nil {
			return err
		}
		return build("new")(tmp)
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "late.md")); err != nil || string(b) != "late" {
		t.Errorf("late.md: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(out+PrevSuffix, "late.md")); !os.IsNotExist(err) {
		t.Errorf("out.prev holds late.md: %v", err)
	}
}
