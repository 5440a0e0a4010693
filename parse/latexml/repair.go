package latexml

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// repairSections moves every section element that sits inside something
// other than a section or a plain container (a float, a paragraph, a table
// cell: markup a conversion left open swallows the rest of the paper) back
// into the section tree, in document order, and says so in the conversion
// status. A moved section goes right after the element that swallowed it,
// and further out while the section around it is of the same or a lower
// rank (a \section inside a subsection's float belongs beside that
// subsection's section) and no later section of the page stays inside it.
// Sections are handled last to first, so that every later section already
// stands where it will stay. Sections a stray end tag left outside the
// article are moved into it first.
func (p *parser) repairSections(root, article *html.Node) {
	ids := p.adoptSections(root, article)
	var secs []*html.Node
	var end []int // end[i]: index of the first section after secs[i]'s subtree
	var collect func(n *html.Node)
	collect = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if isSectionElem(c) {
				i := len(secs)
				secs = append(secs, c)
				end = append(end, 0)
				collect(c)
				end[i] = len(secs)
				continue
			}
			collect(c)
		}
	}
	collect(article)

	var inner []string
	for i := len(secs) - 1; i >= 0; i-- {
		s := secs[i]
		o := outermostOpaque(s, article)
		if o == nil {
			continue
		}
		placeAfter(o, s)
		for {
			c := enclosingSection(s, article)
			if c == nil || sectionRank(c) < sectionRank(s) {
				break
			}
			if end[i] < len(secs) && isAncestor(c, secs[end[i]]) {
				break // a later section stays inside c: keep the order
			}
			placeAfter(c, s)
		}
		inner = append(inner, cmp.Or(attr(s, "id"), "(no id)"))
	}
	slices.Reverse(inner)
	ids = append(ids, inner...)
	if len(ids) == 0 {
		return
	}
	p.doc.Conversion.RepairedSections = len(ids)
	list := ids
	if len(list) > 10 {
		list = append(list[:10:10], "...")
	}
	what := "sections"
	if len(ids) == 1 {
		what = "section"
	}
	p.note(fmt.Sprintf("structure repaired: %d %s sat inside another element (a float or paragraph left open) or outside the article and were moved back into the section tree: %s",
		len(ids), what, strings.Join(list, ", ")))
}

// adoptSections moves the sections outside the article (a stray end tag
// closed it early) into it, in document order: those before it at its
// start, those after it at its end. It returns their ids.
func (p *parser) adoptSections(root, article *html.Node) []string {
	var before, after []*html.Node
	past := false
	var collect func(n *html.Node)
	collect = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c == article:
				past = true
			case c.Type != html.ElementNode || c.DataAtom == atom.Head:
			case isSectionElem(c) && !isAncestor(c, article):
				if past {
					after = append(after, c)
				} else {
					before = append(before, c)
				}
			default:
				collect(c)
			}
		}
	}
	collect(root)
	var ids []string
	first := article.FirstChild
	for _, s := range before {
		s.Parent.RemoveChild(s)
		article.InsertBefore(s, first)
		ids = append(ids, cmp.Or(attr(s, "id"), "(no id)"))
	}
	for _, s := range after {
		s.Parent.RemoveChild(s)
		article.AppendChild(s)
		ids = append(ids, cmp.Or(attr(s, "id"), "(no id)"))
	}
	return ids
}

// outermostOpaque returns the outermost element between s and its
// enclosing section (or the article) that the section walk does not
// descend into as a container, or nil when there is none.
func outermostOpaque(s, article *html.Node) *html.Node {
	var o *html.Node
	for x := s.Parent; x != nil && x != article && !isSectionElem(x); x = x.Parent {
		if !isContainer(x) {
			o = x
		}
	}
	return o
}

// enclosingSection returns the nearest section element above n, below the
// article, or nil.
func enclosingSection(n, article *html.Node) *html.Node {
	for x := n.Parent; x != nil && x != article; x = x.Parent {
		if isSectionElem(x) {
			return x
		}
	}
	return nil
}

func isAncestor(a, n *html.Node) bool {
	for x := n.Parent; x != nil; x = x.Parent {
		if x == a {
			return true
		}
	}
	return false
}

// placeAfter moves s to just after anchor.
func placeAfter(anchor, s *html.Node) {
	s.Parent.RemoveChild(s)
	anchor.Parent.InsertBefore(s, anchor.NextSibling)
}

// isContainer reports whether the section walk descends into x looking for
// sections: plain block containers, not paragraphs, floats, tables, notes,
// headings or the front matter.
func isContainer(x *html.Node) bool {
	switch x.DataAtom {
	case atom.Div, atom.Section, atom.Article, atom.Main, atom.Body, atom.Html,
		atom.Ul, atom.Ol, atom.Li, atom.Dl, atom.Dt, atom.Dd, atom.Blockquote, atom.Header, atom.Footer:
	default:
		return false
	}
	cl := attr(x, "class")
	if cl == "" || !strings.Contains(cl, "ltx_") {
		return true
	}
	for _, c := range opaqueClasses {
		if classListHas(cl, c) {
			return false
		}
	}
	return true
}

// opaqueClasses mark elements whose content the parser reads as text,
// cells or front matter, never as sections.
var opaqueClasses = [...]string{
	"ltx_para", "ltx_p", "ltx_note", "ltx_caption", "ltx_bibliography", "ltx_table", "ltx_figure",
	"ltx_float", "ltx_tabular", "ltx_tr", "ltx_td", "ltx_abstract", "ltx_authors", "ltx_titlepage",
	"ltx_listing", "ltx_TOC", "ltx_keywords", "ltx_classification", "ltx_dates", "ltx_transformed_outer",
	"ltx_inline-block", "ltx_equation", "ltx_equationgroup",
}

// sectionRank orders sectioning units from the outermost (part) in.
func sectionRank(n *html.Node) int {
	cl := attr(n, "class")
	switch {
	case classListHas(cl, "ltx_part"):
		return 0
	case classListHas(cl, "ltx_chapter"):
		return 1
	case classListHas(cl, "ltx_section"), classListHas(cl, "ltx_appendix"):
		return 2
	case classListHas(cl, "ltx_subsection"):
		return 3
	case classListHas(cl, "ltx_subsubsection"):
		return 4
	case classListHas(cl, "ltx_paragraph"):
		return 5
	}
	return 6
}
