package versions

import (
	"context"
	"errors"
	"fmt"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/parse/arxivmeta"
	"github.com/groundwork/curate/record"
)

// Known returns the history Versions would give for the paper id names
// without asking anything: the snapshot's (or a later one stored), else
// the stored one; ok is false when only a request could tell. For the
// estimate, which makes no request.
func (r *Resolver) Known(ctx context.Context, id string) (record.PaperVersions, bool, error) {
	a, err := arxiv.Parse(id)
	if err != nil {
		return record.PaperVersions{}, false, fmt.Errorf("versions of %q: %w", id, err)
	}
	key := record.Key(a)
	stored, ok, err := record.PaperVersionSets.Lookup(ctx, r.cfg.Store, key)
	if err != nil {
		return record.PaperVersions{}, false, fmt.Errorf("versions of %s: %w", key, err)
	}
	usable := ok && stored.Check() == nil
	if r.cfg.Snapshot != nil {
		if v, err := r.cfg.Snapshot.Versions(key); err == nil && v.Check() == nil {
			if usable && stored.AsOf.After(v.AsOf) {
				return *stored, true, nil
			}
			return v, true, nil
		}
	}
	if usable && (r.cfg.MaxAge <= 0 || r.cfg.Now().Sub(stored.AsOf) <= r.cfg.MaxAge) {
		return *stored, true, nil
	}
	return record.PaperVersions{}, false, nil
}

// Histories returns the stage's Resolver for Known, the snapshot opened
// without building its index; nil when the snapshot is not indexed yet
// (the run indexes it first, so the estimate knows none of it).
func (s *Stage) Histories(ctx context.Context) (*Resolver, error) {
	r, err := s.resolver(ctx, false)
	if errors.Is(err, arxivmeta.ErrNotIndexed) {
		return nil, nil
	}
	return r, err
}
