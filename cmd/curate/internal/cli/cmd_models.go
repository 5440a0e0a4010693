package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/client/llm"
)

// modelsCmd is `curate models`: the model table, and what curate sends a
// named model.
type modelsCmd struct {
	store storeFlags
	llm   llmFlags
	json  bool
}

func (c *modelsCmd) AddFlags(fs *flag.FlagSet, env *Env) {
	c.store.AddFlags(fs, env)
	c.llm.AddFlags(fs, env)
	fs.BoolVar(&c.json, "json", false, "print as JSON (the table in the shape --models reads)")
}

func (c *modelsCmd) Run(ctx context.Context, env *Env, args []string) error {
	o, err := c.options(args)
	if err != nil {
		return err
	}
	rep, err := app.Models(ctx, o)
	switch {
	case err != nil:
		return err
	case c.json:
		return printJSON(env.Stdout, rep)
	case rep.Model == nil:
		printModels(env, rep.Rows)
		return nil
	}
	return printModel(env, rep.Model)
}

// options checks the arguments and flags and makes the report's options
// of them.
func (c *modelsCmd) options(args []string) (app.ModelsOptions, error) {
	if len(args) > 1 {
		return app.ModelsOptions{}, fmt.Errorf("%w: curate models takes at most one model name, not %q", errUsage, args)
	}
	if c.llm.provider != "" && !contains(llm.Providers(), c.llm.provider) {
		return app.ModelsOptions{}, fmt.Errorf("%w: --llm-provider %q: want %s", errUsage, c.llm.provider, strings.Join(llm.Providers(), ", "))
	}
	table, err := c.llm.table()
	if err != nil {
		return app.ModelsOptions{}, err
	}
	prices, err := c.llm.loadPrices()
	if err != nil {
		return app.ModelsOptions{}, err
	}
	model := c.llm.model
	if len(args) == 1 {
		model = args[0]
	}
	return app.ModelsOptions{Models: table, Prices: prices, Provider: c.llm.provider, Model: model,
		Store: c.store.store, PromptCacheTTL: c.llm.cacheTTL}, nil
}

// printModel writes what curate sends one model: its rules, its price,
// what it refused before, and the request of a target.
func printModel(env *Env, m *app.ModelSendings) error {
	fmt.Fprintf(env.Stdout, "%s (%s):\n", m.Model, m.Provider)
	for _, r := range m.Rules {
		fmt.Fprintf(env.Stdout, "  - %s\n", r)
	}
	switch {
	case m.Price != nil:
		fmt.Fprintf(env.Stdout, "  - price (%s): %s per million tokens\n", m.PriceFrom, priceLine(m.Price))
	default:
		fmt.Fprintf(env.Stdout, "  - price: none in the table; --price %s=INPUT/OUTPUT sets one\n", m.Model)
	}
	if m.Learned != nil {
		for _, l := range m.Learned.Learned {
			fmt.Fprintf(env.Stdout, "  - learned %s: refused %s (status %d: %s)\n", l.At.Format("2006-01-02"), l.What, l.Status, l.Message)
		}
	}
	fmt.Fprintln(env.Stdout, "\nthe classify request of a target with 40 references (texts shortened; --json prints the batch line too):")
	return printJSON(env.Stdout, m.Classify)
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// printModels writes the table.
func printModels(env *Env, rows []llm.Model) {
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "provider\tmodel\tsampling\tanswer limit\treasoning\tstructured output\tcache\tleast prefix\twindow\tlargest output\tprice in/out/cached/write 5m/write 1h\tbatch\tchecked")
	for _, r := range rows {
		sampling := "all"
		if r.Sampling != nil {
			sampling = strings.Join(r.Sampling, ",")
			if sampling == "" {
				sampling = "none (defaults)"
			}
		}
		price, batch := "-", "-"
		if r.Price != nil {
			price = priceLine(r.Price)
			if r.Provider != llm.ProviderCompatible {
				batch = fmt.Sprintf("%.0f%%", 100*batchFactor(r.Price))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Provider, r.Match, sampling, r.TokenParam,
			dash(r.Reasoning), r.Structured, r.Cache, count(r.MinCachePrefix), count(r.ContextWindow), count(r.MaxOutput), price, batch, r.Checked)
	}
	tw.Flush()
	fmt.Fprintln(env.Stdout, "\ncurate models MODEL says what curate sends a model and where its row comes from; --json prints the table with sources and notes")
}

func priceLine(p *llm.Price) string {
	f := func(v *float64, def float64) string {
		if v != nil {
			return fmt.Sprintf("%g", *v)
		}
		return fmt.Sprintf("%g", def)
	}
	return fmt.Sprintf("$%g/%g/%s/%s/%s", p.Input, p.Output, f(p.CachedInput, p.Input), f(p.CacheWrite, 1.25*p.Input), f(p.CacheWrite1h, 2*p.Input))
}

func batchFactor(p *llm.Price) float64 {
	if p.Batch != nil {
		return *p.Batch
	}
	return llm.DefaultBatchFactor
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func count(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d", n)
}
