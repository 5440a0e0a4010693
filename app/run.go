package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/internal/robots"
	"github.com/groundwork/curate/internal/targetlist"
	"github.com/groundwork/curate/pdfs"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// Targets turns the IDs a user gave into store keys, parsed once here and
// never again: duplicates removed, order kept, and the invalid IDs listed
// with the reason of each.
func Targets(ids []string) (keys, invalid []string) {
	seen := map[string]bool{}
	for _, in := range ids {
		// Every form --targets-from reads (arXiv URLs, pair IDs) is a
		// target on the command line too.
		id, err := targetlist.ParseValue(in)
		if err != nil {
			invalid = append(invalid, fmt.Sprintf("%q: %v", in, err))
			continue
		}
		k := record.Key(id)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys, invalid
}

// RunOptions configure Run.
type RunOptions struct {
	// Stages are the per-target stages to run (table names), in any
	// order; the table orders them.
	Stages []string
	// Workers sizes each stage's pool by name (the table's default when
	// absent).
	Workers map[string]int
	// OnEvent is called as each target leaves each stage (progress).
	OnEvent func(pipeline.Event)
	// OnStart, when set, is called once the run is set up, before its
	// first target: what it will crawl at which pace, and the archives.
	OnStart func(Start)
}

// Start is what a run set up before its first target.
type Start struct {
	// Paces are the intervals chosen for the HTML hosts and why (their
	// robots.txt Crawl-delay, the configured interval, an override); none
	// when the run fetches no pages.
	Paces []robots.Pace
	// Archives describes the --html-archive paths as indexed for the run;
	// nil without archives.
	Archives *ArchiveStats
}

// Outcome is what a Run did.
type Outcome struct {
	Stages  []string
	Summary *pipeline.Summary
	// WithoutMeta lists the targets whose arXiv metadata could not be read
	// (their date is the ID's month, their categories unknown): the
	// dataset leaves them out until a run reads it.
	WithoutMeta []string
	// FinishErr is why the stages' work across targets failed (see
	// pipeline.Preparer: the arXiv metadata lookup), if it did.
	FinishErr error
	// Batches is what the run left with the LLM provider in batch mode
	// (nil in sync mode); Summary.Waiting lists the targets waiting on it.
	Batches *BatchState
	// Paces and Archives are the run's Start, Archives updated at its end
	// (pages served, indexings).
	Paces    []robots.Pace
	Archives *ArchiveStats
	// NoPDF lists the sources whose PDF full text was asked for this run
	// and not had, by target and source: their cards are written from the
	// abstract.
	NoPDF []NoPDF
	// Unreachable is the host of a configured service whose name did not
	// resolve, which stopped the run (the error says so too).
	Unreachable string
}

// NoPDF is a source whose PDF full text a run asked for and did not get.
type NoPDF = pdfs.Missing

// Run sends keys (store keys: see Targets) through the chosen stages of
// the table, with a pool per stage, under the stage lifecycle (see
// pipeline.Lifecycle), stores the run's summary for curate status, and
// returns what happened. In batch mode a target whose LLM answers are not
// there yet waits at its stage; when nothing else can move, the run
// submits the queued requests and waits for them within LLM.Wait (see
// Settle). The error classifies the outcome: nil; ErrIncomplete when
// targets failed, were held back as suspect or lack their metadata;
// ErrPending when targets still wait on LLM batches (they are listed; the
// next run collects them); ErrInterrupted; ErrCannotRun when the disk
// filled (the run stopped at once and started nothing more).
func (a *App) Run(ctx context.Context, keys []string, opt RunOptions) (*Outcome, error) {
	started := time.Now() // the summary's times are the run's, not only its pipeline's
	names, _, err := a.stages.Select(opt.Stages)
	if err != nil {
		return nil, err
	}
	stages := a.stages.Named(a.stages.Active(names))
	out := &Outcome{Stages: namesOf(stages)}
	for _, s := range stages {
		if c, ok := s.(pipeline.Checker); ok {
			if err := c.Check(ctx); err != nil {
				return nil, err
			}
		}
	}
	finish, err := a.prepare(ctx, stages, keys)
	if err != nil {
		if nh, ok := a.unreachable(err); ok {
			out.Unreachable = nh.Host
		}
		return out, err
	}
	out.Paces = a.Paces()
	if opt.OnStart != nil {
		opt.OnStart(Start{Paces: out.Paces, Archives: a.archives.stats()})
	}
	steps := make([]pipeline.Step, len(stages))
	for i, s := range stages {
		steps[i] = a.lifecycle.Step(s, opt.Workers[out.Stages[i]])
	}
	var settle func(context.Context, int) bool
	if a.Batcher != nil {
		settle = a.Settle
		a.CollectBatches(ctx)
	}
	var unreachable atomic.Pointer[httpx.NoSuchHostError]
	out.Summary = pipeline.Run(ctx, keys, steps, pipeline.Options{
		Drain:   a.cfg.Drain,
		Started: started,
		Fatal: func(err error) bool {
			if nh, ok := a.unreachable(err); ok {
				// Every target would fail the same way.
				unreachable.CompareAndSwap(nil, nh)
				return true
			}
			return store.IsDiskFull(err)
		},
		Settle: settle,
		OnEvent: func(ev pipeline.Event) {
			if ev.Err != nil && store.IsDiskFull(ev.Err) && a.stopping.CompareAndSwap(false, true) {
				// A string, not the error: the quiet handler drops full-disk errors.
				a.Log.Error("the disk holding the store is full: stopping the run", "store", a.Store.Dir(), "target", ev.Key, "stage", ev.Step, "reason", ev.Err.Error())
			}
			if opt.OnEvent != nil {
				opt.OnEvent(ev)
			}
		},
	})
	out.Batches = a.EndBatches(ctx)
	sum := out.Summary
	if out.FinishErr = finish(ctx); out.FinishErr != nil {
		if store.IsDiskFull(out.FinishErr) {
			return out, a.diskFull(out.FinishErr)
		}
		a.Log.Warn("arxiv metadata lookup failed; targets without stored metadata are left out of the dataset until a run reads it", "err", out.FinishErr)
	}
	out.Archives = a.archives.stats()
	for _, s := range stages {
		if m, ok := s.(missingPDFs); ok {
			out.NoPDF = append(out.NoPDF, m.Missing()...)
		}
	}
	nh := unreachable.Load()
	if sum.Fatal != "" && nh == nil {
		return out, a.diskFull(errors.New(sum.Fatal))
	}
	if writes(stages, record.Graphs.Name()) {
		out.WithoutMeta = a.withoutArxivMeta(ctx, keys, sum)
	}
	sum.Wall = time.Since(started)
	if err := a.saveRun(context.WithoutCancel(ctx), out); err != nil {
		a.Log.Warn("could not store the run summary", "err", err)
	}
	switch {
	case nh != nil:
		out.Unreachable = nh.Host
		return out, offlineError(nh)
	case sum.Interrupted:
		return out, ErrInterrupted
	case len(sum.Waiting) > 0:
		return out, PendingError(len(sum.Waiting), "target", out.Batches)
	case len(sum.Failures) > 0 || len(sum.Held) > 0 || len(out.WithoutMeta) > 0:
		var parts []string
		for _, p := range []struct {
			n    int
			what string
		}{{len(sum.Failures), "failed"}, {len(sum.Held), "held back as suspect"}, {len(out.WithoutMeta), "without arXiv metadata"}} {
			if p.n > 0 {
				parts = append(parts, fmt.Sprintf("%s %s", Plural(p.n, "target"), p.what))
			}
		}
		return out, Fail(ErrIncomplete, errors.New(strings.Join(parts, ", ")))
	}
	return out, nil
}

// missingPDFs is a stage that lists the sources it asked a PDF for and
// did not get (the pdfs stage).
type missingPDFs interface{ Missing() []pdfs.Missing }

// prepare readies the run's stages for keys, in table order (see
// pipeline.Preparer), and returns the function that finishes them all,
// joining their errors. An error stops the run before any target: the
// disk full, an interrupt, a service's host that does not resolve; a
// preparation the first interrupt cut short (robots.txt waiting for a
// retry) is no error: the pipeline stops at once and says what was not
// reached.
func (a *App) prepare(ctx context.Context, stages Table, keys []string) (finish func(context.Context) error, err error) {
	var finishes []func(context.Context) error
	finish = func(ctx context.Context) error {
		var errs []error
		for _, f := range finishes {
			errs = append(errs, f(ctx))
		}
		return errors.Join(errs...)
	}
	for _, s := range stages {
		p, ok := s.(pipeline.Preparer)
		if !ok {
			continue
		}
		f, err := p.Prepare(ctx, keys)
		if f != nil {
			finishes = append(finishes, f)
		}
		nh, offline := a.unreachable(err)
		switch {
		case err == nil:
			continue
		case errors.Is(err, httpx.ErrStopped) && ctx.Err() == nil:
			return finish, nil // the rest would stop the same way
		case store.IsDiskFull(err):
			err = a.diskFull(err)
		case ctx.Err() != nil:
			err = ErrInterrupted
		case offline:
			err = offlineError(nh)
		}
		finish(ctx)
		return nil, err
	}
	return finish, nil
}

func namesOf(stages Table) []string {
	out := make([]string, len(stages))
	for i, s := range stages {
		out[i] = s.Declare().Name
	}
	return out
}

// writes reports whether one of stages writes records of kind.
func writes(stages Table, kind string) bool {
	return slices.ContainsFunc(stages, func(s pipeline.Stage) bool { return slices.Contains(s.Declare().Writes, kind) })
}

// diskFull is the end of a run whose store can take no more. What was
// stored is kept (every record is written whole or not at all) and the
// next run resumes from it.
func (a *App) diskFull(err error) error {
	// One line: the cause may be several joined errors.
	cause := strings.Join(strings.Split(err.Error(), "\n"), "; ")
	return Fail(ErrCannotRun, fmt.Errorf("the disk holding the store %s is full (%s); the run stopped and started nothing more. "+
		"Everything stored so far is kept: free some space and run the same command again to resume", a.Store.Dir(), cause))
}

// Active returns names without the stages that are off (see
// Table.Active).
func (a *App) Active(names []string) []string { return a.stages.Active(names) }

// SourceRefs returns the references the classify stage chose as sources of
// a target, in edge order, and why the selections are suspect, if they
// are.
func SourceRefs(ctx context.Context, st *store.Store, key string) ([]record.SourceRef, []string, error) {
	set, err := record.Sources(ctx, st, key)
	if err != nil {
		return nil, nil, err
	}
	return set.Refs, set.Suspect, nil
}

// withoutArxivMeta lists the keys that went through citegraph and whose
// stored metadata did not come from the arXiv API.
func (a *App) withoutArxivMeta(ctx context.Context, keys []string, sum *pipeline.Summary) []string {
	failed := map[string]bool{}
	for _, f := range sum.Failures {
		failed[f.Key] = true
	}
	var out []string
	for _, k := range keys {
		if failed[k] {
			continue
		}
		if g, ok, err := record.Graphs.Lookup(ctx, a.Store, k); err == nil && ok && !g.Meta.HasArxivMeta() {
			out = append(out, k)
		}
	}
	return out
}

// RunSummaryKey is where the last run's summary is kept in the store.
const RunSummaryKey = "run/summary"

// RunRecord is the run summary kept in the store for curate status.
type RunRecord struct {
	Stages   []string                  `json:"stages"`
	Model    string                    `json:"model"`
	Summary  *pipeline.Summary         `json:"summary"`
	Requests map[string]any            `json:"requests"`
	LLM      any                       `json:"llm"`
	Cost     any                       `json:"llm_cost,omitempty"`
	Counts   map[string]map[string]int `json:"ledger"`
	// PerTarget is each service's requests over the run's targets.
	PerTarget map[string]float64 `json:"requests_per_target,omitempty"`
	// Crawl is the interval each HTML host got and why.
	Crawl    []CrawlPace   `json:"crawl,omitempty"`
	Archives *ArchiveStats `json:"html_archives,omitempty"`
	// NoPDF is Outcome.NoPDF.
	NoPDF []NoPDF `json:"no_pdf,omitempty"`
}

// CrawlPace is a robots.Pace as the run summary keeps it.
type CrawlPace struct {
	Host              string   `json:"host"`
	IntervalSeconds   float64  `json:"interval_seconds"`
	Source            string   `json:"source"` // robots.SourceConfigured, SourceCrawlDelay or SourceOverride
	ConfiguredSeconds float64  `json:"configured_seconds"`
	CrawlDelaySeconds *float64 `json:"crawl_delay_seconds,omitempty"`
	RobotsURL         string   `json:"robots_url"`
	Robots            string   `json:"robots"` // where the policy came from
	Summary           string   `json:"summary"`
}

// CrawlPaces converts paces for the run summary.
func CrawlPaces(paces []robots.Pace) []CrawlPace {
	var out []CrawlPace
	for _, p := range paces {
		c := CrawlPace{Host: p.Host, IntervalSeconds: p.Interval.Seconds(), Source: p.Source, ConfiguredSeconds: p.Configured.Seconds(),
			RobotsURL: p.RobotsURL, Robots: p.Robots, Summary: p.String()}
		if p.HasDelay {
			d := p.CrawlDelay.Seconds()
			c.CrawlDelaySeconds = &d
		}
		out = append(out, c)
	}
	return out
}

// RequestsPerTarget returns each service's requests so far over targets
// (nil when there are none).
func (a *App) RequestsPerTarget(targets int) map[string]float64 {
	if targets <= 0 {
		return nil
	}
	out := map[string]float64{}
	for _, name := range a.Services() {
		if s, err := a.HTTP.Service(name); err == nil {
			out[name] = float64(s.Stats().Requests) / float64(targets)
		}
	}
	return out
}

func (a *App) saveRun(ctx context.Context, out *Outcome) error {
	rec := RunRecord{Stages: out.Stages, Model: a.Model, Summary: out.Summary, Requests: map[string]any{}, LLM: a.Meter.Tallies(),
		Crawl: CrawlPaces(append(slices.Clip(out.Paces), a.PDFPaces()...)), Archives: out.Archives, NoPDF: out.NoPDF}
	if out.Summary != nil {
		rec.PerTarget = a.RequestsPerTarget(out.Summary.Targets)
	}
	if len(a.Prices) > 0 {
		rec.Cost = a.Prices.Costs(a.Meter.Tallies())
	}
	for _, name := range a.Services() {
		if s, err := a.HTTP.Service(name); err == nil {
			rec.Requests[name] = s.Stats()
		}
	}
	if a.PDFFetcher != nil {
		for host, st := range a.PDFFetcher.Stats() {
			rec.Requests["pdf:"+host] = st
		}
	}
	var err error
	if rec.Counts, err = a.Store.Counts(ctx); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return a.Store.SetValue(ctx, RunSummaryKey, data)
}

// Plural writes n and the noun, with an s unless n is 1.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// BuildGraphs returns the function topics uses to build the citation
// graphs of seeds the store lacks: the stages of the table that make a
// target's Graph (fetch and citegraph), over them, workers at a time.
func (a *App) BuildGraphs(workers int) func(ctx context.Context, keys []string) (map[string]*record.Graph, map[string]error) {
	return func(ctx context.Context, keys []string) (map[string]*record.Graph, map[string]error) {
		built, failed := map[string]*record.Graph{}, map[string]error{}
		stages := a.stages.Named(a.stages.Writers(record.Graphs.Name()))
		finish, err := a.prepare(ctx, stages, keys)
		if err != nil {
			for _, k := range keys {
				failed[k] = err
			}
			return built, failed
		}
		var steps []pipeline.Step
		for _, s := range stages {
			steps = append(steps, a.lifecycle.Step(s, workers))
		}
		sum := pipeline.Run(ctx, keys, steps, pipeline.Options{Drain: a.cfg.Drain, Fatal: store.IsDiskFull})
		if err := finish(ctx); err != nil {
			a.Log.Warn("arxiv metadata lookup failed; seeds keep the date from their ID", "err", err)
		}
		for _, f := range sum.Failures {
			failed[f.Key] = errors.New(f.Reason)
		}
		for _, k := range keys {
			if failed[k] != nil {
				continue
			}
			if g, ok, err := record.Graphs.Lookup(ctx, a.Store, k); err != nil {
				failed[k] = err
			} else if ok {
				built[k] = g
			}
		}
		return built, failed
	}
}

// Report is the named stage's account of a run over keys (see
// pipeline.Reporter); ok is false for a stage that gives none.
func (a *App) Report(ctx context.Context, name string, keys []string, events map[string]pipeline.Event, invalid int) (r pipeline.Report, ok bool) {
	for _, s := range a.stages.Named([]string{name}) {
		if rep, is := s.(pipeline.Reporter); is {
			return rep.Report(ctx, keys, events, invalid), true
		}
	}
	return pipeline.Report{}, false
}
