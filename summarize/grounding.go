package summarize

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/groundwork/curate/injection"
	"github.com/groundwork/curate/record"
)

// DefaultMinGrounding is the share of a gold card's claim words that must
// occur in the paper's own abstract and introduction (see Grounded). It is
// set from real pages (go test ./summarize -run TestGroundingThreshold -v
// prints the figures):
//
//   - the heuristic's extractive gold cards score 1.00 on the 15 recorded
//     arXiv and ar5iv pages with text, on the demo corpus (6) and on a
//     150-target simulated world (85);
//   - abstractive cards written by hand from 13 of the recorded pages, in
//     the manner of a careful model: its own words, not the paper's
//     sentences (testdata/grounding/abstractive.json), score 0.69 to 0.97,
//     median 0.88;
//   - the simulated model's gold cards score 0.89 to 0.91 on the demo
//     corpus (5) and 0.83 to 0.87 on the simulated world (150);
//   - cards dictated by a planted instruction (testdata/grounding/
//     dictated.json: advertising, a plea to reviewers, unrelated claims, a
//     prompt leak, self-citation, a product pitch in the paper's own field)
//     score 0.00 to 0.40, median 0.10, against the recorded pages, and at
//     most 0.13 and 0.14 against the demo's and the world's.
//
// 0.5 leaves a margin of 0.19 below the lowest careful card and 0.10 above
// the highest dictated one: a dictated card that borrows most of the
// paper's own words passes, one that says something else does not.
const DefaultMinGrounding = 0.5

// Reasons a gold card is not grounded (the prefix of each).
const (
	SuspectUngrounded   = "ungrounded_gold"
	SuspectInstructions = "instruction_like_text_in_gold"
)

// Grounded returns how far a gold card stands on its paper and why it is
// suspect, if it is: its claims (problem_gap, core_claim and method,
// without their labels) share less than min of their content words
// (stemmed, stopwords and the words of research itself left out) with the
// paper's abstract and introduction (the first body section when none is
// called an introduction), the sentences of those that address a model
// left out; or a field of the card addresses a model itself (package
// injection). min ≤ 0 turns the overlap rule off.
func Grounded(card *record.Card, paper Input, min float64) (*record.Grounding, []string) {
	g := &record.Grounding{Min: min}
	g.Overlap, g.ClaimWords = overlap(card, groundWords(paper))
	var why []string
	if min > 0 && g.Overlap < min {
		why = append(why, fmt.Sprintf("%s: %.0f%% of the gold card's %d claim words occur in the paper's abstract and introduction, below %.0f%%",
			SuspectUngrounded, 100*g.Overlap, g.ClaimWords, 100*min))
	}
	var fields []injection.Text
	for f, v := range card.Fields() {
		fields = append(fields, injection.Text{Where: "the gold card's " + f.Name, Body: *v})
	}
	if found := injection.Scan(fields); len(found) > 0 {
		g.Instructions = found
		why = append(why, fmt.Sprintf("%s: %s", SuspectInstructions, found[0]))
	}
	return g, why
}

// groundWords returns the stemmed content words of the text a gold card
// must be grounded in: the paper's abstract and introduction as the
// heuristic reads them, without the sentences that address a model.
func groundWords(in Input) map[string]bool {
	parts := []string{in.abstract()}
	if m, err := gather(in); err == nil {
		parts = append(parts, m.intro...)
	}
	text := strings.Join(parts, "\n")
	if in.Doc != nil {
		text = injection.Strip(text, injection.ScanDocument(in.Doc, nil))
	}
	return stems(text)
}

// claimText is what a card claims: its gap, claim and method, without
// their labels.
func claimText(c *record.Card) string {
	_, gap, _ := record.ParseCardLabel(c.ProblemGap, record.AxisOpportunity)
	_, how, _ := record.ParseCardLabel(c.Method, record.AxisParadigm)
	return strings.Join([]string{gap, c.CoreClaim, how}, "\n")
}

// overlap is the share of the card's claim words that occur in ground,
// and how many claim words there are.
func overlap(c *record.Card, ground map[string]bool) (share float64, words int) {
	claim := stems(claimText(c))
	if len(claim) == 0 {
		return 0, 0
	}
	n := 0
	for w := range claim {
		if ground[w] {
			n++
		}
	}
	return float64(n) / float64(len(claim)), len(claim)
}

// stems returns the content words of s (three or more letters or digits,
// stopwords and generic words left out, lower-cased) with common English
// suffixes cut, so that "routes", "routing" and "routed" meet.
func stems(s string) map[string]bool {
	out := map[string]bool{}
	for w := range contentWords(s) {
		if st := stem(w); !genericStem[st] {
			out[st] = true
		}
	}
	return out
}

// genericStem holds the stems of the words of research itself ("we
// propose a new method for the problem"), which any card shares with any
// paper and which ground nothing.
var genericStem = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`paper work study research method approach model system result
		new novel existing current prior previous recent first every many most some well
		show propose present introduce use based make take give find provide allow
		problem task data field area question issue gap claim idea way
		able need known often also even yet still much large small high low good best better`) {
		m[stem(w)] = true
	}
	return m
}()

// stem cuts a common English suffix, and a final e, from a lower-cased
// word: "densities" and "density" meet, as do "routes", "routing" and
// "routed"; "across" and "analysis" keep their s.
func stem(w string) string {
	n := utf8.RuneCountInString(w)
	switch {
	case n >= 5 && (strings.HasSuffix(w, "ies") || strings.HasSuffix(w, "ied")):
		w = strings.TrimSuffix(strings.TrimSuffix(w, "ies"), "ied") + "y"
	case n >= 8 && strings.HasSuffix(w, "ations"):
		w = strings.TrimSuffix(w, "ations")
	case n >= 7 && strings.HasSuffix(w, "ation"):
		w = strings.TrimSuffix(w, "ation")
	case n >= 6 && strings.HasSuffix(w, "ings"):
		w = strings.TrimSuffix(w, "ings")
	case n >= 6 && strings.HasSuffix(w, "ing"):
		w = strings.TrimSuffix(w, "ing")
	case n >= 5 && strings.HasSuffix(w, "es") && !strings.HasSuffix(w, "ses"):
		w = strings.TrimSuffix(w, "es")
	case n >= 5 && strings.HasSuffix(w, "ed"):
		w = strings.TrimSuffix(w, "ed")
	case n >= 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = strings.TrimSuffix(w, "s")
	}
	if utf8.RuneCountInString(w) >= 5 {
		w = strings.TrimSuffix(w, "e")
	}
	return w
}
