package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/groundwork/curate/latexml"
	"github.com/groundwork/curate/record"
)

type parseOptions struct {
	source  string
	id      string
	url     string
	compact bool
	files   []string
}

func runParseCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var opt parseOptions
	fs := newFlagSet(env, "parse", "[--source arxiv|ar5iv] [--id ID] FILE|- ...")
	fs.StringVar(&opt.source, "source", "", "which site served the page: arxiv or ar5iv (detected from the page when empty)")
	fs.StringVar(&opt.id, "id", "", "arXiv ID of the paper (read from the page when empty)")
	fs.StringVar(&opt.url, "url", "", "URL the page was fetched from")
	fs.BoolVar(&opt.compact, "compact", false, "one JSON document per line instead of indented JSON")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		fs.Usage()
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
