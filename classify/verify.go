package classify

import (
	"strings"

	"github.com/groundwork/curate/quote"
	"github.com/groundwork/curate/record"
)

// Verifier checks that quotes occur in a target's text, by the rule every
// stage shares (package quote).
type Verifier = quote.Verifier

// NewVerifier returns a Verifier over the target's own prose (see
// quote.ForDocument).
func NewVerifier(doc *record.Document) *Verifier { return quote.ForDocument(doc) }

// citingSentences returns, for each edge, the sentences that cite it,
// folded as the Verifier folds text: the page's mention sentences naming
// its bibliography key, and its citation contexts (the page's mentions
// again and Semantic Scholar's, for an edge the bibliography lacks the
// only ones).
func citingSentences(doc *record.Document, edges []record.Edge) [][]string {
	byKey := map[string][]string{}
	if doc != nil {
		for _, m := range doc.Mentions {
			f := quote.Fold(m.Sentence)
			for _, k := range m.RefKeys {
				byKey[k] = append(byKey[k], f)
			}
		}
	}
	out := make([][]string, len(edges))
	for i, e := range edges {
		if e.RefKey != nil {
			out[i] = append(out[i], byKey[*e.RefKey]...)
		}
		for _, c := range e.Contexts {
			out[i] = append(out[i], quote.Fold(c))
		}
	}
	return out
}

// cites reports whether quote lies within one of the (folded) sentences:
// a quote supports a source only as a sentence that cites it, or a part of
// one. A sentence of the paper that cites another reference, or none (a
// passage telling the model which references are sources, say), supports
// nothing about this one.
func cites(q string, sentences []string) bool {
	f := quote.Fold(q)
	for _, s := range sentences {
		if strings.Contains(s, f) {
			return true
		}
	}
	return false
}
