// Package app is curate's composition root. From a Config it builds, in
// one place, the logger, the store (opened and locked), the one HTTP
// client with a service per remote site, the service clients and the
// stages; and it runs what the commands ask: the stage table over a list
// of targets (Run), the dataset (BuildDataset), a nightly refresh
// (Discover, PublishVersion). Commands (cmd/curate) turn flags into a
// Config, call one of these and print what comes back; nothing here
// prints or parses flags.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/groundwork/curate/arxivapi"
	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/classify"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/httpx"
	"github.com/groundwork/curate/llm"
	"github.com/groundwork/curate/oaipmh"
	"github.com/groundwork/curate/robots"
	"github.com/groundwork/curate/s2"
	"github.com/groundwork/curate/store"
	"github.com/groundwork/curate/summarize"
)

// Config is everything Open needs, from flags and the environment, already
// validated by the command.
type Config struct {
	Version string // curate's, for the User-Agent and provenance
	Log     *slog.Logger
	// Store is the store directory; Existing opens only a store that is
	// there (commands that only look), Lock takes its lock for the life of
	// the App (commands that write).
	Store          string
	Existing, Lock bool

	Net Net
	S2  S2
	// OAIBase, when set, adds arXiv's OAI-PMH feed (refresh).
	OAIBase string
	LLM     LLM
	Stages  StageOptions
	// Drain is closed on the first interrupt: runs stop taking new work.
	Drain <-chan struct{}
}

// Net configures the HTTP layer and the arXiv sites.
type Net struct {
	Mailto               string
	ArxivBase, Ar5ivBase string
	ArxivInterval        time.Duration
	Timeout              time.Duration
	MaxBody              int64
	Retries              int // 0: none
	MissingTTL           time.Duration
	// IgnoreCrawlDelay lets ArxivInterval stand when a host's robots.txt
	// asks for a longer Crawl-delay (a warning is logged once per host).
	IgnoreCrawlDelay bool
	// RobotsTTL is how long a stored robots.txt is trusted (0: 24h).
	RobotsTTL time.Duration
	// HTMLArchives are local page archives (directories of saved pages,
	// ar5iv bulk zips) asked before any request.
	HTMLArchives []string
}

// S2 configures Semantic Scholar and the arXiv API.
type S2 struct {
	Base, Key    string
	Interval     time.Duration
	PageLimit    int
	ArxivAPIBase string
}

// LLM configures the model behind classify and summarize.
type LLM struct {
	// Heuristic selects the offline heuristic backend; Client is unused.
	Heuristic bool
	// Client configures the endpoint (its Store, Meter and Logger are set
	// by Open).
	Client       llm.Config
	Prices       llm.Prices
	BudgetTokens int64
	BudgetUSD    float64
}

// StageOptions configure the stages.
type StageOptions struct {
	Force, Refresh                  bool
	ClassifyBudget, SummarizeBudget int
	Plausibility                    classify.Plausibility
	IncludeSuspect                  bool
}

// App is an opened store with every stage configured. Its fields are for
// commands that work below the table (fetch's per-paper report, topics).
type App struct {
	Log    *slog.Logger
	Store  *store.Store
	HTTP   *httpx.Client
	Meter  *llm.Meter
	Prices llm.Prices
	Model  string        // the LLM model, or "heuristic"
	LLM    llm.Completer // nil for the heuristic; the Client under the run's budget
	Client *llm.Client   // nil for the heuristic

	Fetcher   *fetch.Fetcher
	Citegraph *citegraph.Runner
	Classify  *classify.Stage
	Summarize *summarize.Stage
	OAI       *oaipmh.Client // nil without Config.OAIBase

	cfg      Config
	unlock   func() error
	stopping *atomic.Bool // set when a run stops on a full disk

	robots  *robots.Checker
	crawlMu sync.Mutex
	crawled bool

	archives    *archiveSet // nil without Config.Net.HTMLArchives
	archiveMu   sync.Mutex
	archiveOpen bool
}

// Open builds the App of cfg: nothing is requested, and with Lock a store
// another process holds is refused (ErrCannotRun) before anything is
// written.
func Open(ctx context.Context, cfg Config) (*App, error) {
	stopping := &atomic.Bool{}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = slog.New(quietOnFullDisk{log.Handler(), stopping})
	st, err := OpenStore(ctx, cfg.Store, cfg.Existing)
	if err != nil {
		return nil, err
	}
	a := &App{Log: log, Store: st, Meter: &llm.Meter{}, Prices: cfg.LLM.Prices, Model: llm.HeuristicModel, cfg: cfg, stopping: stopping}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	if cfg.Lock {
		unlock, err := st.Lock()
		if err != nil {
			return nil, lockError(err, st.Dir())
		}
		a.unlock = unlock
	}
	if err := a.build(); err != nil {
		return nil, err
	}
	ok = true
	return a, nil
}

// OpenStore opens the store in dir; with existing, a path without a store
// (or with another program's ledger.db) is ErrCannotRun and nothing is
// created there.
func OpenStore(ctx context.Context, dir string, existing bool) (*store.Store, error) {
	open := store.Open
	if existing {
		open = store.OpenExisting
	}
	st, err := open(ctx, dir)
	if errors.Is(err, store.ErrNoStore) || errors.Is(err, store.ErrForeign) {
		return nil, Fail(ErrCannotRun, err)
	}
	return st, err
}

// LockStore takes st's lock, refusing (ErrCannotRun) a store another
// process holds.
func LockStore(st *store.Store) (unlock func() error, err error) {
	unlock, err = st.Lock()
	if err != nil {
		return nil, lockError(err, st.Dir())
	}
	return unlock, nil
}

func lockError(err error, dir string) error {
	if errors.Is(err, store.ErrLocked) {
		return Fail(ErrCannotRun, fmt.Errorf("%w; another curate run is using the store %s: wait for it or stop it", err, dir))
	}
	return err
}

// build makes the HTTP client, the service clients and the stages.
func (a *App) build() error {
	cfg := a.cfg
	lcfg := cfg.LLM.Client
	lcfg.Store, lcfg.Meter, lcfg.Logger = a.Store, a.Meter, a.Log
	services := []httpx.ServiceConfig{
		{Name: fetch.ServiceArxiv, BaseURL: cfg.Net.ArxivBase, Interval: cfg.Net.ArxivInterval, MaxInFlight: 1},
		{Name: fetch.ServiceAr5iv, BaseURL: cfg.Net.Ar5ivBase, Interval: cfg.Net.ArxivInterval, MaxInFlight: 1},
		s2.ServiceConfig(cfg.S2.Base, cfg.S2.Key, cfg.S2.Interval),
		arxivapi.ServiceConfig(cfg.S2.ArxivAPIBase, cfg.Net.ArxivInterval),
	}
	if cfg.OAIBase != "" {
		services = append(services, oaipmh.ServiceConfig(cfg.OAIBase, cfg.Net.ArxivInterval))
	}
	if !cfg.LLM.Heuristic {
		services = append(services, lcfg.ServiceConfig())
	}
	retries := cfg.Net.Retries
	if retries == 0 {
		retries = -1 // httpx reads 0 as its default; the flag's 0 means none
	}
	var err error
	ua := httpx.UserAgent(cfg.Version, cfg.Net.Mailto)
	a.HTTP, err = httpx.New(httpx.Config{
		UserAgent: ua,
		Timeout:   cfg.Net.Timeout,
		MaxBody:   cfg.Net.MaxBody,
		RetryMax:  retries,
		Logger:    a.Log,
	}, services...)
	if err != nil {
		return err
	}
	svc := func(name string) *httpx.Service { s, _ := a.HTTP.Service(name); return s }
	if a.robots, err = robots.New(robots.Config{UserAgent: ua, Cache: robotsStore{a.Store}, TTL: cfg.Net.RobotsTTL, Logger: a.Log}); err != nil {
		return err
	}
	s2c, err := s2.New(svc(s2.ServiceName), s2.Options{PageLimit: cfg.S2.PageLimit, Logger: a.Log})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	apic, err := arxivapi.New(svc(arxivapi.ServiceName), arxivapi.Options{Logger: a.Log})
	if err != nil {
		return err
	}
	if cfg.OAIBase != "" {
		if a.OAI, err = oaipmh.New(svc(oaipmh.ServiceName), oaipmh.Options{Logger: a.Log}); err != nil {
			return err
		}
	}
	if !cfg.LLM.Heuristic {
		c, err := llm.New(a.HTTP, lcfg)
		if err != nil {
			return err
		}
		a.Model, a.Client = c.Model(), c
		a.LLM = llm.WithBudget(c, a.Meter, llm.Budget{MaxTokens: cfg.LLM.BudgetTokens, MaxUSD: cfg.LLM.BudgetUSD, Prices: cfg.LLM.Prices})
	}
	so := cfg.Stages
	a.Fetcher = &fetch.Fetcher{Arxiv: svc(fetch.ServiceArxiv), Ar5iv: svc(fetch.ServiceAr5iv), Store: a.Store, Log: a.Log, MissingTTL: cfg.Net.MissingTTL}
	if len(cfg.Net.HTMLArchives) > 0 {
		a.archives = newArchiveSet(cfg.Net.HTMLArchives, a.Log)
		a.Fetcher.Archive = a.archives
	}
	a.Citegraph = &citegraph.Runner{Store: a.Store, S2: s2c, ArxivAPI: apic, Log: a.Log, Refresh: so.Refresh, Skip: a.Fetcher.KnownMissing}
	a.Classify = &classify.Stage{Store: a.Store, LLM: a.LLM, Model: a.Model, Budget: so.ClassifyBudget, Log: a.Log, Meter: a.Meter,
		Force: so.Force, Plausibility: so.Plausibility}
	a.Summarize = &summarize.Stage{Store: a.Store, LLM: a.LLM, Model: a.Model, Log: a.Log, Meter: a.Meter, Force: so.Force, Budget: so.SummarizeBudget}
	return nil
}

// Close releases the store's lock, if taken, and closes the store.
func (a *App) Close() error {
	a.archives.close()
	if a.unlock != nil {
		a.unlock()
		a.unlock = nil
	}
	return a.Store.Close()
}

// Services lists the remote services a run may call, in a fixed order.
func (a *App) Services() []string {
	var out []string
	for _, n := range []string{fetch.ServiceArxiv, fetch.ServiceAr5iv, s2.ServiceName, arxivapi.ServiceName, oaipmh.ServiceName, llm.DefaultService} {
		if _, err := a.HTTP.Service(n); err == nil {
			out = append(out, n)
		}
	}
	return out
}
