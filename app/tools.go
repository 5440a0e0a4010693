package app

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/groundwork/curate/gate"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/parse/tei"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sft"
)

// The commands that work on files alone, no store: the schema gate over
// generations (Gate), a page or TEI parsed (Parse).

// GateFile is what the schema gate found in one file of generations.
type GateFile struct {
	Path   string
	Rows   int
	Passed int
	// Reasons counts the failed rows by the gate's reason.
	Reasons map[string]int
}

// GateRow is a row that failed the gate.
type GateRow struct {
	Path       string
	Line       int
	InstanceID string
	Err        error
}

// Gate applies the schema gate to the generations in files (JSONL or
// Parquet, column completion or response), K being numIdeas for rows
// without their own; each failing row is passed to failed as it is met,
// and each file's counts to done once it is through. A file that cannot
// be read is no verdict on its rows: ErrCannotRun.
func Gate(files []string, numIdeas int, failed func(GateRow), done func(GateFile)) error {
	for _, path := range files {
		rows, err := sft.ReadCompletions(path)
		if err != nil {
			return Fail(ErrCannotRun, err)
		}
		f := GateFile{Path: path, Rows: len(rows), Reasons: map[string]int{}}
		for _, c := range rows {
			k := c.NumIdeas
			if k <= 0 {
				k = numIdeas
			}
			_, err := gate.Check(c.Text, k)
			if err == nil {
				f.Passed++
				continue
			}
			f.Reasons[gate.ReasonOf(err)]++
			if failed != nil {
				failed(GateRow{Path: path, Line: c.Line, InstanceID: c.InstanceID, Err: err})
			}
		}
		done(f)
	}
	return nil
}

// GateReasons lists the gate's reasons in the order it checks them.
func GateReasons() []string { return gate.Reasons() }

// ParseOptions configure Parse.
type ParseOptions struct {
	Source, ID, URL string
	Compact         bool
	// MaxMB refuses a page longer than this many MiB; 0: no bound, and
	// the page parsed whole whatever its tree costs.
	MaxMB int64
	Files []string // "-" for stdin
}

// Parse parses each file (a LaTeXML page, or a GROBID TEI by its root
// element) and writes its Document as JSON to w. It goes on after a bad
// file and reports how many failed.
func Parse(w io.Writer, stdin io.Reader, opt ParseOptions) error {
	switch opt.Source {
	case "", record.SourceArxiv, record.SourceAr5iv:
	default:
		return fmt.Errorf("%w: --source %q: want arxiv or ar5iv", ErrUsage, opt.Source)
	}
	if opt.MaxMB < 0 {
		return fmt.Errorf("%w: --max-mb %d: want 0 (no bound) or more", ErrUsage, opt.MaxMB)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if !opt.Compact {
		enc.SetIndent("", "  ")
	}
	limit, tree := int64(-1), int64(0)
	if opt.MaxMB > 0 {
		limit = opt.MaxMB << 20
	} else {
		tree = -1 // no bound at all, as asked
	}
	failed := 0
	var firstErr error
	for _, name := range opt.Files {
		page, err := readPage(name, stdin, limit)
		if err == nil {
			var doc *record.Document
			if tei.Sniff(page) {
				doc, err = tei.Parse(page, tei.Options{ID: opt.ID, URL: opt.URL, MaxTree: tree})
			} else {
				doc, err = latexml.Parse(page, latexml.Options{ID: opt.ID, Source: opt.Source, URL: opt.URL, MaxBytes: limit, MaxTree: tree})
			}
			if err == nil {
				err = enc.Encode(doc)
			}
		}
		if err != nil {
			failed++
			if firstErr == nil {
				firstErr = fmt.Errorf("parse %s: %w", name, err)
			}
		}
	}
	if failed == 1 {
		return firstErr
	}
	if failed > 1 {
		return fmt.Errorf("%d of %d files failed; first: %w", failed, len(opt.Files), firstErr)
	}
	return nil
}

// MaxPageMB is the default bound of Parse's pages, in MiB.
const MaxPageMB = latexml.MaxPageBytes >> 20

// readPage reads a page from name ("-": stdin), refusing one longer than
// limit bytes (negative: no bound) without reading it all.
func readPage(name string, stdin io.Reader, limit int64) ([]byte, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	if limit < 0 {
		return io.ReadAll(r)
	}
	page, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && int64(len(page)) > limit {
		return nil, fmt.Errorf("%w: longer than --max-mb %d MiB (raise it, or 0 for no bound)", latexml.ErrTooLarge, limit>>20)
	}
	return page, err
}
