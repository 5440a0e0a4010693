package tuples

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/groundwork/curate/injection"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
)

// The heuristic backend: an idea tuple made offline from the paper's own
// sentences, each picked for a field by cue words ("we propose" for the
// summary and the method, "however", "lack" for the motivations,
// "benchmark" for the settings, "improves" for the results) and where it
// stands (the abstract, the method section, ...). Its claims are the
// sentences themselves, citation marks taken out and the paper's own
// terms explained from the paper's definitions; a research question the
// paper does not state is the first motivation asked as one. It reads
// no meaning: a tuple it makes says so (record.IdeaTuples.Heuristic), and
// Build holds it to the same checks as a model's.

// HeuristicName is the heuristic backend's model name in records and
// digests: a new version makes the stored heuristic tuples again (v2: a
// method taken from the method sections when no cue names one).
const HeuristicName = "heuristic-cues-v2"

var (
	cueSummary   = regexp.MustCompile(`(?i)\b(we (introduce|propose|present|develop)|this (paper|work) (introduces|proposes|presents))\b`)
	cueMethod    = regexp.MustCompile(`(?i)\b(we (introduce|propose|present|develop|design|build|train|use|apply|extend|combine)|applies|consists? of|builds (directly )?on|is trained|trained with|our (method|approach|model|framework|system)|in (two|three|four|five|\d+) steps|algorithm|architecture|module|objective|procedure)\b`)
	cueMotive    = regexp.MustCompile(`(?i)\b(however|although|lose|loses|lack|lacks|lacking|limitations?|challeng\w*|fails?|failures?|struggles?|costly|expensive|bottlenecks?|breaks? down|gaps?|suffers?|difficult|unclear|remains? (open|unsolved|unclear|costly|hard|difficult)|is hard|are hard|hinders?|prohibitive)\b`)
	cueQuestion  = regexp.MustCompile(`(?i)(\?|\b(we ask|we investigate|we study|we explore|we examine|whether|research questions?|how (to|can|do|does)))`)
	cueSettings  = regexp.MustCompile(`(?i)\b(benchmarks?|datasets?|corpus|corpora|we evaluate|evaluated on|experiments?|baselines?|trained on|test sets?|metrics?|ablations?)\b`)
	cueResults   = regexp.MustCompile(`(?i)(\b(improv\w+|outperform\w*|achiev\w+|reduc\w+|gains?|points|accuracy|state-of-the-art|results show|we find|we show|speed-?ups?|faster|better than)\b|\d%)`)
	cueStep      = regexp.MustCompile(`(?i)\b(first|second|third|then|next|finally|each step|step \d|afterwards)\b`)
	skipHeadings = regexp.MustCompile(`(?i)reference|bibliograph|acknowledg|appendix|related work|background|funding|author|contribution statement|ethic|limitations? and|broader impact`)
	weDid        = regexp.MustCompile(`(?i)\bwe\b`)
	discourse    = regexp.MustCompile(`^(?i:however|moreover|furthermore|in addition|in contrast|in this paper|in this work|thus|therefore|hence|specifically|in particular|overall|finally|to this end)\s*,\s*`)
)

// methodHeadings are the words of a method section's heading.
var methodHeadings = []string{"method", "approach", "model", "framework", "architecture", "algorithm"}

// quotas are the most claims the heuristic takes for each field.
var quotas = map[string]int{
	record.TupleSummary: 1, record.TupleMethods: 3, record.TupleMotivations: 2,
	record.TupleResearchQuestions: 2, record.TupleExperimentalSettings: 2, record.TupleExpectedResults: 2,
}

// candidate is one sentence of the paper.
type candidate struct {
	text     string // as in the paper, white space collapsed
	abstract bool
	heading  string // the section's heading, lower case
	para     int    // paragraph number, for method steps
	used     bool
}

// Heuristic makes an idea tuple from doc's sentences (see above). A paper
// with no usable sentence gives an empty tuple (every required field
// missing).
func Heuristic(doc *record.Document) record.IdeaTuple {
	terms := TermsOf(doc)
	cands := candidates(doc)
	t := record.IdeaTuple{Summary: []record.Claim{}, Motivations: []record.Claim{}, ResearchQuestions: []record.Claim{},
		Methods: []record.MethodClaim{}, ExperimentalSettings: []record.Claim{}, ExpectedResults: []record.Claim{}}

	pick := func(field string, score func(c *candidate) int) []int {
		var out []int
		for len(out) < quotas[field] {
			best, bestScore := -1, 0
			for i := range cands {
				c := &cands[i]
				if c.used {
					continue
				}
				if s := score(c); s > bestScore {
					if _, ok := claimOf(c.text, terms); ok {
						best, bestScore = i, s
					}
				}
			}
			if best < 0 {
				break
			}
			cands[best].used = true
			out = append(out, best)
		}
		return out
	}
	claim := func(i int) record.Claim {
		text, _ := claimOf(cands[i].text, terms)
		return record.Claim{Claim: text, Quote: cands[i].text}
	}
	count := func(re *regexp.Regexp, s string) int { return min(len(re.FindAllStringIndex(s, -1)), 3) }
	in := func(c *candidate, words ...string) bool {
		for _, w := range words {
			if strings.Contains(c.heading, w) {
				return true
			}
		}
		return false
	}

	for _, i := range pick(record.TupleSummary, func(c *candidate) int {
		if !c.abstract {
			return 0
		}
		return 2 * count(cueSummary, c.text)
	}) {
		t.Summary = append(t.Summary, claim(i))
	}
	for _, i := range pick(record.TupleMethods, func(c *candidate) int {
		s := count(cueMethod, c.text)
		if s > 0 && in(c, methodHeadings...) {
			s += 2
		}
		return s
	}) {
		m := record.MethodClaim{Claim: claim(i).Claim, Quote: claim(i).Quote}
		for j := i + 1; j < len(cands) && cands[j].para == cands[i].para && !cands[i].abstract && len(m.Steps) < 4; j++ {
			if cands[j].used || !cueStep.MatchString(cands[j].text) {
				continue
			}
			if _, ok := claimOf(cands[j].text, terms); ok {
				cands[j].used = true
				m.Steps = append(m.Steps, claim(j))
			}
		}
		t.Methods = append(t.Methods, m)
	}
	for _, i := range pick(record.TupleMotivations, func(c *candidate) int {
		s := count(cueMotive, c.text)
		if s > 0 && (c.abstract || in(c, "introduction", "motivation")) {
			s++
		}
		return s
	}) {
		t.Motivations = append(t.Motivations, claim(i))
	}
	for _, i := range pick(record.TupleResearchQuestions, func(c *candidate) int { return count(cueQuestion, c.text) }) {
		t.ResearchQuestions = append(t.ResearchQuestions, claim(i))
	}
	for _, i := range pick(record.TupleExpectedResults, func(c *candidate) int {
		s := count(cueResults, c.text)
		if s > 0 && (c.abstract || in(c, "result", "experiment", "evaluation", "conclusion")) {
			s++
		}
		return s
	}) {
		t.ExpectedResults = append(t.ExpectedResults, claim(i))
	}
	for _, i := range pick(record.TupleExperimentalSettings, func(c *candidate) int {
		s := count(cueSettings, c.text)
		if s > 0 && in(c, "experiment", "evaluation", "setup", "setting", "dataset", "result") {
			s++
		}
		return s
	}) {
		t.ExperimentalSettings = append(t.ExperimentalSettings, claim(i))
	}

	// What the cues found nothing for, from what they did.
	if len(t.Motivations) == 0 {
		for i := range cands {
			if c := &cands[i]; c.abstract && !c.used {
				if _, ok := claimOf(c.text, terms); ok {
					c.used = true
					t.Motivations = append(t.Motivations, claim(i))
					break
				}
			}
		}
	}
	if len(t.Methods) == 0 && len(t.Summary) > 0 {
		t.Methods = append(t.Methods, record.MethodClaim{Claim: t.Summary[0].Claim, Quote: t.Summary[0].Quote})
	}
	if len(t.Methods) == 0 {
		// No cue names the method and no summary says it ("This study
		// examines ...", "We employed a within-subjects design ...", as
		// in a recorded PDF): a sentence of the method sections, one
		// saying what the authors did first.
		best := -1
		for i := range cands {
			c := &cands[i]
			if c.used || !in(c, methodHeadings...) {
				continue
			}
			if _, ok := claimOf(c.text, terms); !ok {
				continue
			}
			if best < 0 || weDid.MatchString(c.text) && !weDid.MatchString(cands[best].text) {
				best = i
			}
		}
		if best >= 0 {
			cands[best].used = true
			t.Methods = append(t.Methods, record.MethodClaim{Claim: claim(best).Claim, Quote: claim(best).Quote})
		}
	}
	if len(t.ResearchQuestions) == 0 && len(t.Motivations) > 0 {
		m := t.Motivations[0]
		q := "How can one overcome the following limitation: " + lowerFirst(strings.TrimSuffix(m.Claim, ".")) + "?"
		if _, ok := Atomic(q); ok {
			t.ResearchQuestions = append(t.ResearchQuestions, record.Claim{Claim: q, Quote: m.Quote})
		}
	}
	return t
}

// candidates returns the paper's usable sentences: the abstract's and
// the body's, not the bibliography's, appendices' or related work's, nor
// a sentence that addresses a model rather than its reader.
func candidates(doc *record.Document) []candidate {
	if doc == nil {
		return nil
	}
	var out []candidate
	para := 0
	add := func(text string, abstract bool, heading string) {
		para++
		text = strings.Join(strings.Fields(text), " ")
		for _, b := range latexml.SentenceBounds(text, nil) {
			s := text[b[0]:b[1]]
			// TeX left by the conversion (\omega, d_{k}) makes no
			// readable claim.
			if n := len(strings.Fields(s)); n < 5 || n > MaxClaimWords || injection.Addresses(s) || strings.ContainsAny(s, "\\{}") {
				continue
			}
			out = append(out, candidate{text: s, abstract: abstract, heading: heading, para: para})
		}
	}
	add(doc.Abstract, true, "abstract")
	var walk func([]record.Section, string)
	walk = func(ss []record.Section, parent string) {
		for _, s := range ss {
			h := strings.ToLower(strings.TrimSpace(parent + " " + s.Heading))
			if s.Appendix || skipHeadings.MatchString(s.Heading) {
				continue
			}
			for _, p := range s.Paragraphs {
				add(p, false, h)
			}
			walk(s.Sections, h)
		}
	}
	walk(doc.Sections, "")
	return out
}

// claimOf turns a sentence of the paper into a claim: citation marks and
// a leading discourse marker taken out, the paper's own terms explained
// where the paper explains them. ok is false when the claim would still
// lean on the paper (see SelfContained and Atomic).
func claimOf(sentence string, terms Terms) (string, bool) {
	c := citationMark.ReplaceAllString(sentence, "")
	c = strings.Join(strings.Fields(c), " ")
	c = strings.ReplaceAll(c, " .", ".")
	c = strings.ReplaceAll(c, " ,", ",")
	c = discourse.ReplaceAllString(c, "")
	if r := []rune(c); len(r) > 0 && unicode.IsLower(r[0]) {
		r[0] = unicode.ToUpper(r[0])
		c = string(r)
	}
	for term, expl := range terms {
		if expl == "" || !hasWord(c, term) {
			continue
		}
		if _, ok := SelfContained(c, Terms{term: expl}); ok {
			continue
		}
		i := wordIndex(c, term)
		c = c[:i+len(term)] + " (" + expl + ")" + c[i+len(term):]
	}
	if _, ok := Atomic(c); !ok {
		return "", false
	}
	if _, ok := SelfContained(c, terms); !ok || dangling(c) {
		return "", false
	}
	return c, true
}

// danglingEnd are words a sentence cannot end with: what stood after
// them was a citation or an equation the claim lost.
var danglingEnd = map[string]bool{"to": true, "of": true, "in": true, "by": true, "with": true, "and": true, "or": true,
	"see": true, "from": true, "as": true, "the": true, "a": true, "an": true, "on": true, "for": true, "is": true, "are": true}

// dangling reports whether a claim is cut short: it ends with a colon, or
// with a word that cannot end a sentence.
func dangling(c string) bool {
	c = strings.TrimSpace(c)
	if strings.HasSuffix(c, ":") {
		return true
	}
	f := strings.Fields(strings.TrimRight(c, ".!?"))
	return len(f) > 0 && danglingEnd[strings.ToLower(f[len(f)-1])]
}

// wordIndex returns where w first occurs in s as a whole word (-1 when
// it does not).
func wordIndex(s, w string) int {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return -1
		}
		j += i
		if (j == 0 || !isWordRune(lastRune(s[:j]))) && (j+len(w) == len(s) || !isWordRune([]rune(s[j+len(w):])[0])) {
			return j
		}
		i = j + len(w)
	}
}
