package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/topics"
)

// topicsOptions are the flags of curate topics.
type topicsOptions struct {
	flags   stageFlags
	out     string
	workers int
	opt     topics.Options
	ids     []string // nil: every target in the store
	codec   parquetcodec.Codec
}

// runTopicsCmd builds topic corpora (shared background-paper sets) from
// the influential citations of the seed papers.
func runTopicsCmd(ctx context.Context, env *cmdEnv, args []string) error {
	o := topicsOptions{opt: topics.DefaultOptions()}
	fs := newFlagSet(env, "topics", "--out DIR [--store DIR] [--targets FILE] [--published-only] [--top-percent K] [--iou 0.5] [--min-support 3] [--min-background 5] [--max-background 8] [--budget 6] [--seed N] [ID...]")
	addGlobalFlags(fs, env, &o.flags.global)
	addS2Flags(fs, env, &o.flags.s2)
	addLLMFlags(fs, env, &o.flags.llm)
	fs.StringVar(&o.flags.targets, "targets", "", "file of seed arXiv IDs, one per line, '#' comments ('-' for stdin); default: every target in the store")
	fs.BoolVar(&o.flags.refresh, "refresh", false, "ask Semantic Scholar and arXiv again for seeds the store has no citation graph of")
	fs.StringVar(&o.out, "out", "", "directory the topics are written to (replaced atomically)")
	fs.IntVar(&o.workers, "workers", 4, "seeds run through citegraph at once")
	fs.BoolVar(&o.opt.PublishedOnly, "published-only", false, "only seeds with a publication venue in Semantic Scholar (not empty, not arXiv/CoRR or another preprint server)")
	fs.Float64Var(&o.opt.TopPercent, "top-percent", 0, "only the top K% of seeds by citation count within their year (0: all)")
	fs.Float64Var(&o.opt.IoU, "iou", o.opt.IoU, "two seeds are similar when their influential sets have IoU at least this")
	fs.IntVar(&o.opt.MinSupport, "min-support", o.opt.MinSupport, "fewest supporting papers of a topic")
	fs.IntVar(&o.opt.MinBackground, "min-background", o.opt.MinBackground, "fewest background papers of a topic")
	fs.IntVar(&o.opt.MaxBackground, "max-background", o.opt.MaxBackground, "most background papers of a topic")
	fs.IntVar(&o.opt.Budget, "budget", o.opt.Budget, "topics to select")
	fs.Uint64Var(&o.opt.Seed, "seed", 0, "0 starts the selection at the best-supported topic; another value starts it at a topic drawn by the seed")
	fs.StringVar(&o.opt.TestFrom, "test-from", topics.DefaultTestFrom, "the dataset's cutoff: papers first published on or after it are test papers")
	splits, compression := "train", ""
	addCompressionFlag(fs, &compression)
	fs.StringVar(&splits, "splits", splits, "comma-separated splits whose papers topics may hold, as supporting or background papers (train, test); test papers are for evaluation")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if o.out == "" {
		fs.Usage()
		return fmt.Errorf("%w: --out DIR is required", errUsage)
	}
	o.opt.Splits = splitList(splits)
	if o.codec, err = parseCompression(compression); err != nil {
		return err
	}
	if _, err := time.Parse("2006-01-02", o.opt.TestFrom); err != nil {
		return fmt.Errorf("%w: --test-from %q: want YYYY-MM-DD", errUsage, o.opt.TestFrom)
	}
	if err := o.opt.Check(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := o.flags.validate(); err != nil {
		return err
	}
	if err := positive("--workers", o.workers); err != nil {
		return err
	}
	if len(rest) > 0 || o.flags.targets != "" {
		if o.ids, err = o.flags.ids(env, rest); err != nil {
			return err
		}
		if len(o.ids) == 0 {
			return fmt.Errorf("%w: the targets file %s names no paper", errUsage, o.flags.targets)
		}
	}
	return runTopics(ctx, env, &o)
}

func runTopics(ctx context.Context, env *cmdEnv, o *topicsOptions) error {
	ctx, cancel := env.drainContext(ctx)
	defer cancel()
	e, err := openLocked(ctx, env, &o.flags)
	if err != nil {
		return err
	}
	defer e.Close()

	graphs, excluded, err := topics.LoadGraphs(ctx, e.store, o.ids, e.set.Citegraph, o.workers)
	if err != nil {
		return err
	}
	b := &topics.Builder{Store: e.store, LLM: e.set.Summarize.LLM, Model: e.model, Meter: e.meter, Log: e.log}
	res, err := b.Build(ctx, graphs, excluded, o.opt)
	if err != nil {
		return err
	}
	if err := topics.Write(ctx, o.out, res, topics.WriteOptions{Version: version, Compression: o.codec}); err != nil {
		if errors.Is(err, publish.ErrLocked) {
			return &exitError{code: 2, err: err}
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
	fmt.Fprintf(env.stderr, "curate topics: %d of %d seeds kept; %d groups, %d candidates, %d topics selected from the %s split%s; written to %s\n",
		kept, len(res.Seeds), len(res.Groups), res.Candidates, len(res.Topics), strings.Join(o.opt.Splits, " and "),
		map[bool]string{true: "s", false: ""}[len(o.opt.Splits) > 1], o.out)
	if len(res.Topics) == 0 {
		fmt.Fprintf(env.stderr, "no topic met the bounds (see %s/report.md); try a lower --iou or --min-support, or wider background bounds\n", o.out)
	}
	printUsage(env.stderr, e.meter, e.prices)
	if len(failed) > 0 {
		fmt.Fprintf(env.stderr, "seeds that failed:\n  %s\n", strings.Join(failed, "\n  "))
		return &exitError{code: 1, err: errors.New("seeds failed")}
	}
	return ctx.Err()
}
