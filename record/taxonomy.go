package record

import (
	"fmt"
	"regexp"
	"strings"
)

// The card taxonomy (recipe.md): problem_gap opens with one of seven
// opportunity patterns, method with one of seven method paradigms.

// The opportunity patterns: why a study is needed (problem_gap's label).
const (
	Puzzle      = "Puzzle / Contradiction"
	Explanation = "Explanation Gap"
	Scope       = "Scope Mismatch"
	Evidence    = "Evidence Gap"
	Bridge      = "Bridge Opportunity"
	FailureRisk = "Failure / Risk Gap"
	Resource    = "Resource Bottleneck"
)

// The method paradigms: how the gap becomes a contribution (method's
// label).
const (
	Synthesis    = "Synthesis / Unification"
	RelaxExtend  = "Relax / Extend Scope"
	Robustify    = "Robustification"
	Formal       = "Formal Derivation"
	Empirical    = "Empirical Mapping"
	Artifact     = "Artifact / System"
	Optimization = "Optimization / Search"
)

// Other is the out-of-taxonomy label, accepted on either axis and counted.
const Other = "Other"

// Axes of the taxonomy, as named in errors and reports.
const (
	AxisOpportunity = "opportunity"
	AxisParadigm    = "paradigm"
)

// OpportunityLabels returns the seven opportunity patterns in the
// taxonomy's order (a new slice each call).
func OpportunityLabels() []string {
	return []string{Puzzle, Explanation, Scope, Evidence, Bridge, FailureRisk, Resource}
}

// ParadigmLabels returns the seven method paradigms in the taxonomy's
// order (a new slice each call).
func ParadigmLabels() []string {
	return []string{Synthesis, RelaxExtend, Robustify, Formal, Empirical, Artifact, Optimization}
}

// CardLabels returns the labels of axis, without Other.
func CardLabels(axis string) []string {
	if axis == AxisParadigm {
		return ParadigmLabels()
	}
	return OpportunityLabels()
}

// labelKey folds a label for comparison: case, runs of spaces and the
// spaces around "/" do not matter, so "[puzzle/contradiction]" is the
// Puzzle label spelled loosely.
func labelKey(s string) string {
	k := strings.Join(strings.Fields(strings.ToLower(s)), " ")
	k = strings.ReplaceAll(k, " /", "/")
	return strings.ReplaceAll(k, "/ ", "/")
}

// lookupLabel returns the canonical label s names and its axis ("" for
// Other), or ok false when s is no label at all.
func lookupLabel(s string) (label, axis string, ok bool) {
	k := labelKey(s)
	if k == labelKey(Other) {
		return Other, "", true
	}
	for _, ax := range []string{AxisOpportunity, AxisParadigm} {
		for _, l := range CardLabels(ax) {
			if labelKey(l) == k {
				return l, ax, true
			}
		}
	}
	return "", "", false
}

// IsCardLabel reports whether label is a canonical label of axis or Other.
func IsCardLabel(axis, label string) bool {
	if label == Other {
		return true
	}
	for _, l := range CardLabels(axis) {
		if l == label {
			return true
		}
	}
	return false
}

// ParseCardLabel reads the bracketed label that must open field on axis
// (AxisOpportunity for problem_gap, AxisParadigm for method). It returns
// the canonical label (Other for "[Other]") and the text after it, or an
// error that says what is wrong in words a model can act on: no label, an
// unknown label, a label of the other axis, a second label, or no text
// after the label.
func ParseCardLabel(field, axis string) (label, rest string, err error) {
	name := "problem_gap"
	want := "opportunity-pattern"
	if axis == AxisParadigm {
		name, want = "method", "method-paradigm"
	}
	s := strings.TrimSpace(field)
	if !strings.HasPrefix(s, "[") {
		return "", "", fmt.Errorf("%s must open with exactly one bracketed %s label, e.g. %q; it opens with %q",
			name, want, "["+CardLabels(axis)[3]+"]", clipText(s, 40))
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return "", "", fmt.Errorf("%s opens with %q but the bracket is never closed", name, clipText(s, 40))
	}
	inner := s[1:end]
	rest = strings.TrimSpace(s[end+1:])
	l, ax, ok := lookupLabel(inner)
	switch {
	case !ok:
		return "", "", fmt.Errorf("%s label [%s] is not one %s label: use exactly one of %s, or [Other]",
			name, inner, want, bracketList(CardLabels(axis)))
	case ax != "" && ax != axis:
		return "", "", fmt.Errorf("%s uses [%s], a label of the other axis; the axes never share labels: use one of %s, or [Other]",
			name, l, bracketList(CardLabels(axis)))
	case rest == "":
		return "", "", fmt.Errorf("%s has a label but no text after it", name)
	}
	for _, m := range bracketedSpan.FindAllStringSubmatch(rest, -1) {
		if _, _, isLabel := lookupLabel(m[1]); isLabel {
			return "", "", fmt.Errorf("%s has a second label [%s] after [%s]; keep exactly one label, at the start", name, m[1], l)
		}
	}
	return l, rest, nil
}

func bracketList(labels []string) string {
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = "[" + l + "]"
	}
	return strings.Join(out, ", ")
}

// bracketedSpan finds bracketed spans, to spot a second label.
var bracketedSpan = regexp.MustCompile(`\[([^\[\]]{1,60})\]`)

// clipText cuts s to at most n bytes, at a rune boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
