package versions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

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
// knowledgecut's.
type Stage struct {
	Store Store
	// Snapshot, when set, is the metadata snapshot (--arxiv-metadata):
	// Prepare opens it, building its index when the file is new.
	Snapshot *SnapshotFile
	// OAI is arXiv's OAI-PMH repository, asked for what the snapshot and
	// the store lack; nil asks nothing (the knowledge cut is off, or no
	// repository is configured).
	OAI Repository
	// Harvests are OAI-PMH harvests (--oai-harvest) Prepare runs before
	// the first target: every history they hold is stored, so those
	// papers cost no GetRecord. A harvest stored as complete is not
	// asked again.
	Harvests []oaipmh.Query
	// IncludeSuspect works on a target whose selections are suspect.
	IncludeSuspect bool
	Log            *slog.Logger
	// Off, when set, says why the stage is off.
	Off string

	mu  sync.Mutex
	res *Resolver
}

func (s *Stage) Declare() pipeline.Decl {
	d := pipeline.Decl{
		Name: Name, About: "each target's and its sources' arXiv version histories (--arxiv-metadata, else OAI-PMH) and where each stood at the target's knowledge cutoff, its v1 date",
		Workers:  2,
		Reads:    []string{record.Graphs.Name(), record.SelectionSets.Name()},
		Optional: []string{record.PaperVersionSets.Name()},
		Writes:   []string{record.KnowledgeCuts.Name(), record.PaperVersionSets.Name()},
		Off:      s.Off,
	}
	if s.OAI != nil {
		// One GetRecord per paper no snapshot, harvest or earlier run
		// answered (Count counts them).
		d.Requests = []pipeline.Request{{Service: oaipmh.ServiceName, Count: pipeline.PerSource, Self: true}}
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
	cfg := Config{Store: s.Store, Logger: s.Log}
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
	if cut.TargetPin, hist, err = s.paper(ctx, r, key); err != nil {
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
	for _, ref := range refs {
		id, err := arxiv.Parse(ref.ArxivID)
		if err != nil {
			continue // no arXiv versions: its card comes from its abstract or PDF
		}
		sp := record.SourcePin{RefKey: ref.Key}
		var h *record.PaperVersions
		if sp.PaperPin, h, err = s.paper(ctx, r, record.Key(id)); err != nil {
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
// a snapshot or a repository given since may have it).
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
		if sp.Pin == nil {
			return false
		}
		have = append(have, sp.RefKey+"\x00"+sp.ArxivID)
	}
	return slices.Equal(want, have)
}

// paper looks one paper's history up. A paper no source has a usable
// history of is recorded as unknown (nil history); what fails otherwise
// (a request, the store) is the error.
func (s *Stage) paper(ctx context.Context, r *Resolver, key string) (record.PaperPin, *record.PaperVersions, error) {
	l, err := r.Versions(ctx, key)
	pp := record.PaperPin{ArxivID: key, Fallback: l.Fallback}
	switch {
	case err == nil:
		pp.From = l.Versions.From
		pp.Versions = l.Versions.Versions
		return pp, &l.Versions, nil
	case ctx.Err() != nil:
		return pp, nil, err
	case errors.Is(err, ErrNoSource), errors.Is(err, ErrUnknownPaper), errors.Is(err, record.ErrNoV1), !l.Asked:
		// Known not to be had: no request can change it this run (a line
		// of the snapshot that cannot be read, with no repository to ask,
		// is such too).
		pp.Unknown = err.Error()
		s.log().WarnContext(ctx, "paper's version history unknown", slog.String("paper", key), slog.String("why", err.Error()))
		return pp, nil, nil
	}
	return pp, nil, err
}

// Count counts the GetRecord requests the run's targets would still
// make: one per paper (a target, a source on arXiv) that neither the
// snapshot nor the store holds, the sources of targets not classified
// yet taken at the mean of the classified ones (pipeline.Counter).
func (s *Stage) Count(ctx context.Context, keys []string, _ pipeline.Request) (float64, []string, error) {
	var notes []string
	r, err := s.resolver(ctx, false)
	if errors.Is(err, arxivmeta.ErrNotIndexed) {
		// The run indexes it first; the papers it holds cost nothing.
		return 0, []string{"the arXiv metadata snapshot is not indexed yet: every paper is counted as in it (a run indexes it first, and asks OAI-PMH only for papers it lacks)"}, nil
	}
	if err != nil {
		return 0, nil, err
	}
	ids := append([]string(nil), keys...)
	chosen, sources, unknown := 0, 0, 0
	for _, k := range keys {
		if c, ok, err := record.KnowledgeCuts.Lookup(ctx, s.Store, k); err == nil && ok && c.TargetPin.Pin != nil {
			continue // recorded: nothing more is asked for it
		}
		set, err := record.Sources(ctx, s.Store, k)
		if err != nil {
			unknown++
			continue
		}
		chosen++
		for _, ref := range set.Refs {
			if _, err := arxiv.Parse(ref.ArxivID); err == nil {
				ids = append(ids, ref.ArxivID)
				sources++
			}
		}
	}
	p, err := r.Plan(ctx, ids)
	if err != nil {
		return 0, nil, err
	}
	per := defaultSources
	switch {
	case chosen > 0:
		per = float64(sources) / float64(chosen)
	case unknown > 0:
		notes = append(notes, fmt.Sprintf("no target has its sources chosen yet: %.1f sources on arXiv per target are assumed, none of them known", defaultSources))
	}
	n := float64(len(p.Ask)) + float64(unknown)*per
	pages, whole, err := s.harvestsLeft(ctx)
	if err != nil {
		return 0, nil, err
	}
	if pages > 0 {
		// A harvest's size is not known before its first answer (arXiv
		// sends no list size): its first page is counted.
		notes = append(notes, fmt.Sprintf("%d OAI-PMH harvest(s) not done yet: their first pages are counted, and about one more request per 1,000 records of the set follows", pages))
		if whole {
			notes = append(notes, "the harvest of the whole repository holds every paper: no GetRecord is counted")
			n = 0
		} else {
			notes = append(notes, "a GetRecord is counted for each paper not stored yet, though the harvests may hold it")
		}
		n += float64(pages)
	}
	if p.FromSnapshot > 0 || p.Stored > 0 {
		notes = append(notes, fmt.Sprintf("%d papers' histories are in the metadata snapshot and %d stored: no request for them", p.FromSnapshot, p.Stored))
	}
	return n, notes, nil
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
