package tuples

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
)

// MaxClaimWords is the longest claim that counts as one statement.
const MaxClaimWords = 60

// Atomic reports whether claim states one thing, as far as is cheap to
// tell: one sentence, of at most MaxClaimWords words. why says what
// failed.
func Atomic(claim string) (why string, ok bool) {
	claim = strings.TrimSpace(claim)
	switch n := len(strings.Fields(claim)); {
	case n == 0:
		return "the claim is empty", false
	case n > MaxClaimWords:
		return fmt.Sprintf("the claim is %d words long (at most %d)", n, MaxClaimWords), false
	}
	if n := len(latexml.SentenceBounds(claim, nil)); n > 1 {
		return fmt.Sprintf("the claim is %d sentences", n), false
	}
	return "", true
}

// Terms are a paper's own terms and what explains each: the coined name
// its title opens with ("Vexor: contrastive sampling for ...") and the
// abbreviations and names it defines in its prose ("retrieval-augmented
// generation (RAG)", "we introduce Vexor, which ..."). An explanation
// may be empty when the paper gives none the rule can find.
type Terms map[string]string

// wellKnown are abbreviations every reader of a paper's field knows: a
// paper that spells one out does not make it its own.
var wellKnown = map[string]bool{
	"AI": true, "ML": true, "NLP": true, "LLM": true, "LLMs": true, "RL": true, "GPU": true, "GPUs": true,
	"CPU": true, "API": true, "CNN": true, "CNNs": true, "RNN": true, "RNNs": true, "LSTM": true, "GAN": true,
	"GANs": true, "BERT": true, "GPT": true, "SQL": true, "URL": true, "HTML": true, "PDF": true, "JSON": true,
	"QA": true, "MT": true, "ASR": true, "OCR": true, "IoT": true, "DNA": true, "RNA": true, "MRI": true,
	"SOTA": true, "BLEU": true, "ROUGE": true, "AUC": true, "MSE": true, "RMSE": true, "F1": true,
}

var (
	// abbreviationDef is a definition "words (ABBR)": an abbreviation of
	// two capitals or more, a plural s allowed.
	abbreviationDef = regexp.MustCompile(`((?:[\p{L}\d][\p{L}\d'-]*\s+){1,8})\(([\p{Lu}][\p{L}\d-]*[\p{Lu}\d][\p{L}\d-]*)\)`)
	// nameDef is "we introduce/propose/present Name, which/a ..." with a
	// capitalised coined name.
	nameDef = regexp.MustCompile(`\b(?:[Ww]e|[Tt]his paper|[Tt]his work) (?:introduce|introduces|propose|proposes|present|presents|call|name|dub)s? ([\p{Lu}][\p{L}\d-]+)\s*,\s*([^.;]{3,})`)
	// paperParts are references into the paper itself.
	paperParts = regexp.MustCompile(`(?i)\b(section|sec\.|table|tab\.|figure|fig\.|eq\.|eqn\.|equation|appendix|algorithm|alg\.|listing)\s*\(?[0-9ivx]+\b|\bappendix [A-Z]\b`)
	// citationMark is a numbered citation: [12], [3, 4], [5-7].
	citationMark = regexp.MustCompile(`\[\s*\d+(?:\s*[,;–-]\s*\d+)*\s*\]`)
)

// openers are words that, opening a claim, point at something the claim
// does not say.
var openers = map[string]bool{"it": true, "this": true, "these": true, "they": true, "its": true, "their": true, "such": true, "those": true, "he": true, "she": true}

// TermsOf returns the paper's own terms (see Terms).
func TermsOf(doc *record.Document) Terms {
	t := Terms{}
	if doc == nil {
		return t
	}
	if doc.Title != nil {
		if name, rest, ok := strings.Cut(*doc.Title, ":"); ok {
			name = strings.TrimSpace(name)
			if words := strings.Fields(name); len(words) == 1 && coined(name) {
				t[name] = lowerFirst(strings.TrimSpace(rest))
			}
		}
	}
	var texts []string
	texts = append(texts, doc.Abstract)
	var walk func([]record.Section)
	walk = func(ss []record.Section) {
		for _, s := range ss {
			texts = append(texts, s.Paragraphs...)
			walk(s.Sections)
		}
	}
	walk(doc.Sections)
	for _, text := range texts {
		text = strings.Join(strings.Fields(text), " ")
		for _, m := range abbreviationDef.FindAllStringSubmatch(text, -1) {
			abbr := m[2]
			if wellKnown[abbr] || wellKnown[strings.TrimSuffix(abbr, "s")] {
				continue
			}
			if _, ok := t[abbr]; !ok || t[abbr] == "" {
				t[abbr] = expansion(strings.Fields(m[1]), abbr)
			}
		}
		for _, m := range nameDef.FindAllStringSubmatch(text, -1) {
			if name := m[1]; coined(name) && !wellKnown[name] && t[name] == "" {
				t[name] = strings.TrimSpace(m[2])
			}
		}
	}
	return t
}

// expansion picks, from the words before "(ABBR)", those that spell it:
// back to the word that starts with the abbreviation's first letter, at
// most as many words as it has letters and two more.
func expansion(words []string, abbr string) string {
	first := unicode.ToLower([]rune(abbr)[0])
	max := len([]rune(abbr)) + 2
	for i := len(words) - 1; i >= 0 && len(words)-i <= max; i-- {
		if r := []rune(words[i]); unicode.ToLower(r[0]) == first {
			return strings.ToLower(strings.Join(words[i:], " "))
		}
	}
	return ""
}

// coined reports whether a word can be a name of the paper's own: one
// capitalised word of letters, digits and hyphens ("Vexor", "FooNet",
// "RAG-2"). Where it stands (a title's head, "we introduce X,") says
// whether it is one.
func coined(w string) bool {
	r := []rune(w)
	if len(r) < 2 || !unicode.IsUpper(r[0]) {
		return false
	}
	for _, c := range r[1:] {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '-' {
			return false
		}
	}
	return true
}

func lowerFirst(s string) string {
	r := []rune(s)
	if len(r) > 1 && unicode.IsUpper(r[0]) && !unicode.IsUpper(r[1]) {
		r[0] = unicode.ToLower(r[0])
	}
	return string(r)
}

// SelfContained reports whether claim stands on its own, as far as is
// cheap to tell: it does not point into the paper (its sections, tables,
// figures, equations, numbered citations), it does not open with a
// pronoun that refers outside it, and every term of the paper's own it
// uses is explained in it (its explanation, or a parenthesis, beside it).
// why says what failed.
func SelfContained(claim string, terms Terms) (why string, ok bool) {
	if m := paperParts.FindString(claim); m != "" {
		return fmt.Sprintf("it refers to the paper's %q", m), false
	}
	if m := citationMark.FindString(claim); m != "" {
		return fmt.Sprintf("it cites a reference by number (%s)", m), false
	}
	if f := strings.Fields(claim); len(f) > 0 && openers[strings.ToLower(strings.Trim(f[0], ",;:"))] {
		return fmt.Sprintf("it opens with %q, which refers outside the claim", f[0]), false
	}
	lower := strings.ToLower(claim)
	for term, expl := range terms {
		if !hasWord(claim, term) {
			continue
		}
		if strings.Contains(claim, term+" (") || strings.Contains(claim, "("+term+")") ||
			strings.Contains(claim, term+", a ") || strings.Contains(claim, term+", which ") ||
			expl != "" && strings.Contains(lower, strings.ToLower(expl)) {
			continue
		}
		return fmt.Sprintf("it uses %q, a term of the paper's own, without saying what it is", term), false
	}
	return "", true
}

// hasWord reports whether w occurs in s as a whole word.
func hasWord(s, w string) bool { return wordIndex(s, w) >= 0 }

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' }

func lastRune(s string) rune {
	r := []rune(s)
	return r[len(r)-1]
}
