package topics

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// refs returns the identity keys "s2:r<n>" of ns, sorted.
func refs(ns ...int) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = fmt.Sprintf("s2:r%03d", n)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestOverlapSimilar(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
		t    float64
		want Overlap
		sim  bool
	}{
		{"boundary 2/4 at 0.5 is similar", refs(1, 2, 3), refs(1, 2, 4), 0.5, Overlap{2, 4}, true},
		{"boundary 4/8 at 0.5 is similar", refs(1, 2, 3, 4, 5, 6), refs(1, 2, 3, 4, 7, 8), 0.5, Overlap{4, 8}, true},
		{"just below: 3/7", refs(1, 2, 3, 4, 5), refs(1, 2, 3, 6, 7), 0.5, Overlap{3, 7}, false},
		{"boundary 3/10 at 0.3", refs(1, 2, 3, 4, 5, 6, 7), refs(1, 2, 3, 8, 9, 10), 0.3, Overlap{3, 10}, true},
		{"boundary 1/3 at 1/3 parsed", refs(1, 2), refs(1, 3), 1.0 / 3, Overlap{1, 3}, true},
		{"identical", refs(1, 2), refs(1, 2), 1, Overlap{2, 2}, true},
		{"disjoint", refs(1), refs(2), 0.01, Overlap{0, 2}, false},
		{"empty sets", nil, nil, 0.5, Overlap{0, 0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Intersect(tt.a, tt.b)
			if o != tt.want {
				t.Fatalf("Intersect = %+v, want %+v", o, tt.want)
			}
			if got := o.Similar(tt.t); got != tt.sim {
				t.Errorf("Similar(%g) of %d/%d = %v, want %v", tt.t, o.Intersection, o.Union, got, tt.sim)
			}
		})
	}
}

// graphSeeds is a constructed citation graph with known groups.
func graphSeeds() []Seed {
	return []Seed{
		// Boundary: every pair shares 2 of 4 (IoU exactly 0.5); the
		// background {1..5} has 5 papers: kept.
		{ID: "a1", PrimaryCategory: "cs.CL", Influential: refs(1, 2, 3)},
		{ID: "a2", PrimaryCategory: "cs.CL", Influential: refs(1, 2, 4)},
		{ID: "a3", PrimaryCategory: "cs.LG", Influential: refs(1, 2, 5)},
		// Two overlapping groups sharing b3: {b1,b2,b3} and {b3,b4,b5}
		// (pairs inside 3/5), b1 and b2 unlike b4 and b5 (2/6). As one
		// connected component they would be one group of 8.
		{ID: "b1", PrimaryCategory: "cs.LG", Influential: refs(11, 12, 13, 15)},
		{ID: "b2", PrimaryCategory: "cs.LG", Influential: refs(11, 12, 13, 16)},
		{ID: "b3", PrimaryCategory: "cs.LG", Influential: refs(11, 12, 13, 14)},
		{ID: "b4", PrimaryCategory: "stat.ML", Influential: refs(12, 13, 14, 17)},
		{ID: "b5", PrimaryCategory: "stat.ML", Influential: refs(12, 13, 14, 18)},
		// Background too small: 3 papers.
		{ID: "c1", Influential: refs(30, 31)},
		{ID: "c2", Influential: refs(30, 31)},
		{ID: "c3", Influential: refs(30, 31, 32)},
		// Background too large: pairs at 4/8 = 0.5, union of 10.
		{ID: "d1", Influential: refs(40, 41, 42, 43, 44, 45)},
		{ID: "d2", Influential: refs(40, 41, 42, 43, 46, 47)},
		{ID: "d3", Influential: refs(40, 41, 42, 43, 48, 49)},
		// Too few supporting papers: a pair.
		{ID: "e1", Influential: refs(50, 51, 52)},
		{ID: "e2", Influential: refs(50, 51, 53)},
		// Alone, and without influential references.
		{ID: "f1", Influential: refs(60)},
		{ID: "g1"},
	}
}

func TestGroups(t *testing.T) {
	type group struct {
		members    []string
		background int
		verdict    string
	}
	tests := []struct {
		name string
		iou  float64
		want []group
	}{
		{"at 0.5 (inclusive)", 0.5, []group{
			{[]string{"a1", "a2", "a3"}, 5, VerdictKept},
			{[]string{"b1", "b2", "b3"}, 6, VerdictKept},
			{[]string{"b3", "b4", "b5"}, 6, VerdictKept},
			{[]string{"c1", "c2", "c3"}, 3, VerdictBackgroundTooSmall},
			{[]string{"d1", "d2", "d3"}, 10, VerdictBackgroundTooLarge},
			{[]string{"e1", "e2"}, 4, VerdictTooFewSupporting},
			{[]string{"f1"}, 1, VerdictTooFewSupporting},
		}},
		{"just above 0.5: the boundary pairs part", 0.5000001, []group{
			{[]string{"a1"}, 3, VerdictTooFewSupporting},
			{[]string{"a2"}, 3, VerdictTooFewSupporting},
			{[]string{"a3"}, 3, VerdictTooFewSupporting},
			{[]string{"b1", "b2", "b3"}, 6, VerdictKept},
			{[]string{"b3", "b4", "b5"}, 6, VerdictKept},
			{[]string{"c1", "c2", "c3"}, 3, VerdictBackgroundTooSmall},
			{[]string{"d1"}, 6, VerdictTooFewSupporting},
			{[]string{"d2"}, 6, VerdictTooFewSupporting},
			{[]string{"d3"}, 6, VerdictTooFewSupporting},
			{[]string{"e1"}, 3, VerdictTooFewSupporting},
			{[]string{"e2"}, 3, VerdictTooFewSupporting},
			{[]string{"f1"}, 1, VerdictTooFewSupporting},
		}},
		{"at 0.3 the b papers form one clique", 0.3, []group{
			{[]string{"a1", "a2", "a3"}, 5, VerdictKept},
			{[]string{"b1", "b2", "b3", "b4", "b5"}, 8, VerdictKept},
			{[]string{"c1", "c2", "c3"}, 3, VerdictBackgroundTooSmall},
			{[]string{"d1", "d2", "d3"}, 10, VerdictBackgroundTooLarge},
			{[]string{"e1", "e2"}, 4, VerdictTooFewSupporting},
			{[]string{"f1"}, 1, VerdictTooFewSupporting},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := DefaultOptions()
			opt.IoU = tt.iou
			gs, err := Groups(context.Background(), graphSeeds(), opt)
			if err != nil {
				t.Fatal(err)
			}
			var got []group
			for _, g := range gs {
				got = append(got, group{g.Members, len(g.Background), g.Verdict})
				if g.ID != GroupID(g.Members) {
					t.Errorf("group %v has ID %s, want %s", g.Members, g.ID, GroupID(g.Members))
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("groups:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

// TestGroupsCliquesNotChains: A~B and B~C with A, C disjoint give two
// groups, not one chained group.
func TestGroupsCliquesNotChains(t *testing.T) {
	seeds := []Seed{
		{ID: "A", Influential: refs(1, 2, 3)},
		{ID: "B", Influential: refs(2, 3, 4)},
		{ID: "C", Influential: refs(3, 4, 5)},
	}
	opt := DefaultOptions()
	gs, err := Groups(context.Background(), seeds, opt)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, g := range gs {
		got = append(got, g.Members)
	}
	if want := [][]string{{"A", "B"}, {"B", "C"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("groups %v, want %v", got, want)
	}
}

func TestGroupsIgnoreInputOrder(t *testing.T) {
	want, err := Groups(context.Background(), graphSeeds(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		s := graphSeeds()
		r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
		got, err := Groups(context.Background(), s, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("groups depend on the order of the seeds")
		}
	}
}

func TestGroupsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Groups(ctx, graphSeeds(), DefaultOptions()); !errors.Is(err, context.Canceled) {
		t.Errorf("Groups with a cancelled context: %v", err)
	}
}

func TestGroupsLimit(t *testing.T) {
	_, err := groupsUpTo(context.Background(), graphSeeds(), DefaultOptions(), 3)
	if err == nil || !strings.Contains(err.Error(), "more than 3 groups") {
		t.Errorf("err %v, want the limit named", err)
	}
}

// TestGroupsAreMaximalCliques checks random citation graphs against the
// definition: every group is a clique of the similarity graph, no seed
// outside it is similar to all its members, every similar pair lies in a
// group, and no group is listed twice.
func TestGroupsAreMaximalCliques(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		var seeds []Seed
		for i := range 4 + r.IntN(12) {
			var ns []int
			for range 1 + r.IntN(5) {
				ns = append(ns, r.IntN(10))
			}
			seeds = append(seeds, Seed{ID: fmt.Sprintf("s%02d", i), Influential: refs(ns...)})
		}
		opt := DefaultOptions()
		opt.IoU = []float64{0.2, 1.0 / 3, 0.5, 0.75}[trial%4]
		gs, err := Groups(context.Background(), seeds, opt)
		if err != nil {
			t.Fatal(err)
		}
		sim := func(a, b Seed) bool { return Intersect(a.Influential, b.Influential).Similar(opt.IoU) }
		byID := map[string]Seed{}
		for _, s := range seeds {
			byID[s.ID] = s
		}
		covered := map[[2]string]bool{}
		seen := map[string]bool{}
		for _, g := range gs {
			key := strings.Join(g.Members, ",")
			if seen[key] {
				t.Fatalf("trial %d: group %s twice", trial, key)
			}
			seen[key] = true
			for i, a := range g.Members {
				for _, b := range g.Members[i+1:] {
					if !sim(byID[a], byID[b]) {
						t.Fatalf("trial %d: %s and %s in group %s are not similar", trial, a, b, key)
					}
					covered[[2]string{a, b}] = true
				}
			}
			for _, s := range seeds {
				if slices.Contains(g.Members, s.ID) {
					continue
				}
				if !slices.ContainsFunc(g.Members, func(m string) bool { return !sim(s, byID[m]) }) {
					t.Fatalf("trial %d: group %s is not maximal: %s is similar to all", trial, key, s.ID)
				}
			}
		}
		for i, a := range seeds {
			for _, b := range seeds[i+1:] {
				if sim(a, b) && !covered[[2]string{a.ID, b.ID}] {
					t.Fatalf("trial %d: similar pair %s %s in no group", trial, a.ID, b.ID)
				}
			}
		}
	}
}
