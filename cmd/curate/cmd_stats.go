package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/summarize"
)

// runStatsCmd reports on what a store holds. `curate stats labels` shows
// the opportunity and paradigm label distributions of the idea cards, so a
// summarizer collapsing onto one label is visible.
func runStatsCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var g globalOptions
	var kind, model string
	var asJSON bool
	fs := newFlagSet(env, "stats", "labels [--store DIR] [--kind gold|source] [--model NAME] [--json]")
	addGlobalFlags(fs, env, &g)
	fs.StringVar(&kind, "kind", "", "only gold or only source cards (default both)")
	fs.StringVar(&model, "model", "", "only cards written by this model (\"heuristic\" for the offline backend)")
	fs.BoolVar(&asJSON, "json", false, "print as JSON")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 || rest[0] != "labels" {
		fs.Usage()
		return fmt.Errorf("%w: the report to print: labels", errUsage)
	}
	st, err := g.openExistingStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	stored, err := record.StoredCards(ctx, st)
	if err != nil {
		return err
	}
	var cards = stored[:0:0]
	for _, c := range stored {
		if (kind == "" || c.CardKind == kind) && (model == "" || c.Card.Model == model) {
			cards = append(cards, c)
		}
	}
	if len(cards) == 0 {
		return fmt.Errorf("stats labels: no idea cards in %s match (run curate summarize first)", st.Dir())
	}
	plain := make([]record.Card, len(cards))
	for i, c := range cards {
		plain[i] = c.Card
	}
	s := summarize.Stats(plain)
	if asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	fmt.Fprintf(env.stdout, "%d idea cards in %s\n\n", len(cards), st.Dir())
	return s.Report(env.stdout)
}
