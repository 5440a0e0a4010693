package pairs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// Options are the rules of a pair (see the package documentation).
type Options struct {
	FromYear, ToYear int
	// TestFrom is the dataset's cutoff: targets first published on or
	// after it are test targets, never paired.
	TestFrom          time.Time
	MaxMonths         int
	MinRatio          float64
	MinGap            int
	MinInfluentialGap int
	// Only, when set, restricts the targets to these versionless arXiv IDs
	// (a published dataset's train split).
	Only []string
}

// DefaultOptions are the paper's rules.
func DefaultOptions() Options {
	return Options{
		FromYear: 2022, ToYear: 2023, TestFrom: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		MaxMonths: 4, MinRatio: 3, MinGap: 10, MinInfluentialGap: 5,
	}
}

// Check refuses options no pair can satisfy.
func (o Options) Check() error {
	switch {
	case o.FromYear < 1991 || o.ToYear < o.FromYear:
		return fmt.Errorf("years %d–%d: want 1991 ≤ from ≤ to", o.FromYear, o.ToYear)
	case o.MaxMonths < 0:
		return fmt.Errorf("max months %d: want 0 or more", o.MaxMonths)
	case o.MinRatio < 1 || math.IsNaN(o.MinRatio) || math.IsInf(o.MinRatio, 0):
		return fmt.Errorf("min ratio %v: want a number ≥ 1", o.MinRatio)
	case o.MinGap < 0 || o.MinInfluentialGap < 0:
		return fmt.Errorf("min gaps %d and %d: want 0 or more", o.MinGap, o.MinInfluentialGap)
	case o.TestFrom.IsZero():
		return errors.New("no test cutoff")
	}
	return nil
}

// Paper is what the store says of one target, as a pair uses it.
type Paper struct {
	ArxivID   string `json:"arxiv_id"`
	Title     string `json:"title"`
	Published string `json:"published"` // arXiv v1 date, YYYY-MM-DD
	Category  string `json:"primary_category,omitempty"`
	S2PaperID string `json:"s2_paper_id,omitempty"`
	// Citations and Influential are Semantic Scholar's citationCount and
	// influentialCitationCount, read at CountsReadAt (RFC 3339).
	Citations    int    `json:"citations"`
	Influential  int    `json:"influential_citations"`
	CountsReadAt string `json:"counts_read_at"`
	// Gold is the paper's gold card, the rewrite's input.
	Gold     *record.Card `json:"-"`
	Abstract string       `json:"-"`
	date     time.Time
}

// Considered is one target and what became of it.
type Considered struct {
	ArxivID string `json:"arxiv_id"`
	Status  string `json:"status"` // a Status constant
	Detail  string `json:"detail,omitempty"`
	Paper   *Paper `json:"paper,omitempty"` // when it was readable
}

// Statuses of a Considered target.
const (
	StatusPaired         = "paired"
	StatusUnpaired       = "no_pair"               // eligible, but no other paper meets the rules with it
	StatusOutOfRange     = "out_of_range"          // published outside FromYear..ToYear
	StatusTest           = "test_target"           // on or after the cutoff
	StatusNotListed      = "not_in_train_split"    // Options.Only leaves it out
	StatusNoS2           = "no_s2_record"          // no stored Semantic Scholar record
	StatusS2NotFound     = "s2_not_found"          // Semantic Scholar does not know it
	StatusNoInfluential  = "no_influential_count"  // the stored record lacks influentialCitationCount
	StatusNoGold         = "no_gold_card"          // no gold card to rewrite
	StatusNoDate         = "no_v1_date"            // no arXiv v1 date
	StatusRewriteRejects = "rewrite_rejected"      // its idea-only summary failed CheckSummary
	StatusRewriteFailed  = "rewrite_failed"        // the rewriter failed
	StatusRewritePending = "rewrite_pending"       // its rewrite waits in an LLM batch
	StatusInvalidID      = "invalid_id"            // not an arXiv ID
	StatusNoGraph        = "no_citegraph_metadata" // no citegraph record
)

// Records is what Load needs of a store; *store.Store has it.
type Records interface {
	record.Getter
	record.Lister
}

// Load reads every target of the store (those with a citegraph Graph) and
// returns the papers eligible for a pair and every target considered,
// the ineligible ones with their reason. A store that cannot be read is
// an error.
func Load(ctx context.Context, st Records, o Options) ([]*Paper, []Considered, error) {
	ids, err := record.Graphs.Items(ctx, st)
	if err != nil {
		return nil, nil, fmt.Errorf("load pair candidates: %w", err)
	}
	slices.Sort(ids)
	var only map[string]bool
	if o.Only != nil {
		only = map[string]bool{}
		for _, id := range o.Only {
			only[id] = true
		}
	}
	var papers []*Paper
	var all []Considered
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		p, status, detail, err := loadPaper(ctx, st, id, o, only)
		if err != nil {
			return nil, nil, fmt.Errorf("load pair candidate %s: %w", id, err)
		}
		all = append(all, Considered{ArxivID: id, Status: status, Detail: detail, Paper: p})
		if status == "" {
			papers = append(papers, p)
		}
	}
	return papers, all, nil
}

// loadPaper reads one target; status is "" when it is eligible.
func loadPaper(ctx context.Context, st Records, id string, o Options, only map[string]bool) (p *Paper, status, detail string, err error) {
	g, _, err := record.Graphs.Get(ctx, st, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, StatusNoGraph, "", nil
		}
		return nil, "", "", err
	}
	p = &Paper{ArxivID: id, Title: g.Meta.Title, Published: g.Meta.Published, Category: g.Meta.PrimaryCategory, S2PaperID: g.Meta.S2PaperID}
	if p.date, err = time.Parse(time.DateOnly, p.Published); err != nil {
		return p, StatusNoDate, fmt.Sprintf("published %q", p.Published), nil
	}
	switch {
	case only != nil && !only[id]:
		return p, StatusNotListed, "", nil
	case !p.date.Before(o.TestFrom):
		return p, StatusTest, "first published on or after " + o.TestFrom.Format(time.DateOnly), nil
	case p.date.Year() < o.FromYear || p.date.Year() > o.ToYear:
		return p, StatusOutOfRange, fmt.Sprintf("published %s, not in %d–%d", p.Published, o.FromYear, o.ToYear), nil
	}
	s2, rec, err := record.S2Papers.Get(ctx, st, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return p, StatusNoS2, "no " + record.S2Papers.Name() + " record: run curate citegraph", nil
	case err != nil:
		return nil, "", "", err
	case !s2.Found || s2.Paper == nil:
		return p, StatusS2NotFound, "", nil
	case s2.Paper.CitationCount == nil:
		return p, StatusNoInfluential, "the stored Semantic Scholar record has no citationCount", nil
	case s2.Paper.InfluentialCitationCount == nil:
		return p, StatusNoInfluential, "the stored Semantic Scholar record has no influentialCitationCount (citegraph must ask for it)", nil
	}
	p.Citations, p.Influential = *s2.Paper.CitationCount, *s2.Paper.InfluentialCitationCount
	p.CountsReadAt = rec.UpdatedAt.UTC().Format(time.RFC3339)
	p.S2PaperID = cmp.Or(p.S2PaperID, s2.Paper.PaperID)
	res, _, err := record.Summaries.Lookup(ctx, st, id)
	if err != nil {
		return nil, "", "", err
	}
	if res == nil || res.Gold.Card == nil {
		return p, StatusNoGold, "no gold card: run curate summarize", nil
	}
	p.Gold = res.Gold.Card
	doc, ok, err := record.Documents.Lookup(ctx, st, id)
	if err != nil {
		return nil, "", "", err
	}
	if ok {
		p.Abstract = doc.Abstract
	}
	return p, "", "", nil
}

// Claim is why a pair is a pair: the numbers each rule compares.
type Claim struct {
	Year           int     `json:"year"`
	DaysApart      int     `json:"days_apart"`
	WithinMonths   int     `json:"within_months"`
	CitationRatio  float64 `json:"citation_ratio"`
	CitationGap    int     `json:"citation_gap"`
	InfluentialGap int     `json:"influential_gap"`
}

// Judge checks the rules on two papers and returns the winner first and
// the claim, or ok false.
func Judge(a, b *Paper, o Options) (winner, loser *Paper, c Claim, ok bool) {
	if a.Citations < b.Citations || a.Citations == b.Citations && a.ArxivID > b.ArxivID {
		a, b = b, a
	}
	first, second := a.date, b.date
	if second.Before(first) {
		first, second = second, first
	}
	c = Claim{
		Year: a.date.Year(), DaysApart: int(second.Sub(first).Hours() / 24), WithinMonths: o.MaxMonths,
		CitationGap: a.Citations - b.Citations, InfluentialGap: a.Influential - b.Influential,
		CitationRatio: math.Inf(1),
	}
	if b.Citations > 0 {
		c.CitationRatio = float64(a.Citations) / float64(b.Citations)
	}
	ok = a.date.Year() == b.date.Year() &&
		!second.After(first.AddDate(0, o.MaxMonths, 0)) &&
		c.CitationRatio >= o.MinRatio && c.CitationGap >= o.MinGap &&
		a.Influential > 0 && b.Influential > 0 && c.InfluentialGap >= o.MinInfluentialGap
	return a, b, c, ok
}

// candidate is a pair of papers that meets the rules.
type candidate struct {
	winner, loser *Paper
	claim         Claim
}

// candidates are every pair of papers that meets the rules, closest in
// time first, then by larger citation ratio, then by IDs.
func candidates(papers []*Paper, o Options) []candidate {
	sorted := slices.Clone(papers)
	slices.SortFunc(sorted, func(a, b *Paper) int { return cmp.Or(a.date.Compare(b.date), cmp.Compare(a.ArxivID, b.ArxivID)) })
	var out []candidate
	for i, a := range sorted {
		limit := a.date.AddDate(0, o.MaxMonths, 0)
		for _, b := range sorted[i+1:] {
			if b.date.After(limit) {
				break
			}
			if w, l, c, ok := Judge(a, b, o); ok {
				out = append(out, candidate{w, l, c})
			}
		}
	}
	slices.SortStableFunc(out, func(x, y candidate) int {
		return cmp.Or(cmp.Compare(x.claim.DaysApart, y.claim.DaysApart), cmp.Compare(y.claim.CitationRatio, x.claim.CitationRatio),
			cmp.Compare(x.winner.ArxivID, y.winner.ArxivID), cmp.Compare(x.loser.ArxivID, y.loser.ArxivID))
	})
	return out
}
