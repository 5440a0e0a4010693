package classify

import (
	"fmt"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

// TestPlausibility: each rule holds back the selections it describes,
// naming its figures, and passes careful readings of the same papers.
func TestPlausibility(t *testing.T) {
	labels := record.Labels()
	// sels builds n references of which the first k are sources, quoted
	// unless unquoted says how many of them (from the last) are not, with
	// labels and rationales varied.
	sels := func(n, k, unquoted int) []record.Selection {
		out := make([]record.Selection, n)
		for i := range out {
			out[i] = record.Selection{RefKey: fmt.Sprintf("bib.bib%d", i+1), Role: record.RoleOther}
			if i < k {
				out[i].Role = record.RoleSource
				out[i].Labels = []string{labels[i%len(labels)]}
				out[i].Rationale = fmt.Sprintf("It supplies method %d.", i)
				if i < k-unquoted {
					out[i].Quotes = []string{fmt.Sprintf("We build on [%d].", i+1)}
				}
			}
		}
		return out
	}
	for _, c := range []struct {
		name string
		sels []record.Selection
		want []string // reason prefixes
	}{
		{"careful: 4 of 12", sels(12, 4, 0), nil},
		{"careful: 3 of 4, one unquoted", sels(4, 3, 1), nil},
		{"careful: 5 of 10, two unquoted", sels(10, 5, 2), nil},
		{"too many", sels(40, 13, 0), []string{SuspectTooMany}},
		{"nearly all", sels(7, 6, 0), []string{SuspectNearlyAll}},
		// What a model that obeys an instruction planted in the paper
		// gives when its quotes cite nothing: 70% of the references with
		// varied labels, or every reference of a small paper.
		{"70% with varied labels, quotes cite nothing", sels(10, 7, 7), []string{SuspectUnsupported}},
		{"70% with varied labels, three real", sels(10, 7, 4), []string{SuspectUnsupported}},
		{"all 5 of 5", sels(5, 5, 5), []string{SuspectUnsupported}},
		{"all 4 of 4, one real", sels(4, 4, 3), []string{SuspectUnsupported}},
	} {
		got := Plausibility{}.Check(c.sels)
		if len(got) != len(c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(got[i], w+": ") {
				t.Errorf("%s: %q, want %s", c.name, got[i], w)
			}
		}
	}
	// A negative bound turns the rule off.
	if got := (Plausibility{Unsupported: -1}).Check(sels(10, 7, 7)); len(got) != 0 {
		t.Errorf("rule off: %q", got)
	}
	if got := (Plausibility{}).Check(sels(10, 7, 7)); len(got) == 0 || !strings.Contains(got[0], "7 of 7 sources have no quote citing them") {
		t.Errorf("figures: %q", got)
	}
}
