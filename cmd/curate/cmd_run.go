package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/internal/pipeline"
)

// runCmd is `curate run`: every stage of the table (or --stages), then
// the dataset.
type runCmd struct {
	flags   stageFlags
	data    datasetFlags
	out     string
	stages  string
	workers workerFlags
	lic     licenseFlags
	dryRun  bool
	json    bool
}

func newRunCmd() *runCmd { return &runCmd{workers: workerFlags{}} }

func (c *runCmd) AddFlags(fs *flag.FlagSet, env *cmdEnv) {
	c.flags.AddFlags(fs, env)
	c.data.AddFlags(fs, env)
	fs.StringVar(&c.out, "out", "", "write the dataset here after the per-target stages (default: STORE/dataset)")
	fs.StringVar(&c.stages, "stages", "", "comma-separated stages to run (default all: "+strings.Join(app.Names(), ",")+")")
	fs.BoolVar(&c.dryRun, "dry-run", false, "print the estimate of the run (curate estimate) and stop, making no request")
	fs.BoolVar(&c.json, "json", false, "with --dry-run, print the estimate as JSON")
	c.workers.AddFlags(fs, env)
	c.lic.AddFlags(fs, env, true, nil)
}

// validate checks every flag and environment value before anything is
// opened, requested or written.
func (c *runCmd) validate(env *cmdEnv) error {
	c.data.includeSuspect = c.flags.includeSuspect
	if err := c.flags.validate(); err != nil {
		return err
	}
	if err := c.workers.validate(); err != nil {
		return err
	}
	if err := c.lic.validate(); err != nil {
		return err
	}
	if _, _, err := app.Select(splitList(c.stages)); err != nil {
		return fmt.Errorf("--stages: %w", err)
	}
	if err := app.CheckStages(app.Config{PDF: c.flags.pdf.config(env)}, splitList(c.stages)); err != nil {
		return err
	}
	_, err := c.data.options(env.getenv)
	return err
}

func (c *runCmd) Run(ctx context.Context, env *cmdEnv, args []string) error {
	if err := c.validate(env); err != nil {
		return err
	}
	ids, invalid, err := c.flags.ids(env, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 && len(invalid) == 0 {
		return fmt.Errorf("%w: no targets (--targets FILE, --targets-from FILE or IDs)", errUsage)
	}
	if c.json && !c.dryRun {
		return fmt.Errorf("%w: --json is for --dry-run", errUsage)
	}
	if c.dryRun {
		if err := c.flags.llm.priced(); err != nil {
			return err
		}
		cfg, err := c.flags.config(env)
		if err != nil {
			return err
		}
		return estimateRun(ctx, env, cfg, ids, invalid, splitList(c.stages), c.json)
	}
	return c.pipeline(ctx, env, ids, invalid)
}

// pipeline runs the chosen per-target stages, then the dataset stage, all
// under the store's lock. The dataset is published only when the stages
// completed (some targets may have failed: they are listed in
// dropped.json); a run refused, interrupted or unable to go on leaves the
// published dataset as it was.
func (c *runCmd) pipeline(ctx context.Context, env *cmdEnv, ids, badRows []string) error {
	if err := c.validate(env); err != nil {
		return err
	}
	names, withDataset, _ := app.Select(splitList(c.stages))
	dopts, _ := c.data.options(env.getenv)
	cfg, err := c.flags.config(env)
	if err != nil {
		return err
	}
	c.lic.configure(&cfg)
	a, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	if withDataset {
		// Held from before the first request to the publish: a second run
		// aimed at the same --out is refused before it spends anything.
		release, err := app.HoldOutput(app.DatasetDir(a.Store, c.out))
		if err != nil {
			return err
		}
		defer release()
	}
	keys, invalid := app.Targets(ids)
	invalid = append(badRows, invalid...)
	var stageErr error
	if len(names) > 0 {
		stageErr = runStages(ctx, env, a, names, keys, invalid, c.workers.byStage())
		if !completed(stageErr) {
			return stageErr
		}
	}
	licErr := c.lic.run(ctx, env, a, keys, false)
	if !completed(licErr) {
		return licErr
	}
	if stageErr == nil {
		stageErr = licErr
	}
	if withDataset {
		o := c.data.build(c.out, keys, dopts)
		o.Locked = true
		out, err := app.BuildDataset(ctx, a.Store, version, o)
		if errors.Is(err, app.ErrNothingToPublish) && stageErr != nil {
			// Say it, and exit as the stages did (1, or 75 when waiting).
			fmt.Fprintf(env.stderr, "curate dataset: %v\n", err)
			return stageErr
		}
		if err != nil {
			return err
		}
		printDataset(env, out)
	}
	return stageErr
}

// completed reports whether a run that returned err finished its work,
// some targets failing or waiting on LLM batches perhaps, so that what it
// finished may be published (waiting targets are listed as such in the
// dataset's dropped targets). Usage errors, a refused lock, an interrupted
// run and a run that could not go on publish nothing.
func completed(err error) bool {
	return err == nil || errors.Is(err, app.ErrIncomplete) || errors.Is(err, app.ErrPending)
}

// runStages runs the named stages over keys with a progress bar and prints
// what happened; invalid IDs count as failed targets.
func runStages(ctx context.Context, env *cmdEnv, a *app.App, names, keys, invalid []string, workers map[string]int) error {
	out, err := startStages(ctx, env, a, names, keys, invalid, workers, nil)
	return endStages(env, a, out, invalid, true, err)
}

// startStages runs the named stages over keys with a progress bar; onEvent,
// when set, sees each target leave each stage.
func startStages(ctx context.Context, env *cmdEnv, a *app.App, names, keys, invalid []string, workers map[string]int, onEvent func(pipeline.Event)) (*app.Outcome, error) {
	if len(invalid) > 0 {
		fmt.Fprintf(env.stderr, "invalid IDs (left out):\n  %s\n", strings.Join(invalid, "\n  "))
	}
	names = a.Active(app.WithNeeds(names...))
	bar := newProgress(env, a.Log, len(keys)*len(names), strings.Join(names, "→"))
	var mu sync.Mutex
	counts := map[string]int{}
	out, err := a.Run(ctx, keys, app.RunOptions{Stages: names, Workers: workers, OnStart: func(s app.Start) {
		printCrawl(env.stderr, s.Paces, s.Archives, false)
	}, OnEvent: func(ev pipeline.Event) {
		mu.Lock()
		counts[ev.Step]++
		var parts []string
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %d", n, counts[n]))
		}
		mu.Unlock()
		bar.Add(1, strings.Join(parts, " · "))
		if onEvent != nil {
			onEvent(ev)
		}
	}})
	bar.Finish()
	return out, err
}

// endStages prints a run's outcome (a line per failure unless lines is
// false) and returns its error, invalid IDs counting as failed targets.
func endStages(env *cmdEnv, a *app.App, out *app.Outcome, invalid []string, lines bool, err error) error {
	printOutcome(env, a, out, invalid, lines)
	if err == nil && len(invalid) > 0 {
		err = app.Fail(app.ErrIncomplete, fmt.Errorf("%s failed", app.Plural(len(invalid), "target")))
	}
	return err
}

// stageCmd runs one stage of the table through the same path as `curate
// run` (with the stages it needs before it, see pipeline.Decl.Before):
// fetch, citegraph, classify, summarize.
type stageCmd struct {
	name    string
	flags   stageFlags
	workers int
	refetch *bool // --refetch, for a stage that fetches pages
}

func newStageCmd(name string, refetch bool) *stageCmd {
	s, _ := app.Lookup(name)
	c := &stageCmd{name: name, workers: s.Workers}
	if refetch {
		c.refetch = new(bool)
	}
	return c
}

func (c *stageCmd) AddFlags(fs *flag.FlagSet, env *cmdEnv) {
	c.flags.AddFlags(fs, env)
	fs.IntVar(&c.workers, "workers", c.workers, "targets in each stage at once (1 or more)")
	if c.refetch != nil {
		fs.BoolVar(c.refetch, "refetch", false, "fetch papers again even when the store holds them")
	}
}

func (c *stageCmd) Run(ctx context.Context, env *cmdEnv, args []string) error {
	if err := c.flags.validate(); err != nil {
		return err
	}
	if err := positive("--workers", c.workers); err != nil {
		return err
	}
	ids, badRows, err := c.flags.ids(env, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 && len(badRows) == 0 {
		return fmt.Errorf("%w: no arXiv IDs given (arguments, --targets FILE or --targets-from FILE)", errUsage)
	}
	cfg, err := c.flags.config(env)
	if err != nil {
		return err
	}
	cfg.Stages.Refetch = c.refetch != nil && *c.refetch
	a, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	keys, invalid := app.Targets(ids)
	invalid = append(badRows, invalid...)
	workers := map[string]int{}
	for _, n := range app.WithNeeds(c.name) {
		workers[n] = c.workers
	}
	var mu sync.Mutex
	events := map[string]pipeline.Event{}
	out, err := startStages(ctx, env, a, []string{c.name}, keys, invalid, workers, func(ev pipeline.Event) {
		if ev.Step == c.name {
			mu.Lock()
			events[ev.Key] = ev
			mu.Unlock()
		}
	})
	rep, ok := a.Report(ctx, c.name, keys, events, len(invalid))
	err = endStages(env, a, out, invalid, !rep.Failures, err)
	if ok {
		for _, l := range rep.Lines {
			fmt.Fprintln(env.stdout, l)
		}
		fmt.Fprintln(env.stderr, rep.Total)
	}
	return err
}
