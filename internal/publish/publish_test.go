package publish

import (
	"context"
	"errors"
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
		{"extra file", func(d string) error { return os.WriteFile(filepath.Join(d, "data/stray.parquet"), nil, 0o644) }, "not in the manifest"},
		{"no manifest", func(d string) error { return os.Remove(filepath.Join(d, ManifestFile)) }, ""},
	}
	for _, tt := range damages {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			opts := Options{Kind: "dataset", Version: "v1", Inputs: "d", Owns: func(string) bool { return true }}
			build := writeFiles(map[string]string{"README.md": "card", "data/train.parquet": "rows"})
			if _, err := Dir(ctx, out, opts, build); err != nil {
				t.Fatal(err)
			}
			if err := tt.damage(out); err != nil {
				t.Fatal(err)
			}
			_, problems, err := Verify(out)
			if tt.want != "" && (err != nil || len(problems) == 0 || !strings.Contains(strings.Join(problems, "; "), tt.want)) {
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
