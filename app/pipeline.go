package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/licenses"
)

// PipelineOptions configure Pipeline: targets through the per-target
// stages, the licence lookup and the dataset, as curate run, the demo
// and the per-stage commands ask.
type PipelineOptions struct {
	// Keys are the targets (store keys: see Targets); Invalid the inputs
	// that were none, each with why: they count as failed targets.
	Keys, Invalid []string
	// Stages are the per-target stages to run (table names), with the
	// stages they need added; none runs no stage.
	Stages  []string
	Workers map[string]int
	// Report names the stage whose account of the run is wanted (see
	// pipeline.Reporter): curate fetch's line per paper.
	Report string
	// Licenses looks up the targets' licences before the dataset (the
	// Config needs OAIBase); only failed lookups are watched one by one.
	Licenses       bool
	RecheckMissing bool
	// Dataset, when set, is built and published once the stages are
	// through, under a lock on its directory held from before the first
	// request.
	Dataset *DatasetOptions
	Watch   Watch
}

// Watch is told what a Pipeline does as it goes, for the command to
// print; any hook may be nil.
type Watch struct {
	// Begin is told the stages the run takes (those off left out, those
	// needed added) and its number of targets, before anything is asked.
	Begin func(stages []string, targets int)
	// Start and Event are RunOptions.OnStart and OnEvent.
	Start func(Start)
	Event func(pipeline.Event)
	// Stages is told how the stages went, once they are through.
	Stages func(*RunResult)
	// License is told each lookup that failed; Licenses the lookup's
	// counts.
	License  func(licenses.Result)
	Licenses func(*licenses.Summary)
	// Dataset is told what the dataset build did; NotPublished why
	// nothing was published when the stages ended incomplete.
	Dataset      func(*DatasetOutcome)
	NotPublished func(error)
}

// RunResult is a run of the stages as a command prints it.
type RunResult struct {
	*Outcome
	// Invalid are the inputs that were no targets.
	Invalid []string
	// Requests are the requests each of the run's services got; Usage the
	// LLM calls.
	Requests []ServiceRequests
	Usage    Usage
	// Report is the stage's account asked for (PipelineOptions.Report),
	// when it gives one.
	Report *pipeline.Report
}

// ServiceRequests are the requests a remote service got in a run.
type ServiceRequests struct {
	Name  string
	Stats httpx.Stats
}

// Requests returns the requests each configured service got so far, in
// Services' order.
func (a *App) Requests() []ServiceRequests {
	var out []ServiceRequests
	for _, name := range a.Services() {
		if s, err := a.HTTP.Service(name); err == nil {
			out = append(out, ServiceRequests{Name: name, Stats: s.Stats()})
		}
	}
	return out
}

// Completed reports whether a pipeline that returned err finished its
// work, some targets failing or waiting on LLM batches perhaps, so that
// what it finished may be published (waiting targets are listed as such
// in the dataset's dropped targets). Usage errors, a refused lock, an
// interrupted run and a run that could not go on publish nothing.
func Completed(err error) bool {
	return err == nil || errors.Is(err, ErrIncomplete) || errors.Is(err, ErrPending)
}

// Pipeline opens the store of cfg and runs o's stages over o.Keys, then
// the licence lookup, then the dataset, all under the store's lock. The
// dataset is published only when the stages completed (some targets may
// have failed: they are listed in dropped.json); a run refused,
// interrupted or unable to go on leaves the published dataset as it was.
// The error is the stages' (see App.Run), else the lookup's, else the
// dataset's.
func Pipeline(ctx context.Context, cfg Config, o PipelineOptions) error {
	a, err := Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	if o.Dataset != nil {
		// Held from before the first request to the publish: a second run
		// aimed at the same --out is refused before it spends anything.
		release, err := HoldOutput(DatasetDir(a.Store, o.Dataset.Out))
		if err != nil {
			return err
		}
		defer release()
	}
	stageErr := a.runStages(ctx, o)
	if !Completed(stageErr) {
		return stageErr
	}
	licErr := a.lookupLicenses(ctx, o)
	if !Completed(licErr) {
		return licErr
	}
	if stageErr == nil {
		stageErr = licErr
	}
	if o.Dataset == nil {
		return stageErr
	}
	d := *o.Dataset
	d.Locked = true
	out, err := BuildDataset(ctx, a.Store, cfg.Version, d)
	if errors.Is(err, ErrNothingToPublish) && stageErr != nil {
		// Said, and the exit is the stages' (1, or 75 when waiting).
		if o.Watch.NotPublished != nil {
			o.Watch.NotPublished(err)
		}
		return stageErr
	}
	if err != nil {
		return err
	}
	if o.Watch.Dataset != nil {
		o.Watch.Dataset(out)
	}
	return stageErr
}

// runStages runs o's stages over o.Keys and tells o.Watch how they went;
// the inputs that were no targets count as failed ones.
func (a *App) runStages(ctx context.Context, o PipelineOptions) error {
	if len(o.Stages) == 0 {
		return nil
	}
	names := a.Active(a.stages.WithNeeds(o.Stages...))
	if o.Watch.Begin != nil {
		o.Watch.Begin(names, len(o.Keys))
	}
	var mu sync.Mutex
	events := map[string]pipeline.Event{} // of the reporting stage
	out, err := a.Run(ctx, o.Keys, RunOptions{Stages: names, Workers: o.Workers, OnStart: o.Watch.Start, OnEvent: func(ev pipeline.Event) {
		if ev.Step == o.Report {
			mu.Lock()
			events[ev.Key] = ev
			mu.Unlock()
		}
		if o.Watch.Event != nil {
			o.Watch.Event(ev)
		}
	}})
	res := &RunResult{Outcome: out, Invalid: o.Invalid, Requests: a.Requests(), Usage: a.usage()}
	if o.Report != "" {
		if r, ok := a.Report(ctx, o.Report, o.Keys, events, len(o.Invalid)); ok {
			res.Report = &r
		}
	}
	if o.Watch.Stages != nil {
		o.Watch.Stages(res)
	}
	if err == nil && len(o.Invalid) > 0 {
		err = Fail(ErrIncomplete, fmt.Errorf("%s failed", Plural(len(o.Invalid), "target")))
	}
	return err
}

// lookupLicenses looks up the licences of o.Keys when o asks for it,
// telling o.Watch each failure and the counts.
func (a *App) lookupLicenses(ctx context.Context, o PipelineOptions) error {
	if !o.Licenses {
		return nil
	}
	sum, err := a.LookupLicenses(ctx, o.Keys, LicenseOptions{RecheckMissing: o.RecheckMissing, OnPaper: func(r licenses.Result) {
		if r.Outcome == licenses.Failed && o.Watch.License != nil {
			o.Watch.License(r)
		}
	}})
	if o.Watch.Licenses != nil && sum != nil {
		o.Watch.Licenses(sum)
	}
	return err
}

// ActiveStages returns the per-target stages a run of names takes under
// cfg: those they need added (table order), those off left out.
func ActiveStages(cfg Config, names []string) []string {
	t := table(&App{cfg: cfg})
	return t.Active(t.WithNeeds(names...))
}

// RefreshOptions configure Refresh.
type RefreshOptions struct {
	// IDs are the targets file's, as given; BadRows its values that are
	// no IDs.
	IDs, BadRows []string
	OAI          OAIOptions
	// Versions is the dataset root: each refresh that changes the dataset
	// writes Versions/versions/<time>/ and points Versions/latest at it.
	Versions string
	Workers  map[string]int
	Licenses bool
	// Dataset configures the builds (its Out and Keys are the refresh's).
	Dataset DatasetOptions
	Watch   Watch
	// Harvested is told each OAI-PMH set harvested; Targets the targets
	// of the refresh: in all, from the file, harvested so far.
	Harvested func(SetHarvest)
	Targets   func(all, file, harvested int)
	// Published is told the version the refresh published, or that none
	// changed.
	Published func(*VersionOutcome)
}

// Refresh discovers targets (the targets file as it is now, plus papers
// harvested from arXiv's OAI-PMH feed since the last harvest), runs every
// stage (work already done is reused, changed prompts or models redo only
// their stage), and publishes a new dataset version when anything changed,
// all under the store's lock. The error is as Pipeline's.
func Refresh(ctx context.Context, cfg Config, o RefreshOptions) error {
	a, err := Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	// Held from before the first request to the publish.
	release, err := HoldVersions(o.Versions)
	if err != nil {
		return err
	}
	defer release()
	discovered, sets, err := a.Discover(ctx, o.OAI)
	for _, s := range sets {
		if o.Harvested != nil {
			o.Harvested(s)
		}
	}
	if err != nil {
		return Fail(ErrCannotRun, fmt.Errorf("refresh: discover targets: %w", err))
	}
	targets := MergeTargets(o.IDs, discovered)
	if len(targets) == 0 && len(o.BadRows) == 0 {
		return fmt.Errorf("%w: refresh: no targets: give --targets FILE, --targets-from FILE or --oai-set", ErrUsage)
	}
	if o.Targets != nil {
		o.Targets(len(targets), len(o.IDs), len(discovered))
	}
	keys, invalid := Targets(targets)
	p := PipelineOptions{Keys: keys, Invalid: append(o.BadRows, invalid...), Stages: a.stages.PerTargetNames(), Workers: o.Workers,
		Licenses: o.Licenses, Watch: o.Watch}
	stageErr := a.runStages(ctx, p)
	if !Completed(stageErr) {
		return stageErr // interrupted or unable to go on: publish nothing
	}
	licErr := a.lookupLicenses(ctx, p)
	if !Completed(licErr) {
		return licErr
	}
	if stageErr == nil {
		stageErr = licErr
	}
	d := o.Dataset
	d.Out, d.Keys, d.Locked = "", keys, true
	v, err := PublishVersion(ctx, a.Store, a.Log, cfg.Version, o.Versions, d)
	if errors.Is(err, ErrNothingToPublish) && stageErr != nil {
		// Said, and the exit is the stages' (1, or 75 when waiting).
		if o.Watch.NotPublished != nil {
			o.Watch.NotPublished(err)
		}
		return stageErr
	}
	if err != nil {
		return err
	}
	if o.Published != nil {
		o.Published(v)
	}
	return stageErr
}
