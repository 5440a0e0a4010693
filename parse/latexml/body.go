package latexml

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/groundwork/curate/record"
)

// The body walk reads the article in document order. Each block of text
// (a heading, a paragraph, a footnote, a caption, a table's rows, a note
// under a table) is appended to the full text as it is met, so the full
// text keeps the page's order: a footnote follows its paragraph, a float
// its place, and text after the bibliography comes after the sections.

// pending are the floats and footnotes met inside a block of text, handled
// after the block itself.
type pending struct{ floats, notes []*html.Node }

// emit appends a block to the full text.
func (p *parser) emit(s string) {
	if s != "" {
		p.text = append(p.text, s)
	}
}

// after handles the floats and footnotes a block held.
func (p *parser) after(pd pending, sectionID string) {
	for _, f := range pd.floats {
		p.float(f, sectionID)
	}
	for _, nt := range pd.notes {
		p.footnote(nt, sectionID)
	}
}

// abstractText returns the abstract's paragraphs, without its heading, and
// the floats and footnotes they hold.
func (p *parser) abstractText(n *html.Node) (string, pending) {
	var parts []string
	var all pending
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if isHeading(c) || c.Type != html.ElementNode && c.Type != html.TextNode {
			continue
		}
		t, pd := p.para(c, SectionAbstract)
		if t != "" {
			parts = append(parts, t)
		}
		all.floats = append(all.floats, pd.floats...)
		all.notes = append(all.notes, pd.notes...)
	}
	return strings.Join(parts, "\n"), all
}

// top walks the article's direct content: sections, and text outside them.
func (p *parser) top(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch {
		case c == p.title || c == p.authorsDiv || c == p.abstract:
		case isBibliography(c):
			p.bibliographyText(c)
		case isSectionElem(c):
			p.doc.Sections = append(p.doc.Sections, p.section(c, 1))
		case hasClass(c, "ltx_keywords"):
			t, pd := p.para(c, SectionPreamble)
			p.emit(t)
			p.after(pd, SectionPreamble)
		case hasClass(c, "ltx_dates") || hasClass(c, "ltx_classification") ||
			hasClass(c, "ltx_pagination") || hasClass(c, "ltx_TOC") || c.DataAtom == atom.Nav:
		case isFloat(c):
			p.float(c, SectionPreamble)
		case hasClass(c, "ltx_para") || c.DataAtom == atom.P:
			p.preamblePara(c)
		case isHeading(c):
		default:
			switch {
			case find(c, func(x *html.Node) bool { return isSectionElem(x) || hasClass(x, "ltx_para") }) != nil:
				p.top(c)
			case hasClass(c, "ltx_titlepage") || hasClass(c, "ltx_block") || hasClass(c, "ltx_logical-block"):
				// A title page or block of front matter: its paragraphs may
				// hold the authors and an "Abstract:" paragraph.
				for _, b := range findAll(nil, c, func(x *html.Node) bool {
					return x != c && (x.DataAtom == atom.P || hasClass(x, "ltx_p") || isFloat(x))
				}) {
					if isFloat(b) {
						p.float(b, SectionPreamble)
					} else {
						p.preamblePara(b)
					}
				}
			default:
				t, pd := p.para(c, SectionPreamble)
				if t != "" {
					p.doc.Preamble = append(p.doc.Preamble, t)
					p.emit(t)
				}
				p.after(pd, SectionPreamble)
			}
		}
	}
}

// bibliographyText adds a bibliography to the full text where it stands:
// its heading, then one line per entry, label included.
func (p *parser) bibliographyText(b *html.Node) {
	var lines []string
	walk(b, func(x *html.Node) bool {
		switch {
		case x.Type != html.ElementNode:
		case isHeading(x) || hasClass(x, "ltx_bibitem"):
			if t := plainText(x); t != "" {
				lines = append(lines, t)
			}
			return false
		}
		return true
	})
	p.emit(strings.Join(lines, "\n"))
}

// leftovers handles the floats the walk did not reach (a table in some
// container no rule expected): better out of place at the end of the full
// text than lost. Floats of the author block, the bibliography and the
// table of contents are not the paper's.
func (p *parser) leftovers(article *html.Node) {
	var rec func(n *html.Node, sectionID string)
	rec = func(n *html.Node, sectionID string) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type != html.ElementNode:
			case c == p.authorsDiv || isBibliography(c) || hasClass(c, "ltx_TOC") || c.DataAtom == atom.Nav:
			case isFloat(c):
				if !p.seen[c] {
					p.float(c, sectionID)
				}
			case isSectionElem(c):
				rec(c, attr(c, "id"))
			default:
				rec(c, sectionID)
			}
		}
	}
	rec(article, SectionPreamble)
}

// preamblePara handles a paragraph outside every section: the "Abstract."
// paragraph of papers without an abstract block, author lines of papers
// without an author block, and the rest kept as preamble text.
func (p *parser) preamblePara(c *html.Node) {
	if p.doc.Abstract == "" && len(p.doc.Sections) == 0 {
		if t := plainText(c); hasAbstractPrefix(t) {
			t, pd := p.para(c, SectionAbstract)
			p.doc.Abstract = trimAbstractPrefix(t)
			p.emit("Abstract\n" + p.doc.Abstract)
			p.after(pd, SectionAbstract)
			return
		}
	}
	if p.authorsDiv == nil && len(p.doc.Authors) == 0 && p.doc.Abstract == "" && len(p.doc.Sections) == 0 {
		if bold := findAll(nil, c, func(x *html.Node) bool { return hasClass(x, "ltx_font_bold") }); len(bold) > 0 {
			var names []string
			for _, b := range bold {
				names = append(names, splitNames(authorText(b))...)
			}
			if len(names) == len(bold) {
				p.doc.Authors = names
				p.emit(plainText(c)) // the author line stays readable text
				return
			}
		}
	}
	t, pd := p.para(c, SectionPreamble)
	if t != "" {
		p.doc.Preamble = append(p.doc.Preamble, t)
		p.emit(t)
	}
	p.after(pd, SectionPreamble)
}

func hasAbstractPrefix(t string) bool {
	if len(t) < 9 || !strings.EqualFold(t[:8], "abstract") {
		return false
	}
	switch t[8] {
	case '.', ':', ' ':
		return true
	}
	return strings.HasPrefix(t[8:], "\u2014") || strings.HasPrefix(t[8:], "\u2013")
}

func trimAbstractPrefix(t string) string {
	t = t[8:]
	return strings.TrimSpace(strings.TrimLeft(t, ".: \u2014\u2013-"))
}

// section converts one sectioning element and everything inside it.
func (p *parser) section(n *html.Node, level int) record.Section {
	s := record.Section{
		ID:         attr(n, "id"),
		Level:      level,
		Appendix:   hasClass(n, "ltx_appendix"),
		Paragraphs: []string{},
	}
	p.prefix = ""
	p.blocks(n, &s, level)
	return s
}

// blocks collects the paragraphs, subsections and floats under n into s.
func (p *parser) blocks(n *html.Node, s *record.Section, level int) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode:
			if t := collapse(c.Data); t != "" {
				s.Paragraphs = append(s.Paragraphs, t)
				p.emit(t)
			}
		case c.Type != html.ElementNode:
		case isSectionElem(c):
			s.Sections = append(s.Sections, p.section(c, level+1))
		case isBibliography(c):
			p.bibliographyText(c)
		case isHeading(c):
			if s.Heading == "" && s.Number == "" && !hasClass(c, "ltx_runin") && hasClass(c, "ltx_title") {
				var pd pending
				s.Number, s.Heading, pd = heading(c)
				p.emit(strings.TrimSpace(s.Number + " " + s.Heading))
				p.after(pd, s.ID)
			} else {
				// A run-in heading (theorem, proof, \paragraph) opens the
				// paragraph that follows it.
				p.prefix = plainText(c)
			}
		case isFloat(c):
			p.float(c, s.ID)
		case hasClass(c, "ltx_para") || c.DataAtom == atom.P || hasClass(c, "ltx_p"):
			p.paragraph(c, s)
		case hasClass(c, "ltx_pagination") || c.DataAtom == atom.Nav:
		default:
			// Theorems, proofs, logical blocks, lists, boxes drawn as SVG
			// and other containers: their paragraphs belong to this section.
			if find(c, func(x *html.Node) bool {
				return x != c && (hasClass(x, "ltx_para") || isSectionElem(x) || isHeading(x))
			}) != nil {
				p.blocks(c, s, level)
			} else {
				p.paragraph(c, s)
			}
		}
	}
}

// paragraph adds one block of text to section s, then handles the floats
// and footnotes inside it.
func (p *parser) paragraph(c *html.Node, s *record.Section) {
	t, pd := p.para(c, s.ID)
	if t != "" {
		if p.prefix != "" {
			t = p.prefix + " " + t
			p.prefix = ""
		}
		s.Paragraphs = append(s.Paragraphs, t)
		p.emit(t)
	}
	p.after(pd, s.ID)
}

// heading splits a section heading into its number ("2.1", "A") and text,
// and returns the footnotes and floats it holds.
func heading(h *html.Node) (number, text string, pd pending) {
	if tag := find(h, func(x *html.Node) bool { return hasClass(x, "ltx_tag") }); tag != nil {
		f := strings.Fields(plainText(tag))
		if len(f) > 0 {
			number = strings.TrimRight(f[len(f)-1], ".:")
		}
	}
	w := textWriter{skipTags: true}
	w.node(h)
	return number, w.String(), pending{floats: w.floats, notes: w.notes}
}

// para extracts one block's text and records its citing sentences. The
// floats and footnotes found inside are returned for the caller to handle
// once the block itself is placed.
func (p *parser) para(n *html.Node, sectionID string) (string, pending) {
	p.w.reset()
	p.w.node(n)
	text := p.w.String()
	p.mentions(text, p.w.cites, sectionID)
	return text, pending{
		floats: append([]*html.Node(nil), p.w.floats...),
		notes:  append([]*html.Node(nil), p.w.notes...),
	}
}

// footnote adds a footnote's text to the full text and records its citing
// sentences.
func (p *parser) footnote(n *html.Node, sectionID string) {
	c := find(n, func(x *html.Node) bool { return hasClass(x, "ltx_note_content") })
	if c == nil || p.seen[c] {
		return
	}
	p.seen[c] = true
	p.w.reset()
	p.w.noteContent(c)
	text := p.w.String()
	p.mentions(text, p.w.cites, sectionID)
	pd := pending{
		floats: append([]*html.Node(nil), p.w.floats...), // a table in a footnote is still a table
		notes:  append([]*html.Node(nil), p.w.notes...),
	}
	p.emit(text)
	p.after(pd, sectionID)
}

// mentions turns the citations in text into one Mention per citing
// sentence, keeping only keys of real bibliography entries. Time is linear
// in the text and the citations, however many one sentence holds.
func (p *parser) mentions(text string, cites []citeSpan, sectionID string) {
	if len(cites) == 0 {
		return
	}
	var set keySet
	ci := 0
	for _, b := range sentenceBounds(text, cites) {
		set.reset()
		for ci < len(cites) && cites[ci].start < b[1] {
			if cites[ci].end > b[0] {
				for _, k := range cites[ci].keys {
					if p.bibKeys[k] {
						set.add(k)
					}
				}
			}
			ci++
		}
		if len(set.keys) > 0 {
			p.doc.Mentions = append(p.doc.Mentions, record.Mention{
				RefKeys: append([]string(nil), set.keys...), Sentence: text[b[0]:b[1]], SectionID: sectionID,
			})
		}
	}
}

// keySet collects distinct keys in the order first met: a list while it is
// short, with a map beside it once it grows.
type keySet struct {
	keys []string
	seen map[string]bool
}

func (s *keySet) reset() {
	s.keys = s.keys[:0]
	if s.seen != nil {
		clear(s.seen)
	}
}

func (s *keySet) add(k string) {
	if len(s.keys) < 16 && s.seen == nil {
		for _, x := range s.keys {
			if x == k {
				return
			}
		}
		s.keys = append(s.keys, k)
		return
	}
	if s.seen == nil {
		s.seen = make(map[string]bool, 2*len(s.keys))
	}
	if len(s.seen) == 0 {
		for _, x := range s.keys {
			s.seen[x] = true
		}
	}
	if !s.seen[k] {
		s.seen[k] = true
		s.keys = append(s.keys, k)
	}
}
