package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/topics"
)

// topicsCmd is `curate topics`: topic corpora (shared background-paper
// sets) from the influential citations of the seed papers.
type topicsCmd struct {
	flags       stageFlags
	out         string
	workers     int
	splits      string
	compression string
	opt         topics.Options
}

func (c *topicsCmd) AddFlags(fs *flag.FlagSet, env *Env) {
	c.opt = topics.DefaultOptions()
	c.flags.store.AddFlags(fs, env)
	c.flags.net.AddFlags(fs, env)
	c.flags.s2.AddFlags(fs, env)
	c.flags.llm.AddFlags(fs, env)
	fs.StringVar(&c.flags.targets, "targets", "", "file of seed arXiv IDs, one per line, '#' comments ('-' for stdin); default: every target in the store")
	c.flags.from.AddFlags(fs, env)
	fs.BoolVar(&c.flags.refresh, "refresh", false, "ask Semantic Scholar and arXiv again for seeds the store has no citation graph of")
	fs.StringVar(&c.out, "out", "", "directory the topics are written to (replaced atomically)")
	fs.IntVar(&c.workers, "workers", 4, "seeds run through fetch and citegraph at once (1 or more)")
	fs.BoolVar(&c.opt.PublishedOnly, "published-only", false, "only seeds with a publication venue in Semantic Scholar (not empty, not arXiv/CoRR or another preprint server)")
	fs.Float64Var(&c.opt.TopPercent, "top-percent", 0, "only the top K% of seeds by citation count within their year (0: all)")
	fs.Float64Var(&c.opt.IoU, "iou", c.opt.IoU, "two seeds are similar when their influential sets have IoU at least this")
	fs.IntVar(&c.opt.MinSupport, "min-support", c.opt.MinSupport, "fewest supporting papers of a topic")
	fs.IntVar(&c.opt.MinBackground, "min-background", c.opt.MinBackground, "fewest background papers of a topic")
	fs.IntVar(&c.opt.MaxBackground, "max-background", c.opt.MaxBackground, "most background papers of a topic")
	fs.IntVar(&c.opt.Budget, "budget", c.opt.Budget, "topics to select")
	fs.Uint64Var(&c.opt.Seed, "seed", 0, "0 starts the selection at the best-supported topic; another value starts it at a topic drawn by the seed")
	fs.StringVar(&c.opt.TestFrom, "test-from", topics.DefaultTestFrom, "the dataset's cutoff: papers first published on or after it are test papers")
	addCompressionFlag(fs, &c.compression)
	fs.StringVar(&c.splits, "splits", "train", "comma-separated splits whose papers topics may hold, as supporting or background papers (train, test); test papers are for evaluation")
}

func (c *topicsCmd) Run(ctx context.Context, env *Env, args []string) error {
	cfg, o, err := c.options(env, args)
	if err != nil {
		return err
	}
	ctx, cancel := env.drainContext(ctx)
	defer cancel()
	out, err := app.Topics(ctx, cfg, o)
	if out != nil {
		c.print(env, out)
	}
	return err
}

// options checks the flags and makes the App's configuration and the
// topics' options of them.
func (c *topicsCmd) options(env *Env, args []string) (app.Config, app.TopicsOptions, error) {
	o := app.TopicsOptions{Out: c.out, Workers: c.workers, Options: c.opt, Version: version}
	if c.out == "" {
		return app.Config{}, o, fmt.Errorf("%w: --out DIR is required", errUsage)
	}
	o.Options.Splits = splitList(c.splits)
	var err error
	if o.Compression, err = parseCompression(c.compression); err != nil {
		return app.Config{}, o, err
	}
	if _, err := time.Parse("2006-01-02", o.Options.TestFrom); err != nil {
		return app.Config{}, o, fmt.Errorf("%w: --test-from %q: want YYYY-MM-DD", errUsage, o.Options.TestFrom)
	}
	if err := o.Options.Check(); err != nil {
		return app.Config{}, o, fmt.Errorf("%w: %v", errUsage, err)
	}
	for _, v := range []func() error{c.flags.store.validate, c.flags.net.validate, c.flags.s2.validate, c.flags.llm.validate} {
		if err := v(); err != nil {
			return app.Config{}, o, err
		}
	}
	if err := positive("--workers", c.workers); err != nil {
		return app.Config{}, o, err
	}
	if len(args) > 0 || c.flags.targets != "" || c.flags.from.path != "" {
		ids, bad, err := c.flags.ids(env, args)
		switch {
		case err != nil:
			return app.Config{}, o, err
		case len(bad) > 0:
			return app.Config{}, o, fmt.Errorf("%w: seeds that are not arXiv IDs:\n  %s", errUsage, strings.Join(bad, "\n  "))
		case len(ids) == 0:
			return app.Config{}, o, fmt.Errorf("%w: the targets file %s names no paper", errUsage, cmp.Or(c.flags.targets, c.flags.from.path))
		}
		o.Seeds = ids
	}
	log, _ := c.flags.store.logger(env.Stderr)
	cfg := app.Config{Version: version, Log: log, Store: c.flags.store.store, Lock: true,
		Net: c.flags.net.config(env), S2: c.flags.s2.config(env), LLM: c.flags.llm.config(env), Drain: env.Drain,
		Stages: app.StageOptions{Refresh: c.flags.refresh}}
	return cfg, o, nil
}

// print writes what Topics did: a line per topic, the counts, the LLM
// usage, the seeds that failed.
func (c *topicsCmd) print(env *Env, out *app.TopicsOutcome) {
	res := out.Result
	if res != nil && !out.Written && len(res.Pending) > 0 {
		// Topics without their tags are not written: the next run has them.
		printUsage(env.Stderr, out.Usage.Meter, out.Usage.Prices)
		printBatches(env.Stderr, out.Batches)
		fmt.Fprintf(env.Stderr, "curate topics: %d of %d selected topics wait on their LLM tag; nothing written to %s\n", len(res.Pending), len(res.Topics), c.out)
		return
	}
	if !out.Written {
		return
	}
	for _, t := range res.Topics {
		fmt.Fprintf(env.Stdout, "%d\t%s\t%d supporting\t%d background\t%s\n", t.Rank, t.ID, t.Stats.Support, t.Stats.BackgroundSize, t.Tag)
	}
	kept, failed := 0, []string{}
	for _, s := range res.Seeds {
		switch s.Status {
		case topics.ReasonKept:
			kept++
		case topics.ReasonCitegraph, topics.ReasonInvalidID:
			failed = append(failed, s.ID+": "+s.Detail)
		}
	}
	splits := "the " + strings.Join(res.Options.Splits, " and ") + " split"
	if len(res.Options.Splits) > 1 {
		splits += "s"
	}
	fmt.Fprintf(env.Stderr, "curate topics: %d of %d seeds kept; %d groups, %d candidates, %d topics selected from %s; written to %s\n",
		kept, len(res.Seeds), len(res.Groups), res.Candidates, len(res.Topics), splits, c.out)
	if len(res.Topics) == 0 {
		fmt.Fprintf(env.Stderr, "no topic met the bounds (see %s/report.md); try a lower --iou or --min-support, or wider background bounds\n", c.out)
	}
	printUsage(env.Stderr, out.Usage.Meter, out.Usage.Prices)
	printBatches(env.Stderr, out.Batches)
	if len(failed) > 0 {
		fmt.Fprintf(env.Stderr, "seeds that failed:\n  %s\n", strings.Join(failed, "\n  "))
	}
}
