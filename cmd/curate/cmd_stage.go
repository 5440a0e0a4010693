package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/pipeline"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/stages"
	"github.com/groundwork/curate/store"
)

// stageCommand returns the run function of a command that runs one
// per-target stage (classify, summarize) through the same pipeline code
// as `curate run`.
func stageCommand(name, synopsis string) func(context.Context, *cmdEnv, []string) error {
	return func(ctx context.Context, env *cmdEnv, args []string) error {
		var f stageFlags
		workers := 4
		fs := newFlagSet(env, name, synopsis)
		addStageFlags(fs, env, &f)
		fs.IntVar(&workers, "workers", 4, "targets processed at once (1 or more)")
		rest, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if err := f.validate(); err != nil {
			return err
		}
		if err := positive("--workers", workers); err != nil {
			return err
		}
		ids, err := f.ids(env, rest)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			fs.Usage()
			return fmt.Errorf("%w: no arXiv IDs given (arguments or --targets FILE)", errUsage)
		}
		keys, bad := targetKeys(ids)
		e, err := openLocked(ctx, env, &f)
		if err != nil {
			return err
		}
		defer e.Close()
		return runStages(ctx, env, e, []string{name}, keys, bad, map[string]int{name: workers})
	}
}

// targetKeys returns the store keys of ids, without duplicates, in order,
// and the invalid IDs with the reason of each.
func targetKeys(ids []string) (keys, bad []string) {
	seen := map[string]bool{}
	for _, in := range ids {
		k, err := stages.Key(in)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys, bad
}

// runStages runs the named per-target stages over keys in e (whose store
// the caller has locked), prints one line per failed target and a summary
// with LLM usage, and stores the summary for `curate status`. bad lists
// the invalid IDs given, reported with the failures.
//
// The error is an *exitError: 1 when targets failed (the run itself
// completed: what it did can be published), 130 when interrupted and 2
// when the run could not go on (a full disk): nothing may be published
// then.
func runStages(ctx context.Context, env *cmdEnv, e *stageEnv, names, keys, bad []string, workers map[string]int) error {
	steps, err := e.set.Steps(names, workers)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(bad) > 0 {
		fmt.Fprintf(env.stderr, "invalid IDs (left out):\n  %s\n", strings.Join(bad, "\n  "))
	}
	var metaErr error
	if slices.Contains(names, stages.Citegraph) {
		// One arXiv API request per hundred targets rather than one each.
		if metaErr = e.set.Citegraph.LookupArxiv(ctx, keys); metaErr != nil {
			if store.IsDiskFull(metaErr) {
				return diskFull(e, metaErr)
			}
			e.log.Warn("arxiv metadata lookup failed; targets without stored metadata are left out of the dataset until a run reads it", "err", metaErr)
		}
	}

	bar := newProgress(env, e.log, len(keys)*len(steps), strings.Join(names, "→"))
	var mu sync.Mutex
	counts := map[string]int{}
	sum := pipeline.Run(ctx, keys, steps, pipeline.Options{
		Drain: env.drain,
		Fatal: store.IsDiskFull,
		OnEvent: func(ev pipeline.Event) {
			if ev.Err != nil && store.IsDiskFull(ev.Err) && e.stopping.CompareAndSwap(false, true) {
				// A string, not the error: the quiet handler drops full-disk errors.
				e.log.Error("the disk holding the store is full: stopping the run", "store", e.store.Dir(), "target", ev.Key, "stage", ev.Step, "reason", ev.Err.Error())
			}
			mu.Lock()
			counts[ev.Step]++
			var parts []string
			for _, n := range names {
				parts = append(parts, fmt.Sprintf("%s %d", n, counts[n]))
			}
			mu.Unlock()
			bar.Add(1, strings.Join(parts, " · "))
		},
	})
	bar.Finish()

	if sum.Fatal != "" {
		printSummary(env, sum)
		return diskFull(e, errors.New(sum.Fatal))
	}
	for _, fl := range sum.Failures {
		fmt.Fprintf(env.stdout, "%s\t%s\tfailed\t%s\n", fl.Key, fl.Step, fl.Reason)
	}
	for _, h := range sum.Held {
		fmt.Fprintf(env.stdout, "%s\t%s\tsuspect\t%s\n", h.Key, h.Step, h.Reason)
	}
	var degraded []string
	if slices.Contains(names, stages.Citegraph) {
		degraded = withoutArxivMeta(ctx, e, keys, sum)
		for _, k := range degraded {
			fmt.Fprintf(env.stdout, "%s\tcitegraph\tno arXiv metadata\tno v1 date or categories from the arXiv API: left out of the dataset until a run reads them\n", k)
		}
	}
	printSummary(env, sum)
	printRequests(env, e)
	printUsage(env.stderr, e.meter, e.prices)
	if err := saveSummary(context.WithoutCancel(ctx), e, names, sum); err != nil {
		e.log.Warn("could not store the run summary", "err", err)
	}
	if len(bad) > 0 {
		fmt.Fprintf(env.stderr, "invalid IDs:\n  %s\n", strings.Join(bad, "\n  "))
	}
	if len(sum.Held) > 0 {
		fmt.Fprintf(env.stderr, "%s held back as suspect (listed above; --include-suspect keeps them)\n", plural(len(sum.Held), "target"))
	}
	if len(degraded) > 0 {
		why := "it gave no entry"
		if metaErr != nil {
			why = metaErr.Error()
		}
		fmt.Fprintf(env.stderr, "%s without arXiv metadata (%s): left out of the dataset until a run reads it\n", plural(len(degraded), "target"), why)
	}
	switch {
	case sum.Interrupted:
		return &exitError{code: 130, err: errors.New("interrupted")}
	case len(sum.Failures) > 0 || len(bad) > 0 || len(sum.Held) > 0 || len(degraded) > 0:
		var parts []string
		for _, p := range []struct {
			n    int
			what string
		}{{len(sum.Failures) + len(bad), "failed"}, {len(sum.Held), "held back as suspect"}, {len(degraded), "without arXiv metadata"}} {
			if p.n > 0 {
				parts = append(parts, fmt.Sprintf("%s %s", plural(p.n, "target"), p.what))
			}
		}
		return &exitError{code: 1, err: errors.New(strings.Join(parts, ", "))}
	}
	return nil
}

// diskFull is the end of a run whose store can take no more: exit 2, with
// one message naming the store. What was stored is kept (every record is
// written whole or not at all) and the next run resumes from it.
func diskFull(e *stageEnv, err error) error {
	return &exitError{code: 2, err: fmt.Errorf("the disk holding the store %s is full (%v); the run stopped and started nothing more. "+
		"Everything stored so far is kept: free some space and run the same command again to resume", e.store.Dir(), err)}
}

// withoutArxivMeta lists the keys that went through citegraph in this run
// and whose stored metadata did not come from the arXiv API (its date is
// the ID's month, its categories unknown): the dataset leaves them out.
func withoutArxivMeta(ctx context.Context, e *stageEnv, keys []string, sum *pipeline.Summary) []string {
	failed := map[string]bool{}
	for _, f := range sum.Failures {
		failed[f.Key] = true
	}
	var out []string
	for _, k := range keys {
		if failed[k] {
			continue
		}
		var g record.Graph
		if _, err := e.store.GetJSON(ctx, k, record.Graphs.Name(), &g); err != nil {
			continue
		}
		if src := g.Meta.Sources["published"]; src != "" && src != dataset.MetaFromArxivAPI {
			out = append(out, k)
		}
	}
	return out
}

// completed reports whether a run that returned err finished its work,
// some targets failing perhaps (exit 1), so that its results may be
// published. Usage errors, a refused lock, an interrupted run and a run
// that could not go on publish nothing.
func completed(err error) bool {
	var ee *exitError
	return err == nil || errors.As(err, &ee) && ee.code == 1
}

// plural writes n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// printSummary writes the per-stage counts of a run.
func printSummary(env *cmdEnv, sum *pipeline.Summary) {
	tw := tabwriter.NewWriter(env.stderr, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "stage\tdone\treused\tskipped\theld\tfailed\tnot reached\twall\n")
	for _, s := range sum.Steps {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", s.Name, s.Done, s.Reused, s.Skipped, s.Held, s.Failed, s.Pending, s.Wall.Round(time.Millisecond))
	}
	tw.Flush()
	state := "completed"
	if sum.Interrupted {
		state = "interrupted (run the same command again to resume)"
	}
	held := ""
	if len(sum.Held) > 0 {
		held = fmt.Sprintf(", %d held back as suspect", len(sum.Held))
	}
	if sum.Fatal != "" {
		state = "stopped: the store's disk is full"
	}
	fmt.Fprintf(env.stderr, "%d of %d targets through every stage, %d failed%s; %s in %s\n",
		sum.Completed, sum.Targets, len(sum.Failures), held, state, sum.Wall.Round(time.Millisecond))
}

// serviceNames are the remote services a run may call.
var serviceNames = []string{"arxiv", "ar5iv", "s2", "arxiv-api", "llm"}

// printRequests writes the requests made to each service and the 429s seen.
func printRequests(env *cmdEnv, e *stageEnv) {
	var parts []string
	for _, name := range serviceNames {
		s, err := e.http.Service(name)
		if err != nil {
			continue
		}
		st := s.Stats()
		p := fmt.Sprintf("%s %d", name, st.Requests)
		if st.Status429 > 0 || st.Status5xx > 0 || st.Errors > 0 {
			p += fmt.Sprintf(" (429s %d, 5xx %d, failed calls %d)", st.Status429, st.Status5xx, st.Errors)
		}
		parts = append(parts, p)
	}
	fmt.Fprintf(env.stderr, "requests: %s\n", strings.Join(parts, ", "))
}

// runRecord is the run summary kept in the store.
type runRecord struct {
	Stages   []string                  `json:"stages"`
	Model    string                    `json:"model"`
	Summary  *pipeline.Summary         `json:"summary"`
	Requests map[string]any            `json:"requests"`
	LLM      any                       `json:"llm"`
	Cost     any                       `json:"llm_cost,omitempty"`
	Counts   map[string]map[string]int `json:"ledger"`
}

func saveSummary(ctx context.Context, e *stageEnv, names []string, sum *pipeline.Summary) error {
	rec := runRecord{Stages: names, Model: e.model, Summary: sum, Requests: map[string]any{}, LLM: e.meter.Tallies()}
	if len(e.prices) > 0 {
		rec.Cost = e.prices.Costs(e.meter.Tallies())
	}
	for _, name := range serviceNames {
		if s, err := e.http.Service(name); err == nil {
			rec.Requests[name] = s.Stats()
		}
	}
	var err error
	if rec.Counts, err = e.store.Counts(ctx); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return e.store.SetValue(ctx, runSummaryKey, data)
}
