package dataset

import (
	"cmp"
	"maps"
	"slices"
)

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// labelCount is one bar of a distribution.
type labelCount struct {
	label string
	n     int
}

// byCount orders a histogram by count, largest first, then by label.
func byCount(m map[string]int) []labelCount {
	out := make([]labelCount, 0, len(m))
	for k, v := range m {
		out = append(out, labelCount{k, v})
	}
	slices.SortFunc(out, func(a, b labelCount) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.label, b.label)) })
	return out
}
