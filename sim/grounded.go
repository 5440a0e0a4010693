package sim

import (
	"strings"
)

// A diligent model writes a paper's idea card from what the paper says:
// its gap, claim and method in the paper's own terms. cardAnswer takes
// them from the abstract the card prompt carries, with the card's coined
// words woven in (see weave) so that no two cards share a run of five
// words.

// abstractSentences returns the sentences of the abstract in a card
// prompt (the paragraph after its "Abstract" line), or of the first
// paragraph after the "Text:" line when there is no such line.
func abstractSentences(user string) []string {
	text := user
	if i := strings.Index(text, "\nAbstract\n"); i >= 0 {
		text = text[i+len("\nAbstract\n"):]
	} else if i := strings.Index(text, "\nText:"); i >= 0 {
		text = text[i+len("\nText:"):]
		if j := strings.Index(text, "\n"); j >= 0 {
			text = text[j:]
		}
	}
	text = strings.TrimLeft(text, "\n")
	if i := strings.Index(text, "\n\n"); i >= 0 {
		text = text[:i]
	}
	var out []string
	for _, s := range strings.SplitAfter(strings.Join(strings.Fields(text), " "), ". ") {
		if s = strings.TrimSpace(s); len(strings.Fields(s)) >= 4 {
			out = append(out, strings.TrimSuffix(s, "."))
		}
	}
	return out
}

// weave returns the words of sentence with one of coined after every
// third word, in turn: no five words in a row are then the paper's alone
// (the abstracts of a world share phrases), and most words of the card are
// still the paper's own.
func weave(sentence string, coined ...string) string {
	words := strings.Fields(sentence)
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
			if i%3 == 0 && len(coined) > 0 {
				b.WriteString(coined[(i/3-1)%len(coined)])
				b.WriteByte(' ')
			}
		}
		b.WriteString(w)
	}
	return b.String()
}
