package tei

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/groundwork/curate/parse/latexml"
)

// GROBID's own metadata mistakes that the TEI itself shows: an abstract
// left in the body ("Abstract. ..." as its first paragraph, or a section
// headed "Abstract") while the header has none, and an author repeated in
// a spelling cut where an accented letter stood ("Guy Par" beside "Guy
// Paré"). Each correction is said in Conversion.Notes. Mistakes only
// another record shows (a repository banner taken for the title) are the
// caller's to correct (package pdfs, with Semantic Scholar's record).

// leadingAbstract moves an abstract GROBID left at the start of the body
// into Document.Abstract, when the header gave none.
func (p *parser) leadingAbstract() {
	d := p.doc
	if d.Abstract != "" {
		return
	}
	if len(d.Preamble) > 0 {
		if t, ok := latexml.CutAbstractPrefix(d.Preamble[0]); ok && t != "" {
			d.Abstract = t
			p.abstractMentions(SectionPreamble, d.Preamble[0])
			d.Preamble = d.Preamble[1:]
			p.note("abstract read from the paragraph \"Abstract ...\" that opens the body (the tei header has none)")
			return
		}
	}
	if len(d.Sections) == 0 {
		return
	}
	first := &d.Sections[0]
	if h := strings.ToLower(strings.Trim(first.Heading, " .:")); h == "abstract" && len(first.Sections) == 0 && len(first.Paragraphs) > 0 {
		d.Abstract = strings.Join(first.Paragraphs, "\n")
		p.abstractMentions(first.ID, d.Abstract)
		d.Sections = d.Sections[1:]
		p.note("abstract read from the body's first section, headed \"Abstract\" (the tei header has none)")
		return
	}
	if len(first.Paragraphs) > 0 {
		if t, ok := latexml.CutAbstractPrefix(first.Paragraphs[0]); ok && t != "" {
			d.Abstract = t
			p.abstractMentions(first.ID, first.Paragraphs[0])
			first.Paragraphs = first.Paragraphs[1:]
			p.note("abstract read from the paragraph \"Abstract ...\" that opens the body (the tei header has none)")
		}
	}
}

// abstractMentions gives the citing sentences of text (the abstract as
// the body held it), recorded under sectionID, the abstract's id, without
// the "Abstract." that opened the first.
func (p *parser) abstractMentions(sectionID, text string) {
	for i := range p.doc.Mentions {
		m := &p.doc.Mentions[i]
		if m.SectionID == sectionID && strings.Contains(text, m.Sentence) {
			m.SectionID = SectionAbstract
			m.Sentence, _ = latexml.CutAbstractPrefix(m.Sentence)
		}
	}
}

// dropRepeatedAuthors removes from names the exact repeats of a name
// (case aside) and the spellings of one cut short where an accented letter
// stood ("Guy Par" of "Guy Paré"), and says so.
func (p *parser) dropRepeatedAuthors() {
	names := p.doc.Authors
	kept := names[:0:0]
	for i, a := range names {
		if other, ok := fullerSpelling(a, names, i); ok {
			p.note(fmt.Sprintf("author %q dropped: a spelling of %q cut short", a, other))
			continue
		}
		kept = append(kept, a)
	}
	p.doc.Authors = kept
}

// fullerSpelling returns the name in names, other than the i-th, that a
// (names[i]) is a repeat or a cut spelling of: the same name (an earlier
// one), or one that goes on from a with a letter outside ASCII.
func fullerSpelling(a string, names []string, i int) (string, bool) {
	la := strings.ToLower(a)
	for j, b := range names {
		if j == i {
			continue
		}
		lb := strings.ToLower(b)
		if lb == la && j < i {
			return b, true
		}
		if len(lb) > len(la) && strings.HasPrefix(lb, la) {
			if r, _ := utf8.DecodeRuneInString(lb[len(la):]); r >= utf8.RuneSelf {
				return b, true
			}
		}
	}
	return "", false
}

// metadata corrects what the TEI shows of GROBID's metadata mistakes.
func (p *parser) metadata() {
	p.leadingAbstract()
	p.dropRepeatedAuthors()
}
