package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/groundwork/curate/stages"
)

// runOptions are the flags of `curate run`.
type runOptions struct {
	flags   stageFlags
	out     string
	stages  string
	workers workerFlags
	data    datasetFlags
}

// workerFlags size each stage's pool.
type workerFlags struct {
	fetch, citegraph, classify, summarize int
}

func (w workerFlags) byStage() map[string]int {
	return map[string]int{
		stages.Fetch: w.fetch, stages.Citegraph: w.citegraph, stages.Classify: w.classify, stages.Summarize: w.summarize,
	}
}

// addWorkerFlags registers the per-stage pool sizes.
func addWorkerFlags(fs *flag.FlagSet, w *workerFlags) {
	fs.IntVar(&w.fetch, "fetch-workers", 2, "targets fetched at once (1 or more)")
	fs.IntVar(&w.citegraph, "citegraph-workers", 4, "targets in citegraph at once (1 or more)")
	fs.IntVar(&w.classify, "classify-workers", 4, "targets classified at once (1 or more)")
	fs.IntVar(&w.summarize, "summarize-workers", 4, "targets summarized at once (1 or more)")
}

func (w workerFlags) validate() error {
	for _, c := range []struct {
		flag string
		n    int
	}{{"--fetch-workers", w.fetch}, {"--citegraph-workers", w.citegraph}, {"--classify-workers", w.classify}, {"--summarize-workers", w.summarize}} {
		if err := positive(c.flag, c.n); err != nil {
			return err
		}
	}
	return nil
}

// validate checks every flag and environment value of `curate run`
// before anything is opened, requested or written.
func (o *runOptions) validate(env *cmdEnv) error {
	o.data.includeSuspect = o.flags.includeSuspect
	if err := o.flags.validate(); err != nil {
		return err
	}
	if err := o.workers.validate(); err != nil {
		return err
	}
	if _, _, err := parseStages(o.stages); err != nil {
		return err
	}
	_, err := o.data.options(env.getenv)
	return err
}

func runRunCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var opt runOptions
	fs := newFlagSet(env, "run", "--targets FILE [--out DIR] [--stages LIST] [ID...]")
	addStageFlags(fs, env, &opt.flags)
	addDatasetFlags(fs, &opt.data)
	fs.StringVar(&opt.out, "out", "", "write the dataset here after the per-target stages (default: STORE/dataset)")
	fs.StringVar(&opt.stages, "stages", "", "comma-separated stages to run (default all: "+strings.Join(append(stages.Order, "dataset"), ",")+")")
	addWorkerFlags(fs, &opt.workers)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := opt.validate(env); err != nil {
		return err
	}
	ids, err := opt.flags.ids(env, rest)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		fs.Usage()
		return fmt.Errorf("%w: no targets (--targets FILE or IDs)", errUsage)
	}
	return runPipeline(ctx, env, &opt, ids)
}

// runPipeline runs the chosen per-target stages, then the dataset stage,
// all under the store's lock. The dataset is published only when the
// stages completed (some targets may have failed: they are listed in
// dropped.json); a run refused, interrupted or unable to go on leaves the
// published dataset as it was.
func runPipeline(ctx context.Context, env *cmdEnv, opt *runOptions, ids []string) error {
	if err := opt.validate(env); err != nil {
		return err
	}
	names, withDataset, _ := parseStages(opt.stages)
	dopts, _ := opt.data.options(env.getenv)
	e, err := openLocked(ctx, env, &opt.flags)
	if err != nil {
		return err
	}
	defer e.Close()
	keys, bad := targetKeys(ids)
	var stageErr error
	if len(names) > 0 {
		stageErr = runStages(ctx, env, e, names, keys, bad, opt.workers.byStage())
		if !completed(stageErr) {
			return stageErr
		}
	}
	if withDataset {
		if err := buildDataset(ctx, env, e.log, e.store, dopts, &opt.data, opt.out, keys); err != nil {
			return err
		}
	}
	return stageErr
}

// parseStages reads --stages into per-target stage names and whether the
// dataset stage runs.
func parseStages(s string) ([]string, bool, error) {
	if s == "" {
		return stages.Order, true, nil
	}
	var names []string
	dataset := false
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "dataset":
			dataset = true
		case slices.Contains(stages.Order, n):
			names = append(names, n)
		default:
			return nil, false, fmt.Errorf("%w: --stages: unknown stage %q (stages: %s, dataset)", errUsage, n, strings.Join(stages.Order, ", "))
		}
	}
	// Keep pipeline order whatever the order given.
	var ordered []string
	for _, n := range stages.Order {
		if slices.Contains(names, n) {
			ordered = append(ordered, n)
		}
	}
	return ordered, dataset, nil
}
