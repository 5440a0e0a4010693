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

	"github.com/groundwork/curate/pipeline"
	"github.com/groundwork/curate/stages"
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
	if slices.Contains(names, stages.Citegraph) {
		// One arXiv API request per hundred targets rather than one each.
		if err := e.set.Citegraph.LookupArxiv(ctx, keys); err != nil {
			e.log.Warn("arxiv metadata lookup failed; targets without stored metadata are left out of the dataset until a run reads it", "err", err)
		}
	}

	bar := newProgress(env, e.log, len(keys)*len(steps), strings.Join(names, "→"))
	var mu sync.Mutex
	counts := map[string]int{}
	sum := pipeline.Run(ctx, keys, steps, pipeline.Options{
		Drain: env.drain,
		OnEvent: func(ev pipeline.Event) {
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

	for _, fl := range sum.Failures {
		fmt.Fprintf(env.stdout, "%s\t%s\tfailed\t%s\n", fl.Key, fl.Step, fl.Reason)
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
	switch {
	case sum.Interrupted:
		return &exitError{code: 130, err: errors.New("interrupted")}
	case len(sum.Failures) > 0 || len(bad) > 0:
		return &exitError{code: 1, err: fmt.Errorf("%s failed", plural(len(sum.Failures)+len(bad), "target"))}
	}
	return nil
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
	fmt.Fprintf(tw, "stage\tdone\treused\tskipped\tfailed\tnot reached\twall\n")
	for _, s := range sum.Steps {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", s.Name, s.Done, s.Reused, s.Skipped, s.Failed, s.Pending, s.Wall.Round(time.Millisecond))
	}
	tw.Flush()
	state := "completed"
	if sum.Interrupted {
		state = "interrupted (run the same command again to resume)"
	}
	fmt.Fprintf(env.stderr, "%d of %d targets through every stage, %d failed; %s in %s\n",
		sum.Completed, sum.Targets, len(sum.Failures), state, sum.Wall.Round(time.Millisecond))
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
