package latexml

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/groundwork/curate/record"
)

// Bounds on the rows of one table. A cell spanning several columns or rows
// is repeated in every position it covers (so rows of a regular table are
// equally long), but a page can ask for far more positions than it has
// cells ("colspan=100 rowspan=100" on every cell). A rowspan reaches at
// most the last row of its tabular and a colspan at most MaxColspan
// columns, as in HTML; and a table's expanded rows hold at most
// MaxSpanFactor times the cells present and never more than MaxTableCells.
// Past that, the remaining cells are kept once each, not repeated, and the
// table counts in Conversion.TruncatedTables.
const (
	MaxColspan    = 1000
	MaxSpanFactor = 8
	MaxTableCells = 200_000
)

// float handles a figure or table float once. Its captions, cells and
// other text (notes under a table, boxed text) go to the full text in
// document order; a table float becomes a Table; floats nested in it are
// handled on their own. Panels (minipages and subfigures that are no float
// of their own) belong to the float around them, and so does the bare
// <figure> a rotated float wraps its body in.
func (p *parser) float(f *html.Node, sectionID string) {
	p.floatAs(f, sectionID, isTableFloat(f))
}

// floatAs handles float f as a table float or not: a minipage holding a
// table of its own is one whatever class LaTeXML gave it.
func (p *parser) floatAs(f *html.Node, sectionID string, table bool) {
	if p.seen[f] {
		return
	}
	p.seen[f] = true
	fl := floatBody{table: table, sectionID: sectionID}
	slot := -1
	if fl.table {
		// Reserve the table's place before the floats nested in it.
		slot = len(p.doc.Tables)
		p.doc.Tables = append(p.doc.Tables, record.Table{})
	}
	p.floatContent(f, &fl, false)
	if !fl.table {
		return
	}
	if len(fl.own)+len(fl.panel)+len(fl.rows) == 0 && fl.tables > 0 {
		// A wrapper around tables of their own (minipages side by side,
		// each with its own "Table N" caption): no table itself.
		p.doc.Tables = append(p.doc.Tables[:slot], p.doc.Tables[slot+1:]...)
		return
	}
	t := record.Table{ID: attr(f, "id"), Rows: fl.rows}
	if t.Rows == nil {
		t.Rows = [][]string{}
	}
	caps := fl.own
	if len(caps) == 0 {
		// A table made of panels, each with its own caption: one Table,
		// the captions joined.
		caps = fl.panel
	}
	var texts []string
	for _, c := range caps {
		if t.Number == "" {
			t.Number = c.number
		}
		if c.text != "" {
			texts = append(texts, c.text)
		}
	}
	t.Caption = strings.Join(texts, " ")
	if fl.truncated {
		p.doc.Conversion.TruncatedTables++
		p.note(fmt.Sprintf("table %s: spanning cells expanded only up to the limit (at most %d× its cells, %d in all); the rest kept once each",
			cmp.Or(t.ID, "without id"), MaxSpanFactor, MaxTableCells))
	}
	p.doc.Tables[slot] = t
}

// floatBody is what the walk of one float collects.
type floatBody struct {
	table      bool
	sectionID  string
	own, panel []floatCaption
	rows       [][]string
	truncated  bool
	tables     int // nested tables of their own
}

type floatCaption struct{ text, number string }

// floatContent walks the content of a float (or of one of its panels or
// wrappers) in document order.
func (p *parser) floatContent(n *html.Node, fl *floatBody, inPanel bool) {
	sid := fl.sectionID
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode:
			p.emit(collapse(c.Data))
		case c.Type != html.ElementNode:
		case isCaption(c):
			p.caption(c, fl, inPanel)
		case !fl.table && isMinipageTable(c):
			// A table in a minipage of a figure (\captionof{table}).
			p.floatAs(c, sid, true)
		case isPanel(c) || fl.table && hasClass(c, "ltx_minipage") && !isTableFloat(c):
			// A panel, or the minipage a table float wraps its table and
			// caption in (figure.ltx_figure.ltx_minipage).
			p.seen[c] = true
			p.floatContent(c, fl, true)
		case fl.table && isTableFloat(c) && !numberedTable(c):
			// A subtable ("(a) ...") or an uncaptioned part of this table.
			p.seen[c] = true
			p.floatContent(c, fl, true)
		case isFloat(c):
			if isTableFloat(c) {
				fl.tables++
			}
			p.float(c, sid)
		case isTabular(c):
			rows, lines, cut, pd := p.rows(c, sid)
			if fl.table {
				fl.rows = append(fl.rows, rows...)
				fl.truncated = fl.truncated || cut
			}
			p.emit(strings.Join(lines, "\n"))
			p.after(pd, sid)
		case c.DataAtom == atom.Img || c.DataAtom == atom.Script || c.DataAtom == atom.Style:
		case find(c, func(x *html.Node) bool { return x != c && (isCaption(x) || isFloat(x) || isTabular(x)) }) != nil:
			p.floatContent(c, fl, inPanel)
		default:
			// Notes under a table, a source line, boxed text, an
			// algorithm's body.
			t, pd := p.para(c, sid)
			p.emit(t)
			p.after(pd, sid)
		}
	}
}

// caption records one caption of a float: in the full text with its tag
// ("Table 2: ..."), in the Table without it.
func (p *parser) caption(c *html.Node, fl *floatBody, inPanel bool) {
	var number string
	if tag := find(c, func(x *html.Node) bool { return hasClass(x, "ltx_tag") }); tag != nil {
		number = tableNumber(plainText(tag))
	}
	p.emit(plainText(c))
	p.w.reset()
	p.w.skipTags = true
	p.w.node(c)
	p.w.skipTags = false
	text := p.w.String()
	p.mentions(text, p.w.cites, fl.sectionID)
	pd := pending{
		floats: append([]*html.Node(nil), p.w.floats...),
		notes:  append([]*html.Node(nil), p.w.notes...),
	}
	fc := floatCaption{text: text, number: number}
	if inPanel {
		fl.panel = append(fl.panel, fc)
	} else {
		fl.own = append(fl.own, fc)
	}
	p.after(pd, fl.sectionID)
}

// numberedTable reports whether table float f has a caption of its own
// with a table number ("Table 3:"), not a subtable's letter ("(a)").
func numberedTable(f *html.Node) bool {
	c := ownCaption(f)
	if c == nil {
		return false
	}
	tag := find(c, func(x *html.Node) bool { return hasClass(x, "ltx_tag") })
	if tag == nil {
		return true
	}
	t := strings.TrimSpace(plainText(tag))
	return t != "" && !strings.HasPrefix(t, "(")
}

// ownCaption returns the caption of float f, not one of a float inside it.
func ownCaption(f *html.Node) *html.Node {
	for c := f.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type != html.ElementNode:
		case isCaption(c):
			return c
		case isFloat(c):
		default:
			if x := ownCaption(c); x != nil {
				return x
			}
		}
	}
	return nil
}

// isMinipageTable reports whether x is a minipage (of whatever element and
// class) that is no table float but holds a table caption of its own
// ("Table 2: ...", LaTeXML's ltx_tag_table).
func isMinipageTable(x *html.Node) bool {
	if !hasClass(x, "ltx_minipage") || isTableFloat(x) || isTabular(x) || x.DataAtom == atom.Table {
		return false
	}
	c := ownCaption(x)
	return c != nil && find(c, func(y *html.Node) bool { return hasClass(y, "ltx_tag_table") }) != nil
}

// isPanel reports whether x is a panel of a float (a minipage or subtable
// that is no table float of its own; LaTeXML may class it ltx_figure), which
// belongs to the float around it.
func isPanel(x *html.Node) bool {
	return hasClass(x, "ltx_figure_panel") && !hasClass(x, "ltx_table") &&
		!hasClass(x, "ltx_tabular") && x.DataAtom != atom.Table
}

// tableNumber turns "Table 3: " or "Table A.1." into "3" or "A.1".
func tableNumber(tag string) string {
	f := strings.Fields(tag)
	if len(f) == 0 {
		return ""
	}
	return strings.TrimRight(f[len(f)-1], ".:")
}

type spanCell struct {
	text string
	left int // rows still covered
}

// isCell reports whether c is a cell of a tabular row.
func isCell(c *html.Node) bool {
	return c.DataAtom == atom.Td || c.DataAtom == atom.Th || hasClass(c, "ltx_td") || hasClass(c, "ltx_th")
}

// rows reads a tabular: its rows with spanning cells repeated in every
// position they cover (within the bounds above), its rows as written for
// the full text (one line each, cells joined by " | "), whether the
// expansion was cut short, and the floats and footnotes its cells hold. A
// row that cites references adds a mention whose sentence is the row.
// Memory is the rows it returns: cells are read one row at a time.
func (p *parser) rows(tab *html.Node, sectionID string) (out [][]string, lines []string, truncated bool, pd pending) {
	trs := findAll(nil, tab, func(x *html.Node) bool {
		return x != tab && (x.DataAtom == atom.Tr || hasClass(x, "ltx_tr"))
	})
	present := 0
	for _, tr := range trs {
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if isCell(c) {
				present++
			}
		}
	}
	budget := max(min(MaxTableCells, MaxSpanFactor*present), present)
	used := 0 // positions filled or promised to rowspans
	expand := true
	var down []spanCell // rowspans carried into later rows, by column
	var texts []string
	var rowCites []citeSpan
	for r, tr := range trs {
		var row []string
		col := 0
		fillDown := func() {
			for col < len(down) && down[col].left > 0 {
				row = append(row, down[col].text)
				down[col].left--
				col++
			}
		}
		texts, rowCites = texts[:0], rowCites[:0]
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if !isCell(c) {
				continue
			}
			fillDown()
			p.w.reset()
			p.w.node(c)
			text := p.w.String()
			rowCites = append(rowCites, p.w.cites...)
			pd.floats = append(pd.floats, p.w.floats...)
			pd.notes = append(pd.notes, p.w.notes...)
			texts = append(texts, text)
			cs := min(span(c, "colspan", "ltx_colspan_"), MaxColspan)
			rs := min(span(c, "rowspan", "ltx_rowspan_"), len(trs)-r)
			if expand && used+cs*rs > budget {
				expand, truncated = false, true
			}
			if !expand {
				row = append(row, text)
				col++
				used++
				continue
			}
			used += cs * rs
			for range cs {
				row = append(row, text)
				if rs > 1 {
					for len(down) <= col {
						down = append(down, spanCell{})
					}
					down[col] = spanCell{text: text, left: rs - 1}
				}
				col++
			}
		}
		fillDown()
		if len(texts) > 0 {
			lines = append(lines, strings.TrimSpace(strings.Join(texts, " | ")))
		}
		if len(row) == 0 {
			continue
		}
		out = append(out, row)
		if len(rowCites) > 0 {
			p.rowMention(row, rowCites, sectionID)
		}
	}
	return out, lines, truncated, pd
}

// rowMention records a table row that cites references.
func (p *parser) rowMention(row []string, cites []citeSpan, sectionID string) {
	var set keySet
	for _, c := range cites {
		for _, k := range c.keys {
			if p.bibKeys[k] {
				set.add(k)
			}
		}
	}
	if len(set.keys) == 0 {
		return
	}
	p.doc.Mentions = append(p.doc.Mentions, record.Mention{
		RefKeys: set.keys, Sentence: strings.Join(row, " | "), SectionID: sectionID,
	})
}

// span reads a cell's column or row span from its attribute or from
// LaTeXML's ltx_colspan_N / ltx_rowspan_N class; at least 1.
func span(c *html.Node, attrName, classPrefix string) int {
	v := attr(c, attrName)
	if v == "" {
		v = strings.TrimPrefix(classWithPrefix(c, classPrefix), classPrefix)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 1
	}
	return n
}
