package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"text/tabwriter"

	"github.com/groundwork/curate/stages"
	"github.com/groundwork/curate/store"
)

// statusInterrupted counts, in status, items a run left "running" that no
// run is working on any more (the next run redoes them).
const statusInterrupted = "interrupted"

// stageOrder lists the stages of counts in pipeline order, then any others
// alphabetically.
func stageOrder(counts map[string]map[string]int) []string {
	var out []string
	for _, n := range stages.Order {
		if _, ok := counts[n]; ok {
			out = append(out, n)
		}
	}
	var rest []string
	for n := range counts {
		if !slices.Contains(stages.Order, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// runSummaryKey is where the last run's summary is kept in the store.
const runSummaryKey = "run/summary"

type statusOptions struct {
	global   globalOptions
	json     bool
	failures int
}

func runStatusCmd(ctx context.Context, env *cmdEnv, args []string) error {
	var opt statusOptions
	fs := newFlagSet(env, "status", "[--store DIR] [--json]")
	addGlobalFlags(fs, env, &opt.global)
	fs.BoolVar(&opt.json, "json", false, "print as JSON")
	fs.IntVar(&opt.failures, "failures", 20, "failures listed (0 for all)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	return runStatus(ctx, env, opt)
}

// storeStatus is what `curate status` reports.
type storeStatus struct {
	Store string `json:"store"`
	// Running names the process holding the store's lock, if any: without
	// one, items left "running" belong to a run that ended without
	// finishing them and are counted as "interrupted".
	Running  string                    `json:"running,omitempty"`
	Stages   map[string]map[string]int `json:"stages"`
	Failures []store.Entry             `json:"failures"`
	// Suspect lists the targets held back as implausible, with why.
	Suspect []store.Entry   `json:"suspect"`
	LastRun json.RawMessage `json:"last_run,omitempty"`
}

// runStatus prints the ledger's counts per stage and status, the failures
// with their reasons, and the last run's summary. It only reads the store,
// so it works while a run holds the store's lock.
func runStatus(ctx context.Context, env *cmdEnv, opt statusOptions) error {
	st, err := opt.global.openExistingStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	s := storeStatus{Store: st.Dir()}
	if s.Stages, err = st.Counts(ctx); err != nil {
		return err
	}
	held, holder := st.LockHeld()
	if held {
		s.Running = holder
	} else {
		for _, c := range s.Stages {
			if n := c[store.StatusRunning]; n > 0 {
				c[statusInterrupted] += n
				delete(c, store.StatusRunning)
			}
		}
	}
	stages := stageOrder(s.Stages)
	for _, name := range stages {
		failed, err := st.ByStatus(ctx, name, store.StatusFailed)
		if err != nil {
			return err
		}
		s.Failures = append(s.Failures, failed...)
		suspect, err := st.ByStatus(ctx, name, store.StatusSuspect)
		if err != nil {
			return err
		}
		s.Suspect = append(s.Suspect, suspect...)
	}
	if v, err := st.Value(ctx, runSummaryKey); err == nil {
		s.LastRun = v
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if opt.json {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	fmt.Fprintf(env.stdout, "store %s\n", s.Store)
	if s.Running != "" {
		fmt.Fprintf(env.stdout, "a run is in progress (%s)\n", s.Running)
	}
	fmt.Fprintln(env.stdout)
	if len(stages) == 0 {
		fmt.Fprintln(env.stdout, "nothing done yet")
		return nil
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "stage\tdone\tsuspect\tfailed\trunning\tinterrupted\tpending\tskipped")
	for _, name := range stages {
		c := s.Stages[name]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", name, c[store.StatusDone], c[store.StatusSuspect], c[store.StatusFailed],
			c[store.StatusRunning], c[statusInterrupted], c[store.StatusPending], c[store.StatusSkipped])
	}
	tw.Flush()
	if len(s.Suspect) > 0 {
		fmt.Fprintf(env.stdout, "\nheld back as suspect (%d; curate run --include-suspect keeps them):\n", len(s.Suspect))
		for i, f := range s.Suspect {
			if opt.failures > 0 && i == opt.failures {
				fmt.Fprintf(env.stdout, "  ... %d more (--failures 0 lists all)\n", len(s.Suspect)-i)
				break
			}
			fmt.Fprintf(env.stdout, "  %s\t%s\t%s\n", f.Stage, f.Item, f.Error)
		}
	}
	if len(s.Failures) > 0 {
		fmt.Fprintf(env.stdout, "\nfailures (%d):\n", len(s.Failures))
		for i, f := range s.Failures {
			if opt.failures > 0 && i == opt.failures {
				fmt.Fprintf(env.stdout, "  ... %d more (--failures 0 lists all)\n", len(s.Failures)-i)
				break
			}
			fmt.Fprintf(env.stdout, "  %s\t%s\t%s\n", f.Stage, f.Item, f.Error)
		}
	}
	if len(s.LastRun) > 0 {
		fmt.Fprintf(env.stdout, "\nlast run:\n%s\n", s.LastRun)
	}
	return nil
}
