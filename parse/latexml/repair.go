package latexml

import (
	"cmp"
	"fmt"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// repairSections builds the section tree from what LaTeXML says of each
// section rather than from where the HTML nested it: a page whose nesting
// a conversion broke (a float or paragraph left open swallows the rest of
// the paper; an appendix closes right after its heading) still names
// every section's place in its id ("S3.SS4.SSS3" is a subsubsection of
// S3.SS4, "A1.SS2" of appendix A1) and its rank in its class
// (ltx_section, ltx_subsection, ...). So, in document order, every
// section goes under the section its id names (or, with a one-part id such
// as "S3", at the top level or under the part or chapter around it), out
// of any float or paragraph it sat in; a section whose id names no
// section before it, or that has no id, stays in the section it is in,
// out of the float or paragraph only. Sections a stray end tag left
// outside the article are moved into it first. Every section moved is
// counted in Conversion.RepairedSections and named in a note.
func (p *parser) repairSections(root, article *html.Node) {
	ids := p.adoptSections(root, article)
	var secs []*html.Node
	var collect func(n *html.Node)
	collect = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if isSectionElem(c) {
				secs = append(secs, c)
			}
			collect(c)
		}
	}
	collect(article)
	byID := make(map[string]int, len(secs))
	for i, s := range secs {
		if id := attr(s, "id"); id != "" {
			if _, dup := byID[id]; !dup {
				byID[id] = i
			}
		}
	}
	moved := map[*html.Node]bool{}
	for i, s := range secs {
		cur := enclosingSection(s, article)
		if cur == nil {
			cur = article
		}
		target := cur
		if t := sectionParent(s, i, secs, byID, article); t != nil {
			target = t
		}
		switch {
		case target == cur && outermostOpaque(s, article) == nil:
			continue
		case isAncestor(target, s):
			placeAfter(afterMoved(anchorBelow(target, s), moved), s)
		default:
			adoptInto(target, s)
		}
		moved[s] = true
		ids = append(ids, cmp.Or(attr(s, "id"), "(no id)"))
	}
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
	p.note(fmt.Sprintf("structure repaired: %d %s sat elsewhere than their ids and ranks place them (inside another section, a float or paragraph left open, or outside the article) and were moved into the section tree: %s",
		len(ids), what, strings.Join(list, ", ")))
}

// sectionParent returns the element section s belongs in, as its id and
// rank say: the section its id names, when that section comes before it;
// for a one-part id ("S3", "A1", "Ch2"), the nearest part or chapter
// around it of an outer rank, or the article. It returns nil when the id
// names a section the page lacks, or s has no id LaTeXML would write: s
// stays where it is.
func sectionParent(s *html.Node, i int, secs []*html.Node, byID map[string]int, article *html.Node) *html.Node {
	pid, ok := parentID(attr(s, "id"))
	if !ok {
		return nil
	}
	if pid != "" {
		if j, found := byID[pid]; found && j < i && !isAncestor(s, secs[j]) {
			return secs[j]
		}
		return nil
	}
	r := sectionRank(s)
	for x := s.Parent; x != nil && x != article; x = x.Parent {
		if isSectionElem(x) && sectionRank(x) < r {
			return x
		}
	}
	return article
}

// parentID returns the id of the section a LaTeXML section id names as
// its parent ("S3.SS4" of "S3.SS4.SSS3"; "S3.SS2" of "S3.SS2.SSS0.Px1",
// whose SSS0 stands for no subsubsection; "" of a one-part id), and
// whether id is one LaTeXML writes (parts of capitals, an optional x and
// a number: "S3", "Sx1", "A1", "Ch2", "Pt1", "Px1").
func parentID(id string) (string, bool) {
	if id == "" {
		return "", false
	}
	parts := strings.Split(id, ".")
	for _, pt := range parts {
		if !isIDPart(pt) {
			return "", false
		}
	}
	parts = parts[:len(parts)-1]
	for len(parts) > 0 && strings.HasSuffix(parts[len(parts)-1], "0") && !strings.ContainsAny(strings.TrimRight(parts[len(parts)-1], "0"), "0123456789") {
		parts = parts[:len(parts)-1] // "SSS0": a level the section skips
	}
	return strings.Join(parts, "."), true
}

// isIDPart reports whether pt is one part of a LaTeXML section id: a
// capital, letters, an optional "x" (unnumbered) and digits.
func isIDPart(pt string) bool {
	i := 0
	for i < len(pt) && pt[i] >= 'A' && pt[i] <= 'Z' || i > 0 && i < len(pt) && pt[i] >= 'a' && pt[i] <= 'z' {
		i++
	}
	if i == 0 || i == len(pt) {
		return false
	}
	for _, c := range []byte(pt[i:]) {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// anchorBelow returns the element below target after which section s goes
// when it moves out of what holds it: the outermost float or paragraph
// around s when no other section stands between them, else the element
// of target's own children that holds s.
func anchorBelow(target, s *html.Node) *html.Node {
	var child, opaque *html.Node
	between := false
	for x := s.Parent; x != nil && x != target; x = x.Parent {
		if isSectionElem(x) {
			between = true
		} else if !isContainer(x) {
			opaque = x
		}
		child = x
	}
	if !between && opaque != nil {
		return opaque
	}
	return child
}

// afterMoved returns the last of the sections this repair placed right
// after x (and x when there are none), so that sections moved to the same
// place keep their order.
func afterMoved(x *html.Node, moved map[*html.Node]bool) *html.Node {
	last := x
	for n := x.NextSibling; n != nil; n = n.NextSibling {
		if n.Type == html.TextNode && strings.TrimSpace(n.Data) == "" {
			continue
		}
		if !moved[n] {
			break
		}
		last = n
	}
	return last
}

// adoptInto moves section s, which stands after target, to the end of
// target; when they are siblings, with the content between them (the
// text of an appendix that closed after its heading), unless a section
// stands there.
func adoptInto(target, s *html.Node) {
	if s.Parent == target.Parent {
		var between []*html.Node
		for n := target.NextSibling; n != nil && n != s; n = n.NextSibling {
			if n.Type == html.ElementNode && (isSectionElem(n) || isBibliography(n) ||
				find(n, func(x *html.Node) bool { return isSectionElem(x) || isBibliography(x) }) != nil) {
				between = nil
				break
			}
			between = append(between, n)
		}
		for _, n := range between {
			n.Parent.RemoveChild(n)
			target.AppendChild(n)
		}
	}
	s.Parent.RemoveChild(s)
	target.AppendChild(s)
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
