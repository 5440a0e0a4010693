package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/parse/tei"
	"github.com/groundwork/curate/record"
)

type parseOptions struct {
	source  string
	id      string
	url     string
	compact bool
	maxMB   int64
	files   []string
}

// parseCmd is `curate parse`.
type parseCmd struct{ opt parseOptions }

func (c *parseCmd) AddFlags(fs *flag.FlagSet, _ *cmdEnv) {
	fs.StringVar(&c.opt.source, "source", "", "which site served the page: arxiv or ar5iv (detected from the page when empty)")
	fs.StringVar(&c.opt.id, "id", "", "arXiv ID of the paper (read from the page when empty)")
	fs.StringVar(&c.opt.url, "url", "", "URL the page was fetched from")
	fs.BoolVar(&c.opt.compact, "compact", false, "one JSON document per line instead of indented JSON")
	fs.Int64Var(&c.opt.maxMB, "max-mb", latexml.MaxPageBytes>>20, "refuse a page longer than this many MiB; 0: no bound, and the page parsed whole whatever its tree costs (by default a page whose tree could pass 384 MB is parsed up to there, and says so)")
}

func (c *parseCmd) Run(ctx context.Context, env *cmdEnv, files []string) error {
	opt := c.opt
	if len(files) == 0 {
		return fmt.Errorf("%w: no FILE given", errUsage)
	}
	switch opt.source {
	case "", record.SourceArxiv, record.SourceAr5iv:
	default:
		return fmt.Errorf("%w: --source %q: want arxiv or ar5iv", errUsage, opt.source)
	}
	if opt.maxMB < 0 {
		return fmt.Errorf("%w: --max-mb %d: want 0 (no bound) or more", errUsage, opt.maxMB)
	}
	opt.files = files
	return runParse(ctx, env.stdout, env.stdinReader(), opt)
}

// runParse parses each file (a LaTeXML page, or a GROBID TEI by its root
// element) and writes its Document as JSON to w. It goes on after a bad
// file and reports how many failed.
func runParse(_ context.Context, w io.Writer, stdin io.Reader, opt parseOptions) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if !opt.compact {
		enc.SetIndent("", "  ")
	}
	limit, tree := int64(-1), int64(0)
	if opt.maxMB > 0 {
		limit = opt.maxMB << 20
	} else {
		tree = -1 // no bound at all, as asked
	}
	failed := 0
	var firstErr error
	for _, name := range opt.files {
		page, err := readPage(name, stdin, limit)
		if err == nil {
			var doc *record.Document
			if tei.Sniff(page) {
				doc, err = tei.Parse(page, tei.Options{ID: opt.id, URL: opt.url, MaxTree: tree})
			} else {
				doc, err = latexml.Parse(page, latexml.Options{ID: opt.id, Source: opt.source, URL: opt.url, MaxBytes: limit, MaxTree: tree})
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
		return fmt.Errorf("%d of %d files failed; first: %w", failed, len(opt.files), firstErr)
	}
	return nil
}

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
