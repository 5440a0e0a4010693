package summarize

import "strings"

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

// Labels returns the labels of axis, without Other.
func Labels(axis string) []string {
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
		for _, l := range Labels(ax) {
			if labelKey(l) == k {
				return l, ax, true
			}
		}
	}
	return "", "", false
}

// IsLabel reports whether label is a canonical label of axis or Other.
func IsLabel(axis, label string) bool {
	if label == Other {
		return true
	}
	for _, l := range Labels(axis) {
		if l == label {
			return true
		}
	}
	return false
}
