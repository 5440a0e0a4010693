package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/groundwork/curate/app"
)

// statsCmd is `curate stats labels`: the opportunity and paradigm label
// distributions of the idea cards, so a summarizer collapsing onto one
// label is visible.
type statsCmd struct {
	store       storeFlags
	kind, model string
	json        bool
}

func (c *statsCmd) AddFlags(fs *flag.FlagSet, env *Env) {
	c.store.AddFlags(fs, env)
	fs.StringVar(&c.kind, "kind", "", "only gold or only source cards (default both)")
	fs.StringVar(&c.model, "model", "", "only cards written by this model (\"heuristic\" for the offline backend)")
	fs.BoolVar(&c.json, "json", false, "print as JSON")
}

func (c *statsCmd) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 || args[0] != "labels" {
		return fmt.Errorf("%w: the report to print: labels", errUsage)
	}
	if err := c.store.validate(); err != nil {
		return err
	}
	l, err := app.Labels(ctx, c.store.store, c.kind, c.model)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.Stdout, l.Stats)
	}
	fmt.Fprintf(env.Stdout, "%d idea cards in %s\n\n", l.Cards, l.Store)
	return l.Stats.Report(env.Stdout)
}
