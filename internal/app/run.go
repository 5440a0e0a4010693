package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/internal/robots"
	"github.com/groundwork/curate/internal/targetlist"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/pdfs"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
	"github.com/groundwork/curate/summarize"
)

// MinSources is the number of sources a target needs for an instance: the
// dataset drops targets with fewer (the recipe drops ≤ 2), so they are not
// summarized at all.
const MinSources = 3

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
	// dataset leaves them out until a run reads it. MetaErr is why.
	WithoutMeta []string
	MetaErr     error
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
type NoPDF struct {
	Target string `json:"target"`
	Source string `json:"source"` // the reference's key in the target
	Paper  string `json:"paper"`  // its store item
	// Outcome is pdfs.Failed (asked again by the next run) or pdfs.None
	// (not asked again within --missing-ttl).
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
}

// Run sends keys (store keys: see Targets) through the chosen stages of
// the table, with a pool per stage, stores the run's summary for curate
// status, and returns what happened. In batch mode a target whose LLM
// answers are not there yet waits at its stage; when nothing else can
// move, the run submits the queued requests and waits for them within
// LLM.Wait (see Settle). The error classifies the outcome: nil;
// ErrIncomplete when targets failed, were held back as suspect or lack
// their metadata; ErrPending when targets still wait on LLM batches (they
// are listed; the next run collects them); ErrInterrupted; ErrCannotRun
// when the disk filled (the run stopped at once and started nothing more).
func (a *App) Run(ctx context.Context, keys []string, opt RunOptions) (*Outcome, error) {
	started := time.Now() // the summary's times are the run's, not only its pipeline's
	names, _, err := Select(opt.Stages)
	if err != nil {
		return nil, err
	}
	names = a.Active(names)
	if slices.Contains(names, PDFs) {
		if err := a.CheckGrobid(ctx); err != nil {
			return nil, err
		}
	}
	out := &Outcome{Stages: names}
	a.noPDFMu.Lock()
	a.noPDF = nil
	a.noPDFMu.Unlock()
	steps := make([]pipeline.Step, 0, len(names))
	for _, n := range names {
		s, _ := Lookup(n)
		w := s.Workers
		if v, ok := opt.Workers[n]; ok {
			w = v
		}
		steps = append(steps, pipeline.Step{Name: n, Workers: max(w, 1), Run: a.runner(n)})
	}
	if slices.Contains(names, Fetch) || slices.Contains(names, Sources) {
		paces, err := a.prepareFetch(ctx, keys)
		nh, offline := a.unreachable(err)
		switch {
		case store.IsDiskFull(err):
			return out, a.diskFull(err)
		case ctx.Err() != nil:
			return out, ErrInterrupted
		case offline:
			out.Unreachable = nh.Host
			return out, offlineError(nh)
		case errors.Is(err, httpx.ErrStopped):
			// Stopped while robots.txt waited for a retry: the pipeline
			// stops at once, and says what was not reached.
		case err != nil:
			return out, err
		}
		out.Paces = paces
	}
	if opt.OnStart != nil {
		opt.OnStart(Start{Paces: out.Paces, Archives: a.archives.stats()})
	}
	stopFeed := func() error { return nil }
	if slices.Contains(names, Citegraph) {
		// Semantic Scholar and the arXiv API are asked ahead of the stage
		// and across targets: targets' records and missing fields in
		// batches of up to 500, arXiv metadata 100 IDs a request.
		stopFeed = a.Citegraph.Feed(ctx, keys, a.cfg.Drain)
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
	if out.MetaErr = stopFeed(); out.MetaErr != nil {
		if store.IsDiskFull(out.MetaErr) {
			return out, a.diskFull(out.MetaErr)
		}
		a.Log.Warn("arxiv metadata lookup failed; targets without stored metadata are left out of the dataset until a run reads it", "err", out.MetaErr)
	}
	out.Archives = a.archives.stats()
	a.noPDFMu.Lock()
	out.NoPDF = slices.Clone(a.noPDF)
	a.noPDFMu.Unlock()
	slices.SortFunc(out.NoPDF, func(x, y NoPDF) int {
		return cmp.Or(strings.Compare(x.Target, y.Target), strings.Compare(x.Source, y.Source))
	})
	nh := unreachable.Load()
	if sum.Fatal != "" && nh == nil {
		return out, a.diskFull(errors.New(sum.Fatal))
	}
	if slices.Contains(names, Citegraph) {
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

// diskFull is the end of a run whose store can take no more. What was
// stored is kept (every record is written whole or not at all) and the
// next run resumes from it.
func (a *App) diskFull(err error) error {
	// One line: the cause may be several joined errors.
	cause := strings.Join(strings.Split(err.Error(), "\n"), "; ")
	return Fail(ErrCannotRun, fmt.Errorf("the disk holding the store %s is full (%s); the run stopped and started nothing more. "+
		"Everything stored so far is kept: free some space and run the same command again to resume", a.Store.Dir(), cause))
}

// runner returns the per-target function of a stage of the table.
func (a *App) runner(name string) func(context.Context, string) (string, error) {
	switch name {
	case Fetch:
		return a.runFetch
	case Citegraph:
		return a.runCitegraph
	case Classify:
		return a.runClassify
	case Sources:
		return a.runSources
	case PDFs:
		return a.runPDFs
	case Summarize:
		return a.runSummarize
	}
	panic("app: no stage " + name) // Select only lets the table's names through
}

// runFetch fetches one target. The papers its bibliography names may be
// its sources: the archives learn of them.
func (a *App) runFetch(ctx context.Context, key string) (string, error) {
	r := a.Fetcher.Fetch(ctx, key)
	a.archives.learn(referencedIDs(r.Doc)...)
	switch r.Outcome {
	case fetch.Fetched, fetch.Archived:
		return pipeline.Done, nil
	case fetch.Stored:
		return pipeline.Reused, nil
	}
	return "", r.Err
}

// runCitegraph builds one target's edges. Re-linking stored responses
// makes no request and counts as reused; the arXiv metadata of all
// targets was looked up before the run (Runner.LookupArxiv).
func (a *App) runCitegraph(ctx context.Context, key string) (string, error) {
	r := a.Citegraph.Build(ctx, key)
	if r.Err != nil {
		return "", r.Err
	}
	a.archives.learn(edgeIDs(r.Graph)...)
	if !r.Requests {
		return pipeline.Reused, nil
	}
	return pipeline.Done, nil
}

// runClassify classifies one target's references; an implausible
// classification holds the target back unless suspects are included.
func (a *App) runClassify(ctx context.Context, key string) (string, error) {
	r, err := a.Classify.Process(ctx, key)
	if err != nil {
		return "", waitOr(err)
	}
	if r.Failure != nil {
		return "", fmt.Errorf("classify %s: %s", key, r.Failure.Reason)
	}
	if sus := r.Selections.Suspect; len(sus) > 0 && !a.cfg.Stages.IncludeSuspect {
		return "", pipeline.Hold(suspectReason(sus))
	}
	if r.Stored {
		return pipeline.Reused, nil
	}
	return pipeline.Done, nil
}

// runSources fetches the pages of a target's sources (those with an arXiv
// ID) into the store, where summarize reads them: a page already stored,
// or a paper known to have no HTML, makes no request. A source whose fetch
// failed fails the target, which the next run retries.
func (a *App) runSources(ctx context.Context, key string) (outcome string, err error) {
	defer func() { err = a.ledger(ctx, key, Sources, outcome, err) }()
	refs, skip, err := a.workingSources(ctx, key)
	if err != nil || skip != "" {
		return skip, err
	}
	fetched := false
	var failed []string
	for _, r := range refs {
		if _, err := arxiv.Parse(r.ArxivID); err != nil {
			continue // no arXiv page to fetch: its card comes from the abstract
		}
		res := a.Fetcher.Fetch(ctx, r.ArxivID)
		switch res.Outcome {
		case fetch.Fetched, fetch.Archived:
			fetched = true
		case fetch.Failed:
			if err := ctx.Err(); err != nil {
				return "", err
			}
			failed = append(failed, res.Err.Error())
		}
	}
	if len(failed) > 0 {
		return "", fmt.Errorf("sources of %s: %d not fetched: %s", key, len(failed), strings.Join(failed, "; "))
	}
	if fetched {
		return pipeline.Done, nil
	}
	return pipeline.Reused, nil
}

// ledger records how a stage the App runs itself (sources, pdfs) last
// went for a target, as every stage's ledger entry says; a no-op rerun
// sets it without counting an attempt. It returns err, or the store's
// error when it could not record.
func (a *App) ledger(ctx context.Context, key, stage, outcome string, err error) error {
	status, msg := store.StatusDone, ""
	var held *pipeline.HeldError
	switch {
	case errors.As(err, &held):
		status, msg = store.StatusSkipped, held.Reason
	case err != nil && (ctx.Err() != nil || errors.Is(err, httpx.ErrStopped)):
		return err // not done, not failed: the next run does it
	case err != nil:
		status, msg = store.StatusFailed, err.Error()
	case outcome == pipeline.Skipped:
		status = store.StatusSkipped
	}
	if e := a.Store.SetStatus(context.WithoutCancel(ctx), key, stage, status, msg); e != nil && err == nil {
		return e
	}
	return err
}

// Active returns names without the stages that are off: pdfs without a
// GROBID service. A stage that is off is no step of a run, so it costs
// nothing, counts nothing and writes no ledger entry.
func (a *App) Active(names []string) []string {
	if a.PDFs != nil {
		return names
	}
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == PDFs })
}

// runPDFs converts the open-access PDFs of a target's sources that have
// no arXiv page (see package pdfs). A source whose PDF cannot be had keeps
// its abstract and does not fail the target; a GROBID service that stays
// busy or unreachable does, and the next run goes on from the stored PDFs.
func (a *App) runPDFs(ctx context.Context, key string) (outcome string, err error) {
	defer func() { err = a.ledger(ctx, key, PDFs, outcome, err) }()
	refs, skip, err := a.workingSources(ctx, key)
	if err != nil || skip != "" {
		return skip, err
	}
	srcs := make([]pdfs.Source, len(refs))
	for i, r := range refs {
		srcs[i] = pdfs.Source{Key: r.Key, ArxivID: r.ArxivID, S2PaperID: r.S2PaperID, Title: r.Title}
	}
	r, err := a.PDFs.ProcessTarget(ctx, key, srcs)
	a.notePDFs(key, r)
	if err != nil {
		return "", err
	}
	if r.Requested > 0 || r.Converted > 0 {
		return pipeline.Done, nil
	}
	return pipeline.Reused, nil
}

// notePDFs keeps the sources of r that asked for a PDF and did not get
// one, for the run's output.
func (a *App) notePDFs(key string, r *pdfs.Result) {
	if r == nil {
		return
	}
	a.noPDFMu.Lock()
	defer a.noPDFMu.Unlock()
	for _, s := range r.Sources {
		if s.Requested && (s.Outcome == pdfs.None || s.Outcome == pdfs.Failed) {
			a.noPDF = append(a.noPDF, NoPDF{Target: key, Source: s.Key, Paper: s.Paper, Outcome: s.Outcome, Reason: s.Reason})
		}
	}
}

// runSummarize writes the target's gold card and its sources' cards. A
// target with fewer than MinSources sources is skipped: it cannot become
// an instance, and carding it would only cost tokens.
func (a *App) runSummarize(ctx context.Context, key string) (string, error) {
	refs, skip, err := a.workingSources(ctx, key)
	if err != nil || skip != "" {
		return skip, err
	}
	r, err := a.Summarize.ProcessTarget(ctx, key, refs)
	if err != nil {
		return "", err
	}
	if r.Pending > 0 && (r.Gold.Card != nil || r.Gold.Pending) && r.Failed == 0 {
		return "", pipeline.Wait(fmt.Sprintf("%d of its cards wait on LLM answers in a batch", r.Pending))
	}
	if r.Gold.Card == nil {
		return "", fmt.Errorf("summarize %s: no gold card: %s", key, r.Gold.Failure)
	}
	if len(r.Suspect) > 0 && !a.cfg.Stages.IncludeSuspect {
		return "", pipeline.Hold(suspectReason(r.Suspect))
	}
	if r.Failed > 0 {
		// A source without a card would silently shrink the instance; the
		// next run retries the failed cards (the others are stored).
		var why []string
		for _, c := range r.Sources {
			if c.Card == nil && !c.Unsummarizable {
				why = append(why, c.Key+": "+c.Failure)
			}
		}
		return "", fmt.Errorf("summarize %s: %d cards failed: %s", key, r.Failed, strings.Join(why, "; "))
	}
	if r.Written == 0 {
		return pipeline.Reused, nil
	}
	return pipeline.Done, nil
}

// workingSources returns the sources of a target that the stages working
// per source (sources, pdfs, summarize) work on, or why the target goes no
// further: held back as suspect (the error), or skipped (outcome Skipped)
// with fewer than MinSources sources, since it cannot become an instance.
func (a *App) workingSources(ctx context.Context, key string) (refs []summarize.SourceRef, outcome string, err error) {
	refs, suspect, err := SourceRefs(ctx, a.Store, key)
	if err != nil {
		return nil, "", err
	}
	if len(suspect) > 0 && !a.cfg.Stages.IncludeSuspect {
		return nil, "", pipeline.Hold(suspectReason(suspect))
	}
	if len(refs) < MinSources {
		return nil, pipeline.Skipped, nil
	}
	return refs, "", nil
}

// waitOr turns an LLM answer pending in a batch into the target's wait,
// and returns any other error as it is.
func waitOr(err error) error {
	var pe *llm.PendingError
	if errors.As(err, &pe) {
		if pe.Batch == "" {
			return pipeline.Wait("its LLM request is queued for the next batch")
		}
		return pipeline.Wait(fmt.Sprintf("its LLM request is %s in batch %s", pe.State, pe.Batch))
	}
	return err
}

// suspectReason is the reason a suspect target is held back.
func suspectReason(reasons []string) string {
	return "suspect (" + strings.Join(reasons, "; ") + "); --include-suspect keeps it"
}

// SourceRefs returns the references the classify stage chose as sources of
// a target, as the summarize stage wants them, in edge order, and why the
// selections are suspect, if they are.
func SourceRefs(ctx context.Context, st *store.Store, key string) ([]summarize.SourceRef, []string, error) {
	g, _, err := record.Graphs.Get(ctx, st, key)
	if err != nil {
		return nil, nil, fmt.Errorf("sources of %s: no edges (run citegraph first): %w", key, err)
	}
	sel, _, err := record.SelectionSets.Get(ctx, st, key)
	if err != nil {
		return nil, nil, fmt.Errorf("sources of %s: no selections (run classify first): %w", key, err)
	}
	keys := record.RefKeys(g.Edges)
	edgeOf := make(map[string]*record.Edge, len(keys))
	for i, k := range keys {
		edgeOf[k] = &g.Edges[i]
	}
	var refs []summarize.SourceRef
	for _, s := range sel.Selections {
		if s.Role != record.RoleSource {
			continue
		}
		e := edgeOf[s.RefKey]
		if e == nil {
			return nil, nil, fmt.Errorf("sources of %s: selection %q names no edge: %w", key, s.RefKey, errStale)
		}
		refs = append(refs, summarize.SourceRef{
			Key: s.RefKey, ArxivID: deref(e.ArxivID), S2PaperID: deref(e.S2PaperID),
			Title: deref(e.Title), Abstract: deref(e.Abstract),
		})
	}
	return refs, sel.Suspect, nil
}

// errStale marks selections made for other edges than the stored ones.
var errStale = errors.New("selections are stale: classify again")

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
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
// graphs of seeds the store lacks: fetch and citegraph over them, through
// the table's runners, workers at a time.
func (a *App) BuildGraphs(workers int) func(ctx context.Context, keys []string) (map[string]*record.Graph, map[string]error) {
	return func(ctx context.Context, keys []string) (map[string]*record.Graph, map[string]error) {
		built, failed := map[string]*record.Graph{}, map[string]error{}
		if _, err := a.prepareFetch(ctx, keys); err != nil {
			for _, k := range keys {
				failed[k] = err
			}
			return built, failed
		}
		stop := a.Citegraph.Feed(ctx, keys, a.cfg.Drain)
		var steps []pipeline.Step
		for _, n := range []string{Fetch, Citegraph} {
			steps = append(steps, pipeline.Step{Name: n, Workers: max(workers, 1), Run: a.runner(n)})
		}
		sum := pipeline.Run(ctx, keys, steps, pipeline.Options{Drain: a.cfg.Drain, Fatal: store.IsDiskFull})
		if err := stop(); err != nil {
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
