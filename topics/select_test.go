package topics

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// selectionCase is a small known case:
//
//	A {1..5}           support 5  cs.CL   the best supported: first
//	B {1,2,3,4,6}      support 3  cs.CL   1/3 from A: last
//	Z {10..14}         support 3  cs.LG   1 from A, 1 from D
//	D {20..24}         support 3  cs.CL   1 from A, 1 from Z
//	E {1,2,10,11,20}   support 4  q-bio   3/4 from A, 3/4 from Z
//	F = A's background support 2  cs.CL   distance 0: never picked
//
// After A, Z and D tie at distance 1; D comes first by ID, but cs.CL
// was picked already and cs.LG was not, so Z wins.
func selectionCase() []Candidate {
	return []Candidate{
		{ID: "A", Background: refs(1, 2, 3, 4, 5), Support: 5, Category: "cs.CL"},
		{ID: "B", Background: refs(1, 2, 3, 4, 6), Support: 3, Category: "cs.CL"},
		{ID: "D", Background: refs(20, 21, 22, 23, 24), Support: 3, Category: "cs.CL"},
		{ID: "E", Background: refs(1, 2, 10, 11, 20), Support: 4, Category: "q-bio.PE"},
		{ID: "F", Background: refs(1, 2, 3, 4, 5), Support: 2, Category: "cs.CL"},
		{ID: "Z", Background: refs(10, 11, 12, 13, 14), Support: 3, Category: "cs.LG"},
	}
}

func pickIDs(c []Candidate, ps []Pick) []string {
	var out []string
	for _, p := range ps {
		out = append(out, c[p.Index].ID)
	}
	return out
}

func TestSelectOrder(t *testing.T) {
	tests := []struct {
		name   string
		cands  []Candidate
		budget int
		want   []string
	}{
		{"known case", selectionCase(), 6, []string{"A", "Z", "D", "E", "B"}},
		{"budget 3", selectionCase(), 3, []string{"A", "Z", "D"}},
		{"budget 1", selectionCase(), 1, []string{"A"}},
		{"no candidates", nil, 6, nil},
		{"support breaks a tie of distance and category", []Candidate{
			{ID: "a", Background: refs(1, 2), Support: 5, Category: "x"},
			{ID: "b", Background: refs(3, 4), Support: 3, Category: "y"},
			{ID: "c", Background: refs(5, 6), Support: 4, Category: "y"},
		}, 2, []string{"a", "c"}},
		{"ID breaks a full tie; first pick by support then ID", []Candidate{
			{ID: "q", Background: refs(1, 2), Support: 3},
			{ID: "p", Background: refs(3, 4), Support: 3},
			{ID: "r", Background: refs(5, 6), Support: 3},
		}, 3, []string{"p", "q", "r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pickIDs(tt.cands, Select(tt.cands, tt.budget, 0))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("selection %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSelectEvidence(t *testing.T) {
	c := selectionCase()
	ps := Select(c, 6, 0)
	want := []struct {
		nearest  string
		overlap  Overlap
		distance float64
	}{
		{"", Overlap{}, 1},
		{"A", Overlap{0, 10}, 1},
		{"A", Overlap{0, 10}, 1},
		{"A", Overlap{2, 8}, 0.75},
		{"A", Overlap{4, 6}, 1 - Overlap{4, 6}.IoU()},
	}
	if len(ps) != len(want) {
		t.Fatalf("%d picks, want %d", len(ps), len(want))
	}
	for i, w := range want {
		p := ps[i]
		if p.Nearest != w.nearest || p.Overlap != w.overlap || p.Distance() != w.distance {
			t.Errorf("pick %d (%s): nearest %q %+v distance %g; want %q %+v %g", i, c[p.Index].ID, p.Nearest, p.Overlap, p.Distance(), w.nearest, w.overlap, w.distance)
		}
		// The evidence is re-derivable from the backgrounds.
		if p.Nearest != "" {
			for _, q := range c {
				if q.ID == p.Nearest && Intersect(c[p.Index].Background, q.Background) != p.Overlap {
					t.Errorf("pick %d: overlap with %s does not recompute", i, q.ID)
				}
			}
		}
	}
}

// TestSelectSeed: a nonzero seed draws the first pick reproducibly, and
// the candidates' order never matters.
func TestSelectSeed(t *testing.T) {
	firsts := map[string]bool{}
	for seed := uint64(1); seed <= 40; seed++ {
		want := pickIDs(selectionCase(), Select(selectionCase(), 3, seed))
		firsts[want[0]] = true
		r := rand.New(rand.NewPCG(seed, 7))
		for range 5 {
			c := selectionCase()
			r.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
			if got := pickIDs(c, Select(c, 3, seed)); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d: selection %v after shuffling, %v before", seed, got, want)
			}
		}
	}
	if len(firsts) < 3 {
		t.Errorf("40 seeds started at only %v", firsts)
	}
}
