package summarize

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/groundwork/curate/record"
)

// Reference points for label health (Chen et al. 2026, §4.2: shares in
// human papers; LLM labelers reach 47-64% Bridge and 22-39% Synthesis).
const (
	HumanBridgeShare    = 0.12
	HumanSynthesisShare = 0.05
	// CollapseFactor is how far over its human share Bridge or Synthesis
	// may go before the report flags a collapse.
	CollapseFactor = 2.5
	// MinEntropy is the normalized entropy below which an axis is flagged
	// (human papers score above 0.92 on both axes).
	MinEntropy = 0.7
)

// LabelCount is the count of one label on one axis.
type LabelCount struct {
	Label string  `json:"label"`
	Count int     `json:"count"`
	Share float64 `json:"share"` // of the axis's labelled cards, Other included
}

// AxisStats is the label distribution of one axis.
type AxisStats struct {
	Axis string `json:"axis"`
	// Labels holds the seven labels in taxonomy order, then Other.
	Labels []LabelCount `json:"labels"`
	Total  int          `json:"total"` // cards with a valid label on this axis, Other included
	Other  int          `json:"other"`
	// Invalid counts cards whose label is missing or not of this axis.
	Invalid int `json:"invalid"`
	// Entropy is the Shannon entropy of the seven labels' distribution
	// (Other left out) divided by log 7: 1 when all are equally used, 0
	// when one label takes all.
	Entropy float64 `json:"entropy"`
}

// Share returns the share of label, 0 when it is not on the axis.
func (a AxisStats) Share(label string) float64 {
	for _, l := range a.Labels {
		if l.Label == label {
			return l.Share
		}
	}
	return 0
}

// LabelStats is the label health of a set of cards.
type LabelStats struct {
	Cards       int       `json:"cards"`
	Opportunity AxisStats `json:"opportunity"`
	Paradigm    AxisStats `json:"paradigm"`
}

// Stats counts the opportunity and paradigm labels of cards.
func Stats(cards []record.Card) LabelStats {
	st := LabelStats{Cards: len(cards)}
	st.Opportunity = axisStats(record.AxisOpportunity, cards, func(c record.Card) string { return c.Opportunity })
	st.Paradigm = axisStats(record.AxisParadigm, cards, func(c record.Card) string { return c.Paradigm })
	return st
}

func axisStats(axis string, cards []record.Card, label func(record.Card) string) AxisStats {
	labels := append(record.CardLabels(axis), record.Other)
	counts := make([]int, len(labels))
	a := AxisStats{Axis: axis}
	for _, c := range cards {
		l := label(c)
		i := -1
		for j, x := range labels {
			if x == l {
				i = j
			}
		}
		if i < 0 {
			a.Invalid++
			continue
		}
		counts[i]++
		a.Total++
	}
	a.Other = counts[len(labels)-1]
	for i, l := range labels {
		lc := LabelCount{Label: l, Count: counts[i]}
		if a.Total > 0 {
			lc.Share = float64(counts[i]) / float64(a.Total)
		}
		a.Labels = append(a.Labels, lc)
	}
	a.Entropy = normalizedEntropy(counts[:len(labels)-1])
	return a
}

// normalizedEntropy is the Shannon entropy of counts divided by the
// largest possible, log(len(counts)).
func normalizedEntropy(counts []int) float64 {
	total := 0
	for _, n := range counts {
		total += n
	}
	if total == 0 || len(counts) < 2 {
		return 0
	}
	h := 0.0
	for _, n := range counts {
		if n > 0 {
			p := float64(n) / float64(total)
			h -= p * math.Log(p)
		}
	}
	return h / math.Log(float64(len(counts)))
}

// Flags returns the signs of a collapsing summarizer: Bridge Opportunity
// or Synthesis / Unification over CollapseFactor times their human share,
// or an axis with normalized entropy under MinEntropy.
func (s LabelStats) Flags() []string {
	if s.Cards == 0 {
		return nil
	}
	var flags []string
	for _, c := range []struct {
		axis  AxisStats
		label string
		human float64
	}{{s.Opportunity, record.Bridge, HumanBridgeShare}, {s.Paradigm, record.Synthesis, HumanSynthesisShare}} {
		if sh := c.axis.Share(c.label); sh > CollapseFactor*c.human {
			flags = append(flags, fmt.Sprintf("%s share %.1f%% is over %.1f× the human %.0f%%", c.label, 100*sh, CollapseFactor, 100*c.human))
		}
	}
	for _, a := range []AxisStats{s.Opportunity, s.Paradigm} {
		if a.Total > 0 && a.Entropy < MinEntropy {
			flags = append(flags, fmt.Sprintf("%s normalized entropy %.2f is under %.2f", a.Axis, a.Entropy, MinEntropy))
		}
	}
	return flags
}

// Report writes the distributions as text tables with the collapse flags.
func (s LabelStats) Report(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Label health over %d cards\n", s.Cards)
	for _, a := range []AxisStats{s.Opportunity, s.Paradigm} {
		title := "Opportunity pattern"
		if a.Axis == record.AxisParadigm {
			title = "Method paradigm"
		}
		fmt.Fprintf(&b, "\n%-24s %6s %7s %6s\n", title, "count", "share", "human")
		for _, l := range a.Labels {
			human, mark := "", ""
			switch l.Label {
			case record.Bridge:
				human = fmt.Sprintf("%.0f%%", 100*HumanBridgeShare)
			case record.Synthesis:
				human = fmt.Sprintf("%.0f%%", 100*HumanSynthesisShare)
			}
			if (l.Label == record.Bridge && l.Share > CollapseFactor*HumanBridgeShare) ||
				(l.Label == record.Synthesis && l.Share > CollapseFactor*HumanSynthesisShare) {
				mark = "  << collapse"
			}
			line := fmt.Sprintf("%-24s %6d %6.1f%% %6s%s", l.Label, l.Count, 100*l.Share, human, mark)
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
		fmt.Fprintf(&b, "normalized entropy %.2f over the seven labels (human papers: above 0.92)", a.Entropy)
		if a.Invalid > 0 {
			fmt.Fprintf(&b, "; %d cards without a valid label", a.Invalid)
		}
		b.WriteString("\n")
	}
	if flags := s.Flags(); len(flags) > 0 {
		b.WriteString("\nCollapse warnings:\n")
		for _, f := range flags {
			b.WriteString("- " + f + "\n")
		}
	} else if s.Cards > 0 {
		b.WriteString("\nNo collapse flagged.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
