// Package postknowledge finds a target's post-knowledge: the papers that
// cite it and were first published after its knowledge cutoff (its v1
// date), from Semantic Scholar's citations endpoint, the N most
// influential kept. An idea-evaluation benchmark grounds its judgement in
// what was known before the cutoff and draws revision suggestions from
// what came after (InnoEval). Stage is the post-knowledge stage, a row
// of the stage table, off without --post-knowledge N.
package postknowledge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// Citer is what Collect needs of Semantic Scholar (*s2.Client): one
// paged citations request per target.
type Citer interface {
	Citations(ctx context.Context, paperID string) (*s2.CitationList, error)
}

// Options tune Collect.
type Options struct {
	// FirstPublished, when set, gives a citing paper's arXiv v1 date (from
	// the version histories): a paper on arXiv before the cutoff and in a
	// journal after it is not post-knowledge, whatever S2's date says. An
	// error leaves S2's date.
	FirstPublished func(ctx context.Context, arxivID string) (time.Time, error)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Collect asks S2 for the papers citing target (an arXiv ID) and keeps
// the n most influential of those first published after cutoff (see
// Select). n must be at least 1.
func Collect(ctx context.Context, c Citer, target string, cutoff time.Time, n int, opts Options) (record.PostKnowledge, error) {
	a, err := arxiv.Parse(target)
	if err != nil {
		return record.PostKnowledge{}, fmt.Errorf("post-knowledge of %q: %w", target, err)
	}
	key := record.Key(a)
	fail := func(err error) (record.PostKnowledge, error) {
		return record.PostKnowledge{}, fmt.Errorf("post-knowledge of %s: %w", key, err)
	}
	switch {
	case n < 1:
		return fail(fmt.Errorf("keep %d papers: want at least 1", n))
	case cutoff.IsZero():
		return fail(errors.New("no knowledge cutoff"))
	}
	list, err := c.Citations(ctx, s2.ArxivPaperID(key))
	if err != nil {
		return fail(err)
	}
	papers := make([]record.CitingPaper, 0, len(list.Citations))
	for _, ct := range list.Citations {
		p := FromS2(ct)
		if p.PaperID == "" {
			continue
		}
		if opts.FirstPublished != nil && p.ArxivID != "" {
			if d, err := opts.FirstPublished(ctx, p.ArxivID); err == nil && !d.IsZero() {
				p.Date, p.Year, p.DateFrom = d.UTC().Format(time.DateOnly), d.UTC().Year(), record.DateFromArxiv
			}
		}
		papers = append(papers, p)
	}
	pk := Select(papers, cutoff, n)
	pk.Target = key
	pk.Citations = len(list.Citations)
	pk.Complete = list.Complete()
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	pk.FetchedAt = now().UTC()
	return pk, nil
}

// FromS2 converts a Semantic Scholar citation into the record's shape.
func FromS2(c s2.Citation) record.CitingPaper {
	p := c.CitingPaper
	out := record.CitingPaper{
		PaperID: p.PaperID, ArxivID: p.ArxivID(), Title: strings.TrimSpace(p.Title), Venue: strings.TrimSpace(p.Venue),
		Influential: c.IsInfluential, DateFrom: record.DateFromS2,
	}
	if p.Abstract != nil {
		out.Abstract = strings.TrimSpace(*p.Abstract)
	}
	if p.PublicationDate != nil {
		if d, err := time.Parse(time.DateOnly, *p.PublicationDate); err == nil {
			out.Date, out.Year = d.Format(time.DateOnly), d.Year()
		}
	}
	if out.Year == 0 && p.Year != nil {
		out.Year = *p.Year
	}
	if p.CitationCount != nil {
		out.CitationCount = *p.CitationCount
	}
	if p.InfluentialCitationCount != nil {
		out.InfluentialCitationCount = *p.InfluentialCitationCount
	}
	return out
}

// Placement is where a citing paper falls against a cutoff.
type Placement int

const (
	// Before: first published on or before the cutoff's day.
	Before Placement = iota
	// After: first published after the cutoff's day: post-knowledge.
	After
	// Undated: only a year is known, and it is the cutoff's (or none).
	Undated
)

// Place says where p falls against cutoff, by UTC day: a paper of the
// cutoff's own day may have been written knowing the target's idea or
// not, so it is not counted after.
func Place(p record.CitingPaper, cutoff time.Time) Placement {
	day := cutoff.UTC().Format(time.DateOnly)
	switch {
	case p.Date != "" && p.Date > day:
		return After
	case p.Date != "":
		return Before
	case p.Year > cutoff.UTC().Year():
		return After
	case p.Year != 0 && p.Year < cutoff.UTC().Year():
		return Before
	}
	return Undated
}

// Select keeps, of papers, those first published after cutoff (Place),
// the n most influential first: S2's influential citations first, then
// by the citing paper's influential citations, then its citations, then
// the earliest, then by paper ID, so the choice is the same on every run.
// A paper listed twice counts once. It fills Cutoff, N, Papers and the
// counts of what was dropped; the caller fills the rest.
func Select(papers []record.CitingPaper, cutoff time.Time, n int) record.PostKnowledge {
	pk := record.PostKnowledge{Cutoff: cutoff.UTC(), N: n, Papers: []record.CitingPaper{}}
	var after []record.CitingPaper
	seen := map[string]bool{}
	for _, p := range papers {
		if seen[p.PaperID] {
			continue
		}
		seen[p.PaperID] = true
		switch Place(p, cutoff) {
		case After:
			after = append(after, p)
		case Before:
			pk.Before++
		default:
			pk.Undated++
		}
	}
	pk.After = len(after)
	slices.SortStableFunc(after, func(a, b record.CitingPaper) int {
		if a.Influential != b.Influential {
			if a.Influential {
				return -1
			}
			return 1
		}
		return cmp.Or(
			cmp.Compare(b.InfluentialCitationCount, a.InfluentialCitationCount),
			cmp.Compare(b.CitationCount, a.CitationCount),
			cmp.Compare(a.Date, b.Date),
			cmp.Compare(a.PaperID, b.PaperID),
		)
	})
	pk.Papers = append(pk.Papers, after[:min(n, len(after))]...)
	return pk
}
