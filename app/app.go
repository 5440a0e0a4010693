// Package app is curate's composition root. From a Config it builds, in
// one place, the logger, the store (opened and locked), the one HTTP
// client with a service per remote site, the service clients and the
// stages; and it runs what the commands ask: the stage table over a list
// of targets (Run), the dataset (BuildDataset), a nightly refresh
// (Discover, PublishVersion). Commands (cmd/curate) turn flags into a
// Config, call one of these and print what comes back; nothing here
// prints or parses flags. In batch mode (LLM.Mode) it also drives the
// LLM batches: it submits, waits for and collects them (Settle, Passes).
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/groundwork/curate/classify"
	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/client/grobid"
	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/client/oapdf"
	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/membudget"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/internal/robots"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/pdfs"
	"github.com/groundwork/curate/store"
	"github.com/groundwork/curate/versions"
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
	// Heal reads a stored record whose blob is lost or damaged as absent
	// (store.Heal), logged once, for commands that run the stages: they
	// ask for it again or make it again. Commands that only read what a
	// store holds leave it off and fail on such a record, naming it.
	Heal bool

	Net Net
	S2  S2
	// OAIBase, when set, adds arXiv's OAI-PMH feed (refresh, licences,
	// version histories).
	OAIBase string
	// Knowledge configures the knowledge cut: the versions stage and the
	// reading of each paper at the version of its target's cutoff.
	Knowledge Knowledge
	LLM       LLM
	// PDF turns the pdfs stage on (PDF.GrobidBase set) and configures it.
	PDF    PDF
	Stages StageOptions
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
	// Dial, when set, replaces the dialer of the services' connections;
	// only tests set it (a machine that is offline, a name that does not
	// resolve).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Secrets are credentials to redact from everything the services
	// send back (see httpx.Config.Secrets), besides the configured S2 and
	// LLM keys: the environment's other keys, a proxy's password.
	Secrets []string
}

// S2 configures Semantic Scholar and the arXiv API.
type S2 struct {
	Base, Key    string
	Interval     time.Duration
	PageLimit    int
	ArxivAPIBase string
}

// PDF configures the pdfs stage: open-access PDFs of sources without an
// arXiv page, downloaded under oapdf's rules and converted by a GROBID
// service. Without GrobidBase the stage is off: no PDF, GROBID or extra
// Semantic Scholar field is asked for.
type PDF struct {
	GrobidBase string
	// Capacity is the conversions sent at once: the server's engine pool
	// (grobid.DefaultCapacity when 0).
	Capacity int
	Timeout  time.Duration // one conversion (grobid.DefaultTimeout when 0)
	// Hosts is the PDF allow-list (oapdf.DefaultHosts when nil).
	Hosts    []string
	MaxSize  int64         // oapdf.DefaultMaxSize when 0
	Interval time.Duration // between requests to one PDF host (oapdf.DefaultInterval when 0)
	// Resolve and AllowAddr replace the downloader's name resolution and
	// address policy; only tests set them, whose PDF hosts listen on
	// loopback, which the downloader otherwise never dials.
	Resolve   func(ctx context.Context, host string) ([]netip.Addr, error)
	AllowAddr func(netip.Addr) bool
}

// Knowledge configures the knowledge cut (package knowledgecut): each
// target read at its v1, each source at its last version dated on or
// before the target's v1. The versions stage that pins them takes the
// histories from the cheapest source that has them (package versions):
// Metadata, the store, the arXiv API, and OAI when the rest cannot
// settle a pin. It is on unless Mode is off.
type Knowledge struct {
	// Mode is strict, flag or off ("" is knowledgecut.DefaultMode).
	Mode knowledgecut.Mode
	// Metadata is a local copy of arXiv's metadata snapshot
	// (--arxiv-metadata), checked by the command.
	Metadata string
	// OAI asks arXiv's OAI-PMH repository (Config.OAIBase) for the
	// histories nothing cheaper settles, one GetRecord a paper; never
	// under Mode off. Without it such a source is left unpinned.
	OAI bool
	// Harvests are the OAI-PMH sets harvested in full before the first
	// GetRecord ("" is the whole repository), stored and resumed.
	Harvests []string
}

// mode is the knowledge cut's mode, its default filled in.
func (k Knowledge) mode() knowledgecut.Mode {
	if k.Mode == "" {
		return knowledgecut.DefaultMode
	}
	return k.Mode
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
	// Mode is llm.ModeSync ("" too) or llm.ModeBatch: requests go through
	// the provider's batch API at the batch price, and a target whose
	// answers wait in a batch waits (see App.Run).
	Mode string
	// Wait is how long, in all, a run in batch mode waits for its batches
	// before it ends with targets waiting; 0 submits and ends at once
	// (the next run collects).
	Wait time.Duration
	// PollInterval is the least time between two looks at a pending
	// batch (0: the llm package's default).
	PollInterval time.Duration
	// BatchMaxTokens is the provider's queue limit on the model's pending
	// batches' input tokens (llm.BatchConfig.MaxEnqueuedTokens; 0: none).
	BatchMaxTokens int64
}

// StageOptions configure the stages.
type StageOptions struct {
	Force, Refresh bool
	// Refetch fetches pages again even when the store holds them.
	Refetch                         bool
	ClassifyBudget, SummarizeBudget int
	Plausibility                    classify.Plausibility
	// MinGrounding is summarize.Stage.MinGrounding.
	MinGrounding   float64
	IncludeSuspect bool
	// PostKnowledge is the most papers citing a target after its
	// knowledge cutoff the post-knowledge stage keeps; 0 turns it off.
	PostKnowledge int
}

// App is an opened store with every stage configured. Its fields are for
// commands that work below the table (fetch's per-paper report, topics).
type App struct {
	Log    *slog.Logger
	Store  *store.Store
	HTTP   *httpx.Client
	Meter  *llm.Meter
	Prices llm.Prices
	Model  string // the LLM model, or "heuristic"
	// LLM is what the stages ask: nil for the heuristic; in sync mode the
	// Client under the run's budget, in batch mode the Batcher.
	LLM llm.Completer
	// Sync is the Client under the run's budget in either mode, for calls
	// that cannot wait for a batch; nil for the heuristic.
	Sync    llm.Completer
	Client  *llm.Client  // nil for the heuristic
	Batcher *llm.Batcher // nil unless in batch mode

	// Fetcher fetches arXiv pages for the fetch and sources stages (and
	// says which papers are known to have none).
	Fetcher *fetch.Fetcher
	OAI     *oaipmh.Client // nil without Config.OAIBase
	// Grobid and PDFFetcher are nil without Config.PDF.GrobidBase.
	Grobid     *grobid.Client
	PDFFetcher *oapdf.Fetcher

	// stages is the stage table (see table), wired to the clients above;
	// lifecycle records each stage's work on each item in the store.
	stages    Table
	lifecycle *pipeline.Lifecycle
	s2        *s2.Client
	arxivAPI  *arxivapi.Client
	pdfStage  *pdfs.Stage // nil without Config.PDF.GrobidBase

	cfg      Config
	unlock   func() error
	stopping *atomic.Bool // set when a run stops on a full disk
	// waitUntil ends the run's waiting for batches (batch mode); set when
	// it first waits.
	waitUntil time.Time
	batchErr  error // why the last submission was incomplete
	// collectedSeen is the Batcher's Collected count at the last settle.
	collectedSeen int64

	robots *robots.Checker
	// pdfRobots applies the PDF hosts' robots.txt, each at its first
	// request; a Checker of its own (over the same stored files) since a
	// host such as arxiv.org is paced apart as a PDF host.
	pdfRobots *robots.Checker
	crawlMu   sync.Mutex
	crawled   bool

	archives    *archiveSet // nil without Config.Net.HTMLArchives
	archiveMu   sync.Mutex
	archiveOpen bool

	// parseBudget bounds the memory of the parses of pages and TEI in
	// flight at once, across the fetch, sources and pdfs workers.
	parseBudget *membudget.Budget

	// snapshot is the arXiv metadata snapshot (Config.Knowledge.Metadata),
	// opened by the versions stage when a run needs it; nil without one.
	snapshot *versions.SnapshotFile
}

// ParseBudget is the bound on the memory the parses in flight hold at
// once, as latexml.Cost and tei.Cost weigh them: the largest single parse
// (a tree at its bound, and its page at the download cap), so that such a
// parse runs alone, while real papers' pages (a few MB of estimate each)
// run many at a time.
const ParseBudget = latexml.MaxTreeBytes + latexml.MaxPageBytes

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
	if cfg.Heal {
		st.Heal(log)
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

// OpenStoreReadOnly opens the store in dir for reading only
// (store.OpenReadOnly): nothing there is created or changed. A path
// without a store, another program's ledger.db or a ledger this curate
// cannot read without migrating it is ErrCannotRun.
func OpenStoreReadOnly(ctx context.Context, dir string) (*store.Store, error) {
	st, err := store.OpenReadOnly(ctx, dir)
	if err != nil {
		return nil, Fail(ErrCannotRun, err)
	}
	return st, nil
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
		literalInterval(arxivapi.ServiceConfig(cfg.S2.ArxivAPIBase, cfg.Net.ArxivInterval), cfg.Net.ArxivInterval),
	}
	if cfg.OAIBase != "" {
		services = append(services, literalInterval(oaipmh.ServiceConfig(cfg.OAIBase, cfg.Net.ArxivInterval), cfg.Net.ArxivInterval))
	}
	if !cfg.LLM.Heuristic {
		services = append(services, lcfg.ServiceConfig())
	}
	if cfg.PDF.GrobidBase != "" {
		services = append(services, grobid.ServiceConfig(cfg.PDF.GrobidBase, cfg.PDF.Capacity, cfg.PDF.Timeout))
	}
	retries := cfg.Net.Retries
	if retries == 0 {
		retries = -1 // httpx reads 0 as its default; the flag's 0 means none
	}
	var err error
	ua := httpx.UserAgent(cfg.Version, cfg.Net.Mailto)
	var transport http.RoundTripper
	if cfg.Net.Dial != nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext, t.Proxy = cfg.Net.Dial, nil
		transport = t
	}
	a.HTTP, err = httpx.New(httpx.Config{
		UserAgent: ua,
		Timeout:   cfg.Net.Timeout,
		MaxBody:   cfg.Net.MaxBody,
		RetryMax:  retries,
		Logger:    a.Log,
		Secrets:   a.secrets(),
		Transport: transport,
		// The first interrupt: no request sleeps before a retry.
		Stop: cfg.Drain,
	}, services...)
	if err != nil {
		return err
	}
	svc := func(name string) *httpx.Service { s, _ := a.HTTP.Service(name); return s }
	if a.robots, err = robots.New(robots.Config{UserAgent: ua, Cache: robotsStore{a.Store}, TTL: cfg.Net.RobotsTTL, Logger: a.Log}); err != nil {
		return err
	}
	if a.s2, err = s2.New(svc(s2.ServiceName), s2.Options{PageLimit: cfg.S2.PageLimit, Logger: a.Log}); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if a.arxivAPI, err = arxivapi.New(svc(arxivapi.ServiceName), arxivapi.Options{Logger: a.Log}); err != nil {
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
		budget := llm.Budget{MaxTokens: cfg.LLM.BudgetTokens, MaxUSD: cfg.LLM.BudgetUSD, Prices: cfg.LLM.Prices}
		a.Sync = llm.WithBudget(c, a.Meter, budget)
		a.LLM = a.Sync
		if cfg.LLM.Mode == llm.ModeBatch {
			// The budget is checked before each submission, at the batch
			// price, with what is submitted and not answered yet counted.
			b, err := llm.NewBatcher(c, llm.BatchConfig{Store: a.Store, PollInterval: cfg.LLM.PollInterval, Budget: budget, MaxEnqueuedTokens: cfg.LLM.BatchMaxTokens})
			if err != nil {
				return fmt.Errorf("%w: --llm-mode batch: %v", ErrUsage, err)
			}
			a.Batcher, a.LLM = b, b
		}
	}
	a.parseBudget = membudget.New(ParseBudget)
	a.Fetcher = &fetch.Fetcher{Arxiv: svc(fetch.ServiceArxiv), Ar5iv: svc(fetch.ServiceAr5iv), Store: a.Store, Log: a.Log, MissingTTL: cfg.Net.MissingTTL,
		ParseBudget: a.parseBudget, Refetch: cfg.Stages.Refetch}
	if len(cfg.Net.HTMLArchives) > 0 {
		a.archives = newArchiveSet(cfg.Net.HTMLArchives, a.Log)
		a.Fetcher.Archive = a.archives
	}
	if cfg.PDF.GrobidBase != "" {
		if err := a.buildPDFs(svc(grobid.ServiceName), retries); err != nil {
			return err
		}
	}
	if cfg.Knowledge.Metadata != "" {
		a.snapshot = &versions.SnapshotFile{Path: cfg.Knowledge.Metadata, IndexDir: filepath.Join(a.Store.Dir(), "index"), Log: a.Log}
	}
	a.lifecycle = &pipeline.Lifecycle{Ledger: a.Store}
	a.stages = table(a)
	return nil
}

// secrets are every credential of the run, for both HTTP clients to
// redact: a PDF host or a proxy in front of it may echo the keys of the
// other services too.
func (a *App) secrets() []string {
	return append(slices.Clone(a.cfg.Net.Secrets), a.cfg.S2.Key, a.cfg.LLM.Client.APIKey)
}

// unreachable reports a request to one of the run's configured services
// (not a PDF host from remote data) whose host name does not resolve: the
// run cannot go on, and the error that ends it names the host.
func (a *App) unreachable(err error) (*httpx.NoSuchHostError, bool) {
	var nh *httpx.NoSuchHostError
	if !errors.As(err, &nh) {
		return nil, false
	}
	if _, e := a.HTTP.Service(nh.Service); e != nil {
		return nil, false
	}
	return nh, true
}

// offline is the error of a run stopped by a host that does not resolve:
// exit 2, once, with the host named.
func offlineError(nh *httpx.NoSuchHostError) error {
	return Fail(ErrCannotRun, fmt.Errorf("cannot reach %s: no such host; is the machine online? (the %s service)", nh.Host, nh.Service))
}

// Close releases the store's lock, if taken, and closes the store.
func (a *App) Close() error {
	a.archives.close()
	a.snapshot.Close()
	if a.unlock != nil {
		a.unlock()
		a.unlock = nil
	}
	return a.Store.Close()
}

// literalInterval gives sc the interval as configured: the arXiv API's
// and OAI-PMH's ServiceConfig read 0 as their 3s default, where
// --arxiv-interval 0 means none for every arXiv service.
func literalInterval(sc httpx.ServiceConfig, d time.Duration) httpx.ServiceConfig {
	sc.Interval = d
	return sc
}

// Services lists the remote services a run may call, in a fixed order.
func (a *App) Services() []string {
	var out []string
	for _, n := range []string{fetch.ServiceArxiv, fetch.ServiceAr5iv, s2.ServiceName, arxivapi.ServiceName, oaipmh.ServiceName, llm.DefaultService, grobid.ServiceName} {
		if _, err := a.HTTP.Service(n); err == nil {
			out = append(out, n)
		}
	}
	return out
}
