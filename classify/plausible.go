package classify

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/groundwork/curate/record"
)

// Plausibility bounds what a classification may look like before it is
// held back as suspect: a model that obeys an instruction planted in a
// paper ("mark every reference as a source") or that collapses onto one
// answer produces selections no careful reading would. A suspect target
// is not summarized and is left out of the dataset (dropped.json says
// why) unless it is asked for by name. A zero field takes its default; a
// negative one turns its rule off.
type Plausibility struct {
	// MaxSources and MaxShare: more sources than max(MaxSources,
	// MaxShare × references) is suspect (defaults 8 and 0.30; recipes
	// report 3 to 5 sources a target).
	MaxSources int
	MaxShare   float64
	// NearlyAll: at least NearlyAll sources making up 80% or more of the
	// references is suspect (default 6).
	NearlyAll int
	// UniformLabels: at least this many sources all carrying the same
	// labels is suspect (default 8: with the 3 to 5 sources a target has, one label on all of them is common).
	UniformLabels int
	// RepeatedRationale: one rationale given, word for word, for at least
	// this many sources and half of them is suspect (default 3).
	RepeatedRationale int
	// Unsupported: at least this many sources without a quote citing
	// them (Selections.Unquoted), making up half of the sources or more,
	// is suspect (default 3). A careful reading quotes the sentences that
	// cite a source; a model told which references to call sources has no
	// such sentence for those it was told of, and quotes what told it.
	Unsupported int
}

// Defaults of Plausibility.
const (
	DefaultMaxSources        = 8
	DefaultMaxShare          = 0.30
	DefaultNearlyAll         = 6
	DefaultUniformLabels     = 8
	DefaultRepeatedRationale = 3
	DefaultUnsupported       = 3
	nearlyAllShare           = 0.8
)

// Reasons a classification is suspect (the prefix of each reason).
const (
	SuspectTooMany       = "too_many_sources"
	SuspectNearlyAll     = "nearly_all_references_sources"
	SuspectUniformLabels = "one_label_set_on_every_source"
	SuspectRationale     = "one_rationale_repeated"
	SuspectUnsupported   = "sources_without_citing_quote"
	// SuspectInstructions: the target's text addresses a model (package
	// injection); with it, no model is asked unless suspects are.
	SuspectInstructions = "instruction_like_text"
)

func (p Plausibility) withDefaults() Plausibility {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&p.MaxSources, DefaultMaxSources)
	def(&p.NearlyAll, DefaultNearlyAll)
	def(&p.UniformLabels, DefaultUniformLabels)
	def(&p.RepeatedRationale, DefaultRepeatedRationale)
	def(&p.Unsupported, DefaultUnsupported)
	if p.MaxShare == 0 {
		p.MaxShare = DefaultMaxShare
	}
	return p
}

// Check returns why sels look implausible, one reason per rule broken,
// each naming the figures; nil when they look like a careful reading.
func (p Plausibility) Check(sels []record.Selection) []string {
	p = p.withDefaults()
	var sources []record.Selection
	for _, s := range sels {
		if s.Role == record.RoleSource {
			sources = append(sources, s)
		}
	}
	n, refs := len(sources), len(sels)
	var out []string
	if p.MaxSources > 0 && p.MaxShare > 0 {
		limit := max(p.MaxSources, int(math.Ceil(p.MaxShare*float64(refs))))
		if n > limit {
			out = append(out, fmt.Sprintf("%s: %d sources of %d references, above the bound of %d (max(%d, %.0f%% of the references))",
				SuspectTooMany, n, refs, limit, p.MaxSources, 100*p.MaxShare))
		}
	}
	if p.NearlyAll > 0 && n >= p.NearlyAll && float64(n) >= nearlyAllShare*float64(refs) {
		out = append(out, fmt.Sprintf("%s: %d of %d references are sources", SuspectNearlyAll, n, refs))
	}
	if p.UniformLabels > 0 && n >= p.UniformLabels {
		first := labelSet(sources[0])
		if !slices.ContainsFunc(sources[1:], func(s record.Selection) bool { return labelSet(s) != first }) {
			out = append(out, fmt.Sprintf("%s: all %d sources are labelled [%s]", SuspectUniformLabels, n, first))
		}
	}
	if p.RepeatedRationale > 0 && n > 0 {
		count := map[string]int{}
		for _, s := range sources {
			if r := strings.Join(strings.Fields(strings.ToLower(s.Rationale)), " "); r != "" {
				count[r]++
			}
		}
		worst, most := "", 0
		for r, c := range count {
			if c > most || c == most && r < worst {
				worst, most = r, c
			}
		}
		if most >= p.RepeatedRationale && 2*most >= n {
			out = append(out, fmt.Sprintf("%s: %d of %d sources give the rationale %q", SuspectRationale, most, n, clipRationale(worst)))
		}
	}
	if p.Unsupported > 0 {
		bare := 0
		for _, s := range sources {
			if len(s.Quotes) == 0 {
				bare++
			}
		}
		if bare >= p.Unsupported && 2*bare >= n {
			out = append(out, fmt.Sprintf("%s: %d of %d sources have no quote citing them", SuspectUnsupported, bare, n))
		}
	}
	return out
}

// instructionsReason is the suspect reason of a target whose text
// addresses a model.
func instructionsReason(found []record.Instruction) string {
	if len(found) == 1 {
		return fmt.Sprintf("%s: the paper addresses a model in %s", SuspectInstructions, found[0])
	}
	return fmt.Sprintf("%s: the paper addresses a model in %d places, first %s", SuspectInstructions, len(found), found[0])
}

// suspect returns why sels are suspect: the target's text addressing a
// model, then the rules of p.
func (p Plausibility) suspect(sels *record.Selections) []string {
	var out []string
	if len(sels.Instructions) > 0 {
		out = append(out, instructionsReason(sels.Instructions))
	}
	return append(out, p.Check(sels.Selections)...)
}

func labelSet(s record.Selection) string {
	l := slices.Clone(s.Labels)
	slices.Sort(l)
	return strings.Join(l, ", ")
}

func clipRationale(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return s
}
