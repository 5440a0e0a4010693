package summarize

import (
	"math"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

// cardsWith makes cards carrying only an opportunity label, then cards
// carrying only a paradigm label.
func cardsWith(opps, pars map[string]int) []record.Card {
	var cards []record.Card
	for l, n := range opps {
		for range n {
			cards = append(cards, record.Card{Opportunity: l})
		}
	}
	for l, n := range pars {
		for range n {
			cards = append(cards, record.Card{Paradigm: l})
		}
	}
	return cards
}

func TestStatsEntropy(t *testing.T) {
	ln7 := math.Log(7)
	tests := []struct {
		name    string
		opps    map[string]int
		entropy float64
		share   map[string]float64
		other   int
	}{
		{"uniform", map[string]int{record.Puzzle: 2, record.Explanation: 2, record.Scope: 2, record.Evidence: 2, record.Bridge: 2, record.FailureRisk: 2, record.Resource: 2}, 1, map[string]float64{record.Bridge: 2.0 / 14}, 0},
		{"one label", map[string]int{record.Bridge: 5}, 0, map[string]float64{record.Bridge: 1}, 0},
		{"three to one", map[string]int{record.Bridge: 3, record.Evidence: 1}, -(0.75*math.Log(0.75) + 0.25*math.Log(0.25)) / ln7, map[string]float64{record.Bridge: 0.75, record.Evidence: 0.25}, 0},
		// Other counts in the shares, not in the entropy.
		{"with other", map[string]int{record.Evidence: 1, record.Scope: 1, record.Other: 2}, math.Log(2) / ln7, map[string]float64{record.Evidence: 0.25, record.Other: 0.5}, 2},
		{"none", nil, 0, map[string]float64{record.Bridge: 0}, 0},
	}
	for _, tt := range tests {
		st := Stats(cardsWith(tt.opps, nil))
		a := st.Opportunity
		if math.Abs(a.Entropy-tt.entropy) > 1e-12 {
			t.Errorf("%s: entropy %v, want %v", tt.name, a.Entropy, tt.entropy)
		}
		for l, want := range tt.share {
			if got := a.Share(l); math.Abs(got-want) > 1e-12 {
				t.Errorf("%s: share of %s %v, want %v", tt.name, l, got, want)
			}
		}
		if a.Other != tt.other {
			t.Errorf("%s: other %d, want %d", tt.name, a.Other, tt.other)
		}
		if len(a.Labels) != 8 || a.Labels[7].Label != record.Other {
			t.Errorf("%s: labels %+v", tt.name, a.Labels)
		}
	}
}

func TestStatsInvalidAndAxes(t *testing.T) {
	cards := []record.Card{
		{Opportunity: record.Evidence, Paradigm: record.Empirical},
		{Opportunity: record.Empirical, Paradigm: ""}, // a paradigm on the wrong axis, and none
	}
	st := Stats(cards)
	if st.Cards != 2 || st.Opportunity.Total != 1 || st.Opportunity.Invalid != 1 || st.Paradigm.Invalid != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestReportFlagsCollapse(t *testing.T) {
	collapsed := Stats(cardsWith(map[string]int{record.Bridge: 6, record.Evidence: 2, record.Scope: 2}, map[string]int{record.Synthesis: 4, record.Empirical: 6}))
	flags := collapsed.Flags()
	for _, want := range []string{"Bridge Opportunity share 60.0% is over 2.5× the human 12%", "Synthesis / Unification share 40.0% is over 2.5× the human 5%", "opportunity normalized entropy", "paradigm normalized entropy"} {
		if !containsAny(flags, want) {
			t.Errorf("flags %q lack %q", flags, want)
		}
	}
	var b strings.Builder
	if err := collapsed.Report(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Label health over 20 cards", "Opportunity pattern", "Method paradigm", "<< collapse", "Collapse warnings:", "normalized entropy"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}

	healthy := Stats(cardsWith(
		map[string]int{record.Puzzle: 1, record.Explanation: 2, record.Scope: 2, record.Evidence: 2, record.Bridge: 1, record.FailureRisk: 1, record.Resource: 1},
		map[string]int{record.Synthesis: 0, record.RelaxExtend: 2, record.Robustify: 1, record.Formal: 2, record.Empirical: 2, record.Artifact: 2, record.Optimization: 1}))
	if f := healthy.Flags(); len(f) != 0 {
		t.Errorf("healthy distribution flagged: %q", f)
	}
}

func containsAny(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
