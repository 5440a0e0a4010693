package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/groundwork/curate/demo"
)

func runDemoCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var opt runOptions
	fs := newFlagSet(env, "demo", "[--store DIR] [--out DIR]")
	addStageFlags(fs, env, &opt.flags)
	addDatasetFlags(fs, &opt.data)
	fs.StringVar(&opt.out, "out", "", "where the dataset goes (default: STORE/dataset)")
	// The demo is about the pipeline, not politeness: the services are local.
	if err := fs.Set("store", "./curate-demo"); err != nil {
		return err
	}
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	srv, err := demo.Start()
	if err != nil {
		return fmt.Errorf("demo: start the bundled services: %w", err)
	}
	defer srv.Close()
	g := &opt.flags.global
	g.arxivBase, g.ar5ivBase, g.arxivInterval = srv.URL(demo.Arxiv), srv.URL(demo.Ar5iv), 20*time.Millisecond
	g.retries = 1
	opt.flags.s2.s2Base, opt.flags.s2.arxivAPIBase, opt.flags.s2.s2Interval = srv.URL(demo.S2), srv.URL(demo.ArxivAPI), 10*time.Millisecond
	if opt.flags.llm.base == "" {
		opt.flags.llm.backend = "heuristic"
	}
	opt.workers = workerFlags{fetch: 2, citegraph: 2, classify: 2, summarize: 2}
	if opt.out == "" {
		opt.out = filepath.Join(g.store, "dataset")
	}
	ids := demo.TargetIDs()
	fmt.Fprintf(env.stderr, "curate demo: a synthetic corpus of %d target papers served offline by %s\n"+
		"(every paper, author and DOI in it is invented; the services speak the real protocols)\n\n", len(ids), srv)
	if err := runPipeline(ctx, env, &opt, ids); err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "\nthe dataset is in %s (open %s in a browser); the store is %s (try: curate show --store %s %s)\n",
		opt.out, filepath.Join(opt.out, "report.html"), g.store, g.store, ids[0])
	return nil
}
