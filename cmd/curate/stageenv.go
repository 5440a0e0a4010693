package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"sync/atomic"

	"github.com/groundwork/curate/arxivapi"
	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/classify"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/httpx"
	"github.com/groundwork/curate/llm"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/s2"
	"github.com/groundwork/curate/stages"
	"github.com/groundwork/curate/store"
	"github.com/groundwork/curate/summarize"
)

// stageFlags are the flags shared by every command that runs per-target
// stages (classify, summarize, run, refresh).
type stageFlags struct {
	global        globalOptions
	s2            s2Options
	llm           llmOptions
	targets       string
	force         bool
	refresh       bool
	budget        int
	summaryBudget int
	budgetTokens  int64
	budgetUSD     float64
	// includeSuspect lets implausible classifications go on; plausible
	// bounds them.
	includeSuspect bool
	plausible      classify.Plausibility
}

func addStageFlags(fs *flag.FlagSet, env *cmdEnv, f *stageFlags) {
	addGlobalFlags(fs, env, &f.global)
	addS2Flags(fs, env, &f.s2)
	addLLMFlags(fs, env, &f.llm)
	addTargetsFlag(fs, &f.targets)
	fs.BoolVar(&f.force, "force", false, "classify and summarize again even when the store holds current results")
	fs.BoolVar(&f.refresh, "refresh", false, "ask Semantic Scholar and arXiv again instead of reusing stored responses")
	fs.Int64Var(&f.budgetTokens, "budget-tokens", 0, "stop calling the LLM once this run has spent this many tokens (0: no cap); the rest is left for the next run")
	fs.Float64Var(&f.budgetUSD, "budget-usd", 0, "stop calling the LLM once this run has spent this many dollars by the --price table (0: no cap)")
	fs.IntVar(&f.budget, "classify-budget", 0, "token budget of the classify prompt (0: the stage's default)")
	fs.IntVar(&f.summaryBudget, "summarize-budget", 0, "token budget of a paper's text for its card (0: the stage's default)")
	addSuspectFlags(fs, &f.includeSuspect)
	p := &f.plausible
	fs.IntVar(&p.MaxSources, "suspect-max-sources", classify.DefaultMaxSources, "a classification with more sources than this and than --suspect-max-share of the references is suspect (negative: no bound)")
	fs.Float64Var(&p.MaxShare, "suspect-max-share", classify.DefaultMaxShare, "the share of references above which (and above --suspect-max-sources) sources are suspect")
	fs.IntVar(&p.NearlyAll, "suspect-nearly-all", classify.DefaultNearlyAll, "this many sources or more making up 80% of the references is suspect (negative: off)")
	fs.IntVar(&p.UniformLabels, "suspect-uniform-labels", classify.DefaultUniformLabels, "this many sources or more all with the same labels is suspect (negative: off)")
	fs.IntVar(&p.RepeatedRationale, "suspect-repeated-rationale", classify.DefaultRepeatedRationale, "one rationale given for this many sources, and half of them, is suspect (negative: off)")
}

// addSuspectFlags registers --include-suspect.
func addSuspectFlags(fs *flag.FlagSet, p *bool) {
	fs.BoolVar(p, "include-suspect", false, "keep targets whose classification looks implausible (too many sources, one label or rationale for all: an instruction in the paper obeyed?); by default they are held back and listed")
}

// validate checks every flag of a stage command before anything is opened,
// requested or written.
func (f *stageFlags) validate() error {
	if err := f.global.validate(); err != nil {
		return err
	}
	if err := f.s2.validate(); err != nil {
		return err
	}
	if err := f.llm.validate(); err != nil {
		return err
	}
	switch {
	case f.budgetTokens < 0:
		return fmt.Errorf("%w: --budget-tokens %d: want 0 (no cap) or more", errUsage, f.budgetTokens)
	case f.budgetUSD < 0 || math.IsNaN(f.budgetUSD) || math.IsInf(f.budgetUSD, 0):
		return fmt.Errorf("%w: --budget-usd %v: want 0 (no cap) or a positive number of dollars", errUsage, f.budgetUSD)
	case f.budgetUSD > 0 && f.llm.prices == "":
		return fmt.Errorf("%w: --budget-usd needs a --price table to count dollars", errUsage)
	case f.budget < 0:
		return fmt.Errorf("%w: --classify-budget %d: want 0 (the stage's default) or more tokens", errUsage, f.budget)
	case f.summaryBudget < 0:
		return fmt.Errorf("%w: --summarize-budget %d: want 0 (the stage's default) or more tokens", errUsage, f.summaryBudget)
	case f.plausible.MaxShare <= 0 || f.plausible.MaxShare > 1 || math.IsNaN(f.plausible.MaxShare):
		return fmt.Errorf("%w: --suspect-max-share %v: want more than 0 and at most 1", errUsage, f.plausible.MaxShare)
	}
	for _, c := range []struct {
		flag string
		n    int
	}{{"--suspect-max-sources", f.plausible.MaxSources}, {"--suspect-nearly-all", f.plausible.NearlyAll},
		{"--suspect-uniform-labels", f.plausible.UniformLabels}, {"--suspect-repeated-rationale", f.plausible.RepeatedRationale}} {
		if c.n == 0 {
			return fmt.Errorf("%w: %s 0: want a positive bound, or a negative value to turn the rule off", errUsage, c.flag)
		}
	}
	return nil
}

// ids returns the targets from arguments and --targets.
func (f *stageFlags) ids(env *cmdEnv, args []string) ([]string, error) {
	ids := append([]string(nil), args...)
	if f.targets != "" {
		more, err := readTargets(f.targets, env.stdinReader())
		if err != nil {
			return nil, err
		}
		ids = append(ids, more...)
	}
	return ids, nil
}

// stageEnv is an opened store with every stage configured.
type stageEnv struct {
	log    *slog.Logger
	store  *store.Store
	unlock func() error // set by lock
	// stopping is set when the run stops on a full disk (see
	// quietOnFullDisk).
	stopping *atomic.Bool
	http     *httpx.Client
	set      *stages.Set
	meter    *llm.Meter
	prices   llm.Prices
	model    string // the LLM model, or "heuristic"
}

// Close releases the store's lock, if taken, and closes the store.
func (e *stageEnv) Close() error {
	if e.unlock != nil {
		e.unlock()
		e.unlock = nil
	}
	return e.store.Close()
}

// lock takes the store's lock for the rest of the command: a store another
// curate holds is refused (exit 2), before any request or write.
func (e *stageEnv) lock() error {
	unlock, err := e.store.Lock()
	if err != nil {
		return lockError(err, e.store.Dir())
	}
	e.unlock = unlock
	return nil
}

// lockError is the refusal of a store another process holds.
func lockError(err error, dir string) error {
	if errors.Is(err, store.ErrLocked) {
		return &exitError{code: 2, err: fmt.Errorf("%w; another curate run is using the store %s: wait for it or stop it", err, dir)}
	}
	return err
}

// openLocked opens the store and the stages (openStages) and takes the
// store's lock.
func openLocked(ctx context.Context, env *cmdEnv, f *stageFlags) (*stageEnv, error) {
	e, err := openStages(ctx, env, f)
	if err != nil {
		return nil, err
	}
	if err := e.lock(); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// openStages opens the store and builds every stage from the flags, which
// the command has validated.
func openStages(ctx context.Context, env *cmdEnv, f *stageFlags) (*stageEnv, error) {
	log, err := f.global.logger(env.stderr)
	if err != nil {
		return nil, err
	}
	stopping := &atomic.Bool{}
	log = slog.New(quietOnFullDisk{log.Handler(), stopping})
	heuristic, err := f.llm.heuristic()
	if err != nil {
		return nil, err
	}
	prices, err := f.llm.loadPrices()
	if err != nil {
		return nil, err
	}
	st, err := f.global.openStore(ctx)
	if err != nil {
		return nil, err
	}
	e := &stageEnv{log: log, store: st, meter: &llm.Meter{}, prices: prices, model: llm.HeuristicModel, stopping: stopping}
	fail := func(err error) (*stageEnv, error) {
		st.Close()
		return nil, err
	}
	lcfg := f.llm.config(env, st, e.meter, log)
	services := append(f.s2.serviceConfigs(env, &f.global), f.llm.serviceConfigs(lcfg, heuristic)...)
	if e.http, err = f.global.httpClient(log, services...); err != nil {
		return fail(err)
	}
	ax, _ := e.http.Service("arxiv")
	a5, _ := e.http.Service("ar5iv")
	s2svc, _ := e.http.Service(s2.ServiceName)
	apisvc, _ := e.http.Service(arxivapi.ServiceName)
	s2c, err := s2.New(s2svc, s2.Options{PageLimit: f.s2.s2PageLimit, Logger: log})
	if err != nil {
		return fail(fmt.Errorf("%w: %v", errUsage, err))
	}
	apic, err := arxivapi.New(apisvc, arxivapi.Options{Logger: log})
	if err != nil {
		return fail(err)
	}
	var completer llm.Completer
	if !heuristic {
		c, err := llm.New(e.http, lcfg)
		if err != nil {
			return fail(err)
		}
		completer, e.model = c, c.Model()
		completer = llm.WithBudget(completer, e.meter, llm.Budget{MaxTokens: f.budgetTokens, MaxUSD: f.budgetUSD, Prices: prices})
	}
	fetcher := &fetch.Fetcher{Arxiv: ax, Ar5iv: a5, Store: st, Log: log, MissingTTL: f.global.missingTTL}
	e.set = &stages.Set{
		Store:   st,
		Fetcher: fetcher,
		Citegraph: &citegraph.Runner{
			Store: st, S2: s2c, ArxivAPI: apic, Log: log, Refresh: f.refresh,
			Fetch: func(ctx context.Context, id string) (*record.Document, error) {
				r := fetcher.Fetch(ctx, id)
				return r.Doc, r.Err
			},
		},
		Classify: &classify.Stage{Store: st, LLM: completer, Model: e.model, Budget: f.budget, Log: log, Meter: e.meter, Force: f.force,
			Plausibility: f.plausible},
		IncludeSuspect: f.includeSuspect,
		Summarize: &summarize.Stage{
			Store: st, LLM: completer, Model: e.model, Log: log, Meter: e.meter, Force: f.force, Budget: f.summaryBudget,
			Fetch: func(ctx context.Context, id string) error { return fetcher.Fetch(ctx, id).Err },
		},
	}
	return e, nil
}
