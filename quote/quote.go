// Package quote checks that quotes occur verbatim in a paper: the rule
// every stage that asks a model for evidence applies (classify's quotes
// of a reference's role, the idea tuples' quotes of each claim), so that a
// model's paraphrase or invention never passes as the paper's words.
package quote

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
)

// MinWords is the shortest quote that counts as evidence: a two-word
// quote ("we propose") occurs in almost any paper and supports nothing.
const MinWords = 3

// Verifier checks that quotes occur in a target's text. Matching is
// verbatim up to presentation: both sides are folded the same way
// (Unicode compatibility forms, so ligatures and full-width letters match
// their plain letters; every dash to '-', every quotation mark to ' or ";
// soft hyphens and zero-width characters removed; runs of whitespace to one
// space, and none before a closing mark (, . ; : ! ? ) ]) or after an
// opening bracket; a hyphen between a letter and a lower-case letter across
// whitespace removed, so "multi-\nple" and "multi- ple" match "multiple").
// Case, words and punctuation must agree.
type Verifier struct {
	folded string
	orig   string
	start  []int32 // start[i]: offset in orig of the rune that gave folded byte i
	end    []int32 // end[i]: offset in orig just after that rune
}

// pieceBreak separates the texts a Verifier searches, so that no quote
// matches across two of them: a private-use character no quote contains.
const pieceBreak = "\n\ue000\n"

// ForDocument returns a Verifier over the paper's own prose: its title,
// abstract, preamble and sections (latexml.FullText of its structure, not
// the page's FullText, which also holds the author block and the
// bibliography: a reference's own entry is no evidence of how the paper
// uses it, nor of what the paper claims), its table captions and its
// mention sentences, which also cover the footnotes and figure captions.
// Semantic Scholar contexts are not the paper's text here: they come from
// a PDF extraction, not from the page.
func ForDocument(doc *record.Document) *Verifier {
	var b strings.Builder
	if doc != nil {
		b.WriteString(latexml.FullText(doc))
		for _, t := range doc.Tables {
			b.WriteString(pieceBreak)
			b.WriteString(t.Caption)
		}
		for _, m := range doc.Mentions {
			b.WriteString(pieceBreak)
			b.WriteString(m.Sentence)
		}
	}
	return New(b.String())
}

// New returns a Verifier over text.
func New(text string) *Verifier {
	// Folding rarely grows text, so one allocation each is the rule.
	v := &Verifier{orig: text, start: make([]int32, 0, len(text)), end: make([]int32, 0, len(text))}
	var f folder
	f.fold(text, func(s string, from, to int) {
		for range len(s) {
			v.start = append(v.start, int32(from))
			v.end = append(v.end, int32(to))
		}
	})
	v.folded = f.b.String()
	return v
}

// Find returns the text that quote matches, as it stands in the paper,
// and whether there is one. Quotes shorter than MinWords words never
// match.
func (v *Verifier) Find(quote string) (string, bool) {
	q := Fold(quote)
	if len(strings.Fields(q)) < MinWords {
		return "", false
	}
	i := strings.Index(v.folded, q)
	if i < 0 {
		return "", false
	}
	return v.orig[v.start[i]:v.end[i+len(q)-1]], true
}

// Fold folds s as a Verifier folds the paper's text, for a caller that
// matches folded text itself (the sentences citing a reference).
func Fold(s string) string {
	var f folder
	f.fold(s, func(string, int, int) {})
	return strings.TrimSpace(f.b.String())
}

// folder writes the folded form of a text, reporting for every piece it
// writes the byte range of the input it came from.
type folder struct {
	b            strings.Builder
	pendingSpace bool
	spaceFrom    int
	last         rune // last rune written
}

func (f *folder) fold(s string, emit func(out string, from, to int)) {
	write := func(out string, from, to int) {
		if f.pendingSpace && f.b.Len() > 0 && !closing(out) && !opening(f.last) {
			f.b.WriteByte(' ')
			emit(" ", f.spaceFrom, from)
		}
		f.pendingSpace = false
		f.b.WriteString(out)
		emit(out, from, to)
		f.last, _ = utf8.DecodeLastRuneInString(out)
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		from, to := i, i+size
		i = to
		switch {
		case r == '\u00ad' || r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\u2060' || r == '\ufeff':
			continue
		case unicode.IsSpace(r):
			if !f.pendingSpace {
				f.pendingSpace, f.spaceFrom = true, from
			}
			continue
		}
		out := foldRune(r)
		if out == "-" && unicode.IsLetter(f.last) && !f.pendingSpace {
			// A line-break hyphen: "-", whitespace, then a lower-case letter.
			j := i
			for j < len(s) {
				r2, n := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsSpace(r2) {
					break
				}
				j += n
			}
			if j > i && j < len(s) {
				if r2, _ := utf8.DecodeRuneInString(s[j:]); unicode.IsLower(r2) {
					i = j
					continue
				}
			}
		}
		write(out, from, to)
	}
}

// closing reports whether a folded piece is a mark that closes what
// precedes it, and opening whether r opens what follows: the space between
// is presentation, dropped. A conversion leaves one where it took out a
// footnote mark or a citation ("small gradients¹." read as "small
// gradients ."), a model types the sentence back without it.
func closing(out string) bool {
	return len(out) == 1 && strings.IndexByte(",.;:!?)]", out[0]) >= 0
}

func opening(r rune) bool { return r == '(' || r == '[' }

// foldRune maps one rune to its folded form.
func foldRune(r rune) string {
	if r < utf8.RuneSelf {
		if r == '`' {
			return "'"
		}
		return string(r)
	}
	switch r {
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\u2043', '\ufe58', '\ufe63', '\uff0d':
		return "-"
	case '\u2018', '\u2019', '\u201a', '\u201b', '\u2032', '\u2035', '\u00b4', '\u2039', '\u203a':
		return "'"
	case '\u201c', '\u201d', '\u201e', '\u201f', '\u2033', '\u2036', '\u00ab', '\u00bb':
		return "\""
	}
	s := norm.NFKC.String(string(r))
	if s == string(r) {
		return s
	}
	// Compatibility forms may expand into runes that fold further
	// (a full-width hyphen, "…" into "...").
	var b strings.Builder
	for _, c := range s {
		if c == r {
			b.WriteRune(c)
			continue
		}
		b.WriteString(foldRune(c))
	}
	return b.String()
}
