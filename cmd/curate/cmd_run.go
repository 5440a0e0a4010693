package main

import (
	"context"
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

func runRunCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var opt runOptions
	fs := newFlagSet(env, "run", "--targets FILE [--out DIR] [--stages LIST] [ID...]")
	addStageFlags(fs, env, &opt.flags)
	addDatasetFlags(fs, &opt.data)
	fs.StringVar(&opt.out, "out", "", "write the dataset here after the per-target stages (default: STORE/dataset)")
	fs.StringVar(&opt.stages, "stages", "", "comma-separated stages to run (default all: "+strings.Join(append(stages.Order, "dataset"), ",")+")")
	fs.IntVar(&opt.workers.fetch, "fetch-workers", 2, "targets fetched at once")
	fs.IntVar(&opt.workers.citegraph, "citegraph-workers", 4, "targets in citegraph at once")
	fs.IntVar(&opt.workers.classify, "classify-workers", 4, "targets classified at once")
	fs.IntVar(&opt.workers.summarize, "summarize-workers", 4, "targets summarized at once")
	rest, err := parseFlags(fs, args)
	if err != nil {
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

// runPipeline runs the chosen per-target stages, then the dataset stage.
func runPipeline(ctx context.Context, env *cmdEnv, opt *runOptions, ids []string) error {
	names, withDataset, err := parseStages(opt.stages)
	if err != nil {
		return err
	}
	var stageErr error
	if len(names) > 0 {
		stageErr = runStages(ctx, env, &opt.flags, names, ids, opt.workers.byStage())
		if ee, ok := stageErr.(*exitError); ok && ee.code == 130 {
			return stageErr // interrupted: no dataset from a partial run
		}
	}
	if withDataset {
		if err := buildDataset(ctx, env, &opt.flags.global, &opt.data, opt.out, ids); err != nil {
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
