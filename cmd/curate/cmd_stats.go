package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/groundwork/curate/internal/app"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/summarize"
)

// statsCmd is `curate stats labels`: the opportunity and paradigm label
// distributions of the idea cards, so a summarizer collapsing onto one
// label is visible.
type statsCmd struct {
	store       storeFlags
	kind, model string
	json        bool
}

func (c *statsCmd) AddFlags(fs *flag.FlagSet, env *cmdEnv) {
	c.store.AddFlags(fs, env)
	fs.StringVar(&c.kind, "kind", "", "only gold or only source cards (default both)")
	fs.StringVar(&c.model, "model", "", "only cards written by this model (\"heuristic\" for the offline backend)")
	fs.BoolVar(&c.json, "json", false, "print as JSON")
}

func (c *statsCmd) Run(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) != 1 || args[0] != "labels" {
		return fmt.Errorf("%w: the report to print: labels", errUsage)
	}
	if c.kind != "" && c.kind != record.CardGold && c.kind != record.CardSource {
		return fmt.Errorf("%w: --kind %q: want %s or %s", errUsage, c.kind, record.CardGold, record.CardSource)
	}
	if err := c.store.validate(); err != nil {
		return err
	}
	st, err := app.OpenStoreReadOnly(ctx, c.store.store)
	if err != nil {
		return err
	}
	defer st.Close()
	stored, err := record.StoredCards(ctx, st)
	if err != nil {
		return err
	}
	var cards []record.Card
	for _, sc := range stored {
		if (c.kind == "" || sc.CardKind == c.kind) && (c.model == "" || sc.Card.Model == c.model) {
			cards = append(cards, sc.Card)
		}
	}
	if len(cards) == 0 {
		if len(stored) == 0 {
			return fmt.Errorf("stats labels: %s holds no idea cards (run curate summarize first)", st.Dir())
		}
		return fmt.Errorf("stats labels: none of the %d idea cards in %s is of kind %q and model %q", len(stored), st.Dir(), c.kind, c.model)
	}
	s := summarize.Stats(cards)
	if c.json {
		return printJSON(env.stdout, s)
	}
	fmt.Fprintf(env.stdout, "%d idea cards in %s\n\n", len(cards), st.Dir())
	return s.Report(env.stdout)
}
