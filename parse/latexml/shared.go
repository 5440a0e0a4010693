package latexml

import (
	"strings"

	"github.com/groundwork/curate/parse/sentence"
	"github.com/groundwork/curate/record"
)

// FullText renders the readable text of a Document from its structure:
// title, abstract, preamble and sections with their headings, one
// paragraph per line and a blank line between blocks. Parsers that build
// a Document rather than walk a page (the TEI parser) use it; Parse itself
// writes a page's full text in page order as it walks it, so that nothing
// readable is lost (boxes, notes, floats outside any section).
func FullText(d *record.Document) string { return fullText(d) }

func fullText(d *record.Document) string {
	var b strings.Builder
	block := func(s string) {
		if s == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(s)
	}
	if d.Title != nil {
		block(*d.Title)
	}
	if d.Abstract != "" {
		block("Abstract\n" + d.Abstract)
	}
	for _, p := range d.Preamble {
		block(p)
	}
	var sections func([]record.Section)
	sections = func(ss []record.Section) {
		for _, s := range ss {
			h := strings.TrimSpace(s.Number + " " + s.Heading)
			block(h)
			for _, p := range s.Paragraphs {
				block(p)
			}
			sections(s.Sections)
		}
	}
	sections(d.Sections)
	return b.String()
}

// SentenceBounds splits text into sentences as Parse does for citing
// sentences and returns their [start, end) byte ranges. cites are the
// [start, end) ranges of the citations in text, in order: no boundary
// falls inside one, and a citation right after a sentence's final period
// belongs to that sentence.
func SentenceBounds(text string, cites [][2]int) [][2]int { return sentence.Bounds(text, cites) }

// sentenceBounds is SentenceBounds over the citation spans the text
// writer records.
func sentenceBounds(text string, cites []citeSpan) [][2]int {
	spans := make([][2]int, len(cites))
	for i, c := range cites {
		spans[i] = [2]int{c.start, c.end}
	}
	return sentence.Bounds(text, spans)
}

// CutAbstractPrefix returns the text of a paragraph that opens with the
// word "Abstract" as a label ("Abstract. We ...", "ABSTRACT: ...",
// "Abstract — ..."), without it, and whether it does.
func CutAbstractPrefix(t string) (string, bool) {
	if !hasAbstractPrefix(t) {
		return t, false
	}
	return trimAbstractPrefix(t), true
}

// startsLower and periodEnds are the sentence rule's, which the
// reference-title reader shares.
func startsLower(s string) bool     { return sentence.StartsLower(s) }
func periodEnds(before string) bool { return sentence.PeriodEnds(before) }
