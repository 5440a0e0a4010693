// Package archive serves arXiv HTML pages already held locally, so that a
// paper found there is never downloaded: directories of saved pages
// (<id>.html, old-style IDs with "/" written "_") and zip files in the
// layout of the ar5iv bulk dataset (LaTeXML HTML of older papers, one zip
// per conversion severity: no-problem, warnings, errors; entries named by
// paper ID).
//
// Open indexes every archive once: a directory by listing it, a zip from
// its central directory alone, without extracting anything. Lookup then
// answers by arXiv ID, versioned or not, with the page and where it came
// from.
package archive

import (
	"archive/zip"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/groundwork/curate/parse/arxiv"
)

// Conversion severity groups of the ar5iv bulk dataset, best first.
const (
	SeverityNoProblem = "no-problem"
	SeverityWarning   = "warning"
	SeverityError     = "error"
)

// Kinds of archive.
const (
	KindDir = "dir"
	KindZip = "zip"
)

// DefaultMaxPage caps the size of one page read from an archive.
const DefaultMaxPage = 64 << 20

// ErrNotFound means no archive holds the paper.
var ErrNotFound = errors.New("not in any html archive")

// Location is where an archive holds a paper's page.
type Location struct {
	// ID is the paper as the entry names it: with a version only if the
	// entry's name carries one.
	ID       arxiv.ID
	Archive  string // the archive's path as given to Open (a zip inside a directory: its own path)
	Kind     string // KindDir or KindZip
	Entry    string // file path relative to the directory, or zip entry name
	Severity string // ar5iv conversion severity; "" when the archive does not say
	Size     int64  // uncompressed size in bytes
}

// Page is a page read from an archive.
type Page struct {
	Location
	Body []byte
}

// Source describes one archive after indexing, for logs and the run
// summary.
type Source struct {
	Path     string
	Kind     string
	Severity string // from the zip's name; "" for directories and unnamed zips
	Pages    int    // entries indexed as pages
	Skipped  int    // HTML entries whose names are not arXiv IDs
	Filtered int    // pages left out by Options.Want
}

// Options tune Open.
type Options struct {
	// Want, when set, keeps only the pages of papers it accepts, so that an
	// index of millions of entries holds only the papers a run needs.
	Want func(arxiv.ID) bool
	// MaxPage caps a page's size (default DefaultMaxPage); bigger entries
	// are refused when read.
	MaxPage int64
}

// Index answers look-ups over a set of archives. It is safe for
// concurrent use; Close releases the zip files.
type Index struct {
	opt     Options
	sources []Source
	zips    []*zip.ReadCloser
	pages   map[string][]entry
}

type entry struct {
	loc Location
	src int       // index into sources: the order archives were given in
	zf  *zip.File // nil for directory entries
}

// Open indexes the archives at paths, in order: each a directory of saved
// pages (zip files directly inside it are indexed as zips too) or a .zip
// file. It fails, naming the path, on a path that is neither, a zip that
// cannot be read, or an archive holding no page named by an arXiv ID.
func Open(opt Options, paths ...string) (*Index, error) {
	opt.MaxPage = cmp.Or(opt.MaxPage, DefaultMaxPage)
	x := &Index{opt: opt, pages: map[string][]entry{}}
	for _, p := range paths {
		if err := x.add(p); err != nil {
			x.Close()
			return nil, err
		}
	}
	return x, nil
}

func (x *Index) add(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("archive: open %s: %w", p, err)
	}
	before := len(x.sources)
	switch {
	case fi.IsDir():
		if err := x.addDir(p); err != nil {
			return err
		}
	case strings.EqualFold(filepath.Ext(p), ".zip"):
		if err := x.addZip(p); err != nil {
			return err
		}
	default:
		return fmt.Errorf("archive: %s: not a directory or a .zip file", p)
	}
	n := 0
	for _, s := range x.sources[before:] {
		n += s.Pages + s.Filtered
	}
	if n == 0 {
		return fmt.Errorf("archive: %s holds no page named by an arXiv ID (want <id>.html, e.g. 2401.00001.html or hep-th_9901001.html)", p)
	}
	return nil
}

func (x *Index) addDir(dir string) error {
	src := len(x.sources)
	x.sources = append(x.sources, Source{Path: dir, Kind: KindDir})
	var zips []string
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
		rel = filepath.ToSlash(rel)
		if strings.EqualFold(path.Ext(rel), ".zip") {
			if !strings.Contains(rel, "/") {
				zips = append(zips, p)
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		x.index(src, rel, info.Size(), nil, "")
		return nil
	})
	if err != nil {
		return fmt.Errorf("archive: index %s: %w", dir, err)
	}
	slices.Sort(zips)
	for _, z := range zips {
		if err := x.addZip(z); err != nil {
			return err
		}
	}
	return nil
}

func (x *Index) addZip(p string) error {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return fmt.Errorf("archive: read zip %s: %w", p, err)
	}
	x.zips = append(x.zips, zr)
	src := len(x.sources)
	sev := severity(filepath.Base(p))
	x.sources = append(x.sources, Source{Path: p, Kind: KindZip, Severity: sev})
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		x.index(src, f.Name, int64(f.UncompressedSize64), f, sev)
	}
	// Only the entries kept are referenced from now on; the rest of the
	// central directory can be collected.
	zr.File = nil
	return nil
}

// index adds one file of an archive if it is a page named by an ID.
func (x *Index) index(src int, name string, size int64, zf *zip.File, sev string) {
	if !isHTML(name) {
		return
	}
	s := &x.sources[src]
	id, ok := idFromName(name)
	if !ok {
		s.Skipped++
		return
	}
	if x.opt.Want != nil && !x.opt.Want(id) {
		s.Filtered++
		return
	}
	if sev == "" {
		sev = severity(path.Dir(name))
	}
	s.Pages++
	key := id.Canonical()
	x.pages[key] = append(x.pages[key], entry{
		loc: Location{ID: id, Archive: s.Path, Kind: s.Kind, Entry: name, Severity: sev, Size: size},
		src: src,
		zf:  zf,
	})
}

func isHTML(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".html", ".htm", ".xhtml":
		return true
	}
	return false
}

// severity reads an ar5iv severity group from a zip's name or an entry's
// directory ("ar5iv-04-2024-no-problem.zip", "warnings/", ...).
func severity(s string) string {
	s = strings.ToLower(s)
	switch {
	case strings.Contains(s, "no-problem"), strings.Contains(s, "no_problem"), strings.Contains(s, "noproblem"):
		return SeverityNoProblem
	case strings.Contains(s, "warning"):
		return SeverityWarning
	case strings.Contains(s, "error"):
		return SeverityError
	}
	return ""
}

// idFromName reads the arXiv ID an entry is named by: its base name
// without extension ("2401.00001.html", "2401.00001v2.html",
// "hep-th_9901001.html", "hep-th9901001.html" as arXiv's bulk files write
// old-style IDs), or, for a page with another name ("index.html"), its
// directory ("2401.00001/index.html", "hep-th/9901001/index.html").
func idFromName(name string) (arxiv.ID, bool) {
	base := path.Base(name)
	base = base[:len(base)-len(path.Ext(base))]
	if id, ok := parseName(base); ok {
		return id, true
	}
	dir := path.Dir(name)
	if dir == "." {
		return arxiv.ID{}, false
	}
	if id, ok := parseName(path.Base(dir)); ok {
		return id, true
	}
	if up := path.Dir(dir); up != "." {
		if id, err := arxiv.Parse(path.Base(up) + "/" + path.Base(dir)); err == nil {
			return id, true
		}
	}
	return arxiv.ID{}, false
}

func parseName(s string) (arxiv.ID, bool) {
	if id, err := arxiv.Parse(s); err == nil {
		return id, true
	}
	// Saved pages write the old-style slash as "_".
	if a, n, ok := strings.Cut(s, "_"); ok {
		if id, err := arxiv.Parse(a + "/" + n); err == nil && id.OldStyle() {
			return id, true
		}
	}
	// arXiv's bulk files drop it: "hep-th9901001".
	if i := strings.IndexAny(s, "0123456789"); i > 0 {
		if id, err := arxiv.Parse(s[:i] + "/" + s[i:]); err == nil && id.OldStyle() {
			return id, true
		}
	}
	return arxiv.ID{}, false
}

// Sources describes the archives indexed, in the order given.
func (x *Index) Sources() []Source { return slices.Clone(x.sources) }

// Len returns the number of distinct papers indexed.
func (x *Index) Len() int { return len(x.pages) }

// Locate finds where a paper's page is held, without reading it (for an
// estimate). id is an arXiv ID, versioned or not.
//
// For a versionless ID it picks the highest named version, else an entry
// that names none. For a versioned ID it picks that version, else an
// entry that names none (ar5iv holds one version per paper, often
// unnamed; Location.ID then has no version, so the caller can tell),
// never another named version. Among equal candidates the better
// conversion severity wins, then the archive given first.
func (x *Index) Locate(id string) (Location, error) {
	e, err := x.find(id)
	if err != nil {
		return Location{}, err
	}
	return e.loc, nil
}

func (x *Index) find(s string) (entry, error) {
	id, err := arxiv.Parse(s)
	if err != nil {
		return entry{}, fmt.Errorf("archive: look up: %w", err)
	}
	var best *entry
	for i := range x.pages[id.Canonical()] {
		e := &x.pages[id.Canonical()][i]
		v := e.loc.ID.Version
		if id.Version > 0 && v != 0 && v != id.Version {
			continue
		}
		if best == nil || better(e, best, id.Version) {
			best = e
		}
	}
	if best == nil {
		return entry{}, fmt.Errorf("archive: %s: %w", id, ErrNotFound)
	}
	return *best, nil
}

// better reports whether a is a better answer than b for a query with
// version want (0: none).
func better(a, b *entry, want int) bool {
	if sa, sb := versionScore(a.loc.ID.Version, want), versionScore(b.loc.ID.Version, want); sa != sb {
		return sa > sb
	}
	if ra, rb := rank(a.loc.Severity), rank(b.loc.Severity); ra != rb {
		return ra < rb
	}
	return a.src < b.src
}

// versionScore orders an entry's version v for a query for version want:
// the wanted one first, else the highest named; an unnamed one last.
func versionScore(v, want int) int {
	if want > 0 && v == want {
		return 1 << 30
	}
	return v
}

func rank(sev string) int {
	switch sev {
	case SeverityNoProblem:
		return 0
	case SeverityWarning:
		return 1
	case SeverityError:
		return 2
	}
	return 3
}

// Has reports whether some archive holds the paper (see Locate).
func (x *Index) Has(id string) bool {
	_, err := x.find(id)
	return err == nil
}

// Lookup reads a paper's page (see Locate for which one). Its errors wrap
// ErrNotFound when no archive holds the paper, and name the archive and
// entry when one does but cannot be read.
func (x *Index) Lookup(id string) (*Page, error) {
	e, err := x.find(id)
	if err != nil {
		return nil, err
	}
	body, err := x.read(e)
	if err != nil {
		return nil, fmt.Errorf("archive: read %s from %s, entry %s: %w", e.loc.ID, e.loc.Archive, e.loc.Entry, err)
	}
	return &Page{Location: e.loc, Body: body}, nil
}

func (x *Index) read(e entry) ([]byte, error) {
	if e.loc.Size > x.opt.MaxPage {
		return nil, fmt.Errorf("page of %d bytes exceeds the limit of %d", e.loc.Size, x.opt.MaxPage)
	}
	var r io.ReadCloser
	var err error
	if e.zf != nil {
		r, err = e.zf.Open()
	} else {
		r, err = os.Open(filepath.Join(e.loc.Archive, filepath.FromSlash(e.loc.Entry)))
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var buf bytes.Buffer
	buf.Grow(int(e.loc.Size))
	// Reading to the end lets archive/zip check the entry's CRC.
	if _, err := buf.ReadFrom(io.LimitReader(r, x.opt.MaxPage+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > x.opt.MaxPage {
		return nil, fmt.Errorf("page exceeds the limit of %d bytes", x.opt.MaxPage)
	}
	return buf.Bytes(), nil
}

// Close releases the zip files.
func (x *Index) Close() error {
	var errs []error
	for _, z := range x.zips {
		errs = append(errs, z.Close())
	}
	x.zips = nil
	return errors.Join(errs...)
}
