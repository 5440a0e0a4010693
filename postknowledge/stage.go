package postknowledge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/record"
)

// Name is the stage's name.
const Name = "post-knowledge"

// Store is what the stage reads and writes (*store.Store).
type Store interface {
	record.Getter
	record.Putter
}

// Stage is the post-knowledge stage: with N set, one Semantic Scholar
// citations request per target (paged), the N most influential papers
// citing it first published after its knowledge cutoff, stored under
// record.PostKnowledgeSets; off without N.
type Stage struct {
	Store Store
	S2    Citer
	// N is the most papers kept per target; 0 turns the stage off.
	N int
	// Refresh asks S2 again even when the store holds the target's
	// post-knowledge (the papers citing it keep coming).
	Refresh bool
	Log     *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (s *Stage) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// Declare is the post-knowledge stage's row of the stage table. Its field
// is in every instance, on or off: the papers kept, an empty list for a
// target it has not run for when it is off.
func (s *Stage) Declare() pipeline.Decl {
	kind := record.PostKnowledgeSets.Name()
	f := pipeline.FieldFrom(record.FieldPostKnowledge, kind,
		"the papers citing the target first published after its knowledge cutoff, the most influential first: paper_id, arxiv_id, title, abstract, date, date_from, year, venue, influential, citation_count, influential_citation_count; empty without --post-knowledge",
		func(r *record.PostKnowledge) []record.CitingPaper {
			if r.Papers == nil {
				return []record.CitingPaper{}
			}
			return r.Papers
		})
	pipeline.CountsOf(f, func(v *[]record.CitingPaper) []pipeline.Count {
		influential := 0
		for _, p := range *v {
			if p.Influential {
				influential++
			}
		}
		return []pipeline.Count{{What: "papers citing their target after its cutoff", N: len(*v)}, {What: "of them influential citations", N: influential}}
	})
	d := pipeline.Decl{
		Name: Name, About: "the papers citing the target after its knowledge cutoff, the N most influential (--post-knowledge N)", Workers: 2,
		Reads:    []string{record.ArxivMetas.Name()},
		Optional: []string{record.PaperVersionSets.Name()},
		Writes:   []string{kind},
		Before:   []string{"citegraph"},
		Requests: []pipeline.Request{{Service: s2.ServiceName, Count: pipeline.PerItem, N: 1}},
		Field:    f,
	}
	if s.N <= 0 {
		d.Off = "needs --post-knowledge N (the N most influential papers citing each target after its knowledge cutoff)"
		d.Requests = nil
		f.Absent = json.RawMessage(`[]`)
	}
	return d
}

// Do collects or reuses one target's post-knowledge. A stored record for
// the same cutoff is reused when it keeps at least N papers, or every
// paper after the cutoff S2 listed (then only its N changes); a smaller
// N keeps the most influential of the stored ones. Only a larger N, a
// cutoff that moved or Refresh asks S2 again.
func (s *Stage) Do(ctx context.Context, key string) (string, error) {
	if s.N <= 0 {
		return "", fmt.Errorf("post-knowledge %s: the stage is off (no --post-knowledge N)", key)
	}
	cutoff, err := s.cutoff(ctx, key)
	if err != nil {
		return "", err
	}
	if !s.Refresh {
		old, ok, err := record.PostKnowledgeSets.Lookup(ctx, s.Store, key)
		switch {
		case err != nil:
			s.log().Warn("stored post-knowledge unreadable; asking again", "target", key, "err", err)
		case ok && old.Cutoff.Equal(cutoff.UTC()):
			if old.N == s.N {
				return pipeline.Reused, nil
			}
			if old.N > s.N || old.After <= len(old.Papers) {
				old.Papers = old.Papers[:min(s.N, len(old.Papers))]
				old.N = s.N
				if _, err := record.PostKnowledgeSets.Put(ctx, s.Store, key, old, nil); err != nil {
					return "", fmt.Errorf("post-knowledge %s: %w", key, err)
				}
				return pipeline.Done, nil
			}
		}
	}
	pk, err := Collect(ctx, s.S2, key, cutoff, s.N, Options{FirstPublished: s.firstPublished, Now: s.Now})
	if err != nil {
		return "", err
	}
	if _, err := record.PostKnowledgeSets.Put(ctx, s.Store, key, &pk, nil); err != nil {
		return "", fmt.Errorf("post-knowledge %s: %w", key, err)
	}
	s.log().Debug("post-knowledge", "target", key, "cutoff", cutoff.Format(time.DateOnly), "citations", pk.Citations,
		"after", pk.After, "kept", len(pk.Papers), "complete", pk.Complete)
	return pipeline.Done, nil
}

// cutoff is the target's knowledge cutoff, its v1 date: from its version
// history when the store has it, else the v1 date the arXiv API gave.
func (s *Stage) cutoff(ctx context.Context, key string) (time.Time, error) {
	if v, ok, err := record.PaperVersionSets.Lookup(ctx, s.Store, key); err != nil {
		return time.Time{}, fmt.Errorf("post-knowledge %s: %w", key, err)
	} else if ok {
		c, err := knowledgecut.Cutoff(*v)
		if err == nil {
			return c, nil
		}
		s.log().Warn("the target's version history gives no cutoff; taking the arXiv API's v1 date", "target", key, "err", err)
	}
	if d, ok, err := s.arxivV1(ctx, key); err != nil || ok {
		return d, err
	}
	return time.Time{}, fmt.Errorf("post-knowledge %s: %w", key, errNoCutoff)
}

var errNoCutoff = errors.New("no knowledge cutoff: neither the target's version history nor its arXiv v1 date is stored (the citegraph stage reads the date from the arXiv API)")

// arxivV1 is the v1 date the arXiv API gave for the paper id, if the store
// holds it.
func (s *Stage) arxivV1(ctx context.Context, id string) (time.Time, bool, error) {
	m, ok, err := record.ArxivMetas.Lookup(ctx, s.Store, id)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("post-knowledge %s: %w", id, err)
	}
	if ok && m.Found && m.Entry != nil && !m.Entry.Published.IsZero() {
		return m.Entry.Published, true, nil
	}
	return time.Time{}, false, nil
}

// firstPublished is a citing paper's arXiv v1 date when the store holds
// its version history or its arXiv API entry: asked of nothing.
func (s *Stage) firstPublished(ctx context.Context, arxivID string) (time.Time, error) {
	if v, ok, err := record.PaperVersionSets.Lookup(ctx, s.Store, arxivID); err == nil && ok {
		if c, err := knowledgecut.Cutoff(*v); err == nil {
			return c, nil
		}
	}
	d, _, err := s.arxivV1(ctx, arxivID)
	return d, err
}
