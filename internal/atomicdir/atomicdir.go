package atomicdir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// PrevSuffix names the previous directory kept beside OUT: OUT.prev.
const PrevSuffix = ".prev"

// ErrSimulatedCrash, returned by an Options.Hook, stops Replace as a
// kill -9 would: the temporary directory is left behind, for the next
// Replace to remove. Any other error from a hook removes it.
var ErrSimulatedCrash = errors.New("simulated crash")

// Options configure Replace.
type Options struct {
	// Written reads what this caller wrote in dir, a directory it
	// published (or was publishing when it stopped): the paths of its
	// files, relative with forward slashes; ok is false when dir is none
	// of its publications. Everything else in a publication is the
	// user's: Replace carries it into the new directory and deletes none
	// of it. A non-empty directory that is no publication is never
	// replaced. Nil Written recognises none.
	Written func(dir string) (files []string, ok bool)
	// Describe completes the refusal "refusing to replace DIR: it is not
	// empty and not <Describe>", e.g. "a dataset (no manifest.json)".
	Describe string
	// KeepPrev keeps the replaced directory as OUT.prev, removing an older
	// OUT.prev; without it the replaced directory is removed. Either way
	// the user's files are in OUT alone afterwards.
	KeepPrev bool

	// Hook, when set (by tests), runs at each step: "built" (build
	// returned), "swap" (the tree is synced and the user's files carried;
	// nothing has moved yet), "exchanged" (after an atomic exchange: the
	// temporary directory holds the old one), "moved-aside" (fallback: OUT
	// was renamed away and is absent). An error aborts Replace there; see
	// ErrSimulatedCrash.
	Hook func(step string) error
	// Exchange atomically swaps the directories a and b, or returns
	// ErrNoExchange to make Replace use two renames. Nil: renameat2
	// RENAME_EXCHANGE on Linux, the fallback elsewhere.
	Exchange func(a, b string) error
}

// Replace publishes a directory at out. build fills tmp, an empty
// directory (mode 0755) beside out, and syncs every file it writes (see
// WriteFileSync, WriteFileFunc); Replace then carries the user's entries
// of the directory it replaces into tmp (see Options.Written), syncs every
// directory under tmp and puts tmp at out. Before writing anything it
// refuses (ErrNotOurs) to replace an out that is not a directory, or not
// empty and not a publication, or that holds entries of the user's inside
// the caller's own directories (where they would be read as part of the
// publication); the same for an out.prev that holds the user's files, and
// for a temporary directory left by a crash that does. Errors from build
// are returned as they are.
func Replace(ctx context.Context, out string, opts Options, build func(tmp string) error) (err error) {
	if opts.Hook == nil {
		opts.Hook = func(string) error { return nil }
	}
	if opts.Exchange == nil {
		opts.Exchange = exchange
	}
	if opts.Written == nil {
		opts.Written = func(string) ([]string, bool) { return nil, false }
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return err
	}
	r := &replacer{out: out, opts: opts}
	if err := r.restore(); err != nil {
		return err
	}
	if _, err := r.userEntries(); err != nil {
		return err
	}
	if opts.KeepPrev {
		if err := r.checkPrev(); err != nil {
			return err
		}
	}
	parent, base := filepath.Dir(out), filepath.Base(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	if err := r.removeStale(); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".tmp-")
	if err != nil {
		return err
	}
	swapped := false
	defer func() {
		// Before the swap tmp holds build's files and links to the
		// user's (whose other names stay in out); after it, tmp may hold
		// the old directory, which the next Replace clears with care.
		if err != nil && !swapped && !errors.Is(err, ErrSimulatedCrash) {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := build(tmp); err != nil {
		return err
	}
	if err := opts.Hook("built"); err != nil {
		return err
	}
	// Carried as late as possible: a file the user adds while build runs
	// is kept too.
	user, err := r.userEntries()
	if err != nil {
		return err
	}
	if err := carry(out, tmp, user); err != nil {
		return err
	}
	if err := SyncTree(tmp); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := opts.Hook("swap"); err != nil {
		return err
	}
	swapped = true
	return r.swap(tmp)
}

// Check reports, writing nothing, what Replace would refuse before
// building: an out (or with KeepPrev an out.prev, or a temporary directory
// a stop left) that is not a directory, or not empty and no publication,
// or that holds entries of the user's it cannot keep (ErrNotOurs).
func Check(out string, opts Options) error {
	if opts.Written == nil {
		opts.Written = func(string) ([]string, bool) { return nil, false }
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	r := &replacer{out: out, opts: opts}
	if _, err := r.userEntries(); err != nil {
		return err
	}
	if opts.KeepPrev {
		if err := r.checkPrev(); err != nil {
			return err
		}
	}
	for _, s := range r.stale() {
		if files, ok := r.written(s); ok {
			if left := r.foreign(s, files); len(left) > 0 {
				return fmt.Errorf("refusing to remove %s, left by a publication of %s that stopped midway: it holds %s, found nowhere else: %w; move them into %s",
					s, r.out, names(left), ErrNotOurs, r.out)
			}
		}
	}
	return nil
}

// replacer is one Replace of out.
type replacer struct {
	out  string
	opts Options
}

func (r *replacer) prev() string { return r.out + PrevSuffix }

// written reads what the caller wrote in dir; ok is false for a directory
// that is no publication of its.
func (r *replacer) written(dir string) ([]string, bool) { return r.opts.Written(dir) }

// stale lists the temporary directories of Replaces of out that stopped
// before the end, sorted.
func (r *replacer) stale() []string {
	s, _ := filepath.Glob(filepath.Join(filepath.Dir(r.out), "."+filepath.Base(r.out)+".tmp-*"))
	return s
}

// restore puts back a publication that a stop between the fallback's two
// renames left aside (out absent, the old directory complete as out.prev
// or as a temporary directory), so that the user's files in it are carried
// as from any out.
func (r *replacer) restore() error {
	if _, err := os.Lstat(r.out); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	cands := r.stale()
	if r.opts.KeepPrev {
		cands = []string{r.prev()}
	}
	for _, c := range cands {
		if !strings.HasSuffix(c, ".old") && c != r.prev() {
			continue
		}
		if fi, err := os.Lstat(c); err != nil || !fi.IsDir() {
			continue
		}
		if _, ok := r.written(c); !ok {
			continue
		}
		if err := os.Rename(c, r.out); err != nil {
			return err
		}
		return SyncDir(filepath.Dir(r.out))
	}
	return nil
}

// userEntries returns the entries of out that the caller did not write
// and can carry, or the refusal: out is not a directory, or not empty and
// no publication, or holds the user's entries inside the caller's own
// directories.
func (r *replacer) userEntries() ([]entry, error) {
	fi, err := os.Stat(r.out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s exists and is not a directory", r.out)
	}
	all, err := entries(r.out)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, nil
	}
	files, ok := r.written(r.out)
	if !ok {
		what := r.opts.Describe
		if what == "" {
			what = "one this program wrote"
		}
		return nil, fmt.Errorf("refusing to replace %s: it is not empty and not %s (it holds %s): %w; publish into an empty or new directory",
			r.out, what, names(all), ErrNotOurs)
	}
	carry, stuck, err := newLayout(files).userEntries(r.out)
	if err != nil {
		return nil, err
	}
	if len(stuck) > 0 {
		return nil, fmt.Errorf("refusing to replace %s: %s, inside the directories it publishes, %s not in its manifest and would be read as part of it: %w; move %s away",
			r.out, names(stuck), isAre(len(stuck), "is", "are"), ErrNotOurs, isAre(len(stuck), "it", "them"))
	}
	return carry, nil
}

func isAre(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// checkPrev refuses an out.prev that cannot be removed to make room for
// the next: not a directory, not a publication, or holding files of the
// user's that out does not hold as well.
func (r *replacer) checkPrev() error {
	prev := r.prev()
	fi, err := os.Stat(prev)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", prev)
	}
	all, err := entries(prev)
	if err != nil || len(all) == 0 {
		return err
	}
	files, ok := r.written(prev)
	if !ok {
		what := r.opts.Describe
		if what == "" {
			what = "one this program wrote"
		}
		return fmt.Errorf("refusing to replace %s: it is not empty and not %s (it holds %s): %w", prev, what, names(all), ErrNotOurs)
	}
	if left := r.foreign(prev, files); len(left) > 0 {
		return fmt.Errorf("refusing to replace %s (the previous publication, kept until the next): it holds %s, not in its manifest nor in %s: %w; move them away",
			prev, names(left), r.out, ErrNotOurs)
	}
	return nil
}

// foreign lists the entries of dir, a publication, that clear would leave:
// neither written nor the same as in out.
func (r *replacer) foreign(dir string, files []string) []entry {
	l := newLayout(files)
	all, _ := entries(dir)
	var left []entry
	for _, e := range all {
		if l.written[e.rel] || e.mode.IsDir() {
			continue
		}
		if !same(filepath.Join(dir, filepath.FromSlash(e.rel)), filepath.Join(r.out, filepath.FromSlash(e.rel))) {
			left = append(left, e)
		}
	}
	return left
}

// removeStale removes the temporary directories of Replaces that stopped:
// a build that never finished holds only what build wrote; a publication
// (one that was about to be swapped in, or the old one swapped out) loses
// what its publisher wrote and the links to what out holds, and is
// refused while it holds anything else.
func (r *replacer) removeStale() error {
	for _, s := range r.stale() {
		files, ok := r.written(s)
		if !ok {
			if err := os.RemoveAll(s); err != nil {
				return fmt.Errorf("remove stale %s: %w", s, err)
			}
			continue
		}
		if left := r.foreign(s, files); len(left) > 0 {
			return fmt.Errorf("refusing to remove %s, left by a publication of %s that stopped midway: it holds %s, found nowhere else: %w; move them into %s",
				s, r.out, names(left), ErrNotOurs, r.out)
		}
		if _, err := clear(s, r.out, files, false); err != nil {
			return fmt.Errorf("remove stale %s: %w", s, err)
		}
	}
	return nil
}

// swap puts the complete directory tmp at out. What out held goes to
// out.prev with KeepPrev, else to a temporary name, and loses the user's
// entries (carried into tmp) and, without KeepPrev, everything else.
func (r *replacer) swap(tmp string) error {
	out, opts := r.out, r.opts
	parent := filepath.Dir(out)
	if _, err := os.Lstat(out); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(tmp, out); err != nil {
			return err
		}
		return SyncDir(parent)
	}
	files, _ := r.written(out)
	aside := tmp + ".old" // matches the stale pattern: a crash leaves nothing for good
	if opts.KeepPrev {
		aside = r.prev()
		if pf, ok := r.written(aside); ok {
			left, err := clear(aside, out, pf, false)
			if err != nil {
				return err
			}
			if len(left) > 0 {
				return fmt.Errorf("refusing to replace %s: it holds %s: %w", aside, names(left), ErrNotOurs)
			}
		} else if err := os.Remove(aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err // checkPrev let only an empty one through
		}
	}
	switch err := opts.Exchange(tmp, out); {
	case err == nil:
		// tmp now holds the previous directory.
		if err := opts.Hook("exchanged"); err != nil {
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
		if err := opts.Hook("moved-aside"); err != nil {
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
	// Published. What the user kept in the old directory is in out now;
	// anything written there since (found nowhere else) stays, and the
	// next Replace names it; what a failure here leaves, the next Replace
	// clears.
	clear(aside, out, files, opts.KeepPrev)
	return nil
}
