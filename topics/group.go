package topics

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Verdicts of a Group.
const (
	VerdictKept               = "kept"
	VerdictTooFewSupporting   = "too_few_supporting"
	VerdictBackgroundTooSmall = "background_too_small"
	VerdictBackgroundTooLarge = "background_too_large"
)

// maxGroups bounds the maximal cliques enumerated: a similarity graph so
// dense that it has more is not a set of topics, and the enumeration
// would not end in reasonable time.
const maxGroups = 1_000_000

// Overlap is the intersection and union sizes of two sets.
type Overlap struct {
	Intersection int `json:"intersection" parquet:"intersection"`
	Union        int `json:"union" parquet:"union"`
}

// IoU is the intersection over union (0 for two empty sets).
func (o Overlap) IoU() float64 {
	if o.Union == 0 {
		return 0
	}
	return float64(o.Intersection) / float64(o.Union)
}

// Similar reports whether the overlap reaches the threshold: IoU ≥ t.
// The quotient is computed by one correctly rounded division, as is the
// parse of a decimal threshold, so an IoU that equals t exactly as a
// fraction (2/4 against 0.5, 3/10 against 0.3) compares equal.
func (o Overlap) Similar(t float64) bool {
	return o.Union > 0 && o.IoU() >= t
}

// Intersect returns the overlap of two sorted, de-duplicated sets.
func Intersect(a, b []string) Overlap {
	i, j, n := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			n++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	return Overlap{Intersection: n, Union: len(a) + len(b) - n}
}

// Union returns the sorted union of sorted, de-duplicated sets.
func Union(sets ...[]string) []string {
	var out []string
	for _, s := range sets {
		out = append(out, s...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Group is a maximal set of seeds whose influential sets are pairwise
// similar (IoU ≥ the threshold), with the union of their sets as its
// background.
type Group struct {
	ID         string   // GroupID of the members
	Members    []string // seed IDs, sorted
	Background []string // union of the members' influential sets, sorted
	Verdict    string
}

// GroupID names a group by its members: "topic-" and the first 12 hex
// digits of the SHA-256 of the sorted member IDs joined by newlines. It
// does not depend on the order seeds were given in or on which other
// groups exist.
func GroupID(members []string) string {
	m := slices.Clone(members)
	slices.Sort(m)
	sum := sha256.Sum256([]byte(strings.Join(m, "\n")))
	return "topic-" + hex.EncodeToString(sum[:6])
}

// Groups returns the maximal cliques of the similarity graph of seeds (an
// edge joins two seeds whose influential sets have IoU ≥ opt.IoU), each with
// its background and its verdict under opt; seeds with empty sets are
// ignored. Groups come back sorted by their members.
//
// Why cliques and not connected components: in a component, A may be
// similar to B and B to C while A and C share nothing, and such chains
// grow one background without bound (which the maximum background size
// would then reject, losing the real groups inside it). In a clique every
// supporting paper is similar to every other, which is what "papers that
// jointly built on the same background" means. A seed may support two
// cliques (a paper that builds on two lines of work), and the set of
// maximal cliques is a function of the graph alone, so no tie-breaking or
// input order enters the grouping. A clique whose background is too large
// is rejected whole, not trimmed to a sub-clique.
func Groups(ctx context.Context, seeds []Seed, opt Options) ([]Group, error) {
	return groupsUpTo(ctx, seeds, opt, maxGroups)
}

// groupsUpTo is Groups failing beyond limit groups.
func groupsUpTo(ctx context.Context, seeds []Seed, opt Options, limit int) ([]Group, error) {
	iou := opt.IoU
	var ss []Seed
	for _, s := range seeds {
		if len(s.Influential) > 0 {
			ss = append(ss, s)
		}
	}
	slices.SortFunc(ss, func(a, b Seed) int { return cmp.Compare(a.ID, b.ID) })
	ss = slices.CompactFunc(ss, func(a, b Seed) bool { return a.ID == b.ID })
	adj := similarity(ss, iou)
	var groups []Group
	bk := &cliques{adj: adj, emit: func(c []int) error {
		if len(groups) == limit {
			return fmt.Errorf("group %d seeds: more than %d groups at IoU %g; raise --iou", len(ss), limit, iou)
		}
		g := Group{}
		var sets [][]string
		for _, i := range c {
			g.Members = append(g.Members, ss[i].ID)
			sets = append(sets, ss[i].Influential)
		}
		g.ID = GroupID(g.Members)
		g.Background = Union(sets...)
		g.Verdict = verdict(len(g.Members), len(g.Background), opt)
		groups = append(groups, g)
		return nil
	}}
	all := make([]int, len(ss))
	for i := range all {
		all[i] = i
	}
	bk.run(ctx, all, nil, nil)
	if bk.err != nil {
		return nil, bk.err
	}
	slices.SortFunc(groups, func(a, b Group) int { return slices.Compare(a.Members, b.Members) })
	return groups, nil
}

func verdict(support, background int, opt Options) string {
	switch {
	case support < opt.MinSupport:
		return VerdictTooFewSupporting
	case background < opt.MinBackground:
		return VerdictBackgroundTooSmall
	case background > opt.MaxBackground:
		return VerdictBackgroundTooLarge
	}
	return VerdictKept
}

// similarity returns the adjacency lists (sorted) of the similarity
// graph. Only pairs that share a reference are compared, through an
// inverted index, so sparse citation data costs far less than all pairs.
func similarity(ss []Seed, iou float64) [][]int {
	index := map[string][]int{}
	for i, s := range ss {
		for _, k := range s.Influential {
			index[k] = append(index[k], i)
		}
	}
	adj := make([][]int, len(ss))
	for i, s := range ss {
		shared := map[int]int{}
		for _, k := range s.Influential {
			for _, j := range index[k] {
				if j > i {
					shared[j]++
				}
			}
		}
		for j, n := range shared {
			o := Overlap{Intersection: n, Union: len(s.Influential) + len(ss[j].Influential) - n}
			if o.Similar(iou) {
				adj[i] = append(adj[i], j)
				adj[j] = append(adj[j], i)
			}
		}
	}
	for i := range adj {
		slices.Sort(adj[i])
	}
	return adj
}

// cliques enumerates maximal cliques by Bron–Kerbosch with Tomita
// pivoting; sets are sorted index slices.
type cliques struct {
	adj   [][]int
	emit  func([]int) error
	calls int
	err   error // the enumeration stopped: emit failed or ctx is done
}

// run reports every maximal clique that contains r, extends it with
// vertices of p only, and shares no vertex of x (cliques already found).
func (c *cliques) run(ctx context.Context, p, r, x []int) {
	if c.err != nil {
		return
	}
	// Checked on the first call and every 4096th: cheap, and a cancelled
	// context is noticed at once.
	if c.calls++; c.calls%4096 == 1 && ctx.Err() != nil {
		c.err = fmt.Errorf("group seeds: %w", ctx.Err())
		return
	}
	if len(p) == 0 {
		if len(x) == 0 {
			c.err = c.emit(slices.Clone(r))
		}
		return
	}
	// The pivot covers the most of P; the lowest index wins a tie.
	pivot, best := -1, -1
	for _, set := range [][]int{p, x} {
		for _, u := range set {
			if n := len(intersect(p, c.adj[u])); n > best || n == best && u < pivot {
				pivot, best = u, n
			}
		}
	}
	for _, v := range difference(p, c.adj[pivot]) {
		nr := append(slices.Clone(r), v)
		slices.Sort(nr)
		c.run(ctx, intersect(p, c.adj[v]), nr, intersect(x, c.adj[v]))
		p = remove(p, v)
		x = insert(x, v)
		if c.err != nil {
			return
		}
	}
}

func intersect(a, b []int) []int {
	var out []int
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			out = append(out, a[i])
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return out
}

func difference(a, b []int) []int {
	var out []int
	j := 0
	for _, v := range a {
		for j < len(b) && b[j] < v {
			j++
		}
		if j < len(b) && b[j] == v {
			continue
		}
		out = append(out, v)
	}
	return out
}

func remove(a []int, v int) []int {
	i, ok := slices.BinarySearch(a, v)
	if !ok {
		return a
	}
	return slices.Delete(slices.Clone(a), i, i+1)
}

func insert(a []int, v int) []int {
	i, ok := slices.BinarySearch(a, v)
	if ok {
		return a
	}
	return slices.Insert(slices.Clone(a), i, v)
}
