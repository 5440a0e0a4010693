// Package versions gives each arXiv paper's version history — every
// version's number and submission date — from the cheapest source that
// has it: a local copy of arXiv's metadata snapshot (parse/arxivmeta,
// --arxiv-metadata), else the histories stored from OAI-PMH (a harvest's
// pages, or an earlier lookup), else one OAI-PMH GetRecord in arXivRaw,
// whose answer is stored so that no paper is asked about twice.
//
// A harvest (Harvest) reads a set's arXivRaw records a page at a time,
// storing the histories and its progress after each page: an interrupted
// harvest goes on from the page it reached, a complete one is not asked
// again, and GetRecord is left to the papers no harvest covered.
//
// Versions feed the knowledge cut (package knowledgecut): a target's
// cutoff is its v1 date, and each source is read at the version it had
// then. The package is a stage's building block and is not yet in the
// stage table.
package versions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/internal/keylock"
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
// has: not in the snapshot, not stored, and no repository to ask.
var ErrNoSource = errors.New("no source of version histories has it")

// ErrUnknownPaper is what Versions wraps for a paper the repository has
// no record of (OAI-PMH idDoesNotExist): an ID arXiv never issued, or one
// whose metadata is not out yet.
var ErrUnknownPaper = errors.New("arXiv has no record of the paper")

const prefix = "arXivRaw"

// Config is what a Resolver reads from.
type Config struct {
	// Snapshot is the local metadata snapshot; nil when there is none.
	Snapshot Snapshot
	// OAI is arXiv's OAI-PMH repository; nil sends no request (what the
	// snapshot and the store hold is all there is).
	OAI Repository
	// Store keeps the histories read from OAI-PMH and harvests' progress.
	Store Store
	// MaxAge, when positive, is how old a stored history may be (by its
	// AsOf) before it is asked for again: a paper revised since has a
	// version the stored one lacks. 0 keeps stored histories for good.
	MaxAge time.Duration
	// Logger receives a note for every paper the snapshot lacked; nil
	// discards.
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Resolver looks up version histories. It is safe for concurrent use
// when its Snapshot, OAI and Store are.
type Resolver struct {
	cfg Config
	log *slog.Logger
	// papers serializes lookups per paper: targets worked on at once
	// share papers, and the second lookup reads what the first stored
	// instead of asking OAI-PMH again.
	papers keylock.Locks
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
	return &Resolver{cfg: cfg, log: log}, nil
}

// Lookup is a version history and how it was found.
type Lookup struct {
	Versions record.PaperVersions
	// Fallback says why the snapshot did not give it ("" when it did, or
	// when there is no snapshot): the paper is missing from it, or its
	// line there cannot be used.
	Fallback string
	// Asked says a request was sent for it (GetRecord).
	Asked bool
}

// Versions returns the version history of the paper id names (with or
// without version). A paper missing from the snapshot, or whose history
// there cannot be used, falls back to the stored histories and OAI-PMH,
// and the Lookup says so. A history without v1 is an error wrapping
// record.ErrNoV1, naming where it was read.
func (r *Resolver) Versions(ctx context.Context, id string) (Lookup, error) {
	a, err := arxiv.Parse(id)
	if err != nil {
		return Lookup{}, fmt.Errorf("versions of %q: %w", id, err)
	}
	key := record.Key(a)
	defer r.papers.Lock(key)()
	var l Lookup
	// A failure keeps what the Lookup learned: whether it asked, and why
	// the snapshot did not answer.
	fail := func(err error) (Lookup, error) { return l, fmt.Errorf("versions of %s: %w", key, err) }
	var snapErr error
	if r.cfg.Snapshot != nil {
		v, err := r.cfg.Snapshot.Versions(key)
		if err == nil {
			return r.fromSnapshot(ctx, key, v)
		}
		snapErr = err
		l.Fallback = err.Error()
		if errors.Is(err, arxivmeta.ErrNotFound) {
			l.Fallback = "not in the arXiv metadata snapshot"
		}
		r.log.InfoContext(ctx, "paper's versions not in the arXiv metadata snapshot; asking OAI-PMH",
			slog.String("paper", key), slog.String("why", err.Error()))
	}
	stored, ok, err := record.PaperVersionSets.Lookup(ctx, r.cfg.Store, key)
	switch {
	case err != nil:
		return fail(err)
	case ok && stored.Check() == nil && (r.cfg.MaxAge <= 0 || r.cfg.Now().Sub(stored.AsOf) <= r.cfg.MaxAge):
		l.Versions = *stored
		return l, nil
	}
	if r.cfg.OAI == nil {
		if snapErr != nil && !errors.Is(snapErr, arxivmeta.ErrNotFound) {
			return fail(snapErr)
		}
		return fail(fmt.Errorf("%w (no snapshot holds it, none is stored, and OAI-PMH is not to be asked)", ErrNoSource))
	}
	rec, err := r.cfg.OAI.GetRecordFormat(ctx, key, prefix)
	l.Asked = true
	switch {
	case errors.Is(err, oaipmh.ErrIDDoesNotExist):
		return fail(fmt.Errorf("%w: %w", ErrUnknownPaper, err))
	case errors.Is(err, oaipmh.ErrNoV1):
		return fail(fmt.Errorf("%w (OAI-PMH arXivRaw): %w", record.ErrNoV1, err))
	case err != nil:
		return fail(err)
	case rec.Deleted:
		return fail(fmt.Errorf("%w: the repository lists it as deleted", ErrUnknownPaper))
	}
	v, err := historyOf(rec, record.VersionsFromGetRecord, r.cfg.Now())
	if err != nil {
		return fail(err)
	}
	if _, err := record.PaperVersionSets.Put(ctx, r.cfg.Store, key, &v, nil); err != nil {
		return fail(err)
	}
	l.Versions = v
	return l, nil
}

// fromSnapshot returns the snapshot's history v of key, unless the store
// holds one read later (a version submitted after the snapshot was made
// is in it), and stores it otherwise: the stored histories are then the
// record of every paper a cut used, whatever answered.
func (r *Resolver) fromSnapshot(ctx context.Context, key string, v record.PaperVersions) (Lookup, error) {
	stored, ok, err := record.PaperVersionSets.Lookup(ctx, r.cfg.Store, key)
	switch {
	case err != nil:
		return Lookup{}, fmt.Errorf("versions of %s: %w", key, err)
	case ok && stored.Check() == nil && stored.AsOf.After(v.AsOf):
		return Lookup{Versions: *stored}, nil
	case ok && slices.Equal(stored.Versions, v.Versions) && stored.From == v.From:
		return Lookup{Versions: v}, nil
	}
	if _, err := record.PaperVersionSets.Put(ctx, r.cfg.Store, key, &v, nil); err != nil {
		return Lookup{}, fmt.Errorf("versions of %s: %w", key, err)
	}
	return Lookup{Versions: v}, nil
}

// historyOf converts an arXivRaw record into a history read at asOf.
func historyOf(rec oaipmh.Record, from string, asOf time.Time) (record.PaperVersions, error) {
	v := record.PaperVersions{ID: rec.ID, From: from, AsOf: asOf.UTC()}
	if rec.Meta != nil {
		for _, x := range rec.Meta.Versions {
			v.Versions = append(v.Versions, record.PaperVersion{Version: x.N, Date: x.Date.UTC()})
		}
	}
	if err := v.Check(); err != nil {
		return record.PaperVersions{}, fmt.Errorf("OAI-PMH arXivRaw record %s: %w", rec.Identifier, err)
	}
	return v, nil
}

// Plan says what looking up ids would cost: how many the snapshot and
// the store answer, and which would be asked of OAI-PMH (one GetRecord
// each), for the estimate before a run.
type Plan struct {
	FromSnapshot, Stored int
	Ask                  []string // canonical IDs, one request each
	Invalid              []string // what is no arXiv ID
}

// Plan looks ids up without asking anything.
func (r *Resolver) Plan(ctx context.Context, ids []string) (Plan, error) {
	var p Plan
	seen := map[string]bool{}
	for _, id := range ids {
		a, err := arxiv.Parse(id)
		if err != nil {
			p.Invalid = append(p.Invalid, id)
			continue
		}
		key := record.Key(a)
		if seen[key] {
			continue
		}
		seen[key] = true
		if r.cfg.Snapshot != nil {
			if _, err := r.cfg.Snapshot.Versions(key); err == nil {
				p.FromSnapshot++
				continue
			}
		}
		stored, ok, err := record.PaperVersionSets.Lookup(ctx, r.cfg.Store, key)
		if err != nil {
			return p, fmt.Errorf("plan versions: %w", err)
		}
		if ok && stored.Check() == nil && (r.cfg.MaxAge <= 0 || r.cfg.Now().Sub(stored.AsOf) <= r.cfg.MaxAge) {
			p.Stored++
			continue
		}
		p.Ask = append(p.Ask, key)
	}
	return p, nil
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
