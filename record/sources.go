package record

import (
	"context"
	"errors"
	"fmt"
)

// MinSources is the fewest sources a target needs to become a dataset
// instance (the recipe drops targets with two or fewer): the stages
// working per source leave a target with fewer alone, and the dataset
// drops it.
const MinSources = 3

// SourceRef is a source of a target as the classify stage chose it: a
// reference of the target's Graph whose Selection says RoleSource.
type SourceRef struct {
	Key       string // the reference's key in the target (e.g. "bib.bib12"; see RefKeys)
	ArxivID   string // with or without version; "" when it has none
	S2PaperID string
	Title     string
	Abstract  string // Semantic Scholar's, for sources without full text
}

// SourceSet is what the stages working per source (sources, pdfs,
// summarize) read of a target: its sources in edge order, and why its
// selections are suspect, if they are.
type SourceSet struct {
	Refs    []SourceRef
	Suspect []string
}

// ErrStale marks selections made for other edges than the stored ones.
var ErrStale = errors.New("selections are stale: classify again")

// Sources returns the sources of the target stored under key, from its
// Graph and Selections.
func Sources(ctx context.Context, st Getter, key string) (*SourceSet, error) {
	g, _, err := Graphs.Get(ctx, st, key)
	if err != nil {
		return nil, fmt.Errorf("sources of %s: no edges (run citegraph first): %w", key, err)
	}
	sel, _, err := SelectionSets.Get(ctx, st, key)
	if err != nil {
		return nil, fmt.Errorf("sources of %s: no selections (run classify first): %w", key, err)
	}
	keys := RefKeys(g.Edges)
	edgeOf := make(map[string]*Edge, len(keys))
	for i, k := range keys {
		edgeOf[k] = &g.Edges[i]
	}
	set := &SourceSet{Suspect: sel.Suspect}
	for _, s := range sel.Selections {
		if s.Role != RoleSource {
			continue
		}
		e := edgeOf[s.RefKey]
		if e == nil {
			return nil, fmt.Errorf("sources of %s: selection %q names no edge: %w", key, s.RefKey, ErrStale)
		}
		set.Refs = append(set.Refs, SourceRef{
			Key: s.RefKey, ArxivID: deref(e.ArxivID), S2PaperID: deref(e.S2PaperID),
			Title: deref(e.Title), Abstract: deref(e.Abstract),
		})
	}
	return set, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Working returns the sources the stages working per source work on, or
// why the target goes no further: its selections are suspect and
// includeSuspect is off (held lists why), or it has fewer than MinSources
// sources, so it cannot become an instance (refs and held are nil).
func (s *SourceSet) Working(includeSuspect bool) (refs []SourceRef, held []string) {
	switch {
	case len(s.Suspect) > 0 && !includeSuspect:
		return nil, s.Suspect
	case len(s.Refs) < MinSources:
		return nil, nil
	}
	return s.Refs, nil
}
