package latexml

import (
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/groundwork/curate/internal/grid"
	"github.com/groundwork/curate/record"
)

// table records a data table float: its caption, number and cell rows.
// LaTeXML writes tabulars as <table> on arXiv and, on older ar5iv pages, as
// nested spans (span.ltx_tabular > span.ltx_tr > span.ltx_td); both are read.
func (p *parser) table(f *html.Node, sectionID string) {
	t := record.Table{ID: attr(f, "id"), Rows: [][]string{}}
	caps := []*html.Node{}
	if c := caption(f); c != nil {
		caps = append(caps, c)
	} else {
		// A table made of panels (subtables side by side), each with its
		// own caption: one Table, the captions joined.
		for _, panel := range panels(f) {
			if c := caption(panel); c != nil {
				caps = append(caps, c)
			}
		}
	}
	var texts []string
	for _, c := range caps {
		if tag := find(c, func(x *html.Node) bool { return hasClass(x, "ltx_tag") }); tag != nil && t.Number == "" {
			t.Number = tableNumber(plainText(tag))
		}
		p.w.reset()
		p.w.skipTags = true
		p.w.node(c)
		p.w.skipTags = false
		text := p.w.String()
		p.mentions(text, p.w.cites, sectionID)
		if text != "" {
			texts = append(texts, text)
		}
	}
	t.Caption = strings.Join(texts, " ")
	tabulars := findAll(nil, f, func(x *html.Node) bool {
		if x == f || isPanel(x) {
			return false
		}
		return hasClass(x, "ltx_tabular") || x.DataAtom == atom.Figure || hasClass(x, "ltx_table") && x.DataAtom != atom.Table
	})
	for _, tab := range tabulars {
		if !hasClass(tab, "ltx_tabular") {
			continue // a nested float: handled on its own
		}
		t.Rows = append(t.Rows, p.rows(tab, sectionID)...)
	}
	p.doc.Tables = append(p.doc.Tables, t)
}

// isPanel reports whether x is a panel of a float (a minipage or subtable
// that is no table float of its own; LaTeXML may class it ltx_figure), which
// belongs to the float around it.
func isPanel(x *html.Node) bool {
	return hasClass(x, "ltx_figure_panel") && !hasClass(x, "ltx_table") &&
		!hasClass(x, "ltx_tabular") && x.DataAtom != atom.Table
}

// panels returns the panels of float f, not descending into nested floats.
func panels(f *html.Node) []*html.Node {
	return findAll(nil, f, func(x *html.Node) bool {
		if x == f {
			return false
		}
		return isPanel(x) || x.DataAtom == atom.Figure && (hasClass(x, "ltx_table") || hasClass(x, "ltx_figure"))
	})
}

// tableNumber turns "Table 3: " or "Table A.1." into "3" or "A.1".
func tableNumber(tag string) string {
	f := strings.Fields(tag)
	if len(f) == 0 {
		return ""
	}
	return strings.TrimRight(f[len(f)-1], ".:")
}

// rows reads a tabular's rows. A cell spanning columns or rows is repeated
// in every position it covers, so rows of a regular table are equally long.
// A row that cites references adds a mention whose sentence is the row.
func (p *parser) rows(tab *html.Node, sectionID string) [][]string {
	trs := findAll(nil, tab, func(x *html.Node) bool {
		return x != tab && (x.DataAtom == atom.Tr || hasClass(x, "ltx_tr"))
	})
	var out [][]string
	var g grid.Grid
	for _, tr := range trs {
		r := g.Row()
		var rowCites []citeSpan
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if !(c.DataAtom == atom.Td || c.DataAtom == atom.Th || hasClass(c, "ltx_td") || hasClass(c, "ltx_th")) {
				continue
			}
			p.w.reset()
			p.w.node(c)
			rowCites = append(rowCites, p.w.cites...)
			r.Cell(p.w.String(), span(c, "colspan", "ltx_colspan_"), span(c, "rowspan", "ltx_rowspan_"))
		}
		row := r.End()
		if len(row) == 0 {
			continue
		}
		out = append(out, row)
		if len(rowCites) > 0 {
			p.rowMention(row, rowCites, sectionID)
		}
	}
	return out
}

// rowMention records a table row that cites references.
func (p *parser) rowMention(row []string, cites []citeSpan, sectionID string) {
	var keys []string
	for _, c := range cites {
		for _, k := range c.keys {
			if p.bibKeys[k] {
				keys = appendUnique(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return
	}
	p.doc.Mentions = append(p.doc.Mentions, record.Mention{
		RefKeys: keys, Sentence: strings.Join(row, " | "), SectionID: sectionID,
	})
}

// span reads a cell's column or row span from its attribute or from
// LaTeXML's ltx_colspan_N / ltx_rowspan_N class; at least 1, at most 100.
func span(c *html.Node, attrName, classPrefix string) int {
	v := attr(c, attrName)
	if v == "" {
		v = strings.TrimPrefix(classWithPrefix(c, classPrefix), classPrefix)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 1
	}
	return min(n, 100)
}
