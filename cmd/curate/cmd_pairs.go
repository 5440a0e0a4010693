package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/internal/parquetcodec"
	"github.com/groundwork/curate/internal/publish"
	"github.com/groundwork/curate/llm"
	"github.com/groundwork/curate/pairs"
	"github.com/groundwork/curate/record"
)

// pairsOptions are the flags of curate pairs.
type pairsOptions struct {
	flags   stageFlags
	out     string
	dataset string // restrict to this published dataset's train split
	opt     pairs.Options
	codec   parquetcodec.Codec
}

// runPairsCmd builds the impact judge's validation pairs from the
// store's training targets.
func runPairsCmd(ctx context.Context, env *cmdEnv, args []string) error {
	o := pairsOptions{opt: pairs.DefaultOptions()}
	fs := newFlagSet(env, "pairs", "--out DIR [--store DIR] [--dataset DIR] [--from-year 2022] [--to-year 2023] [--max-months 4] [--min-ratio 3] [--min-gap 10] [--min-influential-gap 5] [--llm heuristic|endpoint]")
	addGlobalFlags(fs, env, &o.flags.global)
	addS2Flags(fs, env, &o.flags.s2)
	addLLMFlags(fs, env, &o.flags.llm)
	fs.StringVar(&o.out, "out", "", "directory the pairs are written to (replaced atomically)")
	fs.StringVar(&o.dataset, "dataset", "", "published dataset whose train split the pairs are drawn from (default: every training target of the store)")
	fs.IntVar(&o.opt.FromYear, "from-year", o.opt.FromYear, "first arXiv v1 year of the papers")
	fs.IntVar(&o.opt.ToYear, "to-year", o.opt.ToYear, "last arXiv v1 year of the papers")
	fs.IntVar(&o.opt.MaxMonths, "max-months", o.opt.MaxMonths, "most months between the two papers' v1 dates (same calendar year)")
	fs.Float64Var(&o.opt.MinRatio, "min-ratio", o.opt.MinRatio, "least ratio of the two citation counts")
	fs.IntVar(&o.opt.MinGap, "min-gap", o.opt.MinGap, "least difference of the two citation counts")
	fs.IntVar(&o.opt.MinInfluentialGap, "min-influential-gap", o.opt.MinInfluentialGap, "least lead of the winner's influential-citation count (both must be above 0)")
	testFrom := o.opt.TestFrom.Format(time.DateOnly)
	fs.StringVar(&testFrom, "test-from", testFrom, "the dataset's cutoff: targets first published on or after it are test targets, never paired")
	var compression string
	addCompressionFlag(fs, &compression)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 0:
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, rest)
	case o.out == "":
		fs.Usage()
		return fmt.Errorf("%w: --out DIR is required", errUsage)
	}
	if o.opt.TestFrom, err = time.Parse(time.DateOnly, testFrom); err != nil {
		return fmt.Errorf("%w: --test-from %q: want YYYY-MM-DD", errUsage, testFrom)
	}
	if err := o.opt.Check(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if o.codec, err = parseCompression(compression); err != nil {
		return err
	}
	if err := o.flags.validate(); err != nil {
		return err
	}
	return runPairs(ctx, env, &o)
}

func runPairs(ctx context.Context, env *cmdEnv, o *pairsOptions) error {
	ctx, cancel := env.drainContext(ctx)
	defer cancel()
	if o.dataset != "" {
		pub, err := dataset.ReadDataset(ctx, o.dataset)
		if err != nil {
			return err
		}
		o.opt.Only = []string{}
		for _, in := range pub.Instances {
			if in.Split == record.SplitTrain {
				o.opt.Only = append(o.opt.Only, in.Target.ArxivID)
			}
		}
	}
	e, err := openLocked(ctx, env, &o.flags)
	if err != nil {
		return err
	}
	defer e.Close()
	var rw pairs.Rewriter = pairs.Heuristic{}
	if c := e.set.Summarize.LLM; c != nil && !llm.IsHeuristic(e.model) {
		rw = pairs.LLM{Client: c, Model: e.model}
	}
	res, err := pairs.Build(ctx, e.store, rw, o.opt)
	if err != nil {
		return err
	}
	if err := pairs.Write(ctx, o.out, res, pairs.WriteOptions{Version: version, Compression: o.codec}); err != nil {
		if errors.Is(err, publish.ErrLocked) {
			return &exitError{code: 2, err: err}
		}
		return err
	}
	for _, p := range res.Pairs {
		fmt.Fprintf(env.stdout, "%s\twinner %s (%d citations, %d influential)\tloser %s (%d, %d)\t%d days apart\n", p.ID,
			p.Winner.ArxivID, p.Winner.Citations, p.Winner.Influential, p.Loser.ArxivID, p.Loser.Citations, p.Loser.Influential, p.Claim.DaysApart)
	}
	counts := map[string]int{}
	for _, c := range res.Considered {
		counts[c.Status]++
	}
	fmt.Fprintf(env.stderr, "curate pairs: %d pairs from %d candidates among %d targets, written to %s\n", len(res.Pairs), res.Candidates, len(res.Considered), o.out)
	for _, s := range sortedReasons(counts) {
		fmt.Fprintf(env.stderr, "  %-22s %d\n", s, counts[s])
	}
	if n := counts[pairs.StatusNoInfluential]; n > 0 {
		fmt.Fprintf(env.stderr, "%d targets have no influentialCitationCount in their stored Semantic Scholar record and cannot be paired\n", n)
	}
	printUsage(env.stderr, e.meter, e.prices)
	return ctx.Err()
}
