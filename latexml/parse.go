// Package latexml parses the LaTeXML HTML that arXiv (arxiv.org/html) and
// ar5iv serve into a record.Document: title, authors, abstract, nested
// sections, data tables, bibliography, citing sentences and full text.
//
// The parser works on the node tree of golang.org/x/net/html (the parser
// goquery wraps) in a few direct walks, because extraction speed matters
// when a corpus holds hundreds of thousands of pages.
package latexml

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/groundwork/curate/arxiv"
	"github.com/groundwork/curate/record"
)

// ErrNotLaTeXML is returned for input that is not a LaTeXML page at all.
var ErrNotLaTeXML = errors.New("not a LaTeXML page (no ltx_ elements)")

// Section ids given to text outside the paper's own sections.
const (
	SectionAbstract = "abstract"
	SectionPreamble = "preamble"
)

// Options tell the parser what it cannot read from the page itself.
type Options struct {
	ID     string // arXiv ID as fetched; read from the page when empty
	Source string // record.SourceArxiv or record.SourceAr5iv; detected when empty
	URL    string // where the page was fetched from; derived from ID and Source when empty
}

// Parse parses one LaTeXML page. It never panics: a page without content or
// with a fatal conversion yields a Document whose Conversion says so, and
// input that is not a LaTeXML page at all yields ErrNotLaTeXML.
func Parse(page []byte, opt Options) (doc *record.Document, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc = nil
			err = fmt.Errorf("parse latexml page: internal error: %v\n%s", r, debug.Stack())
		}
	}()
	root, err := html.Parse(bytes.NewReader(stripMath(page)))
	if err != nil {
		return nil, fmt.Errorf("parse latexml page: %w", err)
	}
	p := &parser{
		doc: &record.Document{
			Authors:    []string{},
			Sections:   []record.Section{},
			Tables:     []record.Table{},
			References: []record.Reference{},
			Mentions:   []record.Mention{},
		},
		seen:    map[*html.Node]bool{},
		bibKeys: map[string]bool{},
	}
	if err := p.run(root, page, opt); err != nil {
		return nil, err
	}
	return p.doc, nil
}

type parser struct {
	doc     *record.Document
	w       textWriter
	seen    map[*html.Node]bool // floats already handled
	bibKeys map[string]bool
	prefix  string // run-in heading waiting for the next paragraph

	// found by the survey walk
	article     *html.Node
	title       *html.Node
	authorsDiv  *html.Node
	abstract    *html.Node
	bibs        []*html.Node
	base        string
	ar5ivLink   string
	ltxElements int
	errors      int
}

func (p *parser) run(root *html.Node, page []byte, opt Options) error {
	p.survey(root)
	if p.ltxElements == 0 {
		return fmt.Errorf("parse latexml page: %w", ErrNotLaTeXML)
	}
	d := p.doc
	d.Source = opt.Source
	if d.Source == "" {
		d.Source = detectSource(page)
	}
	d.ID = opt.ID
	if d.ID == "" {
		d.ID = p.pageID()
	}
	d.URL = opt.URL
	if d.URL == "" && d.ID != "" {
		switch d.Source {
		case record.SourceArxiv:
			d.URL = "https://arxiv.org/html/" + d.ID
		case record.SourceAr5iv:
			d.URL = "https://ar5iv.labs.arxiv.org/html/" + d.ID
		}
	}
	p.conversion(page)

	if p.title != nil {
		var w textWriter
		w.node(p.title)
		t := w.String()
		if t != "" {
			d.Title = &t
		}
	}
	if d.Title == nil {
		p.note("no title heading (h1.ltx_title_document): the title must come from metadata")
	}
	if p.authorsDiv != nil {
		d.Authors = authors(p.authorsDiv)
	}
	for _, b := range p.bibs {
		p.bibliography(b)
	}
	for _, r := range d.References {
		p.bibKeys[r.Key] = true
	}
	if p.abstract != nil {
		d.Abstract = p.abstractText(p.abstract)
	}
	if p.article != nil {
		p.top(p.article)
	}
	d.FullText = fullText(d)

	if d.Title == nil && d.Abstract == "" && len(d.Sections) == 0 && len(d.Preamble) == 0 {
		d.Conversion.Empty = true
		p.note("page has no content: no title, abstract or sections")
	} else if len(d.Sections) == 0 {
		p.note("page has no sections")
	}
	if len(p.bibs) == 0 {
		p.note("page has no bibliography section")
	}
	return nil
}

func (p *parser) note(s string) { p.doc.Conversion.Notes = append(p.doc.Conversion.Notes, s) }

// survey walks the whole tree once to find the landmarks of the page.
func (p *parser) survey(root *html.Node) {
	walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		cl := attr(n, "class")
		if strings.Contains(cl, "ltx_") {
			p.ltxElements++
			if classListHas(cl, "ltx_ERROR") {
				p.errors++
			}
		}
		switch n.DataAtom {
		case atom.Base:
			p.base = attr(n, "href")
		case atom.Article:
			if p.article == nil && classListHas(cl, "ltx_document") {
				p.article = n
			}
		case atom.H1:
			if p.title == nil && classListHas(cl, "ltx_title_document") {
				p.title = n
			}
		case atom.A:
			if p.ar5ivLink == "" && classListHas(cl, "ar5iv-text-button") && strings.Contains(attr(n, "href"), "arxiv.org/abs/") {
				p.ar5ivLink = attr(n, "href")
			}
		case atom.Math, atom.Svg, atom.Script, atom.Style:
			return false
		}
		switch {
		case p.authorsDiv == nil && classListHas(cl, "ltx_authors"):
			p.authorsDiv = n
		case p.abstract == nil && classListHas(cl, "ltx_abstract"):
			p.abstract = n
		case classListHas(cl, "ltx_bibliography"):
			p.bibs = append(p.bibs, n)
			return false
		}
		return true
	})
	if p.article == nil {
		p.article = find(root, func(n *html.Node) bool { return hasClass(n, "ltx_document") })
	}
}

// detectSource tells arXiv's pages from ar5iv's by their site chrome.
func detectSource(page []byte) string {
	switch {
	case bytes.Contains(page, []byte("ar5iv-footer")) || bytes.Contains(page, []byte("ar5iv-severity-")) ||
		bytes.Contains(page, []byte("ar5iv.labs.arxiv.org")):
		return record.SourceAr5iv
	case bytes.Contains(page, []byte(`<base href="/html/`)) || bytes.Contains(page, []byte("arxiv.org/html/")) ||
		bytes.Contains(page, []byte("arxiv-html-papers")):
		return record.SourceArxiv
	}
	return record.SourceUnknown
}

// pageID reads the arXiv ID from the page: arXiv's <base href="/html/ID/">
// or ar5iv's "View original on arXiv" link.
func (p *parser) pageID() string {
	for _, s := range []string{p.base, p.ar5ivLink} {
		for _, marker := range []string{"/html/", "/abs/"} {
			i := strings.Index(s, marker)
			if i < 0 {
				continue
			}
			cand := strings.Trim(s[i+len(marker):], "/")
			if id, err := arxiv.Parse(cand); err == nil {
				return id.String()
			}
		}
	}
	return ""
}

// conversion fills the conversion status the page states about itself.
func (p *parser) conversion(page []byte) {
	c := &p.doc.Conversion
	c.Severity = record.SeverityUnknown
	if i := bytes.Index(page, []byte("ar5iv-severity-")); i >= 0 {
		rest := page[i+len("ar5iv-severity-"):]
		j := 0
		for j < len(rest) && rest[j] >= 'a' && rest[j] <= 'z' {
			j++
		}
		switch s := string(rest[:j]); s {
		case record.SeverityOK, record.SeverityWarning, record.SeverityError, record.SeverityFatal:
			c.Severity = s
		}
	}
	if bytes.Contains(page, []byte("Conversion to HTML had a Fatal error")) {
		c.Severity = record.SeverityFatal
	}
	if c.Severity == record.SeverityUnknown && p.errors > 0 {
		// arXiv's own pages do not state a severity; visible ltx_ERROR
		// elements mean the conversion had errors.
		c.Severity = record.SeverityError
	}
	c.Errors = p.errors
	tail := page
	if len(tail) > 4096 {
		tail = tail[len(tail)-4096:]
	}
	if !bytes.Contains(bytes.ToLower(tail), []byte("</html>")) {
		c.Truncated = true
		p.note("page is truncated: it does not end with </html>")
	}
}

// abstractText returns the abstract's paragraphs, without its heading.
func (p *parser) abstractText(n *html.Node) string {
	var parts []string
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if isHeading(c) || c.Type != html.ElementNode && c.Type != html.TextNode {
			continue
		}
		if t := p.para(c, SectionAbstract); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// top walks the article's direct content: sections, and text outside them.
func (p *parser) top(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch {
		case c == p.title || c == p.authorsDiv || c == p.abstract || isBibliography(c):
		case isSectionElem(c):
			p.doc.Sections = append(p.doc.Sections, p.section(c, 1))
		case hasClass(c, "ltx_dates") || hasClass(c, "ltx_keywords") || hasClass(c, "ltx_classification") ||
			hasClass(c, "ltx_pagination") || hasClass(c, "ltx_TOC") || c.DataAtom == atom.Nav:
		case c.DataAtom == atom.Figure || hasClass(c, "ltx_table") || hasClass(c, "ltx_figure"):
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
					return x != c && (x.DataAtom == atom.P || hasClass(x, "ltx_p"))
				}) {
					p.preamblePara(b)
				}
			default:
				if t := p.para(c, SectionPreamble); t != "" {
					p.doc.Preamble = append(p.doc.Preamble, t)
				}
			}
		}
	}
}

// preamblePara handles a paragraph outside every section: the "Abstract."
// paragraph of papers without an abstract block, author lines of papers
// without an author block, and the rest kept as preamble text.
func (p *parser) preamblePara(c *html.Node) {
	if p.doc.Abstract == "" && len(p.doc.Sections) == 0 {
		if t := plainText(c); hasAbstractPrefix(t) {
			p.doc.Abstract = trimAbstractPrefix(p.para(c, SectionAbstract))
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
				return
			}
		}
	}
	if t := p.para(c, SectionPreamble); t != "" {
		p.doc.Preamble = append(p.doc.Preamble, t)
	}
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
			}
		case c.Type != html.ElementNode:
		case isSectionElem(c):
			s.Sections = append(s.Sections, p.section(c, level+1))
		case isBibliography(c):
		case isHeading(c):
			if s.Heading == "" && s.Number == "" && !hasClass(c, "ltx_runin") && hasClass(c, "ltx_title") {
				s.Number, s.Heading = heading(c)
			} else {
				// A run-in heading (theorem, proof, \paragraph) opens the
				// paragraph that follows it.
				p.prefix = plainText(c)
			}
		case c.DataAtom == atom.Figure || hasClass(c, "ltx_figure") || hasClass(c, "ltx_table") && c.DataAtom != atom.Table:
			p.float(c, s.ID)
		case hasClass(c, "ltx_para") || c.DataAtom == atom.P || hasClass(c, "ltx_p"):
			if t := p.para(c, s.ID); t != "" {
				if p.prefix != "" {
					t = p.prefix + " " + t
					p.prefix = ""
				}
				s.Paragraphs = append(s.Paragraphs, t)
			}
		case hasClass(c, "ltx_pagination") || c.DataAtom == atom.Nav:
		default:
			// Theorems, proofs, logical blocks, lists and other containers:
			// their paragraphs belong to this section.
			if find(c, func(x *html.Node) bool {
				return x != c && (hasClass(x, "ltx_para") || isSectionElem(x) || isHeading(x))
			}) != nil {
				p.blocks(c, s, level)
			} else if t := p.para(c, s.ID); t != "" {
				s.Paragraphs = append(s.Paragraphs, t)
			}
		}
	}
}

// heading splits a section heading into its number ("2.1", "A") and text.
func heading(h *html.Node) (number, text string) {
	if tag := find(h, func(x *html.Node) bool { return hasClass(x, "ltx_tag") }); tag != nil {
		f := strings.Fields(plainText(tag))
		if len(f) > 0 {
			number = strings.TrimRight(f[len(f)-1], ".:")
		}
	}
	w := textWriter{skipTags: true}
	w.node(h)
	return number, w.String()
}

// para extracts one block's text and records its citing sentences, then
// handles the footnotes and floats found inside it.
func (p *parser) para(n *html.Node, sectionID string) string {
	p.w.reset()
	p.w.node(n)
	text := p.w.String()
	p.mentions(text, p.w.cites, sectionID)
	notes := append([]*html.Node(nil), p.w.notes...)
	floats := append([]*html.Node(nil), p.w.floats...)
	for _, f := range floats {
		p.float(f, sectionID)
	}
	for _, nt := range notes {
		p.footnote(nt, sectionID)
	}
	return text
}

// footnote records the citing sentences of a footnote.
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
	notes := append([]*html.Node(nil), p.w.notes...)
	floats := append([]*html.Node(nil), p.w.floats...)
	for _, f := range floats {
		p.float(f, sectionID) // a table in a footnote is still a table
	}
	for _, nt := range notes {
		p.footnote(nt, sectionID)
	}
}

// mentions turns the citations in text into one Mention per citing
// sentence, keeping only keys of real bibliography entries and counting
// the citations that resolve to none.
func (p *parser) mentions(text string, cites []citeSpan, sectionID string) {
	if len(cites) == 0 {
		return
	}
	valid := make([][]string, len(cites))
	for i, c := range cites {
		p.doc.Conversion.MissingCitations += c.missing
		for _, k := range c.keys {
			if p.bibKeys[k] {
				valid[i] = appendUnique(valid[i], k)
			} else if strings.HasPrefix(k, "bib") {
				p.doc.Conversion.MissingCitations++
			}
		}
		if len(c.keys) == 0 && c.missing == 0 && strings.Contains(text[c.start:c.end], "?") {
			p.doc.Conversion.MissingCitations++ // "[?]": a citation with no target
		}
	}
	ci := 0
	for _, b := range sentenceBounds(text, cites) {
		var keys []string
		for ci < len(cites) && cites[ci].start < b[1] {
			if cites[ci].end > b[0] {
				for _, k := range valid[ci] {
					keys = appendUnique(keys, k)
				}
			}
			ci++
		}
		if len(keys) > 0 {
			p.doc.Mentions = append(p.doc.Mentions, record.Mention{
				RefKeys: keys, Sentence: text[b[0]:b[1]], SectionID: sectionID,
			})
		}
	}
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// float handles a figure or table float: data tables are recorded, and
// captions' citing sentences become mentions. Nested floats (subtables)
// are handled too.
func (p *parser) float(f *html.Node, sectionID string) {
	if p.seen[f] {
		return
	}
	p.seen[f] = true
	if hasClass(f, "ltx_table") && f.DataAtom != atom.Table {
		p.table(f, sectionID)
	} else if cap := caption(f); cap != nil {
		p.para(cap, sectionID)
	}
	isTable := hasClass(f, "ltx_table") && f.DataAtom != atom.Table
	nested := findAll(nil, f, func(x *html.Node) bool {
		return x != f && (x.DataAtom == atom.Figure || hasClass(x, "ltx_table") && x.DataAtom != atom.Table || hasClass(x, "ltx_figure"))
	})
	for _, x := range nested {
		if isTable && isPanel(x) {
			// A table's panels were read with it; their own nested floats
			// (rare) still count.
			for _, y := range panels(x) {
				if !isPanel(y) {
					p.float(y, sectionID)
				}
			}
			continue
		}
		p.float(x, sectionID)
	}
}

// caption returns the float's own caption (not a nested float's).
func caption(f *html.Node) *html.Node {
	var found *html.Node
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		for c := n.FirstChild; c != nil && found == nil; c = c.NextSibling {
			switch {
			case c.Type != html.ElementNode:
			case c.DataAtom == atom.Figcaption || hasClass(c, "ltx_caption"):
				found = c
			case c.DataAtom == atom.Figure || hasClass(c, "ltx_table") || hasClass(c, "ltx_figure"):
			default:
				rec(c)
			}
		}
	}
	rec(f)
	return found
}
