package publish

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/groundwork/curate/internal/atomicdir"
)

func writeFiles(files map[string]string) func(string) error {
	return func(tmp string) error {
		for name, body := range files {
			p := filepath.Join(tmp, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := atomicdir.WriteFileSync(p, []byte(body)); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestDirManifestAndUpToDate(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "out")
	opts := Options{Kind: "dataset", Version: "v1", Inputs: "digest-1", Splits: []string{"train"}}
	files := map[string]string{"README.md": "card", "data/train.parquet": "rows"}
	builds := 0
	build := func(tmp string) error { builds++; return writeFiles(files)(tmp) }

	if pub, err := Dir(ctx, out, opts, build); err != nil || !pub {
		t.Fatalf("first publish: %v, %v", pub, err)
	}
	m, problems, err := Verify(out)
	if err != nil || len(problems) > 0 {
		t.Fatalf("Verify: %v, %v", problems, err)
	}
	if m.Kind != "dataset" || m.Inputs != "digest-1" || m.CurateVersion != "v1" || len(m.Files) != 2 ||
		m.Files[0].Path != "README.md" || m.Files[1].Path != "data/train.parquet" || m.Files[1].Size != 4 {
		t.Errorf("manifest %+v", m)
	}
	// Same inputs: nothing is built.
	if pub, err := Dir(ctx, out, opts, build); err != nil || pub || builds != 1 {
		t.Errorf("same inputs: published %v, err %v, builds %d", pub, err, builds)
	}
	// Other inputs or another version: built again.
	for _, o := range []Options{{Kind: "dataset", Version: "v1", Inputs: "digest-2"}, {Kind: "dataset", Version: "v2", Inputs: "digest-2"}} {
		before := builds
		if pub, err := Dir(ctx, out, o, build); err != nil || !pub || builds != before+1 {
			t.Errorf("%+v: published %v, err %v", o, pub, err)
		}
	}
}

// A damaged publication is never up to date: each damage is found and the
// next Dir rebuilds it.
func TestDamageIsRebuilt(t *testing.T) {
	ctx := context.Background()
	damages := []struct {
		name   string
		damage func(dir string) error
		want   string
	}{
		{"deleted", func(d string) error { return os.Remove(filepath.Join(d, "data/train.parquet")) }, "missing"},
		{"garbled", func(d string) error {
			return os.WriteFile(filepath.Join(d, "data/train.parquet"), []byte("ROWS"), 0o644)
		}, "SHA-256"},
		{"truncated", func(d string) error { return os.Truncate(filepath.Join(d, "data/train.parquet"), 1) }, "bytes"},
	}
	for _, tt := range damages {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			opts := Options{Kind: "dataset", Version: "v1", Inputs: "d"}
			build := writeFiles(map[string]string{"README.md": "card", "data/train.parquet": "rows"})
			if _, err := Dir(ctx, out, opts, build); err != nil {
				t.Fatal(err)
			}
			if err := tt.damage(out); err != nil {
				t.Fatal(err)
			}
			_, problems, err := Verify(out)
			if err != nil || len(problems) == 0 || !strings.Contains(strings.Join(problems, "; "), tt.want) {
				t.Errorf("Verify after damage: %v, %v; want a problem mentioning %q", problems, err, tt.want)
			}
			if UpToDate(out, "dataset", "v1", "d") {
				t.Fatal("a damaged publication is up to date")
			}
			if pub, err := Dir(ctx, out, opts, build); err != nil || !pub {
				t.Fatalf("rebuild: %v, %v", pub, err)
			}
			if _, problems, err := Verify(out); err != nil || len(problems) > 0 {
				t.Errorf("after rebuild: %v, %v", problems, err)
			}
		})
	}
}

// A directory curate cannot tell its files from the user's in is never
// replaced: one without a manifest (deleted, or never one), one whose
// manifest is of another kind, one with the user's file among the shards.
// Each is refused before anything is built, naming what it holds, and
// left as it was.
func TestDirRefuses(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(dir string) error
		want  string
	}{
		{"no manifest", func(d string) error { return os.Remove(filepath.Join(d, ManifestFile)) },
			"it is not empty and not a dataset publication (no manifest.json of kind \"dataset\") (it holds README.md, data/train.parquet)"},
		{"another kind", func(d string) error {
			b, _ := os.ReadFile(filepath.Join(d, ManifestFile))
			return os.WriteFile(filepath.Join(d, ManifestFile), []byte(strings.Replace(string(b), `"dataset"`, `"export"`, 1)), 0o644)
		}, "not a dataset publication"},
		{"a file of the user's among the shards", func(d string) error {
			return os.WriteFile(filepath.Join(d, "data", "notes.txt"), []byte("mine"), 0o644)
		}, "data/notes.txt, inside the directories it publishes, is not in its manifest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			opts := Options{Kind: "dataset", Version: "v1", Inputs: "d", KeepPrev: true}
			if _, err := Dir(ctx, out, opts, writeFiles(map[string]string{"README.md": "card", "data/train.parquet": "rows"})); err != nil {
				t.Fatal(err)
			}
			if err := tt.setup(out); err != nil {
				t.Fatal(err)
			}
			before := tree(t, out)
			if err := Check(out, opts); !errors.Is(err, ErrNotOurs) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check: %v, want ErrNotOurs naming %q", err, tt.want)
			}
			built := false
			opts.Inputs = "other"
			_, err := Dir(ctx, out, opts, func(string) error { built = true; return nil })
			if !errors.Is(err, ErrNotOurs) || !strings.Contains(err.Error(), tt.want) || built {
				t.Errorf("Dir: %v (built %v), want ErrNotOurs naming %q before building", err, built, tt.want)
			}
			if _, problems, err := Verify(out); strings.Contains(tt.name, "shards") && (err != nil || len(problems) != 1 || problems[0] != "data/notes.txt is not in the manifest") {
				t.Errorf("Verify: %v %v", problems, err)
			}
			if after := tree(t, out); after != before {
				t.Errorf("touched:\n%s\n%s", before, after)
			}
		})
	}
}

// Files the manifest does not list, outside the directories it writes,
// are the user's: they survive a republish, do not make the publication
// damaged or out of date, and are never listed in a manifest.
func TestDirKeepsUserFiles(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "out")
	opts := Options{Kind: "dataset", Version: "v1", Inputs: "d1", KeepPrev: true}
	if _, err := Dir(ctx, out, opts, writeFiles(map[string]string{"README.md": "card", "data/train.parquet": "rows"})); err != nil {
		t.Fatal(err)
	}
	user := map[string]string{".git/HEAD": "ref", "notes.md": "mine", "extra/deep/x.parquet": "not a shard of curate's"}
	if err := writeFiles(user)(out); err != nil {
		t.Fatal(err)
	}
	if _, problems, err := Verify(out); err != nil || len(problems) > 0 {
		t.Errorf("Verify with the user's files: %v %v", problems, err)
	}
	if !UpToDate(out, "dataset", "v1", "d1") {
		t.Error("the user's files make the publication out of date")
	}
	opts.Inputs = "d2"
	if pub, err := Dir(ctx, out, opts, writeFiles(map[string]string{"README.md": "card 2", "data/train.parquet": "rows 2"})); err != nil || !pub {
		t.Fatalf("republish: %v %v", pub, err)
	}
	for rel, body := range user {
		if b, err := os.ReadFile(filepath.Join(out, rel)); err != nil || string(b) != body {
			t.Errorf("%s after the republish: %q %v", rel, b, err)
		}
		if _, err := os.Stat(filepath.Join(out+atomicdir.PrevSuffix, rel)); !os.IsNotExist(err) {
			t.Errorf("%s is in out.prev too: %v", rel, err)
		}
	}
	m, problems, err := Verify(out)
	if err != nil || len(problems) > 0 || len(m.Files) != 2 {
		t.Errorf("after the republish: %+v %v %v", m, problems, err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "README.md")); string(b) != "card 2" {
		t.Errorf("README.md %q", b)
	}
}

// tree lists every path and content under dir.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		body, _ := os.ReadFile(p)
		fmt.Fprintf(&b, "%s %q\n", rel, body)
		return nil
	})
	return b.String()
}

// With Locked the caller's lock stands for Dir's: a run holds it from its
// start to its end.
func TestDirLocked(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	unlock, err := Lock(out)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := Dir(context.Background(), out, Options{Kind: "x"}, writeFiles(map[string]string{"a": "b"})); !errors.Is(err, ErrLocked) {
		t.Errorf("Dir without Locked under a held lock: %v", err)
	}
	if _, err := Dir(context.Background(), out, Options{Kind: "x", Locked: true}, writeFiles(map[string]string{"a": "b"})); err != nil {
		t.Errorf("Dir with Locked: %v", err)
	}
}

func TestLockSerializesPublishers(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	unlock, err := Lock(out)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Dir(context.Background(), out, Options{Kind: "x"}, writeFiles(map[string]string{"a": "b"}))
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid") {
		t.Errorf("publish while locked: %v, want ErrLocked naming the pid", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("out exists after a refused publish: %v", err)
	}
	unlock()
	if _, err := Dir(context.Background(), out, Options{Kind: "x"}, writeFiles(map[string]string{"a": "b"})); err != nil {
		t.Errorf("after unlock: %v", err)
	}
}

// Many publishers at once: each either publishes or is refused, and the
// directory verifies after every round.
func TestConcurrentPublishers(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for round := range 20 {
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				body := strings.Repeat("x", 1000*(i+1))
				_, errs[i] = Dir(context.Background(), out, Options{Kind: "dataset", Version: "v"},
					writeFiles(map[string]string{"README.md": body, "data/a.parquet": body, "data/b.parquet": body}))
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, ErrLocked):
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if ok == 0 {
			t.Fatalf("round %d: nobody published", round)
		}
		if _, problems, err := Verify(out); err != nil || len(problems) > 0 {
			t.Fatalf("round %d: %v %v", round, problems, err)
		}
	}
}
