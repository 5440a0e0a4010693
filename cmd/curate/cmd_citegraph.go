package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/groundwork/curate/arxivapi"
	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/s2"
)

type citegraphOptions struct {
	global  globalOptions
	s2      s2Options
	targets string
	refresh bool
	workers int
	ids     []string
}

func runCitegraphCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var opt citegraphOptions
	fs := newFlagSet(env, "citegraph", "[--store DIR] [--targets FILE] [--refresh] ID...")
	addGlobalFlags(fs, env, &opt.global)
	addS2Flags(fs, env, &opt.s2)
	addTargetsFlag(fs, &opt.targets)
	fs.BoolVar(&opt.refresh, "refresh", false, "ask Semantic Scholar and arXiv again instead of reusing stored responses")
	fs.IntVar(&opt.workers, "workers", 4, "targets processed at once, 1 or more (the per-service rate limits still apply)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	for _, v := range []func() error{opt.global.validate, opt.s2.validate} {
		if err := v(); err != nil {
			return err
		}
	}
	if err := positive("--workers", opt.workers); err != nil {
		return err
	}
	if opt.ids, err = targetIDs(env, fs, opt.targets, rest); err != nil {
		return err
	}
	return runCitegraph(ctx, env, opt)
}

func runCitegraph(ctx context.Context, env *cmdEnv, opt citegraphOptions) error {
	ctx, cancel := env.drainContext(ctx)
	defer cancel()
	log, err := opt.global.logger(env.stderr)
	if err != nil {
		return err
	}
	st, err := opt.global.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	hc, err := opt.global.httpClient(log, opt.s2.serviceConfigs(env, &opt.global)...)
	if err != nil {
		return err
	}
	ax, _ := hc.Service("arxiv")
	a5, _ := hc.Service("ar5iv")
	s2svc, _ := hc.Service(s2.ServiceName)
	apisvc, _ := hc.Service(arxivapi.ServiceName)
	s2c, err := s2.New(s2svc, s2.Options{PageLimit: opt.s2.s2PageLimit, Logger: log})
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	apic, err := arxivapi.New(apisvc, arxivapi.Options{Logger: log})
	if err != nil {
		return err
	}
	f := &fetch.Fetcher{Arxiv: ax, Ar5iv: a5, Store: st, Log: log, MissingTTL: opt.global.missingTTL}
	r := &citegraph.Runner{
		Store: st, S2: s2c, ArxivAPI: apic, Log: log, Refresh: opt.refresh,
		Fetch: func(ctx context.Context, id string) (*record.Document, error) {
			res := f.Fetch(ctx, id)
			return res.Doc, res.Err
		},
	}

	bar := newProgress(env, log, len(opt.ids), "citegraph")
	results := r.All(ctx, opt.ids, opt.workers, func(res citegraph.Result) { bar.Add(1, res.Key) })
	bar.Finish()

	var problems []string
	var total record.LinkReport
	ok, withheld, missing := 0, 0, 0
	for _, res := range results {
		if res.Err != nil {
			problems = append(problems, res.Err.Error())
			fmt.Fprintf(env.stdout, "%s\tfailed\t%s\n", res.Input, res.Err)
			continue
		}
		g := res.Graph
		ok++
		switch g.S2Status {
		case record.S2Withheld:
			withheld++
		case record.S2Missing:
			missing++
		}
		rep := g.Report
		total.S2Edges += rep.S2Edges
		total.ByArxivID += rep.ByArxivID
		total.ByDOI += rep.ByDOI
		total.ByTitle += rep.ByTitle
		total.WithID += rep.WithID
		total.WithIDLinked += rep.WithIDLinked
		fmt.Fprintf(env.stdout, "%s\t%s\t%d edges\tlinked %d/%d (%.0f%%)\t%s\t%s\n", res.Input, g.S2Status,
			len(g.Edges), rep.Linked(), rep.S2Edges, 100*rep.Rate(), g.Meta.Published, g.Meta.PrimaryCategory)
	}
	fmt.Fprintf(env.stderr, "curate citegraph: %d targets done (%d withheld by the publisher, %d unknown to Semantic Scholar), %d failed; linked %d of %d S2 edges (%.1f%%: arXiv ID %d, DOI %d, title %d); store %s\n",
		ok, withheld, missing, len(problems), total.Linked(), total.S2Edges, 100*total.Rate(),
		total.ByArxivID, total.ByDOI, total.ByTitle, st.Dir())
	if len(problems) > 0 {
		fmt.Fprintf(env.stderr, "problems:\n  %s\n", strings.Join(problems, "\n  "))
		return &exitError{code: 1, err: fmt.Errorf("%d of %d targets failed", len(problems), len(opt.ids))}
	}
	return ctx.Err()
}
