package atomicdir

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A test directory is ours when it holds the file "mark"; its content is
// the file "v".
const mark = "mark"

// written is the tests' Options.Written: a directory holding mark is
// ours, and we wrote what build writes.
func written(dir string) ([]string, bool) {
	if _, err := os.Stat(filepath.Join(dir, mark)); err != nil {
		return nil, false
	}
	return []string{mark, "sub/x", "v"}, true
}

// put makes dir one of ours holding v.
func put(t *testing.T, dir, v string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{mark: "", "v": v} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// read returns the content of dir, "" when it has none.
func read(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "v"))
	return string(b)
}

// build returns a build func writing v the way callers do, in a
// subdirectory too.
func build(v string) func(tmp string) error {
	return func(tmp string) error {
		if err := os.Mkdir(filepath.Join(tmp, "sub"), 0o755); err != nil {
			return err
		}
		if err := WriteFileSync(filepath.Join(tmp, "sub", "x"), []byte("x")); err != nil {
			return err
		}
		if err := WriteFileSync(filepath.Join(tmp, mark), nil); err != nil {
			return err
		}
		return WriteFileSync(filepath.Join(tmp, "v"), []byte(v))
	}
}

// beside lists the names in dir other than out and out.prev.
func beside(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); n != "out" && n != "out"+PrevSuffix {
			names = append(names, n)
		}
	}
	return names
}

func noExchange(a, b string) error { return ErrNoExchange }

func TestReplace(t *testing.T) {
	fail := errors.New("disk full")
	tests := []struct {
		name     string
		old      string // out's content before; "": absent
		prev     string // out.prev's content before
		keepPrev bool
		exchange func(a, b string) error
		step     string // the hook step that fails
		stepErr  error
		buildErr error

		wantErr  error
		wantOut  string
		wantPrev string
		wantTmp  int // temporary directories left beside out
	}{
		{name: "first write", keepPrev: true, wantOut: "new"},
		{name: "first write, no prev", wantOut: "new"},
		{name: "replace by exchange", old: "old", keepPrev: true, wantOut: "new", wantPrev: "old"},
		{name: "replace by fallback", old: "old", keepPrev: true, exchange: noExchange, wantOut: "new", wantPrev: "old"},
		{name: "one generation kept", old: "old", prev: "older", keepPrev: true, wantOut: "new", wantPrev: "old"},
		{name: "one generation kept, fallback", old: "old", prev: "older", keepPrev: true, exchange: noExchange, wantOut: "new", wantPrev: "old"},
		{name: "replace by exchange, no prev", old: "old", wantOut: "new"},
		{name: "replace by fallback, no prev", old: "old", exchange: noExchange, wantOut: "new"},
		{name: "no prev leaves an old prev alone", old: "old", prev: "older", wantOut: "new", wantPrev: "older"},

		// A failure before the swap leaves out and out.prev untouched; a
		// crash leaves its temporary directory, an error does not.
		{name: "build fails", old: "old", prev: "older", keepPrev: true, buildErr: fail, wantErr: fail, wantOut: "old", wantPrev: "older"},
		{name: "crash at built", old: "old", prev: "older", keepPrev: true, step: "built", stepErr: ErrSimulatedCrash, wantErr: ErrSimulatedCrash, wantOut: "old", wantPrev: "older", wantTmp: 1},
		{name: "crash at swap", old: "old", prev: "older", keepPrev: true, step: "swap", stepErr: ErrSimulatedCrash, wantErr: ErrSimulatedCrash, wantOut: "old", wantPrev: "older", wantTmp: 1},
		{name: "error at swap", old: "old", prev: "older", keepPrev: true, step: "swap", stepErr: fail, wantErr: fail, wantOut: "old", wantPrev: "older"},
		{name: "crash at swap, first write", step: "swap", stepErr: ErrSimulatedCrash, wantErr: ErrSimulatedCrash, wantTmp: 1},

		// During the swap: out is new, or absent with the old one whole in
		// out.prev.
		{name: "crash at exchanged", old: "old", prev: "older", keepPrev: true, step: "exchanged", stepErr: ErrSimulatedCrash, wantErr: ErrSimulatedCrash, wantOut: "new", wantTmp: 1},
		{name: "crash at moved-aside", old: "old", prev: "older", keepPrev: true, exchange: noExchange, step: "moved-aside", stepErr: ErrSimulatedCrash, wantErr: ErrSimulatedCrash, wantPrev: "old", wantTmp: 1},
		{name: "crash at exchanged, no prev", old: "old", step: "exchanged", stepErr: ErrSimulatedCrash, wantErr: ErrSimulatedCrash, wantOut: "new", wantTmp: 1},
		{name: "crash at moved-aside, no prev", old: "old", exchange: noExchange, step: "moved-aside", stepErr: ErrSimulatedCrash, wantErr: ErrSimulatedCrash, wantTmp: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			if tt.old != "" {
				put(t, out, tt.old)
			}
			if tt.prev != "" {
				put(t, out+PrevSuffix, tt.prev)
			}
			opts := Options{Written: written, Describe: "a test directory", KeepPrev: tt.keepPrev, Exchange: tt.exchange,
				Hook: func(s string) error {
					if s == tt.step {
						return tt.stepErr
					}
					return nil
				}}
			b := build("new")
			if tt.buildErr != nil {
				b = func(string) error { return tt.buildErr }
			}
			err := Replace(context.Background(), out, opts, b)
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("Replace: %v, want %v", err, tt.wantErr)
			}
			if got := read(out); got != tt.wantOut {
				t.Errorf("out holds %q, want %q", got, tt.wantOut)
			}
			if got := read(out + PrevSuffix); got != tt.wantPrev {
				t.Errorf("out.prev holds %q, want %q", got, tt.wantPrev)
			}
			if got := beside(t, dir); len(got) != tt.wantTmp {
				t.Errorf("left beside out: %v, want %d temporary directories", got, tt.wantTmp)
			}
			if tt.wantOut == "new" {
				if b, err := os.ReadFile(filepath.Join(out, "sub", "x")); err != nil || string(b) != "x" {
					t.Errorf("out/sub/x: %q %v", b, err)
				}
				if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o755 {
					t.Errorf("out mode: %v %v", fi.Mode(), err)
				}
			}

			// The next Replace removes what a crash left and publishes.
			if err := Replace(context.Background(), out, Options{Written: written, KeepPrev: tt.keepPrev}, build("next")); err != nil {
				t.Fatalf("next Replace: %v", err)
			}
			if got := read(out); got != "next" {
				t.Errorf("after the next Replace out holds %q", got)
			}
			if tt.keepPrev && tt.wantOut != "" && read(out+PrevSuffix) != tt.wantOut {
				t.Errorf("after the next Replace out.prev holds %q, want %q", read(out+PrevSuffix), tt.wantOut)
			}
			if got := beside(t, dir); len(got) != 0 {
				t.Errorf("left beside out after the next Replace: %v", got)
			}
		})
	}
}

// TestReplaceExchanges checks that on Linux the swap is one exchange.
func TestReplaceExchanges(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("renameat2 is Linux only")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	put(t, out, "old")
	probe := filepath.Join(dir, "probe")
	put(t, probe, "probe")
	if err := exchange(probe, out); errors.Is(err, ErrNoExchange) {
		t.Skipf("this file system cannot exchange: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	if read(out) != "probe" || read(probe) != "old" {
		t.Fatalf("exchange swapped nothing: out %q, probe %q", read(out), read(probe))
	}
	os.RemoveAll(probe)
	var steps []string
	hook := func(s string) error { steps = append(steps, s); return nil }
	if err := Replace(context.Background(), out, Options{Written: written, KeepPrev: true, Hook: hook}, build("new")); err != nil {
		t.Fatal(err)
	}
	if want := []string{"built", "swap", "exchanged"}; !slices.Equal(steps, want) {
		t.Errorf("steps %v, want %v", steps, want)
	}
	if read(out) != "new" || read(out+PrevSuffix) != "probe" {
		t.Errorf("out %q, out.prev %q", read(out), read(out+PrevSuffix))
	}
}

func TestReplaceRefuses(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T, out string)
		keepPrev bool
		want     string // in the error; "": no error
	}{
		{"foreign out", func(t *testing.T, out string) { foreign(t, out) }, true, "refusing to replace"},
		{"foreign out, no prev", func(t *testing.T, out string) { foreign(t, out) }, false, "refusing to replace"},
		{"foreign out.prev", func(t *testing.T, out string) { put(t, out, "old"); foreign(t, out+PrevSuffix) }, true, "refusing to replace"},
		{"foreign out.prev, no prev", func(t *testing.T, out string) { put(t, out, "old"); foreign(t, out+PrevSuffix) }, false, ""},
		{"out is a file", func(t *testing.T, out string) { os.WriteFile(out, []byte("x"), 0o644) }, true, "is not a directory"},
		{"empty out", func(t *testing.T, out string) { os.Mkdir(out, 0o755) }, true, ""},
		{"empty out.prev", func(t *testing.T, out string) { put(t, out, "old"); os.Mkdir(out+PrevSuffix, 0o755) }, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			tt.setup(t, out)
			built := false
			err := Replace(context.Background(), out, Options{Written: written, Describe: "a test directory (no mark)", KeepPrev: tt.keepPrev},
				func(tmp string) error { built = true; return build("new")(tmp) })
			if tt.want == "" {
				if err != nil || read(out) != "new" {
					t.Fatalf("Replace: %v; out holds %q", err, read(out))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Replace: %v, want %q", err, tt.want)
			}
			if strings.Contains(tt.want, "refusing") && !strings.Contains(err.Error(), "not empty and not a test directory (no mark)") {
				t.Errorf("the refusal does not describe what it wants: %v", err)
			}
			if built {
				t.Error("built before refusing")
			}
			for _, p := range []string{out, out + PrevSuffix} {
				if b, err := os.ReadFile(filepath.Join(p, "thesis.tex")); err == nil && string(b) != "years of work" {
					t.Errorf("%s touched", p)
				}
			}
			if got := beside(t, dir); len(got) != 0 {
				t.Errorf("left beside out: %v", got)
			}
		})
	}
}

func foreign(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "thesis.tex"), []byte("years of work"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReplaceRemovesStale(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	put(t, out, "old")
	for _, s := range []string{".out.tmp-123", ".out.tmp-456.old"} {
		put(t, filepath.Join(dir, s), "stale")
	}
	put(t, filepath.Join(dir, ".other.tmp-1"), "someone else's") // another output's
	if err := Replace(context.Background(), out, Options{Written: written}, build("new")); err != nil {
		t.Fatal(err)
	}
	if got := beside(t, dir); !slices.Equal(got, []string{".other.tmp-1"}) {
		t.Errorf("left beside out: %v", got)
	}
}

func TestReplaceCanceled(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	put(t, out, "old")
	ctx, cancel := context.WithCancel(context.Background())
	err := Replace(ctx, out, Options{Written: written, KeepPrev: true}, func(tmp string) error {
		cancel() // canceled while building: nothing moves
		return build("new")(tmp)
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Replace: %v", err)
	}
	if read(out) != "old" || len(beside(t, dir)) != 0 {
		t.Errorf("out %q, beside %v", read(out), beside(t, dir))
	}
}

func TestReplaceRelative(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := Replace(context.Background(), "out", Options{Written: written, KeepPrev: true}, build("new")); err != nil {
		t.Fatal(err)
	}
	if err := Replace(context.Background(), "out", Options{Written: written, KeepPrev: true}, build("next")); err != nil {
		t.Fatal(err)
	}
	if read(filepath.Join(dir, "out")) != "next" || read(filepath.Join(dir, "out"+PrevSuffix)) != "new" {
		t.Errorf("relative out: %q, %q", read(filepath.Join(dir, "out")), read(filepath.Join(dir, "out"+PrevSuffix)))
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := WriteFileSync(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileSync(p, []byte("two")); !errors.Is(err, os.ErrExist) {
		t.Errorf("WriteFileSync over a file: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one" {
		t.Errorf("file holds %q", b)
	}
	fail := errors.New("encoder failed")
	q := filepath.Join(dir, "g")
	if err := WriteFileFunc(q, func(io.Writer) error { return fail }); !errors.Is(err, fail) || !strings.Contains(err.Error(), q) {
		t.Errorf("WriteFileFunc: %v", err)
	}
	if err := SyncTree(dir); err != nil {
		t.Errorf("SyncTree: %v", err)
	}
	if err := SyncDir(filepath.Join(dir, "absent")); err == nil {
		t.Error("SyncDir of an absent directory")
	}
}

func TestWriteJSONL(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rows.jsonl")
	type row struct {
		A string `json:"a"`
	}
	if err := WriteJSONL(p, []row{{"<b>&"}, {"x"}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if want := "{\"a\":\"<b>&\"}\n{\"a\":\"x\"}\n"; string(b) != want {
		t.Errorf("got %q, want %q", b, want)
	}
}
