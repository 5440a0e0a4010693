package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/licenses"
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

func (c *runCmd) AddFlags(fs *flag.FlagSet, env *Env) {
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
func (c *runCmd) validate(env *Env) error {
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
	_, err := c.data.options(env.Getenv)
	return err
}

func (c *runCmd) Run(ctx context.Context, env *Env, args []string) error {
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
		return c.estimate(ctx, env, ids, invalid)
	}
	return c.pipeline(ctx, env, ids, invalid)
}

// estimate prints the estimate of the run (--dry-run).
func (c *runCmd) estimate(ctx context.Context, env *Env, ids, invalid []string) error {
	if err := c.flags.llm.priced(); err != nil {
		return err
	}
	cfg, err := c.flags.config(env)
	if err != nil {
		return err
	}
	return estimateRun(ctx, env, cfg, ids, invalid, splitList(c.stages), c.json)
}

// pipeline runs the chosen per-target stages, then the licence lookup and
// the dataset (see app.Pipeline), printing what happens.
func (c *runCmd) pipeline(ctx context.Context, env *Env, ids, badRows []string) error {
	if err := c.validate(env); err != nil {
		return err
	}
	names, withDataset, _ := app.Select(splitList(c.stages))
	dopts, _ := c.data.options(env.Getenv)
	cfg, err := c.flags.config(env)
	if err != nil {
		return err
	}
	c.lic.configure(&cfg)
	o := targetsOptions(env, ids, badRows)
	o.Stages, o.Workers, o.Licenses = names, c.workers.byStage(), c.lic.lookup
	o.Watch = watchRun(env, cfg.Log, true)
	if withDataset {
		d := c.data.build(c.out, o.Keys, dopts)
		o.Dataset = &d
	}
	return app.Pipeline(ctx, cfg, o)
}

// targetsOptions are the pipeline's targets of ids and of the inputs that
// were none, which are said before the run.
func targetsOptions(env *Env, ids, badRows []string) app.PipelineOptions {
	keys, invalid := app.Targets(ids)
	invalid = append(badRows, invalid...)
	if len(invalid) > 0 {
		fmt.Fprintf(env.Stderr, "invalid IDs (left out):\n  %s\n", strings.Join(invalid, "\n  "))
	}
	return app.PipelineOptions{Keys: keys, Invalid: invalid}
}

// watchRun prints a pipeline as it goes: a progress bar over the stages,
// the crawl at the start, the outcome once the stages are through (a line
// per failure unless lines is false), the licences that failed, the
// dataset.
func watchRun(env *Env, log *slog.Logger, lines bool) app.Watch {
	var bar *progress
	var names []string
	var mu sync.Mutex
	counts := map[string]int{}
	return app.Watch{
		Begin: func(stages []string, targets int) {
			names = stages
			bar = newProgress(env, log, targets*len(names), strings.Join(names, "→"))
		},
		Start: func(s app.Start) { printCrawl(env.Stderr, s.Paces, s.Archives, false) },
		Event: func(ev pipeline.Event) {
			mu.Lock()
			counts[ev.Step]++
			var parts []string
			for _, n := range names {
				parts = append(parts, fmt.Sprintf("%s %d", n, counts[n]))
			}
			mu.Unlock()
			bar.Add(1, strings.Join(parts, " · "))
		},
		Stages: func(r *app.RunResult) {
			bar.Finish()
			printOutcome(env, r, lines && (r.Report == nil || !r.Report.Failures))
			if r.Report != nil {
				for _, l := range r.Report.Lines {
					fmt.Fprintln(env.Stdout, l)
				}
				fmt.Fprintln(env.Stderr, r.Report.Total)
			}
		},
		License:      func(r licenses.Result) { fmt.Fprintln(env.Stdout, licenseLine(r)) },
		Licenses:     func(sum *licenses.Summary) { printLicenses(env, sum) },
		Dataset:      func(out *app.DatasetOutcome) { printDataset(env, out) },
		NotPublished: func(err error) { fmt.Fprintf(env.Stderr, "curate dataset: %v\n", err) },
	}
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

func (c *stageCmd) AddFlags(fs *flag.FlagSet, env *Env) {
	c.flags.AddFlags(fs, env)
	c.flags.know.addOAIBase(fs, env)
	fs.IntVar(&c.workers, "workers", c.workers, "targets in each stage at once (1 or more)")
	if c.refetch != nil {
		fs.BoolVar(c.refetch, "refetch", false, "fetch papers again even when the store holds them")
	}
}

func (c *stageCmd) Run(ctx context.Context, env *Env, args []string) error {
	cfg, o, err := c.options(env, args)
	if err != nil {
		return err
	}
	return app.Pipeline(ctx, cfg, o)
}

// options checks the flags and makes the run's configuration and options
// of them: the stage with those it needs, each with --workers, and its
// account of each paper.
func (c *stageCmd) options(env *Env, args []string) (app.Config, app.PipelineOptions, error) {
	if err := c.flags.validate(); err != nil {
		return app.Config{}, app.PipelineOptions{}, err
	}
	if err := positive("--workers", c.workers); err != nil {
		return app.Config{}, app.PipelineOptions{}, err
	}
	ids, badRows, err := c.flags.ids(env, args)
	if err != nil {
		return app.Config{}, app.PipelineOptions{}, err
	}
	if len(ids) == 0 && len(badRows) == 0 {
		return app.Config{}, app.PipelineOptions{}, fmt.Errorf("%w: no arXiv IDs given (arguments, --targets FILE or --targets-from FILE)", errUsage)
	}
	cfg, err := c.flags.config(env)
	if err != nil {
		return app.Config{}, app.PipelineOptions{}, err
	}
	cfg.Stages.Refetch = c.refetch != nil && *c.refetch
	o := targetsOptions(env, ids, badRows)
	o.Stages, o.Report, o.Workers = []string{c.name}, c.name, map[string]int{}
	for _, n := range app.WithNeeds(c.name) {
		o.Workers[n] = c.workers
	}
	o.Watch = watchRun(env, cfg.Log, true)
	return cfg, o, nil
}
