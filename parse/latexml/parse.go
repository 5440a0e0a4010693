// Package latexml parses the LaTeXML HTML that arXiv (arxiv.org/html) and
// ar5iv serve into a record.Document: title, authors, abstract, nested
// sections, data tables, bibliography, citing sentences and full text.
//
// The parser works on the node tree of golang.org/x/net/html (the parser
// goquery wraps) in a few direct walks, because extraction speed matters
// when a corpus holds hundreds of thousands of pages. It first puts back
// into the section tree the sections a conversion left inside floats or
// outside the article, then reads the article in document order, so the
// full text keeps every block of the page in its place. Work and memory
// stay linear in the page: spanning table cells are expanded within a
// bound, citations are collected in sets.
package latexml

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// ErrNotLaTeXML is returned for input that is not a LaTeXML page at all.
var ErrNotLaTeXML = errors.New("not a LaTeXML page (no ltx_ elements)")

// ErrTooLarge is returned for a page longer than Options.MaxBytes.
var ErrTooLarge = errors.New("page too large")

// MaxPageBytes is the longest page Parse takes by default: the download
// cap of curate's HTTP layer, so a page from an archive or a file is held
// to the bound a fetched one is. The node tree of a page costs 5 to 16
// times its size, and no real paper's page comes near it.
const MaxPageBytes = 64 << 20

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
	// MaxBytes bounds the page's length (0: MaxPageBytes; negative: no
	// bound): a longer page is refused with ErrTooLarge before parsing.
	MaxBytes int64
	// MaxTree bounds the estimated cost of the page's node tree (0:
	// MaxTreeBytes; negative: no bound): a page that would pass it is
	// parsed only as far as it stays within it, and says so.
	MaxTree int64
}

// MaxBytes returns the page bound an Options.MaxBytes of n sets (-1: none).
func MaxBytes(n int64) int64 {
	switch {
	case n == 0:
		return MaxPageBytes
	case n < 0:
		return -1
	}
	return n
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
	if limit := MaxBytes(opt.MaxBytes); limit >= 0 && int64(len(page)) > limit {
		return nil, fmt.Errorf("parse latexml page: %w: %d bytes, over the bound of %d", ErrTooLarge, len(page), limit)
	}
	prepared, mathErrors := prepare(page)
	limit := opt.MaxTree
	switch {
	case limit == 0:
		limit = MaxTreeBytes
	case limit < 0:
		limit = -1
	}
	kept, cut := cutToBudget(prepared, limit)
	parsed, total := len(kept), len(prepared)
	root, err := html.Parse(bytes.NewReader(kept))
	prepared, kept = nil, nil
	if err != nil {
		return nil, fmt.Errorf("parse latexml page: %w", err)
	}
	restoreFormatting(root)
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
		errors:  mathErrors,
	}
	if err := p.run(root, page, opt); err != nil {
		return nil, err
	}
	if cut {
		p.doc.Conversion.Truncated = true
		p.note(budgetNote(parsed, total, limit))
	}
	return p.doc, nil
}

type parser struct {
	doc     *record.Document
	w       textWriter
	seen    map[*html.Node]bool // floats and footnotes already handled
	bibKeys map[string]bool
	prefix  string   // run-in heading waiting for the next paragraph
	text    []string // the full text's blocks, in document order

	// found by the survey walk
	article     *html.Node
	title       *html.Node
	authorsDiv  *html.Node
	abstract    *html.Node
	bibs        []*html.Node
	cites       []*html.Node // every outermost <cite> of the page
	base        string
	ar5ivLink   string
	ltxElements int
	errors      int // ltx_ERROR elements, math included
	missing     int // ltx_missing_citation elements
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
	if p.article != nil {
		p.repairSections(root, p.article)
	}
	p.conversion(page)

	var titleNotes pending
	if p.title != nil {
		var w textWriter
		w.node(p.title)
		t := w.String()
		if t != "" {
			d.Title = &t
			p.emit(t)
		}
		titleNotes = pending{notes: w.notes}
	}
	if d.Title == nil {
		p.note("no title heading (h1.ltx_title_document): the title must come from metadata")
	}
	if p.authorsDiv != nil {
		d.Authors = authors(p.authorsDiv)
		// The author block (names, affiliations) stays readable text.
		w := textWriter{lines: true}
		w.node(p.authorsDiv)
		p.emit(w.String())
	}
	for _, b := range p.bibs {
		p.bibliography(b)
	}
	for _, r := range d.References {
		p.bibKeys[r.Key] = true
	}
	p.after(titleNotes, SectionPreamble)
	if p.abstract != nil {
		var pd pending
		d.Abstract, pd = p.abstractText(p.abstract)
		if d.Abstract != "" {
			p.emit("Abstract\n" + d.Abstract)
		}
		p.after(pd, SectionAbstract)
	}
	if p.article != nil {
		p.top(p.article)
		p.leftovers(p.article)
	}
	d.FullText = strings.Join(p.text, "\n\n")
	d.Conversion.MissingCitations = p.missingCitations()

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
			p.countFlags(cl)
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
		case atom.Cite:
			p.cites = append(p.cites, n)
			p.countBelow(n)
			return false
		case atom.Script, atom.Style:
			return false
		}
		switch {
		case p.authorsDiv == nil && classListHas(cl, "ltx_authors"):
			p.authorsDiv = n
		case p.abstract == nil && classListHas(cl, "ltx_abstract"):
			p.abstract = n
		case classListHas(cl, "ltx_bibliography"):
			p.bibs = append(p.bibs, n)
			p.countBelow(n)
			return false
		}
		return true
	})
	if p.article == nil {
		p.article = find(root, func(n *html.Node) bool { return hasClass(n, "ltx_document") })
	}
}

// countFlags counts the conversion's error and missing-citation marks in
// one element's class list.
func (p *parser) countFlags(cl string) {
	if classListHas(cl, "ltx_ERROR") {
		p.errors++
	}
	if classListHas(cl, "ltx_missing_citation") {
		p.missing++
	}
}

// countBelow counts the marks inside n, which the survey does not descend
// into (a bibliography, a citation), and collects the citations of a
// bibliography.
func (p *parser) countBelow(n *html.Node) {
	walk(n, func(x *html.Node) bool {
		if x == n || x.Type != html.ElementNode {
			return true
		}
		if cl := attr(x, "class"); strings.Contains(cl, "ltx_") {
			p.ltxElements++
			p.countFlags(cl)
		}
		if x.DataAtom == atom.Cite && !isElem(n, atom.Cite) {
			p.cites = append(p.cites, x)
			p.countBelow(x)
			return false
		}
		return true
	})
}

// missingCitations counts the citations that resolve to no bibliography
// entry, wherever they stand (text, captions, cells, footnotes,
// headings, the bibliography itself): LaTeXML's ltx_missing_citation
// marks, links to entries the page does not have, and "[?]" citations
// with no target at all.
func (p *parser) missingCitations() int {
	n := p.missing
	for _, c := range p.cites {
		keys, marked := 0, false
		walk(c, func(x *html.Node) bool {
			if x.Type != html.ElementNode {
				return true
			}
			if hasClass(x, "ltx_missing_citation") {
				marked = true
			}
			if x.DataAtom == atom.A {
				if k := fragment(attr(x, "href")); k != "" {
					keys++
					if strings.HasPrefix(k, "bib") && !p.bibKeys[k] {
						n++
					}
				}
			}
			return true
		})
		if keys == 0 && !marked && strings.Contains(plainTextRaw(c), "?") {
			n++
		}
	}
	return n
}

// fragment returns the fragment id of a link ("bib.bib3" of "#bib.bib3").
func fragment(href string) string {
	if i := strings.LastIndexByte(href, '#'); i >= 0 && i+1 < len(href) {
		return href[i+1:]
	}
	return ""
}

// detectSource tells arXiv's pages from ar5iv's by their site chrome.
func detectSource(page []byte) string {
	switch {
	case indexFrom(page, "ar5iv-footer", 2) >= 0 || indexFrom(page, "ar5iv-severity-", 2) >= 0 ||
		indexFrom(page, "ar5iv.labs.arxiv.org", 2) >= 0:
		return record.SourceAr5iv
	case bytes.Contains(page, []byte(`<base href="/html/`)) || indexFrom(page, "arxiv.org/html/", 2) >= 0 ||
		indexFrom(page, "arxiv-html-papers", 2) >= 0:
		return record.SourceArxiv
	}
	return record.SourceUnknown
}

// indexFrom is bytes.Index of pat in s, searching from pat's byte at r: a
// byte rare in HTML ('5' of "ar5iv", 'x' of "arxiv") finds the candidates
// faster than a common first one ('a').
func indexFrom(s []byte, pat string, r int) int {
	tail := []byte(pat[r:])
	for off := r; off <= len(s); {
		i := bytes.Index(s[off:], tail)
		if i < 0 {
			return -1
		}
		i += off
		if string(s[i-r:i]) == pat[:r] {
			return i - r
		}
		off = i + 1
	}
	return -1
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
	if i := indexFrom(page, "ar5iv-severity-", 2); i >= 0 {
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
