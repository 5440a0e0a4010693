package versions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/parse/arxivmeta"
	"github.com/groundwork/curate/record"
)

// Name is the versions stage's name in the ledger and the stage table.
const Name = "versions"

// defaultSources is the sources on arXiv a target not classified yet is
// taken to have, for the estimate (the recipe's order: 4.5 source pages
// per target).
const defaultSources = 4.5

// Stage is the versions stage: for each target, the version histories
// of the target and of its sources on arXiv, and where each stood at the
// target's knowledge cutoff, its v1 date (record.KnowledgeCuts). It
// needs the sources (after classify) and comes before the sources stage,
// which fetches each source at the version pinned here. Every decision is
// knowledgecut's; where the histories come from is the Resolver's.
type Stage struct {
	Store Store
	// Snapshot, when set, is the metadata snapshot (--arxiv-metadata):
	// Prepare opens it, building its index when the file is new.
	Snapshot *SnapshotFile
	// API is the arXiv API, asked (a target's papers at once) for the
	// entries of what the snapshot and the store do not settle; nil asks
	// nothing of it.
	API API
	// OAI is arXiv's OAI-PMH repository, asked for what nothing cheaper
	// settles; nil asks nothing (such sources are left unpinned).
	OAI Repository
	// Harvests are OAI-PMH harvests (--oai-harvest) Prepare runs before
	// the first target: every history they hold is stored, so those
	// papers cost no request. A harvest stored as complete is not asked
	// again.
	Harvests []oaipmh.Query
	// IncludeSuspect works on a target whose selections are suspect.
	IncludeSuspect bool
	Log            *slog.Logger
	// Now is the clock (time.Now when nil): a history stored as of a
	// time before a cutoff is asked for again.
	Now func() time.Time
	// Off, when set, says why the stage is off.
	Off string

	mu  sync.Mutex
	res *Resolver
}

func (s *Stage) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Stage) Declare() pipeline.Decl {
	d := pipeline.Decl{
		Name: Name, About: "each target's and its sources' arXiv version histories (--arxiv-metadata, the store, the arXiv API's entries, OAI-PMH for what they cannot settle) and where each stood at the target's knowledge cutoff, its v1 date",
		// It mostly waits on paced services, and the lookups of targets
		// in flight share arXiv API requests (batcher): more workers,
		// fuller requests.
		Workers:  8,
		Reads:    []string{record.Graphs.Name(), record.SelectionSets.Name()},
		Optional: []string{record.PaperVersionSets.Name(), record.ArxivMetas.Name()},
		Writes:   []string{record.KnowledgeCuts.Name(), record.PaperVersionSets.Name()},
		Off:      s.Off,
	}
	// Count counts both: a target's papers not settled by what is held
	// are asked of the API at once (at most one request a target: the
	// lookups of targets in flight share requests), and of OAI-PMH one
	// GetRecord each for what their entries cannot settle.
	if s.API != nil {
		d.Requests = append(d.Requests, pipeline.Request{Service: arxivapi.ServiceName, Count: pipeline.PerItem})
	}
	if s.OAI != nil {
		d.Requests = append(d.Requests, pipeline.Request{Service: oaipmh.ServiceName, Count: pipeline.PerSource, Self: true})
	}
	return d
}

func (s *Stage) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// resolver returns the stage's Resolver, made once; build says whether
// the snapshot's index may be built (not for an estimate, which writes
// nothing).
func (s *Stage) resolver(ctx context.Context, build bool) (*Resolver, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.res != nil {
		return s.res, nil
	}
	cfg := Config{Store: s.Store, Logger: s.Log, Now: s.Now}
	if s.API != nil {
		cfg.API = s.API
	}
	if s.OAI != nil {
		cfg.OAI = s.OAI
	}
	if s.Snapshot != nil {
		if err := s.Snapshot.Open(ctx, build); err != nil {
			return nil, err
		}
		cfg.Snapshot = s.Snapshot
	}
	r, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if build {
		s.res = r
	}
	return r, nil
}

// Prepare opens the snapshot (its index built before any request when
// the file is new) and runs the harvests.
func (s *Stage) Prepare(ctx context.Context, _ []string) (func(context.Context) error, error) {
	r, err := s.resolver(ctx, true)
	if err != nil {
		return nil, err
	}
	if s.OAI == nil {
		return nil, nil
	}
	for _, q := range s.Harvests {
		h, err := r.Harvest(ctx, q, nil)
		if err != nil {
			return nil, err
		}
		s.log().InfoContext(ctx, "oai-pmh harvest of version histories", slog.String("query", h.Query), slog.Int("pages", h.Pages),
			slog.Int("records", h.Records), slog.Int("stored", h.Stored), slog.Bool("complete", h.Complete))
	}
	return nil, nil
}

// Do records the target's knowledge cut: its cutoff and each source's
// pin. A paper whose history no source has (not in the snapshot, unknown
// to arXiv, without v1) is recorded as unknown, with why; a request that
// fails fails the target, which the next run retries.
func (s *Stage) Do(ctx context.Context, key string) (string, error) {
	set, err := record.Sources(ctx, s.Store, key)
	if err != nil {
		return "", err
	}
	refs, held := set.Working(s.IncludeSuspect)
	switch {
	case held != nil:
		return "", pipeline.Hold(pipeline.SuspectReason(held))
	case refs == nil:
		return pipeline.Skipped, nil
	}
	prev, ok, err := record.KnowledgeCuts.Lookup(ctx, s.Store, key)
	if err != nil {
		return "", err
	}
	if ok && complete(prev, key, refs) {
		return pipeline.Reused, nil
	}
	r, err := s.resolver(ctx, true)
	if err != nil {
		return "", err
	}
	cut := record.KnowledgeCut{Target: key, Sources: []record.SourcePin{}}
	var hist *record.PaperVersions
	if cut.TargetPin, hist, err = s.paper(ctx, key, r.Resolve(ctx, []Query{{ID: key}})[0]); err != nil {
		return "", err
	}
	if hist == nil && strings.Contains(cut.TargetPin.Unknown, record.ErrNoV1.Error()) {
		// Bad input, not an unknown paper: the target's history lacks v1,
		// so it has no cutoff. Said, and asked again by the next run.
		return "", fmt.Errorf("versions of target %s: %s", key, cut.TargetPin.Unknown)
	}
	if hist != nil {
		if cut.Cutoff, err = knowledgecut.Cutoff(*hist); err != nil {
			return "", err
		}
		pin, err := knowledgecut.PinTarget(*hist)
		if err != nil {
			return "", err
		}
		cut.TargetPin.Pin = &pin
	}
	// The sources at once: what is held settles most, the rest share one
	// arXiv API lookup.
	var qs []Query
	var keys []string
	for _, ref := range refs {
		id, err := arxiv.Parse(ref.ArxivID)
		if err != nil {
			continue // no arXiv versions: its card comes from its abstract or PDF
		}
		qs = append(qs, Query{ID: record.Key(id), Cutoff: cut.Cutoff})
		keys = append(keys, ref.Key)
	}
	for i, l := range r.Resolve(ctx, qs) {
		sp := record.SourcePin{RefKey: keys[i]}
		var h *record.PaperVersions
		if sp.PaperPin, h, err = s.paper(ctx, qs[i].ID, l); err != nil {
			return "", err
		}
		if h != nil && !cut.Cutoff.IsZero() {
			pin, err := knowledgecut.PinAt(*h, cut.Cutoff)
			if err != nil {
				return "", err
			}
			sp.Pin = &pin
		}
		cut.Sources = append(cut.Sources, sp)
	}
	if _, err := record.KnowledgeCuts.Put(ctx, s.Store, key, &cut, nil); err != nil {
		return "", err
	}
	return pipeline.Done, nil
}

// complete reports whether a stored cut stands: made for the same
// sources, with every history found (an unknown one is looked for again:
// a snapshot or a repository given since may have it), or known not to
// exist at the cutoff (arXiv said it had no record, long enough after).
func complete(c *record.KnowledgeCut, key string, refs []record.SourceRef) bool {
	if c.Target != key || c.TargetPin.Pin == nil {
		return false
	}
	var want []string
	for _, ref := range refs {
		if id, err := arxiv.Parse(ref.ArxivID); err == nil {
			want = append(want, ref.Key+"\x00"+record.Key(id))
		}
	}
	var have []string
	for _, sp := range c.Sources {
		if sp.Pin == nil && !knowledgecut.UnknownStands(sp.PaperPin, c.Cutoff) {
			return false
		}
		have = append(have, sp.RefKey+"\x00"+sp.ArxivID)
	}
	return slices.Equal(want, have)
}

// paper makes the PaperPin of one paper's lookup l (its history, when
// it settles the pin). A paper no source has a usable history of is
// recorded as unknown (nil history), and one whose history does not
// settle its pin without OAI-PMH keeps that history, unpinned; what
// fails otherwise (a request, the store) is the error.
func (s *Stage) paper(ctx context.Context, key string, l Lookup) (record.PaperPin, *record.PaperVersions, error) {
	pp := record.PaperPin{ArxivID: key, Fallback: l.Fallback}
	switch err := l.Err; {
	case err == nil:
		pp.From, pp.Versions, pp.Partial = l.Versions.From, l.Versions.Versions, l.Versions.Partial
		return pp, &l.Versions, nil
	case ctx.Err() != nil:
		return pp, nil, err
	case errors.Is(err, ErrUnsettled):
		// Its dates are right, its pin not known: the version served now
		// is read, dated by this history.
		pp.From, pp.Versions, pp.Partial = l.Versions.From, l.Versions.Versions, l.Versions.Partial
		pp.Unknown = err.Error()
		s.log().InfoContext(ctx, "paper's version at the cutoff not known without OAI-PMH", slog.String("paper", key), slog.String("why", err.Error()))
		return pp, nil, nil
	case errors.Is(err, ErrNoSource), errors.Is(err, ErrUnknownPaper), errors.Is(err, record.ErrNoV1), !l.Asked:
		// Known not to be had: no request can change it this run (a line
		// of the snapshot that cannot be read, with no service to ask, is
		// such too).
		pp.Unknown = err.Error()
		if errors.Is(err, ErrUnknownPaper) && l.Asked {
			pp.UnknownAsOf = s.now().UTC()
		}
		s.log().WarnContext(ctx, "paper's version history unknown", slog.String("paper", key), slog.String("why", err.Error()))
		return pp, nil, nil
	default:
		return pp, nil, err
	}
}

// assumedGetRecordShare is the share of the papers asked of the arXiv
// API that are taken to need a GetRecord too (their entry cannot settle
// the pin) when the store shows none yet: an assumption, said in the
// estimate's notes.
const assumedGetRecordShare = 0.1

// Count counts the requests of r.Service the run's targets would still
// make (pipeline.Counter). Of the arXiv API: one lookup per target whose
// papers the snapshot and the store do not settle (a hundred papers a
// request); of OAI-PMH: one GetRecord per paper known to need one (what
// is held cannot settle its cutoff, and an entry would add nothing),
// plus, of the papers asked of the API, the share the store's cuts show
// needed one (else assumedGetRecordShare), and the first page of each
// harvest not done. Targets not classified yet are taken at the mean of
// the classified ones. A target's own history costs nothing here: the
// citegraph feed stores its entry.
func (s *Stage) Count(ctx context.Context, keys []string, req pipeline.Request) (float64, []string, error) {
	r, err := s.resolver(ctx, false)
	if errors.Is(err, arxivmeta.ErrNotIndexed) {
		// The run indexes it first; the papers it holds cost nothing.
		return 0, []string{"the arXiv metadata snapshot is not indexed yet: every paper is counted as in it (a run indexes it first, and asks arXiv only for papers it lacks)"}, nil
	}
	if err != nil {
		return 0, nil, err
	}
	var notes []string
	var api, get, asked, local float64
	chosen, unknown, sources := 0, 0, 0
	for _, k := range keys {
		set, err := record.Sources(ctx, s.Store, k)
		if err != nil {
			unknown++
			continue
		}
		refs, _ := set.Working(true)
		if c, ok, err := record.KnowledgeCuts.Lookup(ctx, s.Store, k); err == nil && ok && complete(c, k, refs) {
			continue // recorded: nothing more is asked for it
		}
		chosen++
		cutoff, held, noEntry, err := s.cutoff(ctx, r, k)
		if err != nil {
			return 0, nil, err
		}
		if !held && (noEntry || s.API == nil) {
			get++ // no entry of the target to come: OAI-PMH is asked
		}
		var qs []Query
		for _, ref := range refs {
			if id, err := arxiv.Parse(ref.ArxivID); err == nil {
				qs = append(qs, Query{ID: record.Key(id), Cutoff: cutoff})
			}
		}
		sources += len(qs)
		pl, err := r.Plan(ctx, qs)
		if err != nil {
			return 0, nil, err
		}
		local += float64(pl.Local)
		api += math.Ceil(float64(len(pl.API)) / arxivapi.MaxLookup)
		asked += float64(len(pl.API))
		get += float64(len(pl.GetRecord))
	}
	share, seen, err := s.getRecordShare(ctx)
	if err != nil {
		return 0, nil, err
	}
	if seen == 0 {
		share = assumedGetRecordShare
	}
	// Targets not classified yet: as the classified ones were, else one
	// lookup each of defaultSources sources none of which is held.
	perAPI, perAsked, perGet := 1.0, defaultSources, 0.0
	if chosen > 0 {
		perAPI, perAsked, perGet = api/float64(chosen), asked/float64(chosen), get/float64(chosen)
	}
	api += float64(unknown) * perAPI
	asked += float64(unknown) * perAsked
	get += float64(unknown) * perGet
	pages, whole, err := s.harvestsLeft(ctx)
	if err != nil {
		return 0, nil, err
	}
	if req.Service == arxivapi.ServiceName {
		if whole {
			// The harvest stores every paper first; only a cutoff after
			// its date asks again, which no estimate can tell.
			return 0, []string{"the harvest of the whole repository holds every paper: no arXiv API lookup for versions is counted (a target dated after the harvest's date still asks for its sources)"}, nil
		}
		if unknown > 0 && chosen == 0 {
			notes = append(notes, fmt.Sprintf("%d targets have no sources chosen yet: one arXiv API lookup each is counted for its sources' versions, at most (a target whose sources' histories are all held asks none)", unknown))
		}
		if local > 0 {
			notes = append(notes, fmt.Sprintf("%.0f papers' histories are in the metadata snapshot or the store: no request for them", local))
		}
		return api, notes, nil
	}
	if s.OAI == nil {
		return 0, nil, nil
	}
	n := get + asked*share
	if asked > 0 {
		how := fmt.Sprintf("the share of the papers read from the arXiv API or OAI-PMH in the store's cuts that needed a GetRecord (%d papers)", seen)
		if seen == 0 {
			how = "an assumption: the store shows no cut yet"
		}
		notes = append(notes, fmt.Sprintf("of the %.0f papers asked of the arXiv API, %.0f%% are taken to need an OAI-PMH GetRecord too (v3 or later, the cutoff between their v1 and latest dates; not known before the API answers): %s; at most %.0f",
			asked, 100*share, how, asked))
	}
	if pages > 0 {
		// A harvest's size is not known before its first answer (arXiv
		// sends no list size): its first page is counted.
		notes = append(notes, fmt.Sprintf("%d OAI-PMH harvest(s) not done yet: their first pages are counted, and about one more request per 1,000 records of the set follows", pages))
		if whole {
			notes = append(notes, "the harvest of the whole repository holds every paper: no GetRecord is counted")
			n = 0
		} else {
			notes = append(notes, "a GetRecord is counted for each paper the store does not settle, though the harvests may hold it")
		}
		n += float64(pages)
	}
	return n, notes, nil
}

// cutoff is target k's knowledge cutoff as far as the store and the
// snapshot tell without a request (held), else the first day of the
// month its ID names (the estimate's stand-in: the citegraph feed stores
// its entry before the stage runs); noEntry says the arXiv API is known
// not to have it.
func (s *Stage) cutoff(ctx context.Context, r *Resolver, k string) (cutoff time.Time, held, noEntry bool, err error) {
	p := &paper{key: k, cutoffs: []time.Time{{}}}
	if err := r.look(ctx, p, false); err != nil {
		return time.Time{}, false, false, err
	}
	if p.best != nil && p.best.Check() == nil {
		return p.best.Versions[0].Date, true, false, nil
	}
	if id, err := arxiv.Parse(k); err == nil && len(id.YYMM) == 4 {
		cutoff, _ = time.Parse("0601", id.YYMM)
	}
	return cutoff, false, p.noEntry, nil
}

// shareSample is the most cuts getRecordShare reads.
const shareSample = 200

// getRecordShare is the share of the papers read from the arXiv API or
// OAI-PMH GetRecord in the store's cuts (a sample of them) whose
// history came from GetRecord, and how many such papers it saw.
func (s *Stage) getRecordShare(ctx context.Context) (float64, int, error) {
	ls, ok := s.Store.(record.Lister)
	if !ok {
		return 0, 0, nil
	}
	items, err := record.KnowledgeCuts.Items(ctx, ls)
	if err != nil {
		return 0, 0, err
	}
	step := max(1, len(items)/shareSample)
	from := map[string]string{}
	for i := 0; i < len(items); i += step {
		c, ok, err := record.KnowledgeCuts.Lookup(ctx, s.Store, items[i])
		if err != nil || !ok {
			continue
		}
		for _, sp := range c.Sources {
			if sp.From == record.VersionsFromArxivAPI || sp.From == record.VersionsFromGetRecord {
				if from[sp.ArxivID] != record.VersionsFromGetRecord {
					from[sp.ArxivID] = sp.From
				}
			}
		}
	}
	n := 0
	for _, f := range from {
		if f == record.VersionsFromGetRecord {
			n++
		}
	}
	if len(from) == 0 {
		return 0, 0, nil
	}
	return float64(n) / float64(len(from)), len(from), nil
}

// harvestsLeft counts the configured harvests not stored as complete,
// and whether one of them is of the whole repository.
func (s *Stage) harvestsLeft(ctx context.Context) (int, bool, error) {
	if s.OAI == nil {
		return 0, false, nil
	}
	n, whole := 0, false
	for _, q := range s.Harvests {
		q.MetadataPrefix = prefix
		h, ok, err := record.OAIHarvests.Lookup(ctx, s.Store, harvestItem(q))
		if err != nil {
			return 0, false, err
		}
		if ok && h.Complete {
			continue
		}
		n++
		whole = whole || q.Set == ""
	}
	return n, whole, nil
}
