package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/groundwork/curate/internal/app"
	"github.com/groundwork/curate/store"
)

// estimateCmd is `curate estimate`: what a run of the same flags would
// still ask and spend, from the store alone, without a request.
type estimateCmd struct {
	flags  stageFlags
	stages string
	json   bool
}

func (c *estimateCmd) AddFlags(fs *flag.FlagSet, env *cmdEnv) {
	c.flags.AddFlags(fs, env)
	fs.StringVar(&c.stages, "stages", "", "comma-separated stages the run would take (default all: "+strings.Join(app.Names(), ",")+")")
	fs.BoolVar(&c.json, "json", false, "print as JSON")
}

func (c *estimateCmd) Run(ctx context.Context, env *cmdEnv, args []string) error {
	if err := c.flags.validate(); err != nil {
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

// estimateRun prints the estimate of a run of cfg over ids. The store is
// only read, and not locked: a run may hold it. A store that does not
// exist yet is estimated as empty, and nothing is created.
func estimateRun(ctx context.Context, env *cmdEnv, cfg app.Config, ids, bad, stages []string, asJSON bool) error {
	cfg.Lock, cfg.Existing = false, true
	where := cfg.Store
	a, err := app.Open(ctx, cfg)
	if errors.Is(err, store.ErrNoStore) {
		where += ", not created yet"
		tmp, terr := os.MkdirTemp("", "curate-estimate-")
		if terr != nil {
			return terr
		}
		defer os.RemoveAll(tmp)
		cfg.Store, cfg.Existing = tmp, false
		a, err = app.Open(ctx, cfg)
	}
	if err != nil {
		return err
	}
	defer a.Close()
	keys, invalid := app.Targets(ids)
	if invalid = append(bad, invalid...); len(invalid) > 0 {
		fmt.Fprintf(env.stderr, "invalid IDs (left out):\n  %s\n", strings.Join(invalid, "\n  "))
	}
	est, err := a.Estimate(ctx, keys, app.EstimateOptions{Stages: stages})
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(env.stdout, est)
	}
	fmt.Fprintf(env.stdout, "estimate for %s (store %s; no request made)\n\n", app.Plural(len(keys), "target"), where)
	return est.WriteTable(env.stdout)
}
