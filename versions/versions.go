// Package versions gives each arXiv paper's version history — every
// version's number and submission date — from the cheapest source that
// has it, as far as the knowledge cutoff it serves needs: a local copy of
// arXiv's metadata snapshot (parse/arxivmeta, --arxiv-metadata); else
// the histories stored (an earlier lookup, a harvest's pages, the arXiv
// API entries the citegraph feed stored for the targets); else the arXiv
// API, asked for many papers at once, whose entry gives v1's date and the
// latest version with its date; else, only for a paper the entry cannot
// settle (v3 or later, the cutoff strictly between v1's and the latest's
// dates), one OAI-PMH GetRecord in arXivRaw. Every answer is stored.
//
// A history read as of T is exact for any cutoff on or before T (a
// version submitted later is dated later), so a stored one is asked for
// again only when a cutoff after T needs it: a new target, later than
// the one it was read for, citing the same paper. A history known in
// part (an entry's) says so (record.PaperVersions.Partial), and no pin is
// made inside what it lacks (knowledgecut.ErrUnknownGap): with OAI-PMH
// not to be asked, such a paper is left unsettled (ErrUnsettled).
//
// A harvest (Harvest) reads a set's arXivRaw records a page at a time,
// storing the histories and its progress after each page: an interrupted
// harvest goes on from the page it reached, a complete one is not asked
// again, and GetRecord is left to the papers no harvest covered.
//
// Versions feed the knowledge cut (package knowledgecut): a target's
// cutoff is its v1 date, and each source is read at the version it had
// then (the versions stage, Stage).
package versions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/internal/keylock"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/parse/arxivmeta"
	"github.com/groundwork/curate/record"
)

// Snapshot is what Versions needs of a metadata snapshot
// (*arxivmeta.Snapshot): a paper's history, or an error wrapping
// arxivmeta.ErrNotFound for a paper it lacks.
type Snapshot interface {
	Versions(id string) (record.PaperVersions, error)
}

// API is what a Resolver needs of the arXiv API (*arxivapi.Client): the
// entries of ids, keyed by versionless canonical ID (one absent for a
// paper the API does not know), asked a hundred a request.
type API interface {
	Lookup(ctx context.Context, ids []string) (map[string]record.ArxivEntry, error)
}

// Repository is what Versions and Harvest need of OAI-PMH
// (*oaipmh.Client).
type Repository interface {
	ListPage(ctx context.Context, q oaipmh.Query, token string) (*oaipmh.Page, error)
	GetRecordFormat(ctx context.Context, id, prefix string) (oaipmh.Record, error)
}

// Store is where histories and harvests are kept (*store.Store).
type Store interface {
	record.Getter
	record.Putter
}

// ErrNoSource is what Versions wraps for a paper no source it may use
// has: not in the snapshot, not stored, and no service to ask.
var ErrNoSource = errors.New("no source of version histories has it")

// ErrUnknownPaper is what Versions wraps for a paper the repository has
// no record of (OAI-PMH idDoesNotExist): an ID arXiv never issued, or one
// whose metadata is not out yet.
var ErrUnknownPaper = errors.New("arXiv has no record of the paper")

// ErrUnsettled is what a Lookup wraps for a paper whose history, as far
// as it could be had without OAI-PMH, does not settle its pin at the
// cutoff: the cutoff falls among versions the history does not list, or
// after the history was read. The Lookup keeps that history: its dates
// are right, only the pin is not known.
var ErrUnsettled = errors.New("its version history does not settle the pin at the cutoff, and OAI-PMH is not to be asked")

const prefix = "arXivRaw"

// Config is what a Resolver reads from.
type Config struct {
	// Snapshot is the local metadata snapshot; nil when there is none.
	Snapshot Snapshot
	// API is the arXiv API, asked for the entries of papers the snapshot
	// and the store do not settle; nil asks nothing of it.
	API API
	// OAI is arXiv's OAI-PMH repository, asked for the papers nothing
	// cheaper settles; nil sends it no request (such papers are then
	// ErrUnsettled).
	OAI Repository
	// Store keeps the histories read and harvests' progress.
	Store Store
	// Logger receives a note for every paper the snapshot lacked; nil
	// discards.
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Resolver looks up version histories. It is safe for concurrent use
// when its Snapshot, API, OAI and Store are.
type Resolver struct {
	cfg Config
	log *slog.Logger
	// started is when the Resolver was made: a history read since is the
	// newest there can be for a cutoff after it (a target dated ahead of
	// the clock), and is not asked for again.
	started time.Time
	// papers serializes lookups per paper: targets worked on at once
	// share papers, and the second lookup reads what the first stored
	// instead of asking again.
	papers keylock.Locks
	// apiErr is the arXiv API's failure (past its retries), once it has
	// failed: the rest of the run does not ask it again, and asks OAI-PMH
	// instead.
	apiMu  sync.Mutex
	apiErr error
	// api is cfg.API with concurrent lookups sharing requests (nil
	// without cfg.API).
	api *batcher
}

// New returns a Resolver over cfg; the store is required.
func New(cfg Config) (*Resolver, error) {
	if cfg.Store == nil {
		return nil, errors.New("versions: no store")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Resolver{cfg: cfg, log: log, started: cfg.Now().UTC()}
	if cfg.API != nil {
		r.api = newBatcher(cfg.API)
	}
	return r, nil
}

// Query is one paper to look up, and the knowledge cutoff its history
// must settle the pin at: a source's, its target's v1 date; zero for a
// target, whose cutoff is its own v1 date, which any history gives.
type Query struct {
	ID     string // with or without version
	Cutoff time.Time
}

// Lookup is a version history and how it was found.
type Lookup struct {
	// Versions is the history found: one that settles the query, or with
	// Err wrapping ErrUnsettled the best there was.
	Versions record.PaperVersions
	// Fallback says why the snapshot did not give it ("" when it did, or
	// when there is no snapshot): the paper is missing from it, or its
	// line there cannot be used.
	Fallback string
	// Asked says a request was sent for it (the arXiv API, GetRecord).
	Asked bool
	// Err is why no history that settles the query was found (Resolve).
	Err error
}

// Versions returns the version history of the paper id names (with or
// without version), as a target needs it (Query's zero cutoff). A paper
// missing from the snapshot, or whose history there cannot be used,
// falls back to the store, the arXiv API and OAI-PMH, and the Lookup says
// so. A history without v1 is an error wrapping record.ErrNoV1, naming
// where it was read.
func (r *Resolver) Versions(ctx context.Context, id string) (Lookup, error) {
	l := r.Resolve(ctx, []Query{{ID: id}})[0]
	return l, l.Err
}

// paper is one paper of a Resolve: its queries and what is known of it.
type paper struct {
	key     string
	cutoffs []time.Time
	l       Lookup
	// best is what the sources read so far give (nil: nothing yet);
	// stored is what the store held, to write only what is new.
	best, stored *record.PaperVersions
	snapErr      error
	noEntry      bool // the arXiv API has no entry of it
	done         bool // settled, or failed (l.Err)
}

// Resolve looks up the papers qs name, each from the cheapest source
// that settles its pin at the query's cutoff (see the package's
// comment): what the snapshot and the store settle asks nothing; the
// others are asked of the arXiv API at once (a hundred a request), and
// what their entries cannot settle of OAI-PMH, one GetRecord each. The
// Lookups are in qs's order, each with its own Err.
func (r *Resolver) Resolve(ctx context.Context, qs []Query) []Lookup {
	out := make([]Lookup, len(qs))
	byKey := map[string]*paper{}
	var ps []*paper
	at := map[*paper][]int{}
	for i, q := range qs {
		a, err := arxiv.Parse(q.ID)
		if err != nil {
			out[i].Err = fmt.Errorf("versions of %q: %w", q.ID, err)
			continue
		}
		key := record.Key(a)
		p := byKey[key]
		if p == nil {
			p = &paper{key: key}
			byKey[key] = p
			ps = append(ps, p)
		}
		p.cutoffs = append(p.cutoffs, q.Cutoff)
		at[p] = append(at[p], i)
	}
	for _, p := range ps {
		r.local(ctx, p, true)
	}
	var open []*paper
	for _, p := range ps {
		if !p.done {
			open = append(open, p)
		}
	}
	// The arXiv API without the paper locks: lookups in flight share its
	// requests, and a paper one of them asks for already is not asked
	// again (batcher).
	r.fromAPI(ctx, open)
	open = slices.DeleteFunc(open, func(p *paper) bool { return p.done })
	if len(open) > 0 {
		// OAI-PMH, one GetRecord a paper, under the papers' locks, held in
		// key order so that two lookups sharing papers cannot wait on each
		// other; under them, what another lookup stored meanwhile is read
		// first.
		slices.SortFunc(open, func(a, b *paper) int { return cmp.Compare(a.key, b.key) })
		for _, p := range open {
			defer r.papers.Lock(p.key)()
		}
		for _, p := range open {
			r.restored(ctx, p)
			r.fromOAI(ctx, p)
		}
	}
	for _, p := range ps {
		for _, i := range at[p] {
			out[i] = p.l
		}
	}
	return out
}

// restored settles p with what another lookup stored of it since p was
// read, when that settles it.
func (r *Resolver) restored(ctx context.Context, p *paper) {
	stored, ok, err := record.PaperVersionSets.Lookup(ctx, r.cfg.Store, p.key)
	if err != nil || !ok || stored.Check() != nil {
		return // read as before; fromOAI asks
	}
	if best := merge(p.best, stored); r.settles(p, best) {
		p.best, p.stored = best, stored
		r.settle(ctx, p)
	}
}

// settles reports whether h settles p's pins: read as of each cutoff or
// later (or in this run, the newest there is), and pinning it without a
// guess. A zero cutoff (a target's) takes any history.
func (r *Resolver) settles(p *paper, h *record.PaperVersions) bool {
	if h == nil || h.Check() != nil {
		return false
	}
	return r.settleErr(p, h) == nil
}

// settleErr is why h does not settle p's pins (nil when it does).
func (r *Resolver) settleErr(p *paper, h *record.PaperVersions) error {
	for _, c := range p.cutoffs {
		if c.IsZero() {
			continue
		}
		if need := minTime(c, r.started); need.After(h.AsOf) {
			return fmt.Errorf("read as of %s, before the cutoff %s: a version submitted since may be the one of the cutoff",
				h.AsOf.UTC().Format(time.RFC3339), c.UTC().Format(time.RFC3339))
		}
		if _, err := knowledgecut.PinAt(*h, c); err != nil {
			return err
		}
	}
	return nil
}

// local reads what the snapshot and the store hold of p (see look) and
// settles p when that is enough; note says whether a snapshot's miss is
// noted and logged (once a lookup).
func (r *Resolver) local(ctx context.Context, p *paper, note bool) {
	if err := r.look(ctx, p, note); err != nil {
		p.l.Err, p.done = fmt.Errorf("versions of %s: %w", p.key, err), true
		return
	}
	if r.settles(p, p.best) {
		r.settle(ctx, p)
	}
}

// settle ends p with its best history, storing it when it is new.
func (r *Resolver) settle(ctx context.Context, p *paper) {
	p.done = true
	if err := r.keep(ctx, p); err != nil {
		p.l.Err = fmt.Errorf("versions of %s: %w", p.key, err)
		return
	}
	p.l.Versions = *p.best
}

// keep stores p's best history unless the store holds it already: the
// stored histories are the record of every paper a cut used, whatever
// answered.
func (r *Resolver) keep(ctx context.Context, p *paper) error {
	b, s := p.best, p.stored
	if s != nil && slices.Equal(s.Versions, b.Versions) && s.Partial == b.Partial && s.From == b.From && !b.AsOf.After(s.AsOf) {
		return nil
	}
	if _, err := record.PaperVersionSets.Put(ctx, r.cfg.Store, p.key, b, nil); err != nil {
		return err
	}
	p.stored = b
	return nil
}

// fromAPI asks the arXiv API, in one lookup, for the entries of the open
// papers it could help with: those with no history, or one read before a
// cutoff (an entry adds the latest version, not the ones before it).
func (r *Resolver) fromAPI(ctx context.Context, open []*paper) {
	if r.cfg.API == nil {
		return
	}
	var ask []*paper
	var ids []string
	for _, p := range open {
		if p.done || p.noEntry || p.best != nil && !r.stale(p, p.best) {
			continue
		}
		ask = append(ask, p)
		ids = append(ids, p.key)
	}
	if len(ids) == 0 {
		return
	}
	r.apiMu.Lock()
	down := r.apiErr
	r.apiMu.Unlock()
	var entries map[string]record.ArxivEntry
	err := down
	if down == nil {
		entries, err = r.api.Lookup(ctx, ids)
		if err != nil && ctx.Err() == nil {
			r.apiMu.Lock()
			if r.apiErr == nil {
				r.apiErr = err
				r.log.WarnContext(ctx, "the arXiv API failed: version histories are asked of OAI-PMH for the rest of the run (or, without it, those targets fail and the next run asks again)",
					slog.String("err", err.Error()), slog.Bool("oai_pmh", r.cfg.OAI != nil))
			}
			r.apiMu.Unlock()
		}
	}
	now := r.cfg.Now().UTC()
	for _, p := range ask {
		if down == nil {
			p.l.Asked = true
		}
		switch {
		case err != nil && r.cfg.OAI != nil && ctx.Err() == nil:
			continue // the next source: OAI-PMH
		case err != nil:
			p.l.Err, p.done = fmt.Errorf("versions of %s: arXiv API: %w", p.key, err), true
			continue
		}
		e, ok := entries[p.key]
		if !ok {
			p.noEntry = true
			continue
		}
		h, err := fromEntry(e, now)
		if err != nil {
			r.log.WarnContext(ctx, "arXiv API entry without a usable history", slog.String("paper", p.key), slog.String("why", err.Error()))
			continue
		}
		p.best = merge(p.best, &h)
		if err := r.keep(ctx, p); err != nil {
			p.l.Err, p.done = fmt.Errorf("versions of %s: %w", p.key, err), true
			continue
		}
		if r.settles(p, p.best) {
			r.settle(ctx, p)
		}
	}
}

// stale reports whether h was read before one of p's cutoffs (and before
// this run): a version submitted since may be the one of the cutoff.
func (r *Resolver) stale(p *paper, h *record.PaperVersions) bool {
	for _, c := range p.cutoffs {
		if !c.IsZero() && minTime(c, r.started).After(h.AsOf) {
			return true
		}
	}
	return false
}

// fromOAI asks OAI-PMH for p's whole history when nothing cheaper
// settled it, or says why it stays unsettled without OAI-PMH.
func (r *Resolver) fromOAI(ctx context.Context, p *paper) {
	if p.done {
		return
	}
	fail := func(err error) { p.l.Err, p.done = fmt.Errorf("versions of %s: %w", p.key, err), true }
	if r.cfg.OAI == nil {
		switch {
		case p.best != nil:
			p.l.Versions = *p.best
			fail(fmt.Errorf("%w: %w", ErrUnsettled, r.settleErr(p, p.best)))
		case p.snapErr != nil && !errors.Is(p.snapErr, arxivmeta.ErrNotFound) && r.cfg.API == nil:
			fail(p.snapErr)
		case p.snapErr != nil && !errors.Is(p.snapErr, arxivmeta.ErrNotFound):
			fail(fmt.Errorf("%w (the arXiv API has no entry of it, and OAI-PMH is not to be asked): %w", ErrNoSource, p.snapErr))
		case p.noEntry:
			fail(fmt.Errorf("%w (the arXiv API has no entry of it, and OAI-PMH is not to be asked)", ErrUnknownPaper))
		default:
			fail(fmt.Errorf("%w (no snapshot holds it, none is stored, and no service is to be asked)", ErrNoSource))
		}
		return
	}
	rec, err := r.cfg.OAI.GetRecordFormat(ctx, p.key, prefix)
	p.l.Asked = true
	switch {
	case errors.Is(err, oaipmh.ErrIDDoesNotExist):
		fail(fmt.Errorf("%w: %w", ErrUnknownPaper, err))
		return
	case errors.Is(err, oaipmh.ErrNoV1):
		fail(fmt.Errorf("%w (OAI-PMH arXivRaw): %w", record.ErrNoV1, err))
		return
	case err != nil:
		fail(err)
		return
	case rec.Deleted:
		fail(fmt.Errorf("%w: the repository lists it as deleted", ErrUnknownPaper))
		return
	}
	v, err := historyOf(rec, record.VersionsFromGetRecord, r.cfg.Now())
	if err != nil {
		fail(err)
		return
	}
	p.best = merge(p.best, &v)
	if !r.settles(p, p.best) {
		// The repository's record lacks versions too (a record skipping a
		// number): what is known is kept, and the pin left open.
		if err := r.keep(ctx, p); err != nil {
			fail(err)
			return
		}
		p.l.Versions = *p.best
		fail(fmt.Errorf("%w: %w", ErrUnsettled, r.settleErr(p, p.best)))
		return
	}
	r.settle(ctx, p)
}

// fromEntry is the history an arXiv API entry read at asOf gives: v1 at
// its published date and the latest version at its updated date, the
// versions between missing (Partial) from v3 on. Its AsOf is no earlier
// than the latest version's date.
func fromEntry(e record.ArxivEntry, asOf time.Time) (record.PaperVersions, error) {
	v := record.PaperVersions{ID: e.ID, From: record.VersionsFromArxivAPI, AsOf: maxTime(asOf, e.Updated).UTC()}
	switch {
	case e.Version < 1:
		return v, fmt.Errorf("arXiv API entry %s: no version in its id", e.ID)
	case e.Published.IsZero():
		return v, fmt.Errorf("arXiv API entry %s: no published date", e.ID)
	case e.Version > 1 && !e.Updated.After(e.Published):
		return v, fmt.Errorf("arXiv API entry %s: v%d dated %s, not after v1's %s", e.ID, e.Version, e.Updated.Format(time.RFC3339), e.Published.Format(time.RFC3339))
	}
	v.Versions = []record.PaperVersion{{Version: 1, Date: e.Published.UTC()}}
	if e.Version > 1 {
		v.Versions = append(v.Versions, record.PaperVersion{Version: e.Version, Date: e.Updated.UTC()})
	}
	v.Partial = e.Version > 2
	return v, v.Check()
}

// merge is what two readings of a paper's history say together: every
// version either lists (the later reading's date where both do), read
// as of the later of the two, from the later one's source; the versions
// neither lists below the latest are missing. Either may be nil.
func merge(a, b *record.PaperVersions) *record.PaperVersions {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	if b.AsOf.Before(a.AsOf) {
		a, b = b, a
	}
	dates := map[int]time.Time{}
	for _, x := range a.Versions {
		dates[x.Version] = x.Date
	}
	for _, x := range b.Versions {
		dates[x.Version] = x.Date
	}
	m := &record.PaperVersions{ID: b.ID, From: b.From, AsOf: b.AsOf}
	for n, d := range dates {
		m.Versions = append(m.Versions, record.PaperVersion{Version: n, Date: d})
	}
	slices.SortFunc(m.Versions, func(x, y record.PaperVersion) int { return x.Version - y.Version })
	m.Partial = len(m.Missing()) > 0
	if slices.Equal(m.Versions, b.Versions) && m.Partial == b.Partial {
		return b
	}
	if slices.Equal(m.Versions, a.Versions) && m.Partial == a.Partial {
		// The later reading adds nothing but its date.
		m.From = a.From
	}
	return m
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// historyOf converts an arXivRaw record into a history read at asOf.
func historyOf(rec oaipmh.Record, from string, asOf time.Time) (record.PaperVersions, error) {
	v := record.PaperVersions{ID: rec.ID, From: from, AsOf: asOf.UTC()}
	if rec.Meta != nil {
		for _, x := range rec.Meta.Versions {
			v.Versions = append(v.Versions, record.PaperVersion{Version: x.N, Date: x.Date.UTC()})
		}
	}
	v.Partial = len(v.Missing()) > 0
	if err := v.Check(); err != nil {
		return record.PaperVersions{}, fmt.Errorf("OAI-PMH arXivRaw record %s: %w", rec.Identifier, err)
	}
	return v, nil
}

// Plan says what looking papers up would cost: how many the snapshot and
// the store settle, which would be asked of the arXiv API (a hundred a
// request), and which of OAI-PMH for certain (one GetRecord each): what
// is known of them cannot settle their cutoffs, and an entry would add
// nothing. Of those asked of the API, some will need a GetRecord too
// (v3 or later, the cutoff between v1's and the latest's dates): that is
// not known before the API answers.
type Plan struct {
	Local     int
	API       []string // canonical IDs
	GetRecord []string // canonical IDs
	Invalid   []string // what is no arXiv ID
}

// Plan looks qs up without asking or writing anything.
func (r *Resolver) Plan(ctx context.Context, qs []Query) (Plan, error) {
	var pl Plan
	byKey := map[string]*paper{}
	var ps []*paper
	for _, q := range qs {
		a, err := arxiv.Parse(q.ID)
		if err != nil {
			pl.Invalid = append(pl.Invalid, q.ID)
			continue
		}
		key := record.Key(a)
		p := byKey[key]
		if p == nil {
			p = &paper{key: key}
			byKey[key] = p
			ps = append(ps, p)
		}
		p.cutoffs = append(p.cutoffs, q.Cutoff)
	}
	for _, p := range ps {
		if err := r.look(ctx, p, false); err != nil {
			return pl, fmt.Errorf("plan versions: %w", err)
		}
		switch {
		case r.settles(p, p.best):
			pl.Local++
		case r.cfg.API != nil && !p.noEntry && (p.best == nil || r.stale(p, p.best)):
			pl.API = append(pl.API, p.key)
		default:
			pl.GetRecord = append(pl.GetRecord, p.key)
		}
	}
	return pl, nil
}

// look reads what the snapshot and the store hold of p, in that order,
// until they settle it: the snapshot's line, the stored history, the
// arXiv API entry the citegraph feed stored for a target. It writes
// nothing; note says whether a snapshot's miss is noted in p's Lookup
// and logged.
func (r *Resolver) look(ctx context.Context, p *paper, note bool) error {
	if r.cfg.Snapshot != nil {
		v, err := r.cfg.Snapshot.Versions(p.key)
		switch {
		case err == nil:
			p.best = &v
		case note && errors.Is(err, arxivmeta.ErrNotFound):
			p.snapErr, p.l.Fallback = err, "not in the arXiv metadata snapshot"
			r.log.InfoContext(ctx, "paper's versions not in the arXiv metadata snapshot; looking in the store, then asking arXiv",
				slog.String("paper", p.key))
		case note:
			// A line of the file that cannot be used: the input is at
			// fault, and is said so.
			p.snapErr, p.l.Fallback = err, err.Error()
			r.log.WarnContext(ctx, "paper's versions in the arXiv metadata snapshot cannot be used; looking in the store, then asking arXiv",
				slog.String("paper", p.key), slog.String("why", err.Error()))
		}
	}
	stored, ok, err := record.PaperVersionSets.Lookup(ctx, r.cfg.Store, p.key)
	if err != nil {
		return err
	}
	if ok && stored.Check() == nil {
		p.stored = stored
		p.best = merge(p.best, stored)
	}
	if r.settles(p, p.best) {
		return nil
	}
	meta, ok, err := record.ArxivMetas.Lookup(ctx, r.cfg.Store, p.key)
	if err != nil {
		return err
	}
	p.noEntry = ok && !meta.Found
	if ok && meta.Found && meta.Entry != nil {
		asOf, _ := time.Parse(time.RFC3339, meta.CheckedAt)
		if h, err := fromEntry(*meta.Entry, asOf); err == nil {
			p.best = merge(p.best, &h)
		}
	}
	return nil
}

// harvestItem is the store item of a harvest's progress.
func harvestItem(q oaipmh.Query) string { return "oai-harvest:" + q.String() }

// Harvest runs the OAI-PMH harvest q in arXivRaw (q.MetadataPrefix is
// set to it), storing the version history of every record want accepts
// (every record when want is nil) and, after each page, the harvest's
// progress. A harvest stored as complete is returned as it is, without a
// request; one stored part way goes on from its token, and from its
// first page again when the repository refuses the token (arXiv's expire
// daily). A record that cannot be used (a history without v1) is skipped
// and counted. A history already stored from a later reading is kept.
func (r *Resolver) Harvest(ctx context.Context, q oaipmh.Query, want func(id string) bool) (record.OAIHarvest, error) {
	q.MetadataPrefix = prefix
	item := harvestItem(q)
	fail := func(h record.OAIHarvest, err error) (record.OAIHarvest, error) {
		return h, fmt.Errorf("harvest %s: %w", q, err)
	}
	if r.cfg.OAI == nil {
		return fail(record.OAIHarvest{}, errors.New("OAI-PMH is not to be asked"))
	}
	h := record.OAIHarvest{Query: q.String()}
	if stored, ok, err := record.OAIHarvests.Lookup(ctx, r.cfg.Store, item); err != nil {
		return fail(h, err)
	} else if ok {
		h = *stored
		if h.Complete {
			return h, nil
		}
		r.log.InfoContext(ctx, "oai-pmh harvest resumed", slog.String("query", h.Query), slog.Int("pages", h.Pages))
	}
	if h.Started.IsZero() {
		h.Started = r.cfg.Now().UTC()
	}
	restarted := false
	for !h.Complete {
		page, err := r.cfg.OAI.ListPage(ctx, q, h.Token)
		if errors.Is(err, oaipmh.ErrBadResumptionToken) && h.Token != "" && !restarted {
			// An expired token: the harvest starts again; its records are
			// upserts, so what was stored stays right.
			r.log.InfoContext(ctx, "oai-pmh resumption token refused; harvesting from the first page again",
				slog.String("query", h.Query), slog.Int("pages", h.Pages))
			restarted = true
			h = record.OAIHarvest{Query: h.Query, Started: h.Started}
			continue
		}
		if err != nil {
			return fail(h, err)
		}
		if h.Pages == 0 {
			h.ResponseDate = page.ResponseDate
		}
		asOf := cmp.Or(page.ResponseDate, r.cfg.Now().UTC())
		for _, rec := range page.Records {
			h.Records++
			if rec.Deleted || want != nil && !want(rec.ID) {
				continue
			}
			v, err := historyOf(rec, record.VersionsFromHarvest, asOf)
			if err != nil {
				h.Skipped++
				continue
			}
			if old, ok, err := record.PaperVersionSets.Lookup(ctx, r.cfg.Store, rec.ID); err == nil && ok && old.AsOf.After(v.AsOf) {
				continue
			}
			if _, err := record.PaperVersionSets.Put(ctx, r.cfg.Store, rec.ID, &v, nil); err != nil {
				return fail(h, err)
			}
			h.Stored++
		}
		h.Records += page.Skipped
		h.Skipped += page.Skipped
		h.Pages++
		h.Token = page.Token
		h.Complete = page.Token == ""
		h.Updated = r.cfg.Now().UTC()
		if _, err := record.OAIHarvests.Put(ctx, r.cfg.Store, item, &h, nil); err != nil {
			return fail(h, err)
		}
	}
	return h, nil
}
