// Package tei parses the TEI XML that a GROBID service makes of a PDF
// (POST /api/processFulltextDocument) into the record.Document the HTML
// parser (package latexml) makes of an arXiv page: title, authors,
// abstract, nested sections with their numbers, paragraphs, tables with
// their rows, figure captions, the bibliography from biblStruct entries,
// one mention per sentence that cites references, and the full text.
//
// GROBID writes every body section as a flat sibling <div> whose <head>
// carries the section number (n="2.1"), and often loses numbers or puts
// them into the heading text ("A Proof of ...", "C.1 ..."). The parser
// rebuilds the nesting from the numbers, reads numbers out of headings
// where the evidence allows, and places figures, tables and footnotes in
// the section that first refers to them. Citing sentences are GROBID's
// own (<s>) when the request asked for sentence segmentation, and the
// HTML parser's sentence splitter otherwise.
package tei

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
)

// Errors of Parse.
var (
	// ErrNotTEI: the input is not a TEI document (no <TEI> root).
	ErrNotTEI = errors.New("not a TEI document (no <TEI> root element)")
	// ErrTooLarge: the input exceeds MaxSize or MaxElements.
	ErrTooLarge = errors.New("tei document too large")
	// ErrTooDeep: elements nest deeper than MaxDepth.
	ErrTooDeep = errors.New("tei document nested too deeply")
)

// Section ids given to text outside the paper's own sections; the same as
// the HTML parser's.
const (
	SectionAbstract = latexml.SectionAbstract
	SectionPreamble = latexml.SectionPreamble
)

// Options tell the parser what it cannot read from the TEI itself.
type Options struct {
	// ID is the paper's id as the caller knows it (an S2 paper id, a DOI,
	// an arXiv id); when empty, the arXiv id GROBID read from the PDF.
	ID string
	// URL is where the PDF was fetched from.
	URL string
	// MaxTree bounds the estimated cost of the TEI's tree (0:
	// MaxTreeBytes; negative: no bound): a TEI that would pass it is read
	// only as far as it stays within it, and says so.
	MaxTree int64
}

// Sniff reports whether data looks like a TEI document: a <TEI root
// element near its start, after the XML declaration and comments.
func Sniff(data []byte) bool {
	head := data[:min(len(data), 4096)]
	i := bytes.Index(head, []byte("<TEI"))
	if i < 0 || i+4 < len(head) && !isXMLNameEnd(head[i+4]) {
		return false
	}
	// Only a prolog before it: no element of another kind.
	for j := 0; j < i; {
		k := bytes.IndexByte(head[j:i], '<')
		if k < 0 {
			break
		}
		j += k
		if j+1 < i && head[j+1] != '?' && head[j+1] != '!' {
			return false
		}
		j++
	}
	return true
}

func isXMLNameEnd(c byte) bool {
	return c == '>' || c == '/' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// Parse parses one GROBID TEI document. It never panics: a TEI without
// content yields a Document whose Conversion says so; input that is not
// TEI yields ErrNotTEI, and input over the bounds ErrTooLarge or
// ErrTooDeep. A document cut short, or one whose tree would pass the
// parse budget (MaxTreeBytes), is parsed as far as it goes (or as the
// budget allows) and marked Conversion.Truncated.
func Parse(data []byte, opt Options) (doc *record.Document, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc = nil
			err = fmt.Errorf("parse tei: internal error: %v\n%s", r, debug.Stack())
		}
	}()
	if len(data) > MaxSize {
		return nil, fmt.Errorf("parse tei: %w: %d bytes exceed the limit of %d", ErrTooLarge, len(data), MaxSize)
	}
	limit := opt.MaxTree
	switch {
	case limit == 0:
		limit = MaxTreeBytes
	case limit < 0:
		limit = -1
	}
	kept, cut := cutToBudget(data, limit)
	root, truncated, err := readTree(kept)
	if err != nil {
		return nil, fmt.Errorf("parse tei: %w", err)
	}
	p := &parser{
		doc: &record.Document{
			Source:     record.SourcePDF,
			Authors:    []string{},
			Sections:   []record.Section{},
			Tables:     []record.Table{},
			References: []record.Reference{},
			Mentions:   []record.Mention{},
		},
		bibKeys:   map[string]bool{},
		placement: map[string]string{},
	}
	p.run(root, truncated && !cut, opt)
	if cut {
		p.doc.Conversion.Truncated = true
		p.note(budgetNote(len(kept), len(data), limit))
	}
	return p.doc, nil
}

type parser struct {
	doc       *record.Document
	w         writer
	bibKeys   map[string]bool
	placement map[string]string // float or note xml:id -> id of the section first referring to it
	pending   []floatRef        // floats and notes met inside text, to handle after the sections
	figures   int
	tables    int
}

func (p *parser) note(s string) { p.doc.Conversion.Notes = append(p.doc.Conversion.Notes, s) }

func (p *parser) run(root *node, truncated bool, opt Options) {
	d := p.doc
	d.Conversion.Severity = record.SeverityUnknown // GROBID states nothing about its own quality
	d.Conversion.Truncated = truncated
	if truncated {
		p.note("tei is truncated: it ends inside an element")
	}
	header := root.child("teiHeader")
	p.application(header)
	d.ID = opt.ID
	if d.ID == "" {
		d.ID = p.paperArxivID(header)
	}
	d.URL = opt.URL

	fileDesc := header.path("fileDesc")
	title := p.title(fileDesc)
	if title != "" {
		d.Title = &title
	} else {
		p.note("no title in the tei header: the title must come from metadata")
	}
	if a := fileDesc.path("sourceDesc", "biblStruct", "analytic"); a != nil {
		d.Authors = authorNames(a.all("author"))
	}

	text := root.child("text")
	back := text.path("back")
	lists := 0
	if back != nil {
		for _, lb := range back.descendants("listBibl") {
			lists++
			for _, b := range lb.all("biblStruct") {
				r := reference(b, len(d.References))
				d.References = append(d.References, r)
				p.bibKeys[r.Key] = true
			}
		}
	}
	if abs := header.path("profileDesc", "abstract"); abs != nil {
		d.Abstract = p.abstract(abs)
	}

	var containers []*node
	if body := text.path("body"); body != nil {
		containers = append(containers, body)
	}
	if back != nil {
		for _, c := range back.children {
			if c.name == "div" && c.attr("type") != "references" && c.child("listBibl") == nil {
				containers = append(containers, c)
			}
		}
	}
	p.sections(containers)
	p.metadata()
	d.FullText = latexml.FullText(d)

	switch {
	case d.Title == nil && d.Abstract == "" && len(d.Sections) == 0 && len(d.Preamble) == 0:
		d.Conversion.Empty = true
		p.note("tei has no content: no title, abstract or body text")
	case len(d.Sections) == 0 && len(d.Preamble) == 0:
		p.note("tei has no body text: GROBID extracted the header only")
	case len(d.Sections) == 0:
		p.note("tei has no sections")
	}
	if lists == 0 {
		p.note("tei has no bibliography (no listBibl)")
	}
}

// application records the converter and its version from
// teiHeader/encodingDesc/appInfo/application.
func (p *parser) application(header *node) {
	p.doc.ServedBy = record.ServedByGrobid
	app := header.path("encodingDesc", "appInfo", "application")
	if app == nil {
		p.note("tei header names no application: converter version unknown")
		return
	}
	if id := strings.ToLower(strings.TrimSpace(app.attr("ident"))); id != "" && id != record.ServedByGrobid {
		p.doc.ServedBy = id
	}
	p.doc.ConverterVersion = strings.TrimSpace(app.attr("version"))
}

// paperArxivID returns the arXiv id GROBID read from the PDF itself
// (sourceDesc idno type="arXiv", "arXiv:2405.10637v1[cs.CL]"), with its
// version, or "".
func (p *parser) paperArxivID(header *node) string {
	b := header.path("fileDesc", "sourceDesc", "biblStruct")
	if b == nil {
		return ""
	}
	for _, idno := range idnos(b) {
		if strings.EqualFold(idno.attr("type"), "arXiv") {
			if id, err := arxiv.Parse(trimArxivIdno(plain(idno))); err == nil {
				return id.String()
			}
		}
	}
	return ""
}

// title reads the paper's title: titleStmt's main title, else the
// sourceDesc entry's.
func (p *parser) title(fileDesc *node) string {
	var cands []*node
	if ts := fileDesc.path("titleStmt"); ts != nil {
		cands = append(cands, ts.all("title")...)
	}
	if a := fileDesc.path("sourceDesc", "biblStruct", "analytic"); a != nil {
		cands = append(cands, a.all("title")...)
	}
	for _, main := range []bool{true, false} {
		for _, t := range cands {
			if main && t.attr("type") != "main" {
				continue
			}
			if s := plain(t); s != "" {
				return s
			}
		}
	}
	return ""
}

// authorNames returns the names of author elements that have one.
func authorNames(authors []*node) []string {
	names := []string{}
	for _, a := range authors {
		if n := personName(a.child("persName")); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// personName writes a persName as "Forename Middle Surname Jr".
func personName(pn *node) string {
	if pn == nil {
		return ""
	}
	var fore, rest []string
	for _, c := range pn.children {
		switch c.name {
		case "forename":
			if s := plain(c); s != "" {
				fore = append(fore, s)
			}
		case "nameLink", "surname", "genName":
			if s := plain(c); s != "" {
				rest = append(rest, s)
			}
		}
	}
	if len(fore)+len(rest) == 0 {
		return plain(pn)
	}
	return strings.Join(append(fore, rest...), " ")
}

// abstract returns the abstract's paragraphs joined by newlines; the
// heading of a structured abstract's part ("Background") opens its first
// paragraph.
func (p *parser) abstract(abs *node) string {
	var parts []string
	var walk func(n *node, prefix string)
	walk = func(n *node, prefix string) {
		for _, c := range n.children {
			switch c.name {
			case "div":
				h := plain(c.child("head"))
				walk(c, runIn(h))
			case "head":
			case "p", "formula", "list", "quote":
				t := p.blockText(c, SectionAbstract, nil)
				if t == "" {
					continue
				}
				if prefix != "" {
					t = prefix + t
					prefix = ""
				}
				parts = append(parts, t)
			case "":
				if t := collapse(c.text); t != "" {
					parts = append(parts, t)
				}
			}
		}
		if prefix != "" {
			parts = append(parts, strings.TrimSpace(prefix))
		}
	}
	walk(abs, "")
	return strings.Join(parts, "\n")
}

// runIn turns a heading into the start of the paragraph it opens.
func runIn(h string) string {
	if h == "" {
		return ""
	}
	if strings.ContainsAny(h[len(h)-1:], ".:!?") {
		return h + " "
	}
	return h + ": "
}
