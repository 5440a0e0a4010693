package latexml

import "github.com/groundwork/curate/record"

// FullText renders the readable text of a Document the way Parse fills
// FullText: title, abstract, preamble and sections with their headings,
// one paragraph per line and a blank line between blocks. Other parsers
// of the same record (the TEI parser) use it, so that a Document's full
// text reads the same whatever it was parsed from.
func FullText(d *record.Document) string { return fullText(d) }

// SentenceBounds splits text into sentences as Parse does for citing
// sentences and returns their [start, end) byte ranges. cites are the
// [start, end) ranges of the citations in text, in order: no boundary
// falls inside one, and a citation right after a sentence's final period
// belongs to that sentence.
func SentenceBounds(text string, cites [][2]int) [][2]int {
	spans := make([]citeSpan, len(cites))
	for i, c := range cites {
		spans[i] = citeSpan{start: c[0], end: c[1]}
	}
	return sentenceBounds(text, spans)
}
