package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/groundwork/curate/app"
	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/internal/robots"
	"github.com/groundwork/curate/pdfs"
)

// What commands print. stdout carries results: a line per target that
// needs attention (or per item the command lists) and the line saying what
// was written where. stderr carries what tells how the work went: logs,
// progress, the stage table, requests and LLM usage. So `curate run >
// attention.tsv` keeps the targets to look at, and a script can read the
// last line of `curate dataset` for the counts.

// printOutcome writes a run's results: a line per failed, held or
// metadata-less target on stdout (unless the command prints its own line
// per target: lines false); the stage table, the requests and the LLM
// usage on stderr. A run stopped by a full disk gets the table only: its
// failures are that one cause, told once.
func printOutcome(env *Env, r *app.RunResult, lines bool) {
	if r == nil || r.Outcome == nil || r.Summary == nil {
		return
	}
	out, invalid := r.Outcome, r.Invalid
	sum := out.Summary
	if sum.Fatal != "" {
		lines = false
	}
	for _, fl := range sum.Failures {
		if !lines {
			break
		}
		fmt.Fprintf(env.Stdout, "%s\t%s\tfailed\t%s\n", fl.Key, fl.Step, oneLine(fl.Reason))
	}
	for _, h := range sum.Held {
		if !lines {
			break
		}
		fmt.Fprintf(env.Stdout, "%s\t%s\tsuspect\t%s\n", h.Key, h.Step, oneLine(h.Reason))
	}
	for _, w := range sum.Waiting {
		if !lines {
			break
		}
		fmt.Fprintf(env.Stdout, "%s\t%s\twaiting\t%s\n", w.Key, w.Step, oneLine(w.Reason))
	}
	for _, n := range out.NoPDF {
		if !lines {
			break
		}
		what := "no PDF full text"
		if n.Outcome == pdfs.Failed {
			what = "no PDF full text yet (asked again next run)"
		}
		fmt.Fprintf(env.Stdout, "%s\tpdfs\tabstract\t%s (%s): %s: %s\n", n.Target, n.Source, n.Paper, what, oneLine(n.Reason))
	}
	for _, k := range out.WithoutMeta {
		fmt.Fprintf(env.Stdout, "%s\tcitegraph\tno arXiv metadata\tno v1 date or categories from the arXiv API: left out of the dataset until a run reads them\n", k)
	}
	tw := tabwriter.NewWriter(env.Stderr, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "stage\tdone\treused\tskipped\theld\twaiting\tfailed\tnot reached\twall\n")
	for _, s := range sum.Steps {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", s.Name, s.Done, s.Reused, s.Skipped, s.Held, s.Waiting, s.Failed, s.Pending, s.Wall.Round(time.Millisecond))
	}
	tw.Flush()
	state := "completed"
	switch {
	case out.Unreachable != "":
		state = "stopped: cannot reach " + out.Unreachable
	case sum.Fatal != "":
		state = "stopped: the store's disk is full"
	case sum.Interrupted:
		state = "interrupted (run the same command again to resume)"
	case len(sum.Waiting) > 0:
		state = "not finished: waiting on LLM batches (run the same command again later to collect them)"
	}
	held := ""
	if len(sum.Held) > 0 {
		held = fmt.Sprintf(", %d held back as suspect", len(sum.Held))
	}
	if len(sum.Waiting) > 0 {
		held += fmt.Sprintf(", %d waiting on LLM batches", len(sum.Waiting))
	}
	fmt.Fprintf(env.Stderr, "%d of %d targets through every stage, %d failed%s; %s in %s\n",
		sum.Completed, sum.Targets, len(sum.Failures), held, state, sum.Wall.Round(time.Millisecond))
	if sum.Fatal != "" {
		return
	}
	printCrawl(env.Stderr, out.Paces, out.Archives, true)
	printRequests(env, r.Requests, sum.Targets)
	printUsage(env.Stderr, r.Usage.Meter, r.Usage.Prices)
	printBatches(env.Stderr, out.Batches)
	if len(invalid) > 0 {
		fmt.Fprintf(env.Stderr, "invalid IDs:\n  %s\n", strings.Join(invalid, "\n  "))
	}
	if len(out.NoPDF) > 0 {
		again := 0
		for _, n := range out.NoPDF {
			if n.Outcome == pdfs.Failed {
				again++
			}
		}
		fmt.Fprintf(env.Stderr, "%s without the PDF full text asked for, carded from the abstract (listed above); %d asked again next run\n", app.Plural(len(out.NoPDF), "source"), again)
	}
	if len(sum.Held) > 0 {
		fmt.Fprintf(env.Stderr, "%s held back as suspect (listed above; --include-suspect keeps them)\n", app.Plural(len(sum.Held), "target"))
	}
	if len(out.WithoutMeta) > 0 {
		why := "it gave no entry"
		if out.FinishErr != nil {
			why = out.FinishErr.Error()
		}
		fmt.Fprintf(env.Stderr, "%s without arXiv metadata (%s): left out of the dataset until a run reads it\n", app.Plural(len(out.WithoutMeta), "target"), why)
	}
}

// printBatches writes what a run in batch mode left with the provider:
// the batches pending, their age and requests, and the requests that
// could not be submitted.
func printBatches(w io.Writer, bs *app.BatchState) {
	if bs == nil {
		return
	}
	if len(bs.Pending) == 0 && bs.Queued == 0 {
		fmt.Fprintln(w, "LLM batches: none pending")
		return
	}
	reqs := 0
	var oldest time.Duration
	for _, b := range bs.Pending {
		reqs += b.Requests
		oldest = max(oldest, b.Age)
	}
	if len(bs.Pending) > 0 {
		fmt.Fprintf(w, "LLM batches: %d pending with %d requests, the oldest submitted %s ago (curate status lists them)\n", len(bs.Pending), reqs, oldest.Round(time.Second))
	}
	if bs.Queued > 0 {
		fmt.Fprintf(w, "LLM batches: %d requests not submitted (%v): the next run queues them again\n", bs.Queued, bs.Err)
	}
}

// printRequests writes the requests made to each service, per target of
// the run, and the 429s seen.
func printRequests(env *Env, reqs []app.ServiceRequests, targets int) {
	var parts []string
	for _, r := range reqs {
		st := r.Stats
		p := fmt.Sprintf("%s %d", r.Name, st.Requests)
		if targets > 0 {
			p += fmt.Sprintf(" (%.2f per target)", float64(st.Requests)/float64(targets))
		}
		if st.Status429 > 0 || st.Status5xx > 0 || st.Errors > 0 {
			p += fmt.Sprintf(" (429s %d, 5xx %d, failed calls %d)", st.Status429, st.Status5xx, st.Errors)
		}
		parts = append(parts, p)
	}
	fmt.Fprintf(env.Stderr, "requests: %s\n", strings.Join(parts, ", "))
}

// printCrawl writes the interval each HTML host runs at and where it
// comes from, and what the page archives hold (or, at the end, served).
func printCrawl(w io.Writer, paces []robots.Pace, archives *app.ArchiveStats, end bool) {
	for _, p := range paces {
		fmt.Fprintf(w, "crawl: %s\n", p)
	}
	if archives == nil {
		return
	}
	entries := 0
	for _, s := range archives.Sources {
		entries += s.Pages + s.Filtered
	}
	if end {
		fmt.Fprintf(w, "html archives: %d pages served, no request made for them (%d of %d papers wanted found in %s; indexed %s)\n",
			archives.Served, archives.Indexed, archives.Wanted, app.Plural(len(archives.Sources), "archive"), app.Plural(archives.Indexing, "time"))
		return
	}
	fmt.Fprintf(w, "html archives: %s, %d pages; %d of the %d papers wanted so far are there\n",
		app.Plural(len(archives.Sources), "archive"), entries, archives.Indexed, archives.Wanted)
}

// printUsage writes the LLM token and cost totals per stage: prompt
// tokens with the part the provider's prompt cache served (and wrote),
// calls made through a batch API, the cost with batch and cache prices,
// and what the prompt cache saved, or cost when its writes cost more than
// its reads saved.
func printUsage(w io.Writer, meter *llm.Meter, prices llm.Prices) {
	tallies := meter.Tallies()
	if len(tallies) == 0 {
		return
	}
	sort.Slice(tallies, func(i, j int) bool { return tallies[i].Stage < tallies[j].Stage })
	costs := map[string]llm.StageCost{}
	for _, c := range prices.Costs(tallies) {
		costs[c.Stage] = c
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LLM usage\tmodel\tcalls\tcached\tfailed\tinput tokens\tfrom prompt cache\tcache writes\toutput tokens\tbatch calls\tcost (est.)\tsaved by cache\tsaved by batch\tprompt cache")
	for _, t := range tallies {
		cost, saved, batch, pc := "-", "-", "-", "-"
		if c, ok := costs[t.Stage]; ok && len(prices) > 0 {
			cost, saved, batch = fmt.Sprintf("$%.4f", c.Spent), fmt.Sprintf("$%.4f", c.Saved), fmt.Sprintf("$%.4f", c.BatchSaved)
			switch {
			case t.Spent.CachedTokens == 0 && t.Spent.CacheWriteTokens == 0:
				pc = "unused"
			case c.PromptCache >= 0:
				pc = fmt.Sprintf("saved $%.4f", c.PromptCache)
			default:
				pc = fmt.Sprintf("cost $%.4f more", -c.PromptCache)
			}
			if len(c.Unpriced) > 0 {
				cost += " (unpriced: " + strings.Join(c.Unpriced, ", ") + ")"
			}
		}
		if llm.IsHeuristic(t.Model) {
			cost, saved, batch, pc = "$0 (heuristic)", "-", "-", "-"
		}
		share := "0"
		if t.Spent.PromptTokens > 0 {
			share = fmt.Sprintf("%d (%.0f%%)", t.Spent.CachedTokens, 100*float64(t.Spent.CachedTokens)/float64(t.Spent.PromptTokens))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", t.Stage, t.Model, t.Calls, t.CachedCalls, t.Failures,
			t.Spent.PromptTokens, share, t.Spent.CacheWriteTokens, t.Spent.CompletionTokens, t.BatchCalls, cost, saved, batch, pc)
	}
	tw.Flush()
}

// printDataset says what a dataset build did.
func printDataset(env *Env, out *app.DatasetOutcome) {
	if out.UpToDate {
		fmt.Fprintf(env.Stdout, "curate dataset: %s is up to date (no input changed since it was written, and its files match its manifest)\n", out.Out)
		return
	}
	res := out.Result
	c := res.Counts()
	train, test := c.Train, c.Test
	fmt.Fprintf(env.Stdout, "curate dataset: %d train and %d test instances in %s; %s dropped%s (see dropped.json); contamination: %s\n",
		train, test, out.Out, app.Plural(len(res.Dropped), "target"), droppedReasons(res.Dropped), contaminationLine(res.Contamination))
}

// droppedReasons counts dropped targets by reason: " (no_gold 1, …)".
func droppedReasons(dropped []dataset.Dropped) string {
	if len(dropped) == 0 {
		return ""
	}
	n := map[string]int{}
	for _, d := range dropped {
		n[d.Reason]++
	}
	var parts []string
	for _, r := range sortedKeys(n) {
		parts = append(parts, fmt.Sprintf("%s %d", r, n[r]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// contaminationLine says what the contamination check found, in words.
func contaminationLine(c *dataset.Contamination) string {
	if c == nil {
		return "not checked"
	}
	var parts []string
	for _, k := range sortedKeys(c.Counts) {
		if n := c.Counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	if len(parts) == 0 {
		return "none found (see contamination.json)"
	}
	return strings.Join(parts, ", ") + " resolved (see contamination.json)"
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// oneLine makes a reason one field of a line: the lists on stdout are one
// record a line, tab-separated, and a joined or wrapped error may hold
// newlines (and a parser's internal error a stack).
func oneLine(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), "; ")
	return strings.ReplaceAll(s, "\t", " ")
}
