package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/store"
)

// statusCmd is `curate status`.
type statusCmd struct {
	store    storeFlags
	json     bool
	failures int
}

func (c *statusCmd) AddFlags(fs *flag.FlagSet, env *Env) {
	c.store.AddFlags(fs, env)
	fs.BoolVar(&c.json, "json", false, "print as JSON")
	fs.IntVar(&c.failures, "failures", 20, "failures listed (0 for all)")
}

// Run prints the ledger's counts per stage and status, in pipeline order,
// the failures and suspects with their reasons, and the last run's
// summary. It opens the store read-only, so it works while a run holds
// its lock, and changes nothing: not an empty or older ledger (which a run
// sets up or migrates), nor a path without a store.
func (c *statusCmd) Run(ctx context.Context, env *Env, _ []string) error {
	if err := c.store.validate(); err != nil {
		return err
	}
	s, err := app.Status(ctx, c.store.store)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.Stdout, s)
	}
	c.print(env, s)
	return nil
}

// print writes the status for a person: the stage table, the lists, the
// batches and the last run.
func (c *statusCmd) print(env *Env, s *app.StoreStatus) {
	fmt.Fprintf(env.Stdout, "store %s\n", s.Store)
	if s.Running != "" {
		fmt.Fprintf(env.Stdout, "a run is in progress (%s)\n", s.Running)
	}
	fmt.Fprintln(env.Stdout)
	if len(s.Order) == 0 {
		fmt.Fprintln(env.Stdout, "nothing done yet")
		return
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "stage\tdone\tsuspect\tfailed\trunning\tinterrupted\twaiting\tskipped")
	for _, name := range s.Order {
		c := s.Stages[name]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", name, c[store.StatusDone], c[store.StatusSuspect], c[store.StatusFailed],
			c[store.StatusRunning], c[app.StatusInterrupted], c[store.StatusPending], c[store.StatusSkipped])
	}
	tw.Flush()
	c.list(env, "held back as suspect", "; curate run --include-suspect keeps them", s.Suspect)
	c.list(env, "failures", "", s.Failures)
	c.list(env, "waiting on LLM batches", "; the next run collects them", s.Waiting)
	c.batches(env, s)
	if rec, ok := s.LastRunRecord(); ok {
		printLastRun(env, rec)
	}
}

// printLastRun writes the summary of a store's last run.
func printLastRun(env *Env, rec *app.RunRecord) {
	sum := rec.Summary
	fmt.Fprintf(env.Stdout, "\nlast run: %s, %s; %d of %d targets through every stage, %d failed, %d held back, %d waiting on LLM batches; model %s\n",
		sum.Started.UTC().Format(time.RFC3339), sum.Wall.Round(time.Millisecond), sum.Completed, sum.Targets, len(sum.Failures), len(sum.Held), len(sum.Waiting), rec.Model)
	for _, p := range rec.Crawl {
		fmt.Fprintf(env.Stdout, "  crawl: %s\n", p.Summary)
	}
	if len(rec.PerTarget) > 0 {
		var parts []string
		for _, name := range sortedKeys(rec.PerTarget) {
			parts = append(parts, fmt.Sprintf("%s %.2f", name, rec.PerTarget[name]))
		}
		fmt.Fprintf(env.Stdout, "  requests per target: %s\n", strings.Join(parts, ", "))
	}
	if a := rec.Archives; a != nil {
		fmt.Fprintf(env.Stdout, "  html archives: %d pages served (%d papers found of %d wanted)\n", a.Served, a.Indexed, a.Wanted)
	}
}

// batches prints the pending LLM batches, their age and requests, and the
// batch ledger's requests by stage and state.
func (c *statusCmd) batches(env *Env, s *app.StoreStatus) {
	if len(s.Batches) > 0 {
		fmt.Fprintf(env.Stdout, "\nLLM batches pending (%d):\n", len(s.Batches))
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  batch\tprovider batch\tprovider\tmodel\tstate\trequests\tsubmitted\tage")
		for _, b := range s.Batches {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", b.ID, cmp.Or(b.Remote, "-"), b.Provider, b.Model, b.State, b.Requests,
				b.Submitted.Format(time.RFC3339), (time.Duration(b.AgeSec) * time.Second).String())
		}
		tw.Flush()
	}
	if len(s.BatchRequests) == 0 {
		return
	}
	fmt.Fprintln(env.Stdout, "\nLLM batch requests in the ledger (answered ones leave it):")
	for _, stage := range sortedKeys(s.BatchRequests) {
		var parts []string
		for _, state := range sortedKeys(s.BatchRequests[stage]) {
			parts = append(parts, fmt.Sprintf("%s %d", state, s.BatchRequests[stage][state]))
		}
		fmt.Fprintf(env.Stdout, "  %s\t%s\n", stage, strings.Join(parts, ", "))
	}
}

func (c *statusCmd) list(env *Env, what, hint string, es []app.Entry) {
	if len(es) == 0 {
		return
	}
	fmt.Fprintf(env.Stdout, "\n%s (%d%s):\n", what, len(es), hint)
	for i, f := range es {
		if c.failures > 0 && i == c.failures {
			fmt.Fprintf(env.Stdout, "  ... %d more (--failures 0 lists all)\n", len(es)-i)
			break
		}
		fmt.Fprintf(env.Stdout, "  %s\t%s\t%s\n", f.Stage, f.Item, f.Error)
	}
}
