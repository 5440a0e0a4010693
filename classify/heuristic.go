package classify

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/groundwork/curate/record"
)

// HeuristicPromptVersion is the prompt version the heuristic backend
// records: it has no prompt, so this names its rule set. Bump it when a
// rule or weight changes, so stored selections are redone.
const HeuristicPromptVersion = "heuristic-v1"

// The heuristic's weights and limits; the package documentation explains
// each rule.
const (
	wInfluential       = 3.0
	wIntentMethodology = 2.0
	wIntentResult      = 1.0
	wIntentBackground  = 0.5
	mentionCap         = 4.0
	wSpread            = 0.5 // per top-level section beyond the first
	spreadCap          = 1.5
	wCueExtends        = 2.5
	wCueFoundation     = 2.5
	wCueMotivates      = 2.0
	wCueGap            = 1.5
	penaltyTool        = 2.0
	penaltyBaseline    = 1.5
	penaltyResource    = 1.0
	threshold          = 3.0
	floor              = 1.5
	minSources         = 3
	maxSources         = 8
	maxQuotes          = 3
)

// sectionWeights weighs a citing sentence by the kind of section it is in.
var sectionWeights = map[string]float64{
	kindAbstract:   1.0,
	kindIntro:      1.0,
	kindMethod:     1.0,
	kindBody:       0.6,
	kindExperiment: 0.5,
	kindRelated:    0.4,
	kindDiscussion: 0.4,
	kindAppendix:   0.2,
	"":             0.5, // a Semantic Scholar context: section unknown
}

// listFactor discounts a sentence that cites many references at once: one
// entry of "[4, 22, 27, 28]" owes the sentence less than a lone citation.
func listFactor(cited int) float64 {
	switch {
	case cited <= 2:
		return 1
	case cited <= 4:
		return 0.5
	}
	return 0.25
}

// Cue families, in the order their labels are listed.
const (
	cueMotivates = iota
	cueGap
	cueFoundation
	cueExtends
	numCues
)

var cueLabels = [numCues]string{record.LabelMotivates, record.LabelExposesGap, record.LabelFoundation, record.LabelExtends}
var cueWeights = [numCues]float64{wCueMotivates, wCueGap, wCueFoundation, wCueExtends}

// cue is a phrase of a citing sentence that says how the target uses the
// reference. Phrases are matched in the lower-cased sentence. The
// motivates, foundation and extends cues count only in a sentence that
// speaks of the target itself ("we", "our", "this paper"): "[3] is based
// on [2]" says nothing about the target.
type cue struct {
	family int
	re     *regexp.Regexp
}

var cues = []cue{
	{cueMotivates, regexp.MustCompile(`\b(inspired|motivated) by\b|\b(draw|draws|drew|take|takes|took) inspiration\b`)},
	{cueGap, regexp.MustCompile(`\bhowever\b.*\b(fail|fails|failed|failing|struggle|struggles|cannot|unable)\b`)},
	{cueGap, regexp.MustCompile(`\blimitations?\b|\b(leaves|left|remains|remain) open\b|\bopen (question|problem)s?\b|\bunlike\b|\bcannot\b`)},
	{cueFoundation, regexp.MustCompile(`\b(we )?buil(d|ds|ding|t)( [a-z]+ly)? (on|upon)\b|\bbased( [a-z]+ly)? on\b|\bwe follow\b`)},
	{cueExtends, regexp.MustCompile(`\bwe extend\b|\bextends\b|\bextending\b|\ban extension of\b|\bwe generali[sz]e\b`)},
}

var firstPerson = regexp.MustCompile(`\b(we|our|ours|us)\b|\bthis (work|paper|study|article)\b|\bhere\b|\bthe present (work|paper|study)\b`)

// toolPhrases mark a sentence that uses a reference as a tool, dataset or
// benchmark rather than building on its ideas.
var toolPhrases = []string{"we use", "we used", "we employ", "we utilize", "we utilise", "we apply", "using the",
	"implemented in", "implemented with", "implementation of", "optimizer", "dataset", "data set", "benchmark",
	"corpus", "corpora", "library", "toolkit", "software", "package", "pre-trained", "pretrained", "checkpoint",
	"trained on", "evaluated on", "evaluate on", "available at", "github", "we finetune", "we fine-tune"}

// compareWords mark a sentence comparing the target's results with a
// reference's.
var compareWords = []string{"outperform", "compared to", "compared with", "comparison", "baseline", "better than",
	"versus", "vs.", "surpass", "state-of-the-art", "state of the art"}

// resourceTitleWords in a reference's title say it is a resource.
var resourceTitleWords = []string{"dataset", "data set", "benchmark", "corpus", "treebank", "toolkit", "library",
	"software", "model card", "system card"}

// evidence is one sentence that cites a reference.
type evidence struct {
	sentence string
	kind     string // section kind; "" for a Semantic Scholar context
	heading  string // its top-level section's heading
	cited    int    // references the sentence cites; 0 when unknown
	table    bool   // a table row ("ConvS2S [9] | 25.16 | …"), not prose
}

// scored is the heuristic's view of one edge.
type scored struct {
	index     int
	score     float64
	prose     []evidence
	tableRows int
	sections  []string          // top-level headings of the prose mentions, in order
	cues      [numCues][]string // distinct cue phrases found, per family
	cueFactor [numCues]float64
	notes     []string // penalties applied
	quotes    []string // verified citing sentences, best first
}

// heuristic classifies every edge of g from the evidence the pipeline has.
func heuristic(doc *record.Document, g *record.Graph, keys []string, target string) *record.Selections {
	secs := sectionMap(doc)
	ver := NewVerifier(doc)
	byKey := map[string][]record.Mention{}
	if doc != nil {
		for _, m := range doc.Mentions {
			for _, k := range m.RefKeys {
				byKey[k] = append(byKey[k], m)
			}
		}
	}
	// A sentence citing several references is read once.
	memo := map[string][numCues]string{}
	cuesOf := func(sentence string) [numCues]string {
		c, ok := memo[sentence]
		if !ok {
			c = findCues(sentence)
			memo[sentence] = c
		}
		return c
	}
	all := make([]*scored, len(g.Edges))
	for i := range g.Edges {
		all[i] = score(i, &g.Edges[i], byKey, secs, ver, cuesOf)
	}

	// Sources: every quotable edge at or above the threshold, best first,
	// at most maxSources; then, if that gives fewer than minSources, the
	// best quotable edges above the floor. Nothing below the floor is ever
	// chosen, however few sources that leaves.
	ranked := make([]*scored, 0, len(all))
	for _, s := range all {
		if len(s.quotes) > 0 && s.score >= floor {
			ranked = append(ranked, s)
		}
	}
	slices.SortStableFunc(ranked, func(a, b *scored) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.index, b.index))
	})
	source := make([]bool, len(all))
	n := 0
	for _, s := range ranked {
		if n == maxSources || s.score < threshold && n >= minSources {
			break
		}
		source[s.index] = true
		n++
	}

	out := &record.Selections{
		TargetID:      target,
		Model:         HeuristicModel,
		PromptVersion: HeuristicPromptVersion,
		Selections:    make([]record.Selection, len(all)),
	}
	for i, s := range all {
		sel := record.Selection{
			TargetID:      target,
			RefKey:        keys[i],
			Role:          record.RoleOther,
			Model:         HeuristicModel,
			PromptVersion: HeuristicPromptVersion,
		}
		if source[i] {
			sel.Role = record.RoleSource
			sel.Labels = s.labels()
			sel.Rationale = s.rationale(&g.Edges[i], "")
			sel.Quotes = s.quotes[:min(len(s.quotes), maxQuotes)]
			out.QuotesKept += len(sel.Quotes)
		} else {
			why := fmt.Sprintf("score %.2f, a source needs %.1f", s.score, threshold)
			switch {
			case len(s.quotes) == 0 && s.score >= floor:
				why = fmt.Sprintf("score %.2f, but no citing sentence of the page to quote", s.score)
			case s.score >= threshold:
				why = fmt.Sprintf("score %.2f, below the %d strongest", s.score, maxSources)
			}
			sel.Rationale = s.rationale(&g.Edges[i], why)
		}
		out.Selections[i] = sel
	}
	out.Count()
	return out
}

// score gathers and weighs the evidence for edge e.
func score(i int, e *record.Edge, byKey map[string][]record.Mention, secs map[string]sectionInfo, ver *Verifier,
	cuesOf func(string) [numCues]string) *scored {
	s := &scored{index: i}
	seen := map[string]bool{}
	if e.RefKey != nil {
		for _, m := range byKey[*e.RefKey] {
			sent := strings.TrimSpace(m.Sentence)
			if sent == "" || seen[sent] {
				continue
			}
			seen[sent] = true
			info := secs[m.SectionID]
			ev := evidence{sentence: sent, kind: info.kind, heading: info.heading, cited: len(m.RefKeys)}
			if ev.kind == "" {
				ev.kind = kindBody
			}
			ev.table = strings.Contains(sent, " | ")
			if ev.table {
				s.tableRows++
			} else {
				s.prose = append(s.prose, ev)
			}
		}
	}
	for _, c := range e.Contexts {
		c = strings.TrimSpace(c)
		if c == "" || seen[c] {
			continue
		}
		seen[c] = true
		if strings.Contains(c, " | ") {
			s.tableRows++
			continue
		}
		s.prose = append(s.prose, evidence{sentence: c})
	}

	// Mentions, weighed by section and by how many references share the
	// sentence.
	m := 0.0
	for _, ev := range s.prose {
		m += sectionWeights[ev.kind] * listFactor(ev.cited)
		if ev.heading != "" && !slices.Contains(s.sections, ev.heading) {
			s.sections = append(s.sections, ev.heading)
		}
	}
	s.score = min(m, mentionCap)
	if len(s.sections) > 1 {
		s.score += min(wSpread*float64(len(s.sections)-1), spreadCap)
	}

	// Semantic Scholar's judgement, when there is an S2 edge.
	if e.IsInfluential {
		s.score += wInfluential
	}
	best := 0.0
	for _, in := range e.Intents {
		switch in {
		case "methodology":
			best = max(best, wIntentMethodology)
		case "result":
			best = max(best, wIntentResult)
		case "background":
			best = max(best, wIntentBackground)
		}
	}
	s.score += best

	// Cue phrases: each family counts once, with the list factor of its
	// best sentence.
	positive := false
	allTool, allExperiment, compares := len(s.prose) > 0, len(s.prose) > 0, s.tableRows > 0
	for _, ev := range s.prose {
		low := strings.ToLower(ev.sentence)
		for c, phrase := range cuesOf(ev.sentence) {
			if phrase == "" {
				continue
			}
			s.cueFactor[c] = max(s.cueFactor[c], listFactor(ev.cited))
			if !slices.Contains(s.cues[c], phrase) {
				s.cues[c] = append(s.cues[c], phrase)
			}
			if c != cueGap {
				positive = true
			}
		}
		if !containsAny(low, toolPhrases) {
			allTool = false
		}
		if ev.kind != kindExperiment {
			allExperiment = false
		}
		if containsAny(low, compareWords) {
			compares = true
		}
	}
	for c := range numCues {
		s.score += cueWeights[c] * s.cueFactor[c]
	}

	// Penalties for references the target uses or compares against
	// rather than builds on.
	switch {
	case positive:
	case allTool:
		s.score -= penaltyTool
		s.notes = append(s.notes, "mentioned only as a tool, dataset or benchmark it uses")
	case allExperiment && compares || len(s.prose) == 0 && s.tableRows > 0:
		s.score -= penaltyBaseline
		s.notes = append(s.notes, "mentioned only in experiments, as a comparison")
	}
	if e.Title != nil && containsAny(" "+strings.ToLower(*e.Title)+" ", resourceTitleWords) {
		s.score -= penaltyResource
		s.notes = append(s.notes, "its title names a resource")
	}

	// Rounded, so that float sums such as 0.4+0.4+… compare with the
	// threshold as their decimal values do.
	s.score = math.Round(s.score*1e6) / 1e6

	// Quotes: the prose citing sentences that occur in the target, those
	// with a cue first, then by section weight, then in document order.
	order := make([]int, len(s.prose))
	for k := range order {
		order[k] = k
	}
	rank := func(ev evidence) (bool, float64) {
		hasCue := false
		for _, p := range cuesOf(ev.sentence) {
			hasCue = hasCue || p != ""
		}
		return hasCue, sectionWeights[ev.kind] * listFactor(ev.cited)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ca, wa := rank(s.prose[a])
		cb, wb := rank(s.prose[b])
		if ca != cb {
			if ca {
				return -1
			}
			return 1
		}
		return cmp.Compare(wb, wa)
	})
	for _, k := range order {
		if q, ok := ver.Find(s.prose[k].sentence); ok && !slices.Contains(s.quotes, q) {
			s.quotes = append(s.quotes, q)
		}
	}
	return s
}

// findCues returns, for each cue family, the phrase found in sentence, or
// "".
func findCues(sentence string) [numCues]string {
	var found [numCues]string
	low := strings.ToLower(sentence)
	self := firstPerson.MatchString(low)
	for _, c := range cues {
		if found[c.family] != "" || c.family != cueGap && !self {
			continue
		}
		if loc := c.re.FindStringSubmatchIndex(low); loc != nil {
			found[c.family] = cuePhrase(low, loc)
		}
	}
	if found[cueFoundation] == "" && self && followingCue(sentence) {
		found[cueFoundation] = "following"
	}
	return found
}

// followingCue reports a "following" that credits a reference: followed
// by a citation ("following [3]"), a name ("following Smith et al."), or a
// determiner with a citation within eight words ("following the setup of
// [3]"); not "the following sections" or "following aggregate shocks".
func followingCue(sentence string) bool {
	words := strings.Fields(sentence)
	for i, w := range words {
		if strings.ToLower(strings.Trim(w, ",.;:()")) != "following" || i+1 == len(words) {
			continue
		}
		if i > 0 && strings.ToLower(words[i-1]) == "the" {
			continue
		}
		next := words[i+1]
		bare := strings.ToLower(strings.Trim(next, ",.;:()[]"))
		switch {
		case slices.Contains(notWorks, bare):
		case strings.HasPrefix(next, "[") || strings.HasPrefix(next, "("):
			return true
		case unicode.IsUpper([]rune(next)[0]):
			return true
		case slices.Contains(determiners, bare):
			for _, x := range words[i+2 : min(i+10, len(words))] {
				if strings.ContainsAny(x, "[(") || strings.HasPrefix(x, "al.") {
					return true
				}
			}
		}
	}
	return false
}

// After "following", these words start a work's method or setup; those in
// notWorks start a part of the target itself.
var (
	determiners = []string{"the", "their", "its", "his", "her", "prior", "previous", "recent", "earlier", "standard", "common", "established"}
	notWorks    = []string{"section", "sections", "table", "tables", "figure", "figures", "fig", "eq", "equation", "equations", "appendix", "theorem", "lemma", "definition", "steps", "way", "form"}
)

// cuePhrase is the matched phrase for a rationale, with a long "however …
// fails" span shortened to its ends.
func cuePhrase(low string, loc []int) string {
	m := low[loc[0]:loc[1]]
	if strings.HasPrefix(m, "however") && len(loc) >= 4 && loc[2] >= 0 {
		return "however … " + low[loc[2]:loc[3]]
	}
	return m
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// labels returns the labels the cues support, in canonical order;
// foundation when no cue named one.
func (s *scored) labels() []string {
	var out []string
	for _, l := range record.Labels() {
		for c := range numCues {
			if cueLabels[c] == l && len(s.cues[c]) > 0 {
				out = append(out, l)
			}
		}
	}
	if len(out) == 0 {
		out = []string{record.LabelFoundation}
	}
	return out
}

// rationale states the evidence in one sentence, e.g. "Cited 4 times, in
// Introduction and Method; S2 marks it influential; 'we build on'.", and
// for an edge that is no source, why not.
func (s *scored) rationale(e *record.Edge, why string) string {
	var parts []string
	switch n := len(s.prose); {
	case n == 0 && s.tableRows == 0:
		parts = append(parts, "Not cited in the text")
	case n == 0:
		parts = append(parts, fmt.Sprintf("Cited only in %s", plural(s.tableRows, "table row")))
	default:
		p := "Cited " + times(n)
		if len(s.sections) > 0 {
			p += ", in " + joinList(s.sections, 3)
		}
		if s.tableRows > 0 {
			p += fmt.Sprintf(" (and in %s)", plural(s.tableRows, "table row"))
		}
		parts = append(parts, p)
	}
	if e.IsInfluential {
		parts = append(parts, "S2 marks it influential")
	}
	if len(e.Intents) > 0 {
		parts = append(parts, "S2 intents "+strings.Join(e.Intents, ", "))
	}
	for c := range numCues {
		for _, p := range s.cues[c] {
			parts = append(parts, "'"+p+"'")
		}
	}
	parts = append(parts, s.notes...)
	if why != "" {
		parts = append(parts, why)
	}
	return strings.Join(parts, "; ") + "."
}

func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// joinList joins "A", "A and B", "A, B and C", at most max items.
func joinList(items []string, most int) string {
	extra := 0
	if len(items) > most {
		items, extra = items[:most], len(items)-most
	}
	var s string
	switch len(items) {
	case 1:
		s = items[0]
	default:
		s = strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
	}
	if extra > 0 {
		s = strings.Join(items, ", ") + fmt.Sprintf(" and %d more sections", extra)
	}
	return s
}
