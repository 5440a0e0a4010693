package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/pairs"
)

// pairsCmd is `curate pairs`: the impact judge's validation pairs from the
// store's training targets.
type pairsCmd struct {
	flags       stageFlags
	out         string
	dataset     string // restrict to this published dataset's train split
	testFrom    string
	compression string
	opt         pairs.Options
}

func newPairsCmd() *pairsCmd { return &pairsCmd{opt: pairs.DefaultOptions()} }

func (c *pairsCmd) AddFlags(fs *flag.FlagSet, env *Env) {
	c.flags.store.AddFlags(fs, env)
	c.flags.net.AddFlags(fs, env)
	c.flags.s2.AddFlags(fs, env)
	c.flags.llm.AddFlags(fs, env)
	fs.StringVar(&c.out, "out", "", "directory the pairs are written to (replaced atomically)")
	fs.StringVar(&c.dataset, "dataset", "", "published dataset whose train split the pairs are drawn from (default: every training target of the store)")
	fs.IntVar(&c.opt.FromYear, "from-year", c.opt.FromYear, "first arXiv v1 year of the papers")
	fs.IntVar(&c.opt.ToYear, "to-year", c.opt.ToYear, "last arXiv v1 year of the papers")
	fs.IntVar(&c.opt.MaxMonths, "max-months", c.opt.MaxMonths, "most months between the two papers' v1 dates (same calendar year)")
	fs.Float64Var(&c.opt.MinRatio, "min-ratio", c.opt.MinRatio, "least ratio of the two citation counts")
	fs.IntVar(&c.opt.MinGap, "min-gap", c.opt.MinGap, "least difference of the two citation counts")
	fs.IntVar(&c.opt.MinInfluentialGap, "min-influential-gap", c.opt.MinInfluentialGap, "least lead of the winner's influential-citation count (both must be above 0)")
	c.testFrom = c.opt.TestFrom.Format(time.DateOnly)
	fs.StringVar(&c.testFrom, "test-from", c.testFrom, "the dataset's cutoff: targets first published on or after it are test targets, never paired")
	addCompressionFlag(fs, &c.compression)
}

func (c *pairsCmd) Run(ctx context.Context, env *Env, args []string) error {
	cfg, o, err := c.options(env, args)
	if err != nil {
		return err
	}
	ctx, cancel := env.drainContext(ctx)
	defer cancel()
	out, err := app.Pairs(ctx, cfg, o)
	if out != nil {
		c.print(env, out)
	}
	return err
}

// options checks the flags and makes the App's configuration and the
// pairs' options of them.
func (c *pairsCmd) options(env *Env, args []string) (app.Config, app.PairsOptions, error) {
	o := app.PairsOptions{Dataset: c.dataset, Out: c.out, Options: c.opt, Version: version}
	var err error
	switch {
	case len(args) > 0:
		return app.Config{}, o, fmt.Errorf("%w: unexpected arguments %q", errUsage, args)
	case c.out == "":
		return app.Config{}, o, fmt.Errorf("%w: --out DIR is required", errUsage)
	}
	if o.Options.TestFrom, err = time.Parse(time.DateOnly, c.testFrom); err != nil {
		return app.Config{}, o, fmt.Errorf("%w: --test-from %q: want YYYY-MM-DD", errUsage, c.testFrom)
	}
	if err := o.Options.Check(); err != nil {
		return app.Config{}, o, fmt.Errorf("%w: %v", errUsage, err)
	}
	if o.Compression, err = parseCompression(c.compression); err != nil {
		return app.Config{}, o, err
	}
	for _, v := range []func() error{c.flags.store.validate, c.flags.net.validate, c.flags.s2.validate, c.flags.llm.validate} {
		if err := v(); err != nil {
			return app.Config{}, o, err
		}
	}
	log, _ := c.flags.store.logger(env.Stderr)
	cfg := app.Config{Version: version, Log: log, Store: c.flags.store.store, Lock: true,
		Net: c.flags.net.config(env), S2: c.flags.s2.config(env), LLM: c.flags.llm.config(env), Drain: env.Drain}
	return cfg, o, nil
}

// print writes what Pairs did: a line per pair, the counts by status,
// the LLM usage.
func (c *pairsCmd) print(env *Env, out *app.PairsOutcome) {
	res := out.Result
	if res != nil && !out.Written && len(res.Pending) > 0 {
		// Pairs are chosen in order, each paper once: until every rewrite
		// is in, the set is not known. Nothing is written.
		printUsage(env.Stderr, out.Usage.Meter, out.Usage.Prices)
		printBatches(env.Stderr, out.Batches)
		fmt.Fprintf(env.Stderr, "curate pairs: %d rewrites wait on LLM answers; nothing written to %s\n", len(res.Pending), c.out)
		return
	}
	if !out.Written {
		return
	}
	for _, p := range res.Pairs {
		fmt.Fprintf(env.Stdout, "%s\twinner %s (%d citations, %d influential)\tloser %s (%d, %d)\t%d days apart\n", p.ID,
			p.Winner.ArxivID, p.Winner.Citations, p.Winner.Influential, p.Loser.ArxivID, p.Loser.Citations, p.Loser.Influential, p.Claim.DaysApart)
	}
	counts := map[string]int{}
	for _, c := range res.Considered {
		counts[c.Status]++
	}
	fmt.Fprintf(env.Stderr, "curate pairs: %d pairs from %d candidates among %d targets, written to %s\n", len(res.Pairs), res.Candidates, len(res.Considered), c.out)
	for _, s := range sortedReasons(counts) {
		fmt.Fprintf(env.Stderr, "  %-22s %d\n", s, counts[s])
	}
	if n := counts[pairs.StatusNoInfluential]; n > 0 {
		fmt.Fprintf(env.Stderr, "%d targets have no influentialCitationCount in their stored Semantic Scholar record and cannot be paired\n", n)
	}
	printUsage(env.Stderr, out.Usage.Meter, out.Usage.Prices)
	printBatches(env.Stderr, out.Batches)
}
