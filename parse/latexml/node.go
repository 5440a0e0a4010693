package latexml

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// attr returns the value of n's attribute key, or "".
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val
		}
	}
	return ""
}

// hasClass reports whether n's class attribute contains the class c.
func hasClass(n *html.Node, c string) bool {
	if n.Type != html.ElementNode {
		return false
	}
	return classListHas(attr(n, "class"), c)
}

func classListHas(list, c string) bool {
	for list != "" {
		i := strings.Index(list, c)
		if i < 0 {
			return false
		}
		end := i + len(c)
		if (i == 0 || isSpace(list[i-1])) && (end == len(list) || isSpace(list[end])) {
			return true
		}
		list = list[end:]
	}
	return false
}

// classWithPrefix returns the first class of n starting with prefix.
func classWithPrefix(n *html.Node, prefix string) string {
	for _, f := range strings.Fields(attr(n, "class")) {
		if strings.HasPrefix(f, prefix) {
			return f
		}
	}
	return ""
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' }

// find returns the first node in n's subtree (n included, document order)
// for which match is true, not descending into nodes where skip is true.
func find(n *html.Node, match func(*html.Node) bool) *html.Node {
	if match(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, match); f != nil {
			return f
		}
	}
	return nil
}

// findAll appends to out every node in n's subtree that matches, without
// descending into matched nodes (so nested matches are not returned).
func findAll(out []*html.Node, n *html.Node, match func(*html.Node) bool) []*html.Node {
	if match(n) {
		return append(out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = findAll(out, c, match)
	}
	return out
}

func isElem(n *html.Node, a atom.Atom) bool { return n.Type == html.ElementNode && n.DataAtom == a }

// isSectionElem reports whether n is a sectioning unit of the paper
// (section, subsection, ..., paragraph, appendix, chapter, part), but not
// the bibliography or an index.
func isSectionElem(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	cl := attr(n, "class")
	if cl == "" || !strings.Contains(cl, "ltx_") {
		return false
	}
	for _, c := range sectionClasses {
		if classListHas(cl, c) {
			return true
		}
	}
	return false
}

var sectionClasses = [...]string{
	"ltx_part", "ltx_chapter", "ltx_section", "ltx_subsection", "ltx_subsubsection",
	"ltx_paragraph", "ltx_subparagraph", "ltx_appendix",
}

func isBibliography(n *html.Node) bool { return hasClass(n, "ltx_bibliography") }

// isHeading reports whether n is an h1-h6 element.
func isHeading(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return false
	}
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

// isFloat reports whether n is a figure or table float: LaTeXML's
// ltx_figure, ltx_table or ltx_float element (a <figure>, or a <div> or
// <span> when the float is rotated or sits in running text), never a
// <table> element and never the bare <figure> a rotated float wraps its
// body in.
func isFloat(n *html.Node) bool {
	if n.Type != html.ElementNode || n.DataAtom == atom.Table {
		return false
	}
	cl := attr(n, "class")
	return cl != "" && (classListHas(cl, "ltx_table") || classListHas(cl, "ltx_figure") || classListHas(cl, "ltx_float"))
}

// isTableFloat reports whether n is a table float.
func isTableFloat(n *html.Node) bool { return isFloat(n) && hasClass(n, "ltx_table") }

// isCaption reports whether n is a float's caption.
func isCaption(n *html.Node) bool {
	return n.Type == html.ElementNode && (n.DataAtom == atom.Figcaption || hasClass(n, "ltx_caption"))
}

// isTabular reports whether n is a tabular: a <table> or, on older pages,
// nested spans, classed ltx_tabular.
func isTabular(n *html.Node) bool { return hasClass(n, "ltx_tabular") }
