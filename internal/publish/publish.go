// Package publish is the one way curate publishes an output directory (a
// dataset, an export, SFT data, topic corpora): under a lock on the output
// path, built in full beside it, described by a manifest of every file's
// size and SHA-256, and swapped into place atomically (atomicdir.Replace).
//
// The manifest makes a publication checkable from its files alone: a
// missing, truncated or garbled file no longer verifies, so "up to date"
// (same inputs, same curate version, a manifest that verifies) can never
// keep a damaged directory. It also says what curate wrote: anything else
// in the directory is the user's, kept across every republish.
package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/groundwork/curate/internal/atomicdir"
)

// ManifestFile is the manifest's name in a published directory.
const ManifestFile = "manifest.json"

// Manifest describes a published directory.
type Manifest struct {
	// Kind says what the directory is: "dataset", "export", "sft",
	// "topics".
	Kind          string `json:"kind"`
	CurateVersion string `json:"curate_version"`
	// Inputs identifies what the directory was built from (a digest the
	// publisher computes); equal inputs build equal files.
	Inputs string `json:"inputs_digest,omitempty"`
	// Splits names the dataset splits the directory draws on.
	Splits []string `json:"splits,omitempty"`
	Files  []File   `json:"files"`
}

// File is one file of a published directory.
type File struct {
	Path   string `json:"path"` // relative, with forward slashes
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Options configure Dir.
type Options struct {
	Kind    string
	Version string // the curate version
	// Inputs, when set, makes Dir skip the build when out already holds a
	// publication of the same Kind, Version and Inputs that verifies.
	Inputs string
	Splits []string
	// Describe completes the refusal to publish over a directory that is
	// no publication of Kind: "it is not empty and not <Describe>".
	Describe string
	// KeepPrev keeps the replaced directory as OUT.prev.
	KeepPrev bool
	// Force builds even when out is up to date with Inputs.
	Force bool
	// Locked says the caller holds out's lock already (Lock), as a run
	// does from its start; Dir then takes none.
	Locked bool
	// Hook and Exchange are atomicdir's test hooks.
	Hook     func(step string) error
	Exchange func(a, b string) error
}

// ErrLocked is returned when another process is publishing to the same
// directory.
var ErrLocked = errors.New("another curate is publishing there")

// ErrNotOurs is wrapped by the refusal to publish over a directory that
// holds what curate cannot keep or did not write (atomicdir.ErrNotOurs).
var ErrNotOurs = atomicdir.ErrNotOurs

// Dir publishes a directory at out: it takes out's lock (unless
// opts.Locked), returns (false, nil) without building when opts.Inputs is
// set and out is an up to date publication, and otherwise lets build fill
// a temporary directory (syncing each file it writes, see
// atomicdir.WriteFileSync), adds the manifest, carries the user's files
// (what out holds beside the files its manifest lists) and swaps the
// directory into place. A failure at any point leaves out as it was; a
// directory it cannot publish over (no publication of Kind, or the user's
// files inside the directories it writes) is refused with ErrNotOurs
// before anything is built.
func Dir(ctx context.Context, out string, opts Options, build func(tmp string) error) (published bool, err error) {
	out, err = filepath.Abs(out)
	if err != nil {
		return false, fmt.Errorf("publish %s: %w", out, err)
	}
	if !opts.Locked {
		unlock, err := Lock(out)
		if err != nil {
			return false, err
		}
		defer unlock()
	}
	if opts.Inputs != "" && !opts.Force && UpToDate(out, opts.Kind, opts.Version, opts.Inputs) {
		return false, nil
	}
	err = atomicdir.Replace(ctx, out, replaceOptions(opts), func(tmp string) error {
		if err := build(tmp); err != nil {
			return err
		}
		m := Manifest{Kind: opts.Kind, CurateVersion: opts.Version, Inputs: opts.Inputs, Splits: opts.Splits}
		if m.Files, err = listFiles(tmp); err != nil {
			return err
		}
		data, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		// Last: a temporary directory without its manifest holds nothing
		// but what build wrote (atomicdir clears it whole).
		return atomicdir.WriteFileSync(filepath.Join(tmp, ManifestFile), append(data, '\n'))
	})
	if err != nil {
		return false, err
	}
	return true, nil
}

func replaceOptions(opts Options) atomicdir.Options {
	describe := opts.Describe
	if describe == "" {
		describe = fmt.Sprintf("a %s publication (no %s of kind %q)", opts.Kind, ManifestFile, opts.Kind)
	}
	return atomicdir.Options{
		Written:  func(dir string) ([]string, bool) { return written(dir, opts.Kind) },
		Describe: describe, KeepPrev: opts.KeepPrev, Hook: opts.Hook, Exchange: opts.Exchange,
	}
}

// written lists what curate wrote in dir, a publication of kind: the files
// its manifest lists and the manifest.
func written(dir, kind string) ([]string, bool) {
	m, err := readManifest(dir)
	if err != nil || m.Kind != kind {
		return nil, false
	}
	files := []string{ManifestFile}
	for _, f := range m.Files {
		files = append(files, f.Path)
	}
	return files, true
}

// Check says, writing nothing, whether Dir could publish at out with
// opts: nil when out is absent, empty or a publication of opts.Kind (the
// user's files in it kept), and an error wrapping ErrNotOurs when it would
// be refused. It does not look at the lock (Lock does). A run checks its
// --out with it before any request.
func Check(out string, opts Options) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("publish %s: %w", out, err)
	}
	return atomicdir.Check(out, replaceOptions(opts))
}

// UpToDate reports whether dir is a publication of kind by version built
// from inputs whose files all verify.
func UpToDate(dir, kind, version, inputs string) bool {
	m, problems, err := Verify(dir)
	return err == nil && len(problems) == 0 && m.Kind == kind && m.CurateVersion == version && m.Inputs == inputs
}

// Verify reads dir's manifest and checks every file against it: present,
// of its size and hash, and nothing else inside the directories the
// publication writes (an unlisted shard in data/ would be read as part of
// it). What the user keeps elsewhere in dir (a .git/ history, notes) is
// not a problem. It returns the problems found; the error is for a
// directory without a readable manifest.
func Verify(dir string) (*Manifest, []string, error) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // a "latest" link: walk what it points at
	}
	m, err := readManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	var problems []string
	own := map[string]bool{} // the directories holding listed files
	listed := map[string]bool{ManifestFile: true}
	for _, f := range m.Files {
		listed[f.Path] = true
		for d := path.Dir(f.Path); d != "." && d != "/"; d = path.Dir(d) {
			own[d] = true
		}
		got, err := describe(dir, f.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, fmt.Sprintf("%s is missing", f.Path))
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", f.Path, err))
		case got.Size != f.Size:
			problems = append(problems, fmt.Sprintf("%s is %d bytes, the manifest says %d", f.Path, got.Size, f.Size))
		case got.SHA256 != f.SHA256:
			problems = append(problems, fmt.Sprintf("%s does not match its SHA-256 in the manifest", f.Path))
		}
	}
	// Only the files directly or deeper under a directory holding listed
	// files; the top level is shared with the user.
	seen := map[string]bool{}
	for _, d := range slices.Sorted(maps.Keys(own)) {
		err := filepath.WalkDir(filepath.Join(dir, filepath.FromSlash(d)), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil || e.IsDir() {
				return err
			}
			if rel = filepath.ToSlash(rel); !listed[rel] && !seen[rel] {
				seen[rel] = true
				problems = append(problems, fmt.Sprintf("%s is not in the manifest", rel))
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			problems = append(problems, fmt.Sprintf("list %s: %v", d, err))
		}
	}
	return m, problems, nil
}

func readManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("read manifest of %s: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("read manifest of %s: %w", dir, err)
	}
	return &m, nil
}

// listFiles describes every regular file under dir, in path order.
func listFiles(dir string) ([]File, error) {
	paths, err := listPaths(dir)
	if err != nil {
		return nil, err
	}
	out := make([]File, 0, len(paths))
	for _, p := range paths {
		f, err := describe(dir, p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// listPaths lists the files under dir (relative, forward slashes, sorted),
// the manifest excepted.
func listPaths(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); rel != ManifestFile {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	slices.Sort(out)
	return out, nil
}

func describe(dir, rel string) (File, error) {
	if strings.Contains(rel, "..") || filepath.IsAbs(rel) {
		return File{}, fmt.Errorf("%q is not a path inside the directory", rel)
	}
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return File{}, err
	}
	return File{Path: rel, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Amend republishes the publication at dir with a change: its files are
// linked (or, across file systems, copied) into a new directory, change
// edits it — replacing files, never writing into them, since a linked file
// is still the published one — and the result, with a new manifest that
// keeps dir's kind, version, inputs and splits, takes dir's place. A dir
// that does not verify is refused: amending would bless the damage.
func Amend(ctx context.Context, dir, kind string, change func(tmp string) error) error {
	m, problems, err := Verify(dir)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("amend %s: it does not match its manifest (%s); publish it again instead", dir, problems[0])
	}
	if m.Kind != kind {
		return fmt.Errorf("amend %s: it is %q, not %q", dir, m.Kind, kind)
	}
	_, err = Dir(ctx, dir, Options{Kind: m.Kind, Version: m.CurateVersion, Inputs: m.Inputs, Splits: m.Splits, Force: true},
		func(tmp string) error {
			for _, f := range m.Files {
				if err := linkOrCopy(filepath.Join(dir, filepath.FromSlash(f.Path)), filepath.Join(tmp, filepath.FromSlash(f.Path))); err != nil {
					return err
				}
			}
			return change(tmp)
		})
	return err
}

// linkOrCopy makes dst a hard link of src, or a synced copy where links
// cannot be made.
func linkOrCopy(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return atomicdir.WriteFileFunc(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}
