package summarize

import (
	"errors"
	"fmt"
	"github.com/groundwork/curate/paperprompt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/injection"
	"github.com/groundwork/curate/record"
)

// HeuristicPromptVersion is the prompt version the heuristic backend
// records: the version of its extraction rules. Bump it when they change.
const HeuristicPromptVersion = "heuristic-v2"

// ErrTooLittleText means the heuristic found too few sentences to fill a
// card's fields with different sentences.
var ErrTooLittleText = errors.New("too little text for an extractive card")

// Limits on the sentences the heuristic extracts.
const (
	minSentenceBytes = 30
	maxSentenceBytes = 600
	minSentenceWords = 6
)

// Cue phrases, matched case-insensitively at a word start.
var (
	gapCues   = []string{"however", "remains", "remain ", "lack", "challeng", "limited", "limitation", "unclear", "no existing", "open question", "open problem", "little is known", "poorly understood", "unknown", "difficult", "struggle", "fail"}
	claimCues = []string{"we show", "we find", "we found", "we demonstrate", "our results", "we prove", "results show", "results suggest", "we observe", "we establish", "experiments show", "this shows", "we confirm"}
	// methodCues come in two tiers: announcing a contribution, then
	// merely describing the work.
	methodCues  = []string{"we propose", "we introduce", "we present", "we develop", "our approach", "our method", "we design", "we construct", "we build", "we derive", "we formulate"}
	methodCues2 = []string{"in this paper", "in this work", "this paper", "this work", "here we", "we study", "we investigate", "we use", "we employ", "we apply", "we consider", "we analy", "we examine", "we explore"}
	resultCues  = []string{"outperform", "improv", "achiev", "we show", "we find", "we found", "we observe", "results", "accuracy", "significant", "reduc", "increas", "%", "yield", "reveal", "demonstrat", "consistent"}
	takeCues    = []string{"suggest", "implication", "future", "should", "we conclude", "in conclusion", "highlight", "promising", "recommend", "opens", "pave", "important", "lesson", "limitation"}
	priorCues   = []string{"prior work", "previous", "existing", "recent work", "recently", "building on", "builds on", "inspired by", "extends", "following", "earlier work", "literature"}
)

// material is the text the heuristic picks sentences from.
type material struct {
	title      string
	abstract   []string
	intro      []string
	results    []string
	conclusion []string
	mentions   []string // citing sentences of the introduction and related work
	level      string
}

// Heuristic writes the card of kind for paper without a model: an
// extractive, deterministic card made of the paper's own sentences (see
// the package documentation for the rules). It records model
// llm.HeuristicModel and prompt version HeuristicPromptVersion, and its
// cards pass the same validation as a model's. It fails with ErrNoText
// for a paper without text and ErrTooLittleText when the text has fewer
// usable sentences than a card needs.
func Heuristic(paper Input, kind string) (*record.Card, error) {
	if err := checkKind(kind); err != nil {
		return nil, fmt.Errorf("summarize %s card of %s: %w", kind, paper.Key, err)
	}
	m, err := gather(paper)
	if err != nil {
		return nil, fmt.Errorf("summarize %s card of %s: heuristic: %w", kind, paper.Key, err)
	}
	card, err := m.card(kind)
	if err != nil {
		return nil, fmt.Errorf("summarize %s card of %s: heuristic: %w", kind, paper.Key, err)
	}
	if err := finish(card, kind, llm.HeuristicModel, HeuristicPromptVersion); err != nil {
		// A bug in the rules, not in the paper: the heuristic builds cards
		// to pass validation.
		return nil, fmt.Errorf("summarize %s card of %s: heuristic card fails validation: %w", kind, paper.Key, err)
	}
	return card, nil
}

// gather collects the sentences of paper by role.
func gather(paper Input) (*material, error) {
	m := &material{title: paper.title(), level: paper.Level()}
	if m.level == "" {
		return nil, ErrNoText
	}
	m.abstract = usable(paperprompt.Sentences(paper.abstract()))
	if record.IsFullText(m.level) {
		doc := paper.Doc
		prio := map[string]int{} // section id -> priority, for mentions
		var firstBody []string
		var walk func(ss []record.Section, parentPrio int, top bool)
		walk = func(ss []record.Section, parentPrio int, top bool) {
			for _, s := range ss {
				p := paperprompt.SectionPriority(s)
				if !top && parentPrio != paperprompt.PriorityRest {
					p = parentPrio
				}
				prio[s.ID] = p
				text := strings.Join(s.Paragraphs, " ")
				if firstBody == nil && p < paperprompt.PriorityAppendix && strings.TrimSpace(text) != "" {
					firstBody = usable(paperprompt.Sentences(text))
				}
				switch p {
				case paperprompt.PriorityIntro:
					m.intro = append(m.intro, usable(paperprompt.Sentences(text))...)
				case paperprompt.PriorityResults:
					m.results = append(m.results, usable(paperprompt.Sentences(text))...)
				case paperprompt.PriorityConclusion:
					m.conclusion = append(m.conclusion, usable(paperprompt.Sentences(text))...)
				}
				walk(s.Sections, p, false)
			}
		}
		walk(doc.Sections, paperprompt.PriorityRest, true)
		if len(m.intro) == 0 {
			// No section called an introduction: the paper's opening text is.
			if len(doc.Sections) == 0 {
				m.intro = usable(paperprompt.Sentences(strings.Join(doc.Preamble, " ")))
			} else {
				m.intro = firstBody
			}
		}
		for _, mn := range doc.Mentions {
			if p, ok := prio[mn.SectionID]; ok && (p == paperprompt.PriorityIntro || p == paperprompt.PriorityRest) {
				m.mentions = append(m.mentions, usable([]string{mn.Sentence})...)
			}
		}
		m.mentions = unique(m.mentions)
	}
	if len(m.abstract)+len(m.intro) < 2 {
		return nil, ErrTooLittleText
	}
	return m, nil
}

// card builds the card's fields from m.
func (m *material) card(kind string) (*record.Card, error) {
	used := map[string]bool{}
	front := append(slices.Clip(m.abstract), m.intro...)

	gap := pick(used, withCue(front, gapCues, claimCues), front)
	if gap == "" {
		return nil, ErrTooLittleText
	}
	used[gap] = true

	method := pick(used, withCue(m.abstract, methodCues, nil), withCue(m.intro, methodCues, nil),
		withCue(m.abstract, methodCues2, nil), withCue(m.intro, methodCues2, nil), m.abstract, m.intro)
	if method == "" {
		return nil, ErrTooLittleText
	}
	used[method] = true

	// The claim: a finding sentence, else the abstract read from its end
	// (where abstracts state what they found), that passes the claim test.
	var claim string
	for _, list := range [][]string{withCue(m.abstract, claimCues, nil), withCue(m.intro, claimCues, nil), reversed(m.abstract), m.intro} {
		for _, s := range list {
			if !used[s] && checkClaim(s, gap) == nil {
				claim = s
				break
			}
		}
		if claim != "" {
			break
		}
	}
	if claim == "" {
		return nil, ErrTooLittleText
	}
	used[claim] = true

	card := &record.Card{
		ProblemGap:  "[" + opportunityLabel(m.title, m.abstract, gap) + "] " + gap,
		CoreClaim:   claim,
		Method:      "[" + paradigmLabel(m.title, m.abstract, method) + "] " + method,
		Inspiration: m.inspiration(),
	}
	if kind == record.CardSource {
		card.Results = m.resultsText(used)
		card.Takeaways = m.takeawaysText(used)
	}
	return card, nil
}

func (m *material) inspiration() string {
	picked := first(3, withCue(m.mentions, priorCues, nil), withCue(m.mentions, gapCues, nil), m.mentions)
	if len(picked) == 0 {
		picked = first(3, withCue(m.abstract, priorCues, nil), withCue(m.intro, priorCues, nil))
	}
	if len(picked) == 0 {
		if m.level == record.TextAbstract {
			return "Only the abstract was available, and it does not name the earlier work the idea builds on."
		}
		return "The paper's text does not name the earlier work the idea builds on."
	}
	return strings.Join(picked, " ")
}

func (m *material) resultsText(used map[string]bool) string {
	// The results sections when there are any, their result sentences
	// first; else the findings the conclusion and abstract report.
	picked := first(3, without(used, withCue(m.results, resultCues, nil)), without(used, m.results))
	if len(picked) == 0 {
		picked = first(3, without(used, withCue(m.conclusion, resultCues, nil)),
			without(used, withCue(m.abstract, claimCues, nil)), without(used, withCue(m.abstract, resultCues, nil)))
	}
	if len(picked) == 0 {
		picked = first(1, without(used, reversed(m.abstract)), reversed(m.abstract))
	}
	for _, s := range picked {
		used[s] = true
	}
	return strings.Join(picked, " ")
}

func (m *material) takeawaysText(used map[string]bool) string {
	picked := first(2, without(used, withCue(m.conclusion, takeCues, nil)), without(used, m.conclusion))
	if len(picked) == 0 {
		picked = first(1, without(used, withCue(m.abstract, takeCues, nil)), without(used, reversed(m.abstract)), reversed(m.abstract))
	}
	return strings.Join(picked, " ")
}

// citeMarker is a numeric citation marker with the spaces before it:
// "[2]", "[3, 4]", "[5–7]". A first number of 0 is an interval ("[0, 1]"),
// not a citation.
var citeMarker = regexp.MustCompile(`\s*\[[1-9]\d{0,3}(?:\s*[,;–-]\s*[1-9]\d{0,3})*\]`)

// citeNounWords are the words after which a citation marker stands for a
// paper ("as shown in [2]", "see [3]"): cut out, it would leave the
// sentence broken.
var citeNounWords = map[string]bool{
	"in": true, "by": true, "see": true, "from": true, "of": true, "to": true, "and": true, "or": true, "with": true,
	"cf": true, "following": true, "than": true, "as": true, "like": true, "unlike": true, "on": true, "at": true,
	"for": true, "e.g": true, "i.e": true, "ref": true, "refs": true, "reference": true, "references": true,
}

// withoutCitations returns s without its numeric citation markers, the
// target's bibliography numbers, which would read as the instance's
// "Document N" numbering; ok is false when a marker stands for a paper
// (at the start of the sentence or after a word such as "in" or "see"),
// so the sentence cannot be quoted without it.
func withoutCitations(s string) (string, bool) {
	locs := citeMarker.FindAllStringIndex(s, -1)
	if locs == nil {
		return s, true
	}
	for _, l := range locs {
		before := strings.TrimRightFunc(s[:l[0]], func(r rune) bool { return unicode.IsSpace(r) || r == '(' })
		words := strings.Fields(strings.ToLower(before))
		if len(words) == 0 || citeNounWords[strings.Trim(words[len(words)-1], ".,;:()")] {
			return "", false
		}
	}
	return citeMarker.ReplaceAllString(s, ""), true
}

// usable keeps the sentences of a size worth quoting, without citation
// markers.
func usable(ss []string) []string {
	var out []string
	for _, s := range ss {
		s, ok := withoutCitations(s)
		if !ok {
			continue
		}
		// "Document 3" in a paper's own text would read as the numbering
		// that cards must not use.
		// Keyword lines and links are not statements.
		low := strings.ToLower(s)
		if strings.HasPrefix(low, "keywords") || strings.HasPrefix(low, "key words") || strings.Contains(low, "http") {
			continue
		}
		// A sentence that addresses a model is no statement of the paper.
		if len(s) >= minSentenceBytes && len(s) <= maxSentenceBytes && len(strings.Fields(s)) >= minSentenceWords && !documentRef.MatchString(s) &&
			!injection.Addresses(s) {
			out = append(out, s)
		}
	}
	return out
}

func unique(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func reversed(ss []string) []string {
	out := slices.Clone(ss)
	slices.Reverse(out)
	return out
}

func without(used map[string]bool, ss []string) []string {
	var out []string
	for _, s := range ss {
		if !used[s] {
			out = append(out, s)
		}
	}
	return out
}

// pick returns the first sentence of the lists, in order, not yet used.
func pick(used map[string]bool, lists ...[]string) string {
	for _, l := range lists {
		for _, s := range l {
			if !used[s] {
				return s
			}
		}
	}
	return ""
}

// first returns up to n distinct sentences from the lists, in order.
func first(n int, lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, s := range l {
			if len(out) == n {
				return out
			}
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// withCue returns the sentences that contain one of cues and none of
// except.
func withCue(ss []string, cues, except []string) []string {
	var out []string
	for _, s := range ss {
		low := strings.ToLower(s)
		if hasCue(low, cues) && !hasCue(low, except) {
			out = append(out, s)
		}
	}
	return out
}

// hasCue reports whether low contains a cue starting at a word start.
func hasCue(low string, cues []string) bool {
	for _, c := range cues {
		for off := 0; ; {
			i := strings.Index(low[off:], c)
			if i < 0 {
				break
			}
			i += off
			if i == 0 || !isWordRune(rune(low[i-1])) || !isWordRune(rune(c[0])) {
				return true
			}
			off = i + 1
		}
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// A labelRule maps keywords to one label. A keyword ending in "*" matches
// words that start with it; any other keyword matches the whole word.
type labelRule struct {
	label string
	words []string
}

// opportunityRules are the heuristic's keyword rules for the opportunity
// axis, in tie-break order: rarer, more specific signals first, the broad
// Evidence and Bridge patterns last (Bridge last of all: it is the label an
// LLM summarizer collapses onto, so a tie never resolves to it).
func opportunityRules() []labelRule {
	return []labelRule{
		{record.Puzzle, []string{"paradox*", "surpris*", "contradict*", "trade-off*", "tradeoff*", "puzzl*", "counterintuitive*", "counter-intuitive*", "conflicting", "tension*", "inconsisten*", "discrepanc*"}},
		{record.FailureRisk, []string{"robust*", "bias", "biases", "biased", "safety", "unsafe", "privacy", "risk*", "brittle*", "uncertain*", "unreliab*", "reliab*", "reproducib*", "secur*", "attack*", "adversar*", "fail*", "hallucinat*", "vulnerab*", "misalign*", "backdoor*"}},
		{record.Resource, []string{"efficien*", "inefficien*", "cost*", "expensive", "scalab*", "scaling", "compute", "computational*", "memory", "latency", "speed*", "cheap*", "budget*", "scarc*", "resource*"}},
		{record.Explanation, []string{"theorem*", "bound", "bounds", "proof*", "prove*", "formal*", "explain*", "explanation*", "mechanis*", "why", "understand*", "theoretical*", "causal*"}},
		{record.Scope, []string{"generaliz*", "generalis*", "transfer*", "assumption*", "assume*", "realistic", "unrealistic", "restrictive", "out-of-distribution", "regime*", "heterogene*", "nonlinear*", "non-linear*"}},
		{record.Evidence, []string{"benchmark*", "measur*", "evaluat*", "dataset*", "metric*", "quantif*", "assess*", "diagnos*", "audit*", "estimat*", "observ*", "validat*", "test", "testing"}},
		{record.Bridge, []string{"bridg*", "unif*", "connect*", "reconcil*", "integrat*", "interdisciplin*", "cross-domain"}},
	}
}

// paradigmRules are the keyword rules for the method axis, in tie-break
// order; Synthesis comes last for the reason Bridge does, and bridging
// words only count for it (never "combine", which the taxonomy keeps out
// of Synthesis).
func paradigmRules() []labelRule {
	return []labelRule{
		{record.Formal, []string{"theorem*", "bound", "bounds", "proof*", "prove*", "formal*", "deriv*", "defin*", "taxonom*", "axiom*", "lemma*", "analytic*", "closed-form", "equation*", "formulat*"}},
		{record.Robustify, []string{"robust*", "debias*", "mitigat*", "defen*", "safety", "privacy", "reliab*", "calibrat*", "uncertaint*"}},
		{record.Optimization, []string{"efficien*", "optimi*", "search*", "tuning", "scalab*", "scaling", "speed*", "fast*", "allocat*", "select*", "accelerat*", "cost*", "cheap*", "compress*", "prun*", "quantiz*"}},
		{record.RelaxExtend, []string{"generaliz*", "generalis*", "extend*", "extension*", "transfer*", "relax*", "broader", "broaden*", "assumption*", "adapt*", "nonlinear*", "non-linear*", "arbitrary"}},
		{record.Artifact, []string{"framework*", "system", "systems", "tool", "tools", "toolkit*", "library", "libraries", "platform*", "software", "prototyp*", "open-source", "implement*", "pipeline*", "device*"}},
		{record.Empirical, []string{"benchmark*", "measur*", "evaluat*", "dataset*", "empiric*", "survey*", "analys*", "analyz*", "quantif*", "characteriz*", "characteris*", "audit*", "diagnos*", "estimat*", "compar*", "experiment*", "simulat*", "observ*"}},
		{record.Synthesis, []string{"bridg*", "unif*", "reconcil*", "integrat*", "connect*"}},
	}
}

// opportunityLabel scores the opportunity rules on the title and the gap
// sentence (weight 2 each) and the abstract (weight 1).
func opportunityLabel(title string, abstract []string, gap string) string {
	return bestLabel(opportunityRules(), title, abstract, gap)
}

// paradigmLabel scores the paradigm rules on the title and the method
// sentence (weight 2 each) and the abstract (weight 1).
func paradigmLabel(title string, abstract []string, method string) string {
	return bestLabel(paradigmRules(), title, abstract, method)
}

// bestLabel returns the rule with the highest score, the earlier rule on a
// tie, and Other when no keyword occurs at all.
func bestLabel(rules []labelRule, title string, abstract []string, focus string) string {
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !isWordRune(r) && r != '-' })
	}
	weighted := []struct {
		text string
		w    int
	}{{title, 2}, {focus, 2}, {strings.Join(abstract, " "), 1}}
	best, bestScore := record.Other, 0
	for _, r := range rules {
		score := 0
		for _, t := range weighted {
			for _, w := range words(t.text) {
				if matchesAny(w, r.words) {
					score += t.w
				}
			}
		}
		if score > bestScore {
			best, bestScore = r.label, score
		}
	}
	return best
}

func matchesAny(word string, keys []string) bool {
	for _, k := range keys {
		if stem, ok := strings.CutSuffix(k, "*"); ok {
			if strings.HasPrefix(word, stem) {
				return true
			}
		} else if word == k {
			return true
		}
	}
	return false
}
