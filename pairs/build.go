package pairs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/groundwork/curate/client/llm"
)

// Pair is one validation pair: the paper with more uptake (Winner), the
// other (Loser), their idea-only summaries and the claim behind the pair.
type Pair struct {
	ID     string    `json:"pair_id"` // the two arXiv IDs in order, joined by "__"
	Winner PairPaper `json:"winner"`
	Loser  PairPaper `json:"loser"`
	Claim  Claim     `json:"claim"`
}

// PairPaper is a paper of a pair with its rewrite.
type PairPaper struct {
	Paper
	Rewrite Rewrite `json:"rewrite"`
}

// Result is what Build found.
type Result struct {
	Options Options `json:"options"`
	Pairs   []Pair  `json:"pairs"`
	// Considered lists every target of the store with what became of it.
	Considered []Considered `json:"-"`
	// Candidates counts the pairs of eligible papers that meet the rules,
	// before each paper is kept to one pair.
	Candidates int `json:"candidates"`
	// Rewriter names what wrote the summaries (llm.HeuristicModel for the
	// heuristic) and its prompt version.
	Rewriter, RewriterVersion string `json:"-"`
	// Pending lists the papers whose rewrite waits in an LLM provider's
	// batch (batch mode): the pairs they may form are left out until a
	// later build collects them.
	Pending []string `json:"-"`
}

// Build loads the store's targets, finds the pairs that meet o's rules,
// keeps each paper to one pair (closest in time first) and rewrites both
// papers of each pair with rw. A paper whose summary fails CheckSummary is
// left out (and its pair with it, so the next candidate can take its
// partner); any other rewriter error, such as an LLM endpoint refusing the
// key, is returned.
func Build(ctx context.Context, st Records, rw Rewriter, o Options) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("pairs: %w", err)
	}
	papers, considered, err := Load(ctx, st, o)
	if err != nil {
		return nil, err
	}
	cands := candidates(papers, o)
	res := &Result{Options: o, Candidates: len(cands), Considered: considered}
	used := map[string]bool{}
	rejected := map[string]string{}
	rewrites := map[string]Rewrite{}
	pending := map[string]bool{}
	rewrite := func(p *Paper) (bool, error) {
		if _, ok := rewrites[p.ArxivID]; ok || pending[p.ArxivID] {
			return true, nil
		}
		if _, bad := rejected[p.ArxivID]; bad {
			return false, nil
		}
		r, err := rw.Rewrite(ctx, p)
		if errors.Is(err, llm.ErrPending) {
			// Taken as written for now, so that the pairs after it are
			// asked for as they will be if it is; the build that has
			// the answer decides.
			pending[p.ArxivID] = true
			res.Pending = append(res.Pending, p.ArxivID)
			return true, nil
		}
		if errors.Is(err, ErrRejected) {
			rejected[p.ArxivID] = err.Error()
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if res.Rewriter == "" {
			res.Rewriter, res.RewriterVersion = r.Model, r.PromptVersion
		}
		rewrites[p.ArxivID] = r
		return true, nil
	}
	for _, c := range cands {
		if used[c.winner.ArxivID] || used[c.loser.ArxivID] {
			continue
		}
		okW, err := rewrite(c.winner)
		if err != nil {
			return nil, err
		}
		okL, err := rewrite(c.loser)
		if err != nil {
			return nil, err
		}
		if !okW || !okL {
			continue
		}
		used[c.winner.ArxivID], used[c.loser.ArxivID] = true, true
		if pending[c.winner.ArxivID] || pending[c.loser.ArxivID] {
			continue
		}
		ids := []string{c.winner.ArxivID, c.loser.ArxivID}
		slices.Sort(ids)
		res.Pairs = append(res.Pairs, Pair{
			ID:     ids[0] + "__" + ids[1],
			Winner: PairPaper{Paper: *c.winner, Rewrite: rewrites[c.winner.ArxivID]},
			Loser:  PairPaper{Paper: *c.loser, Rewrite: rewrites[c.loser.ArxivID]},
			Claim:  c.claim,
		})
	}
	for i, c := range res.Considered {
		switch {
		case c.Status != "":
		case pending[c.ArxivID]:
			res.Considered[i].Status = StatusRewritePending
		case used[c.ArxivID]:
			res.Considered[i].Status = StatusPaired
		case rejected[c.ArxivID] != "":
			res.Considered[i].Status, res.Considered[i].Detail = StatusRewriteRejects, rejected[c.ArxivID]
		default:
			res.Considered[i].Status = StatusUnpaired
		}
	}
	slices.SortFunc(res.Pairs, func(a, b Pair) int { return strings.Compare(a.ID, b.ID) })
	return res, nil
}
