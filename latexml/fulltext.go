package latexml

import (
	"strings"

	"github.com/groundwork/curate/record"
)

// fullText renders the readable text of a Document: title, abstract,
// preamble and sections with their headings, one paragraph per line and a
// blank line between blocks.
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
