package atomicdir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// PrevSuffix names the previous directory kept beside OUT: OUT.prev.
const PrevSuffix = ".prev"

// ErrSimulatedCrash, returned by an Options.Hook, stops Replace as a
// kill -9 would: the temporary directory is left behind, for the next
// Replace to remove. Any other error from a hook removes it.
var ErrSimulatedCrash = errors.New("simulated crash")

// Options configure Replace.
type Options struct {
	// Owns reports whether the existing directory dir is one this caller
	// wrote, and so may be replaced (and kept as OUT.prev). An empty
	// directory is always replaceable; nil Owns owns nothing else.
	Owns func(dir string) bool
	// Describe completes the refusal "refusing to replace DIR: it is not
	// empty and not <Describe>", e.g. "a dataset (no README.md and data/)".
	Describe string
	// KeepPrev keeps the replaced directory as OUT.prev, removing an older
	// OUT.prev; without it the replaced directory is removed.
	KeepPrev bool

	// Hook, when set (by tests), runs at each step: "built" (build
	// returned), "swap" (the tree is synced; nothing has moved yet),
	// "exchanged" (after an atomic exchange: the temporary directory holds
	// the old one), "moved-aside" (fallback: OUT was renamed away and is
	// absent). An error aborts Replace there; see ErrSimulatedCrash.
	Hook func(step string) error
	// Exchange atomically swaps the directories a and b, or returns
	// ErrNoExchange to make Replace use two renames. Nil: renameat2
	// RENAME_EXCHANGE on Linux, the fallback elsewhere.
	Exchange func(a, b string) error
}

// Replace publishes a directory at out. build fills tmp, an empty
// directory (mode 0755) beside out, and syncs every file it writes (see
// WriteFileSync, WriteFileFunc); Replace then syncs every directory under
// tmp and puts tmp at out. It refuses, before writing anything, to
// replace an out (or, with KeepPrev, an out.prev) that is not a
// directory, or not empty and not owned by the caller. Errors from build
// are returned as they are.
func Replace(ctx context.Context, out string, opts Options, build func(tmp string) error) (err error) {
	hook := opts.Hook
	if hook == nil {
		hook = func(string) error { return nil }
	}
	if opts.Exchange == nil {
		opts.Exchange = exchange
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return err
	}
	parent, base := filepath.Dir(out), filepath.Base(out)
	if err := checkReplaceable(out, opts); err != nil {
		return err
	}
	if opts.KeepPrev {
		if err := checkReplaceable(out+PrevSuffix, opts); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	// Temporary directories of writes that crashed.
	stale, _ := filepath.Glob(filepath.Join(parent, "."+base+".tmp-*"))
	for _, s := range stale {
		if err := os.RemoveAll(s); err != nil {
			return fmt.Errorf("remove stale %s: %w", s, err)
		}
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil && !errors.Is(err, ErrSimulatedCrash) {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := build(tmp); err != nil {
		return err
	}
	if err := hook("built"); err != nil {
		return err
	}
	if err := SyncTree(tmp); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := hook("swap"); err != nil {
		return err
	}
	return swap(tmp, out, opts, hook)
}

// swap puts the complete directory tmp at out. What out held goes to
// out.prev with KeepPrev, else to a temporary name that is then removed.
func swap(tmp, out string, opts Options, hook func(string) error) error {
	parent := filepath.Dir(out)
	if _, err := os.Lstat(out); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(tmp, out); err != nil {
			return err
		}
		return SyncDir(parent)
	}
	aside := tmp + ".old" // matches the stale pattern: a crash leaves nothing for good
	if opts.KeepPrev {
		aside = out + PrevSuffix
		if err := os.RemoveAll(aside); err != nil {
			return err
		}
	}
	switch err := opts.Exchange(tmp, out); {
	case err == nil:
		// tmp now holds the previous directory.
		if err := hook("exchanged"); err != nil {
			return err
		}
		if err := os.Rename(tmp, aside); err != nil {
			return err
		}
	case errors.Is(err, ErrNoExchange):
		// Between these renames out is absent and aside is complete.
		if err := os.Rename(out, aside); err != nil {
			return err
		}
		if err := hook("moved-aside"); err != nil {
			return err
		}
		if err := os.Rename(tmp, out); err != nil {
			return err
		}
	default:
		return err
	}
	if err := SyncDir(parent); err != nil {
		return err
	}
	if !opts.KeepPrev {
		// Published; a failure here leaves a stale directory that the
		// next Replace removes.
		os.RemoveAll(aside)
	}
	return nil
}

// checkReplaceable returns nil when path is absent, an empty directory or
// a directory opts.Owns, and an error otherwise: Replace never moves aside
// a directory its caller did not write.
func checkReplaceable(path string, opts Options) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	if len(entries) == 0 || (opts.Owns != nil && opts.Owns(path)) {
		return nil
	}
	what := opts.Describe
	if what == "" {
		what = "one this program wrote"
	}
	return fmt.Errorf("refusing to replace %s: it is not empty and not %s", path, what)
}
