package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/groundwork/curate/arxiv"
	"github.com/groundwork/curate/fetch"
)

type fetchOptions struct {
	global  globalOptions
	targets string
	refetch bool
	workers int
	ids     []string
}

func runFetchCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var opt fetchOptions
	fs := newFlagSet(env, "fetch", "[--store DIR] [--targets FILE] [--refetch] ID...")
	addGlobalFlags(fs, env, &opt.global)
	addTargetsFlag(fs, &opt.targets)
	fs.BoolVar(&opt.refetch, "refetch", false, "fetch papers again even when the store holds them")
	fs.IntVar(&opt.workers, "workers", 4, "papers fetched at once, 1 or more (the per-site rate limits still apply)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := opt.global.validate(); err != nil {
		return err
	}
	if err := positive("--workers", opt.workers); err != nil {
		return err
	}
	if opt.ids, err = targetIDs(env, fs, opt.targets, rest); err != nil {
		return err
	}
	return runFetch(ctx, env, opt)
}

// runFetch fetches every valid ID, reports invalid ones by name, prints one
// tab-separated line per paper on stdout and a summary on stderr, and fails
// when any paper could not be fetched.
func runFetch(ctx context.Context, env *cmdEnv, opt fetchOptions) error {
	ctx, cancel := env.drainContext(ctx)
	defer cancel()
	log, err := opt.global.logger(env.stderr)
	if err != nil {
		return err
	}
	var valid []string
	var problems []string
	for _, in := range opt.ids {
		if _, err := arxiv.Parse(in); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		valid = append(valid, in)
	}
	st, err := opt.global.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	hc, err := opt.global.httpClient(log)
	if err != nil {
		return err
	}
	ax, _ := hc.Service("arxiv")
	a5, _ := hc.Service("ar5iv")
	f := &fetch.Fetcher{Arxiv: ax, Ar5iv: a5, Store: st, Log: log, Refetch: opt.refetch, MissingTTL: opt.global.missingTTL}

	bar := newProgress(env, log, len(valid), "fetch")
	results := f.All(ctx, valid, opt.workers, func(r fetch.Result) { bar.Add(1, r.ID+" "+r.Outcome) })
	bar.Finish()

	for _, r := range results {
		title := ""
		if r.Doc != nil && r.Doc.Title != nil {
			title = *r.Doc.Title
		}
		reason := ""
		if r.Err != nil {
			reason = r.Err.Error()
			problems = append(problems, reason)
		}
		fmt.Fprintf(env.stdout, "%s\t%s\t%s\t%s\n", r.Input, r.Outcome, r.Source, cmp.Or(reason, title))
	}
	sum := fetch.Summarize(results)
	sum.Failed += len(opt.ids) - len(valid)
	fmt.Fprintf(env.stderr, "curate fetch: %s; store %s\n", sum, st.Dir())
	if len(problems) > 0 {
		fmt.Fprintf(env.stderr, "problems:\n  %s\n", strings.Join(problems, "\n  "))
		return &exitError{code: 1, err: fmt.Errorf("%d of %d papers not fetched", len(problems), len(opt.ids))}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}
