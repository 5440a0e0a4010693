package summarize

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// contentWords returns the set of lower-cased words of three or more
// letters or digits in s, stopwords left out.
func contentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if utf8.RuneCountInString(w) >= 3 && !stopword(w) {
			out[w] = true
		}
	}
	return out
}

func stopword(w string) bool {
	switch w {
	case "the", "and", "for", "that", "this", "with", "from", "are", "was", "were", "its",
		"their", "they", "these", "those", "which", "what", "when", "where", "while", "into",
		"onto", "than", "then", "thus", "such", "can", "could", "would", "should", "will",
		"not", "but", "has", "have", "had", "been", "being", "also", "how", "why", "who",
		"our", "ours", "we", "claim", "there", "here", "each", "both", "any", "all", "one",
		"more", "most", "other", "only", "over", "under", "between", "about", "whether":
		return true
	}
	return false
}

// jaccard is |a∩b| / |a∪b|, 0 for two empty sets.
func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
