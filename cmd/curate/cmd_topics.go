package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/groundwork/curate/internal/app"
	"github.com/groundwork/curate/internal/publish"
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

func (c *topicsCmd) AddFlags(fs *flag.FlagSet, env *cmdEnv) {
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

func (c *topicsCmd) Run(ctx context.Context, env *cmdEnv, args []string) error {
	if c.out == "" {
		return fmt.Errorf("%w: --out DIR is required", errUsage)
	}
	c.opt.Splits = splitList(c.splits)
	codec, err := parseCompression(c.compression)
	if err != nil {
		return err
	}
	if _, err := time.Parse("2006-01-02", c.opt.TestFrom); err != nil {
		return fmt.Errorf("%w: --test-from %q: want YYYY-MM-DD", errUsage, c.opt.TestFrom)
	}
	if err := c.opt.Check(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	for _, v := range []func() error{c.flags.store.validate, c.flags.net.validate, c.flags.s2.validate, c.flags.llm.validate} {
		if err := v(); err != nil {
			return err
		}
	}
	if err := positive("--workers", c.workers); err != nil {
		return err
	}
	var ids []string
	if len(args) > 0 || c.flags.targets != "" || c.flags.from.path != "" {
		var bad []string
		var err error
		if ids, bad, err = c.flags.ids(env, args); err != nil {
			return err
		}
		if len(bad) > 0 {
			return fmt.Errorf("%w: seeds that are not arXiv IDs:\n  %s", errUsage, strings.Join(bad, "\n  "))
		}
		if len(ids) == 0 {
			return fmt.Errorf("%w: the targets file %s names no paper", errUsage, cmp.Or(c.flags.targets, c.flags.from.path))
		}
	}
	ctx, cancel := env.drainContext(ctx)
	defer cancel()
	log, _ := c.flags.store.logger(env.stderr)
	// Without listed seeds, the seeds are the store's targets: a store
	// that is not there is a mistake, not an empty corpus.
	a, err := app.Open(ctx, app.Config{Version: version, Log: log, Store: c.flags.store.store, Lock: true, Existing: len(ids) == 0,
		Net: c.flags.net.config(env), S2: c.flags.s2.config(env), LLM: c.flags.llm.config(env), Drain: env.drain,
		Stages: app.StageOptions{Refresh: c.flags.refresh}})
	if err != nil {
		return err
	}
	defer a.Close()
	graphs, excluded, err := topics.LoadGraphs(ctx, a.Store, ids, a.BuildGraphs(c.workers))
	if err != nil {
		return err
	}
	b := &topics.Builder{Store: a.Store, LLM: a.LLM, Model: a.Model, Meter: a.Meter, Log: a.Log}
	var res *topics.Result
	waiting, batches, err := a.Passes(ctx, func(ctx context.Context) (int, error) {
		var err error
		res, err = b.Build(ctx, graphs, excluded, c.opt)
		if err != nil {
			return 0, err
		}
		return len(res.Pending), nil
	})
	if err != nil {
		return err
	}
	if waiting > 0 {
		// Topics without their tags are not written: the next run has them.
		printUsage(env.stderr, a.Meter, a.Prices)
		printBatches(env.stderr, batches)
		fmt.Fprintf(env.stderr, "curate topics: %d of %d selected topics wait on their LLM tag; nothing written to %s\n", waiting, len(res.Topics), c.out)
		return app.PendingError(waiting, "topic", batches)
	}
	if err := topics.Write(ctx, c.out, res, topics.WriteOptions{Version: version, Compression: codec}); err != nil {
		if errors.Is(err, publish.ErrLocked) {
			return app.Fail(app.ErrCannotRun, err)
		}
		return err
	}
	for _, t := range res.Topics {
		fmt.Fprintf(env.stdout, "%d\t%s\t%d supporting\t%d background\t%s\n", t.Rank, t.ID, t.Stats.Support, t.Stats.BackgroundSize, t.Tag)
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
	splits := "the " + strings.Join(c.opt.Splits, " and ") + " split"
	if len(c.opt.Splits) > 1 {
		splits += "s"
	}
	fmt.Fprintf(env.stderr, "curate topics: %d of %d seeds kept; %d groups, %d candidates, %d topics selected from %s; written to %s\n",
		kept, len(res.Seeds), len(res.Groups), res.Candidates, len(res.Topics), splits, c.out)
	if len(res.Topics) == 0 {
		fmt.Fprintf(env.stderr, "no topic met the bounds (see %s/report.md); try a lower --iou or --min-support, or wider background bounds\n", c.out)
	}
	printUsage(env.stderr, a.Meter, a.Prices)
	printBatches(env.stderr, batches)
	if len(failed) > 0 {
		fmt.Fprintf(env.stderr, "seeds that failed:\n  %s\n", strings.Join(failed, "\n  "))
		return app.Fail(app.ErrIncomplete, fmt.Errorf("%s failed", app.Plural(len(failed), "seed")))
	}
	if ctx.Err() != nil {
		return app.Fail(app.ErrInterrupted, ctx.Err())
	}
	return nil
}
