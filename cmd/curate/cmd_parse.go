package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
)

type parseOptions struct {
	source  string
	id      string
	url     string
	compact bool
	files   []string
}

// parseCmd is `curate parse`.
type parseCmd struct{ opt parseOptions }

func (c *parseCmd) AddFlags(fs *flag.FlagSet, _ *cmdEnv) {
	fs.StringVar(&c.opt.source, "source", "", "which site served the page: arxiv or ar5iv (detected from the page when empty)")
	fs.StringVar(&c.opt.id, "id", "", "arXiv ID of the paper (read from the page when empty)")
	fs.StringVar(&c.opt.url, "url", "", "URL the page was fetched from")
	fs.BoolVar(&c.opt.compact, "compact", false, "one JSON document per line instead of indented JSON")
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
	opt.files = files
	return runParse(ctx, env.stdout, env.stdinReader(), opt)
}

// runParse parses each file and writes its Document as JSON to w. It goes on
// after a bad file and reports how many failed.
func runParse(_ context.Context, w io.Writer, stdin io.Reader, opt parseOptions) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if !opt.compact {
		enc.SetIndent("", "  ")
	}
	failed := 0
	var firstErr error
	for _, name := range opt.files {
		var page []byte
		var err error
		if name == "-" {
			page, err = io.ReadAll(stdin)
		} else {
			page, err = os.ReadFile(name)
		}
		if err == nil {
			var doc *record.Document
			doc, err = latexml.Parse(page, latexml.Options{ID: opt.id, Source: opt.source, URL: opt.url})
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
