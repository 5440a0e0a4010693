package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/app"
	"github.com/groundwork/curate/store"
)

// statusInterrupted counts, in status, items a run left "running" that no
// run is working on any more (the next run redoes them).
const statusInterrupted = "interrupted"

// statusCmd is `curate status`.
type statusCmd struct {
	store    storeFlags
	json     bool
	failures int
}

func (c *statusCmd) AddFlags(fs *flag.FlagSet, env *cmdEnv) {
	c.store.AddFlags(fs, env)
	fs.BoolVar(&c.json, "json", false, "print as JSON")
	fs.IntVar(&c.failures, "failures", 20, "failures listed (0 for all)")
}

// entry is a ledger entry as status prints it.
type entry struct {
	Item      string    `json:"item"`
	Stage     string    `json:"stage"`
	Status    string    `json:"status"`
	Attempts  int       `json:"attempts"`
	Error     string    `json:"error,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	RunID     string    `json:"run_id"`
}

func entries(es []store.Entry) []entry {
	out := make([]entry, len(es))
	for i, e := range es {
		out[i] = entry{e.Item, e.Stage, e.Status, e.Attempts, e.Error, e.UpdatedAt, e.RunID}
	}
	return out
}

// storeStatus is what `curate status` reports.
type storeStatus struct {
	Store string `json:"store"`
	// Running names the process holding the store's lock, if any: without
	// one, items left "running" belong to a run that ended without
	// finishing them and are counted as "interrupted".
	Running  string                    `json:"running,omitempty"`
	Stages   map[string]map[string]int `json:"stages"`
	Failures []entry                   `json:"failures"`
	// Suspect lists the targets held back as implausible, with why.
	Suspect []entry `json:"suspect"`
	// Waiting lists the items whose stage waits on LLM answers in a
	// provider's batch (ledger status pending).
	Waiting []entry `json:"waiting"`
	// Batches are the LLM batches not yet collected, oldest first;
	// BatchRequests counts the batch ledger's requests by stage and state.
	Batches       []batchEntry              `json:"llm_batches"`
	BatchRequests map[string]map[string]int `json:"llm_batch_requests"`
	LastRun       json.RawMessage           `json:"last_run,omitempty"`
}

// batchEntry is a pending LLM batch as status prints it.
type batchEntry struct {
	ID        string    `json:"id"`
	Remote    string    `json:"remote,omitempty"`
	Provider  string    `json:"provider"`
	Model     string    `json:"model"`
	State     string    `json:"state"`
	Requests  int       `json:"requests"`
	Submitted time.Time `json:"submitted"`
	AgeSec    int64     `json:"age_seconds"`
}

// Run prints the ledger's counts per stage and status, in pipeline order,
// the failures and suspects with their reasons, and the last run's
// summary. It opens the store read-only, so it works while a run holds
// its lock, and changes nothing: not an empty or older ledger (which a run
// sets up or migrates), nor a path without a store.
func (c *statusCmd) Run(ctx context.Context, env *cmdEnv, _ []string) error {
	if err := c.store.validate(); err != nil {
		return err
	}
	st, err := app.OpenStoreReadOnly(ctx, c.store.store)
	if err != nil {
		return err
	}
	defer st.Close()
	s := storeStatus{Store: st.Dir(), Failures: []entry{}, Suspect: []entry{}, Waiting: []entry{}, Batches: []batchEntry{}}
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
		s.Failures = append(s.Failures, entries(failed)...)
		suspect, err := st.ByStatus(ctx, name, store.StatusSuspect)
		if err != nil {
			return err
		}
		s.Suspect = append(s.Suspect, entries(suspect)...)
		waiting, err := st.ByStatus(ctx, name, store.StatusPending)
		if err != nil {
			return err
		}
		s.Waiting = append(s.Waiting, entries(waiting)...)
	}
	pending, err := llm.PendingBatches(ctx, st)
	if err != nil {
		return err
	}
	for _, b := range pending {
		s.Batches = append(s.Batches, batchEntry{ID: b.ID, Remote: b.Remote, Provider: b.Provider, Model: b.Model, State: b.State,
			Requests: b.Requests, Submitted: b.Created.UTC(), AgeSec: int64(b.Age.Seconds())})
	}
	if s.BatchRequests, err = st.BatchRequestCounts(ctx); err != nil {
		return err
	}
	if v, err := st.Value(ctx, app.RunSummaryKey); err == nil {
		s.LastRun = v
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if c.json {
		return printJSON(env.stdout, s)
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
	fmt.Fprintln(tw, "stage\tdone\tsuspect\tfailed\trunning\tinterrupted\twaiting\tskipped")
	for _, name := range stages {
		c := s.Stages[name]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", name, c[store.StatusDone], c[store.StatusSuspect], c[store.StatusFailed],
			c[store.StatusRunning], c[statusInterrupted], c[store.StatusPending], c[store.StatusSkipped])
	}
	tw.Flush()
	c.list(env, "held back as suspect", "; curate run --include-suspect keeps them", s.Suspect)
	c.list(env, "failures", "", s.Failures)
	c.list(env, "waiting on LLM batches", "; the next run collects them", s.Waiting)
	c.batches(env, s)
	if len(s.LastRun) > 0 {
		var rec app.RunRecord
		if err := json.Unmarshal(s.LastRun, &rec); err == nil && rec.Summary != nil {
			sum := rec.Summary
			fmt.Fprintf(env.stdout, "\nlast run: %s, %s; %d of %d targets through every stage, %d failed, %d held back, %d waiting on LLM batches; model %s\n",
				sum.Started.UTC().Format(time.RFC3339), sum.Wall.Round(time.Millisecond), sum.Completed, sum.Targets, len(sum.Failures), len(sum.Held), len(sum.Waiting), rec.Model)
			for _, p := range rec.Crawl {
				fmt.Fprintf(env.stdout, "  crawl: %s\n", p.Summary)
			}
			if len(rec.PerTarget) > 0 {
				var parts []string
				for _, name := range sortedKeys(rec.PerTarget) {
					parts = append(parts, fmt.Sprintf("%s %.2f", name, rec.PerTarget[name]))
				}
				fmt.Fprintf(env.stdout, "  requests per target: %s\n", strings.Join(parts, ", "))
			}
			if a := rec.Archives; a != nil {
				fmt.Fprintf(env.stdout, "  html archives: %d pages served (%d papers found of %d wanted)\n", a.Served, a.Indexed, a.Wanted)
			}
		}
	}
	return nil
}

// batches prints the pending LLM batches, their age and requests, and the
// batch ledger's requests by stage and state.
func (c *statusCmd) batches(env *cmdEnv, s storeStatus) {
	if len(s.Batches) > 0 {
		fmt.Fprintf(env.stdout, "\nLLM batches pending (%d):\n", len(s.Batches))
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
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
	fmt.Fprintln(env.stdout, "\nLLM batch requests in the ledger (answered ones leave it):")
	for _, stage := range sortedKeys(s.BatchRequests) {
		var parts []string
		for _, state := range sortedKeys(s.BatchRequests[stage]) {
			parts = append(parts, fmt.Sprintf("%s %d", state, s.BatchRequests[stage][state]))
		}
		fmt.Fprintf(env.stdout, "  %s\t%s\n", stage, strings.Join(parts, ", "))
	}
}

func (c *statusCmd) list(env *cmdEnv, what, hint string, es []entry) {
	if len(es) == 0 {
		return
	}
	fmt.Fprintf(env.stdout, "\n%s (%d%s):\n", what, len(es), hint)
	for i, f := range es {
		if c.failures > 0 && i == c.failures {
			fmt.Fprintf(env.stdout, "  ... %d more (--failures 0 lists all)\n", len(es)-i)
			break
		}
		fmt.Fprintf(env.stdout, "  %s\t%s\t%s\n", f.Stage, f.Item, f.Error)
	}
}

// stageOrder lists the stages of counts in pipeline order, then any others
// alphabetically.
func stageOrder(counts map[string]map[string]int) []string {
	var out []string
	for _, n := range app.Names() {
		if _, ok := counts[n]; ok {
			out = append(out, n)
		}
	}
	var rest []string
	for n := range counts {
		if !slices.Contains(app.Names(), n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}
