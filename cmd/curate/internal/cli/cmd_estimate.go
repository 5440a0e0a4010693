package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/client/llm"
)

// estimateCmd is `curate estimate`: what a run of the same flags would
// still ask and spend, from the store alone, without a request.
type estimateCmd struct {
	flags  stageFlags
	stages string
	json   bool
}

func (c *estimateCmd) AddFlags(fs *flag.FlagSet, env *Env) {
	c.flags.AddFlags(fs, env)
	c.flags.know.addOAIBase(fs, env)
	fs.StringVar(&c.stages, "stages", "", "comma-separated stages the run would take (default all: "+strings.Join(app.Names(), ",")+")")
	fs.BoolVar(&c.json, "json", false, "print as JSON")
}

func (c *estimateCmd) Run(ctx context.Context, env *Env, args []string) error {
	if err := c.flags.validate(); err != nil {
		return err
	}
	if err := c.flags.llm.priced(); err != nil {
		return err
	}
	if _, _, err := app.Select(splitList(c.stages)); err != nil {
		return fmt.Errorf("--stages: %w", err)
	}
	ids, bad, err := c.flags.ids(env, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return fmt.Errorf("%w: no targets (--targets FILE, --targets-from FILE or IDs)", errUsage)
	}
	cfg, err := c.flags.config(env)
	if err != nil {
		return err
	}
	return estimateRun(ctx, env, cfg, ids, bad, splitList(c.stages), c.json)
}

// priced checks an estimate's model and prices before anything is read:
// prices without a model would estimate the heuristic backend, which
// costs nothing, and a model neither --price nor the model table prices
// would leave the cost unknown; both are usage errors (a model the table
// knows without a price, a self-hosted one, is estimated without a cost).
func (f *llmFlags) priced() error {
	heuristic, err := f.heuristic()
	if err != nil {
		return err
	}
	prices, err := f.loadPrices()
	if err != nil {
		return err
	}
	if heuristic {
		if len(prices) > 0 {
			return fmt.Errorf("%w: --price is given but no model: without --llm-model (and --llm-base or --llm-provider) the estimate is of the offline heuristic backend, which costs nothing; name the model to price, e.g. --llm-provider openai --llm-model gpt-5.4-mini", errUsage)
		}
		return nil
	}
	if _, ok := prices.Lookup(f.model); ok {
		return nil
	}
	table, err := f.table()
	if err != nil {
		return err
	}
	provider := cmp.Or(f.provider, llm.InferProvider(f.base))
	if _, ok := table.Price(provider, f.model); ok || table.Lookup(provider, f.model).Known() {
		return nil
	}
	return fmt.Errorf("%w: no price for %s: the model table does not know it (curate models lists the models it prices); give --price %s=INPUT/OUTPUT in dollars per million tokens (0/0 for a model that costs nothing, such as a self-hosted one)", errUsage, f.model, f.model)
}

// estimateRun prints the estimate of a run of cfg over ids (see
// app.EstimateRun).
func estimateRun(ctx context.Context, env *Env, cfg app.Config, ids, bad, stages []string, asJSON bool) error {
	keys, invalid := app.Targets(ids)
	if invalid = append(bad, invalid...); len(invalid) > 0 {
		fmt.Fprintf(env.Stderr, "invalid IDs (left out):\n  %s\n", strings.Join(invalid, "\n  "))
	}
	est, where, err := app.EstimateRun(ctx, cfg, keys, app.EstimateOptions{Stages: stages})
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(env.Stdout, est)
	}
	fmt.Fprintf(env.Stdout, "estimate for %s (store %s; no request made)\n\n", app.Plural(len(keys), "target"), where)
	return est.WriteTable(env.Stdout)
}
