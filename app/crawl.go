package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/archive"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/robots"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// robotsStore keeps robots.txt files in the store (record.RobotsFiles,
// under the file's URL), so a host's file is fetched once per TTL across
// runs rather than once per run.
type robotsStore struct{ st *store.Store }

func (c robotsStore) Load(ctx context.Context, url string) (robots.Entry, bool, error) {
	f, ok, err := record.RobotsFiles.Lookup(ctx, c.st, url)
	if err != nil || !ok {
		return robots.Entry{}, false, err
	}
	return robots.Entry{URL: f.URL, Fetched: f.Fetched, Status: f.Status, Body: f.Body}, true, nil
}

func (c robotsStore) Save(ctx context.Context, e robots.Entry) error {
	_, err := record.RobotsFiles.Put(ctx, c.st, e.URL, &record.RobotsFile{URL: e.URL, Fetched: e.Fetched, Status: e.Status, Body: e.Body}, nil)
	return err
}

// StoredRobots returns the robots.txt policy of a service's host as the
// store holds it, without asking the host (for estimates); ok is false
// when no copy is stored.
func StoredRobots(ctx context.Context, st *store.Store, svc *httpx.Service, userAgent string) (*robots.Policy, bool, error) {
	key := robots.FileURL(svc)
	f, ok, err := record.RobotsFiles.Lookup(ctx, st, key)
	if err != nil || !ok {
		return nil, false, err
	}
	// A Checker over a cache holding only this copy, with a TTL no copy
	// outlives, answers from it and never asks the host.
	c, err := robots.New(robots.Config{UserAgent: userAgent, TTL: time.Duration(math.MaxInt64),
		Cache: singleEntry{robots.Entry{URL: f.URL, Fetched: f.Fetched, Status: f.Status, Body: f.Body}}})
	if err != nil {
		return nil, false, err
	}
	pol, err := c.Policy(ctx, svc)
	return pol, err == nil, err
}

// singleEntry is a read-only robots.Cache holding one file.
type singleEntry struct{ e robots.Entry }

func (c singleEntry) Load(_ context.Context, url string) (robots.Entry, bool, error) {
	return c.e, url == c.e.URL, nil
}

func (singleEntry) Save(context.Context, robots.Entry) error {
	return errors.New("stored robots.txt: read only")
}

// htmlServices are the HTML hosts whose robots.txt a run honours.
var htmlServices = []string{fetch.ServiceArxiv, fetch.ServiceAr5iv}

// Crawl applies each HTML host's robots.txt to its service, once per App:
// the file comes from the store while fresh (Config.Net.RobotsTTL), else
// it is fetched (one request per host) and stored; its Disallow rules
// refuse paths before they are sent, and the interval becomes the larger
// of --arxiv-interval and its Crawl-delay unless IgnoreCrawlDelay says
// otherwise (then a warning is logged once per host). It returns the
// interval chosen for each host and why, for the start of the run and its
// summary.
func (a *App) Crawl(ctx context.Context) ([]robots.Pace, error) {
	a.crawlMu.Lock()
	defer a.crawlMu.Unlock()
	if a.crawled {
		return a.robots.Paces(), nil
	}
	for _, name := range htmlServices {
		svc, err := a.HTTP.Service(name)
		if err != nil {
			continue
		}
		if _, err := a.robots.Apply(ctx, svc, a.cfg.Net.ArxivInterval, a.cfg.Net.IgnoreCrawlDelay); err != nil {
			return nil, err
		}
	}
	a.crawled = true
	return a.robots.Paces(), nil
}

// Paces returns the intervals Crawl chose (none before it ran).
func (a *App) Paces() []robots.Pace { return a.robots.Paces() }

// PDFPaces returns the intervals chosen for the PDF hosts asked so far
// (none without --grobid).
func (a *App) PDFPaces() []robots.Pace {
	if a.pdfRobots == nil {
		return nil
	}
	return a.pdfRobots.Paces()
}

// archiveSet is the run's view of the --html-archive paths: an
// archive.Index of only the papers the run may need (targets, and the
// papers their references name as the run learns them), so an archive of
// millions of pages costs the memory of the few thousand wanted. A paper
// asked for that is not yet indexed makes the archives be indexed again
// with everything learnt so far, so the index grows in a few steps rather
// than one per paper.
type archiveSet struct {
	paths []string
	log   *slog.Logger

	mu      sync.RWMutex
	idx     *archive.Index
	indexed map[string]bool // canonical IDs the index was built for
	learned map[string]bool // canonical IDs learnt since, not yet indexed
	opens   int

	served atomic.Int64 // pages read from the archives
}

func newArchiveSet(paths []string, log *slog.Logger) *archiveSet {
	return &archiveSet{paths: paths, log: log, indexed: map[string]bool{}, learned: map[string]bool{}}
}

// ArchiveStats says what the archives did in a run.
type ArchiveStats struct {
	Sources  []archive.Source `json:"sources"`
	Indexed  int              `json:"papers_indexed"` // distinct papers in the index
	Wanted   int              `json:"papers_wanted"`  // papers the index was built for
	Served   int64            `json:"pages_served"`   // pages read this run
	Indexing int              `json:"indexings"`      // times the archives were indexed
}

func (s *archiveSet) stats() *ArchiveStats {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := &ArchiveStats{Wanted: len(s.indexed), Served: s.served.Load(), Indexing: s.opens}
	if s.idx != nil {
		st.Sources, st.Indexed = s.idx.Sources(), s.idx.Len()
	}
	return st
}

// learn notes papers the run may ask for.
func (s *archiveSet) learn(ids ...string) {
	if s == nil || len(ids) == 0 {
		return
	}
	var add []string
	s.mu.RLock()
	for _, id := range ids {
		if k, ok := canonical(id); ok && !s.indexed[k] && !s.learned[k] {
			add = append(add, k)
		}
	}
	s.mu.RUnlock()
	if len(add) == 0 {
		return
	}
	s.mu.Lock()
	for _, k := range add {
		if !s.indexed[k] {
			s.learned[k] = true
		}
	}
	s.mu.Unlock()
}

func canonical(id string) (string, bool) {
	a, err := arxiv.Parse(id)
	if err != nil {
		return "", false
	}
	return a.Canonical(), true
}

// open indexes the archives for keys and whatever was learnt.
func (s *archiveSet) open(keys []string) error {
	s.learn(keys...)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reindex()
}

// reindex builds the index anew for indexed ∪ learned; s.mu is held.
func (s *archiveSet) reindex() error {
	want := make(map[string]bool, len(s.indexed)+len(s.learned))
	for k := range s.indexed {
		want[k] = true
	}
	for k := range s.learned {
		want[k] = true
	}
	idx, err := archive.Open(archive.Options{Want: func(id arxiv.ID) bool { return want[id.Canonical()] }}, s.paths...)
	if err != nil {
		return fmt.Errorf("%w: --html-archive: %v", ErrUsage, err)
	}
	if s.idx != nil {
		s.idx.Close()
	}
	s.idx, s.indexed, s.learned = idx, want, map[string]bool{}
	s.opens++
	s.log.Debug("html archives indexed", "papers_wanted", len(want), "papers_found", idx.Len(), "indexing", s.opens)
	return nil
}

// Lookup is fetch.Archive's: a paper not yet indexed is indexed first
// (with every paper learnt since the last indexing).
func (s *archiveSet) Lookup(id string) (*archive.Page, error) {
	k, ok := canonical(id)
	if !ok {
		return nil, fmt.Errorf("archive: look up %q: %w", id, archive.ErrNotFound)
	}
	s.mu.RLock()
	if s.idx != nil && s.indexed[k] {
		p, err := s.idx.Lookup(id)
		s.mu.RUnlock()
		s.count(p)
		return p, err
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idx == nil || !s.indexed[k] {
		s.learned[k] = true
		if err := s.reindex(); err != nil {
			return nil, err
		}
	}
	p, err := s.idx.Lookup(id)
	s.count(p)
	return p, err
}

// has reports whether the index holds id (indexed for it already).
func (s *archiveSet) has(id string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.idx != nil && s.idx.Has(id)
}

func (s *archiveSet) count(p *archive.Page) {
	if p != nil {
		s.served.Add(1)
	}
}

func (s *archiveSet) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idx != nil {
		s.idx.Close()
		s.idx = nil
	}
}

// prepareFetch readies a run that fetches pages: robots.txt applied, the
// archives indexed for keys.
func (a *App) prepareFetch(ctx context.Context, keys []string) error {
	if _, err := a.Crawl(ctx); err != nil {
		return err
	}
	if a.archives != nil {
		a.archiveMu.Lock()
		defer a.archiveMu.Unlock()
		if !a.archiveOpen {
			if err := a.archives.open(keys); err != nil {
				return err
			}
			a.archiveOpen = true
		} else {
			a.archives.learn(keys...)
		}
	}
	return nil
}
