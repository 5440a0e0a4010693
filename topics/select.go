package topics

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// Candidate is what the selection knows of a kept group.
type Candidate struct {
	ID         string
	Background []string // sorted
	Support    int
	Category   string
}

// Pick is one selected candidate, in selection order.
type Pick struct {
	Index int // into the candidates
	// Nearest is the ID of the earlier pick closest to this one ("" for
	// the first) and Overlap their backgrounds' overlap: the distance at
	// which the candidate was picked is 1 − Overlap.IoU().
	Nearest string
	Overlap Overlap
}

// Distance is 1 − Jaccard(background of the pick, background of Nearest);
// 1 for the first pick.
func (p Pick) Distance() float64 {
	if p.Nearest == "" {
		return 1
	}
	return 1 - p.Overlap.IoU()
}

// closer reports whether the distance of overlap a is smaller than that of
// b, comparing the fractions (U−I)/U exactly.
func closer(a, b Overlap) bool {
	return (a.Union-a.Intersection)*b.Union < (b.Union-b.Intersection)*a.Union
}

// Select picks up to budget candidates by greedy maximum-diversity
// (farthest-point) selection under the distance 1 − Jaccard of background
// sets:
//
//   - The first pick is the candidate with the most supporting papers
//     (ties: the smaller ID) when seed is 0, and otherwise a candidate
//     drawn by the seed (PCG seeded with it, over the candidates sorted by
//     ID), so that each seed gives a reproducible alternative collection.
//   - Each next pick is the candidate farthest from its nearest pick (the
//     largest minimum distance). Ties go to the candidate whose category
//     has been picked fewest times, then to more supporting papers, then
//     to the smaller ID.
//   - A candidate whose background equals a picked one's (distance 0) adds
//     nothing: selection stops rather than pick it.
//
// Distances are compared as exact fractions, so ties are real ties.
func Select(cands []Candidate, budget int, seed uint64) []Pick {
	if len(cands) == 0 || budget <= 0 {
		return nil
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(cands[a].ID, cands[b].ID) })

	first := order[0]
	if seed == 0 {
		for _, i := range order[1:] {
			if cands[i].Support > cands[first].Support {
				first = i
			}
		}
	} else {
		r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		first = order[r.IntN(len(order))]
	}

	picks := []Pick{{Index: first}}
	picked := map[int]bool{first: true}
	categories := map[string]int{cands[first].Category: 1}
	// nearest[i] is candidate i's overlap with its closest pick so far.
	nearest := make([]Overlap, len(cands))
	nearestID := make([]string, len(cands))
	update := func(p int) {
		for _, i := range order {
			if picked[i] {
				continue
			}
			o := Intersect(cands[i].Background, cands[p].Background)
			if nearestID[i] == "" || closer(o, nearest[i]) {
				nearest[i], nearestID[i] = o, cands[p].ID
			}
		}
	}
	update(first)
	for len(picks) < budget {
		best := -1
		for _, i := range order {
			if picked[i] {
				continue
			}
			if best < 0 || better(cands, nearest, categories, i, best) {
				best = i
			}
		}
		if best < 0 || nearest[best].Intersection == nearest[best].Union {
			break
		}
		picks = append(picks, Pick{Index: best, Nearest: nearestID[best], Overlap: nearest[best]})
		picked[best] = true
		categories[cands[best].Category]++
		update(best)
	}
	return picks
}

// better reports whether candidate i is to be picked before candidate j
// (j comes first in ID order, so equal candidates keep the smaller ID).
func better(cands []Candidate, nearest []Overlap, categories map[string]int, i, j int) bool {
	if closer(nearest[j], nearest[i]) {
		return true
	}
	if closer(nearest[i], nearest[j]) {
		return false
	}
	if ci, cj := categories[cands[i].Category], categories[cands[j].Category]; ci != cj {
		return ci < cj
	}
	return cands[i].Support > cands[j].Support
}
