package versions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/parse/arxivmeta"
	"github.com/groundwork/curate/record"
)

// Known returns the history a lookup would start from for the paper id
// names, without asking anything: what the snapshot and the store hold
// (the arXiv API entry the citegraph feed stored for a target too), read
// together; ok is false when only a request could tell. It may be known
// in part, or read before a later cutoff: knowledgecut.PinAt refuses a
// pin inside what it lacks, and the run asks again for a cutoff after it
// was read. For the estimate, which makes no request.
func (r *Resolver) Known(ctx context.Context, id string) (record.PaperVersions, bool, error) {
	a, err := arxiv.Parse(id)
	if err != nil {
		return record.PaperVersions{}, false, fmt.Errorf("versions of %q: %w", id, err)
	}
	p := &paper{key: record.Key(a), cutoffs: []time.Time{{}}}
	if err := r.look(ctx, p, false); err != nil {
		return record.PaperVersions{}, false, fmt.Errorf("versions of %s: %w", p.key, err)
	}
	if p.best == nil || p.best.Check() != nil {
		return record.PaperVersions{}, false, nil
	}
	return *p.best, true, nil
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
