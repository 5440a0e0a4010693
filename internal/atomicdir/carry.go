package atomicdir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// A published directory holds what its publisher wrote (the paths
// Options.Written lists) and, beside it, whatever the user keeps there: a
// .git/ history, notes, a symlink. Replace carries the user's entries into
// the new directory as hard links (so they are never absent from OUT, even
// after a crash) and removes only what its publisher wrote, or what is the
// same file as the one carried.

// ErrNotOurs is wrapped by Replace's refusals: OUT (or OUT.prev, or a
// temporary directory a crash left) holds something its publisher did not
// write and cannot keep, and nothing was touched.
var ErrNotOurs = errors.New("not this program's to replace")

// entry is one thing in a directory tree: a non-directory, or a directory
// with nothing in it.
type entry struct {
	rel  string // slash-separated, relative to the tree's root
	mode fs.FileMode
}

// entries lists the tree under root (not following symlinks), sorted.
func entries(root string) ([]entry, error) {
	var out []entry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			names, err := f.Readdirnames(1)
			f.Close()
			if len(names) > 0 || !errors.Is(err, io.EOF) {
				return nil // not empty (or unreadable: WalkDir reports it next)
			}
		}
		out = append(out, entry{rel: filepath.ToSlash(rel), mode: d.Type()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.rel, b.rel) })
	return out, nil
}

// layout is what a publisher wrote in a directory.
type layout struct {
	written map[string]bool
	// dirs are the directories holding written files (every ancestor, not
	// the root): the publisher's own, where anything else would be taken
	// for part of the publication (a loader reads every shard in data/).
	dirs map[string]bool
}

func newLayout(written []string) layout {
	l := layout{written: map[string]bool{}, dirs: map[string]bool{}}
	for _, w := range written {
		l.written[w] = true
		for d := path.Dir(w); d != "." && d != "/"; d = path.Dir(d) {
			l.dirs[d] = true
		}
	}
	return l
}

// inOwnDir reports whether rel lies inside one of the publisher's
// directories.
func (l layout) inOwnDir(rel string) bool {
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if l.dirs[d] {
			return true
		}
	}
	return false
}

// userEntries splits the entries of dir that its publisher did not write
// into those it can carry (outside its own directories) and those it
// cannot (inside them). An empty directory of the publisher's own (its
// files deleted) is neither.
func (l layout) userEntries(dir string) (carry, stuck []entry, err error) {
	all, err := entries(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range all {
		switch {
		case l.written[e.rel], e.mode.IsDir() && l.dirs[e.rel]:
		case l.inOwnDir(e.rel):
			stuck = append(stuck, e)
		default:
			carry = append(carry, e)
		}
	}
	return carry, stuck, nil
}

// names lists entries for a message: the first few, and how many more.
func names(es []entry) string {
	var parts []string
	for i, e := range es {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(es)-i))
			break
		}
		n := e.rel
		if e.mode.IsDir() {
			n += "/"
		}
		parts = append(parts, n)
	}
	return strings.Join(parts, ", ")
}

// carry makes every entry of the user's in out present in tmp: a hard
// link of each file (a copy where the file system cannot link it), each
// symlink and empty directory made again, directories with out's modes.
// An entry whose path the new directory uses already is refused.
func carry(out, tmp string, es []entry) error {
	for _, e := range es {
		src := filepath.Join(out, filepath.FromSlash(e.rel))
		dst := filepath.Join(tmp, filepath.FromSlash(e.rel))
		if fi, err := os.Lstat(dst); err == nil {
			if e.mode.IsDir() && fi.IsDir() {
				continue // an empty directory the new publication has too
			}
			return fmt.Errorf("keep %s: %w: the new publication writes a file of that name; move yours away", src, ErrNotOurs)
		}
		if err := mkdirLike(out, tmp, path.Dir(e.rel)); err != nil {
			return fmt.Errorf("keep %s: %w", src, err)
		}
		var err error
		switch {
		case e.mode.IsDir():
			err = mkdirLike(out, tmp, e.rel)
		case e.mode&fs.ModeSymlink != 0:
			var target string
			if target, err = os.Readlink(src); err == nil {
				err = os.Symlink(target, dst)
			}
		case e.mode.IsRegular():
			if err = os.Link(src, dst); err != nil {
				err = copyFile(src, dst)
			}
		default:
			err = fmt.Errorf("%w: a %v cannot be carried into the new publication (move it away)", ErrNotOurs, e.mode.Type())
		}
		if err != nil {
			return fmt.Errorf("keep %s: %w", src, err)
		}
	}
	return nil
}

// mkdirLike makes the directory rel under tmp, and its parents, with the
// modes their counterparts under out have.
func mkdirLike(out, tmp, rel string) error {
	if rel == "." || rel == "" {
		return nil
	}
	dst := filepath.Join(tmp, filepath.FromSlash(rel))
	if fi, err := os.Lstat(dst); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is a file in the new publication", rel)
		}
		return nil
	}
	if err := mkdirLike(out, tmp, path.Dir(rel)); err != nil {
		return err
	}
	mode := fs.FileMode(0o755)
	if fi, err := os.Stat(filepath.Join(out, filepath.FromSlash(rel))); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	return os.Chmod(dst, mode)
}

// copyFile copies src to dst (which must not exist) with its mode and
// modification time, synced.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if err := WriteFileFunc(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	}); err != nil {
		return err
	}
	if err := os.Chmod(dst, fi.Mode().Perm()); err != nil {
		return err
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// same reports whether a (under an old directory) is what was carried to
// b: the same file, an equal copy, the same symlink, or a directory.
func same(a, b string) bool {
	fa, err1 := os.Lstat(a)
	fb, err2 := os.Lstat(b)
	switch {
	case err1 != nil || err2 != nil || fa.Mode().Type() != fb.Mode().Type():
		return false
	case fa.IsDir():
		return true
	case fa.Mode()&fs.ModeSymlink != 0:
		ta, err1 := os.Readlink(a)
		tb, err2 := os.Readlink(b)
		return err1 == nil && err2 == nil && ta == tb
	case os.SameFile(fa, fb):
		return true
	case !fa.Mode().IsRegular() || fa.Size() != fb.Size():
		return false
	}
	return equalFiles(a, b)
}

func equalFiles(a, b string) bool {
	fa, err := os.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false
		}
		if ea != nil || eb != nil {
			// The sizes are equal: both ended here, unless one failed.
			return (ea == io.EOF || ea == io.ErrUnexpectedEOF) && (eb == io.EOF || eb == io.ErrUnexpectedEOF)
		}
	}
}

// clear removes from dir, a directory this publisher wrote, what it
// wrote (the written files too unless keepWritten) and whatever is the
// same as what was carried to the same path under out (out "" carries
// nothing), then every directory left empty, dir itself included unless
// keepWritten. It returns what it left: the user's, found nowhere else.
func clear(dir, out string, written []string, keepWritten bool) ([]entry, error) {
	l := newLayout(written)
	all, err := entries(dir)
	if err != nil {
		return nil, err
	}
	var left []entry
	for _, e := range all {
		p := filepath.Join(dir, filepath.FromSlash(e.rel))
		switch {
		case l.written[e.rel]:
			if keepWritten {
				continue
			}
		case e.mode.IsDir():
		case out == "" || !same(p, filepath.Join(out, filepath.FromSlash(e.rel))):
			left = append(left, e)
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if err := pruneEmpty(dir, !keepWritten); err != nil {
		return nil, err
	}
	return left, nil
}

// pruneEmpty removes the empty directories under root, children first,
// and root too when self is set and it ends up empty.
func pruneEmpty(root string, self bool) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (p != root || self) {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		// Fails, as it should, on a directory that is not empty.
		if err := os.Remove(dirs[i]); err != nil && !errors.Is(err, fs.ErrNotExist) && !isNotEmpty(err) {
			return err
		}
	}
	return nil
}

func isNotEmpty(err error) bool {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return false
	}
	// ENOTEMPTY, or EEXIST on some systems.
	return errors.Is(pe.Err, syscall.ENOTEMPTY) || errors.Is(pe.Err, fs.ErrExist)
}
