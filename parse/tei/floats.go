package tei

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/groundwork/curate/internal/grid"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
)

// reCaptionTag matches the "Table 2:" or "Figure 3." that GROBID repeats at
// the start of a caption; the number is kept apart.
var reCaptionTag = regexp.MustCompile(`(?i)^(?:table|tab\.|figure|fig\.)\s*([0-9A-Z]+(?:[.-][0-9]+)*)\s*(?:[:.|]\s*|$)`)

// floats handles the figures, tables and notes of the document in
// document order, each in the section that first refers to it, else the
// section it stands in, else the preamble.
func (p *parser) floats(list []floatRef) {
	seen := map[*node]bool{}
	for len(list) > 0 || len(p.pending) > 0 {
		var f floatRef
		if len(list) > 0 {
			f, list = list[0], list[1:]
		} else {
			f, p.pending = p.pending[0], p.pending[1:]
		}
		if seen[f.n] {
			continue
		}
		seen[f.n] = true
		sec := SectionPreamble
		if f.at != nil {
			sec = f.at.id
		}
		if s, ok := p.placement[f.n.attr("id")]; ok && f.n.attr("id") != "" {
			sec = s
		}
		switch {
		case f.n.name == "note":
			p.footnote(f.n, sec)
		case f.n.attr("type") == "table":
			p.table(f.n, sec)
		default:
			p.figure(f.n, sec)
		}
	}
}

// floatID is the HTML parser's id scheme for floats: "S4.T1", "S2.F3".
func floatID(sectionID, kind string, n int) string {
	if sectionID == SectionPreamble || sectionID == "" {
		return kind + strconv.Itoa(n)
	}
	return sectionID + "." + kind + strconv.Itoa(n)
}

// caption reads a float's caption and number: the figDesc without the
// repeated "Table 2:" tag; the number from label, head or that tag.
func (p *parser) caption(f *node, sectionID string) (number, caption string) {
	number = plain(f.child("label"))
	if number == "" {
		if m := reCaptionTag.FindStringSubmatch(plain(f.child("head"))); m != nil {
			number = m[1]
		}
	}
	var parts []string
	for _, d := range f.all("figDesc") {
		t := p.blockText(d, sectionID, nil)
		if m := reCaptionTag.FindStringSubmatchIndex(t); m != nil {
			if number == "" {
				number = t[m[2]:m[3]]
			}
			t = t[m[1]:]
		}
		if t != "" {
			parts = append(parts, t)
		}
	}
	return strings.TrimRight(number, ".:"), strings.Join(parts, " ")
}

func (p *parser) figure(f *node, sectionID string) {
	number, cap := p.caption(f, sectionID)
	p.figures++
	p.doc.Figures = append(p.doc.Figures, record.Figure{ID: floatID(sectionID, "F", p.figures), Number: number, Caption: cap})
	p.floatNotes(f, sectionID)
}

// table records a table float: caption, number and cell rows. A cell
// spanning columns or rows is repeated in every position it covers, as the
// HTML parser does.
func (p *parser) table(f *node, sectionID string) {
	number, cap := p.caption(f, sectionID)
	p.tables++
	t := record.Table{ID: floatID(sectionID, "T", p.tables), Number: number, Caption: cap, Rows: [][]string{}}
	for _, tab := range f.descendants("table") {
		t.Rows = append(t.Rows, p.rows(tab, sectionID)...)
	}
	p.doc.Tables = append(p.doc.Tables, t)
	p.floatNotes(f, sectionID)
}

// floatNotes records the citing sentences of a float's notes (table
// footnotes, and the text of tables GROBID could not structure).
func (p *parser) floatNotes(f *node, sectionID string) {
	for _, n := range f.all("note") {
		p.blockText(n, sectionID, nil)
	}
}

// rows reads a table's rows. A row that cites references adds a mention
// whose sentence is the row, cells joined by " | ".
func (p *parser) rows(tab *node, sectionID string) [][]string {
	var out [][]string
	var g grid.Grid
	for _, tr := range tab.descendants("row") {
		r := g.Row()
		var keys []string
		for _, c := range tr.children {
			if c.name != "cell" {
				continue
			}
			p.w.reset()
			p.w.children(c)
			p.w.finish()
			for _, ct := range p.w.cites {
				p.countMissing(ct)
				for _, k := range ct.keys {
					if p.bibKeys[k] {
						keys = appendUnique(keys, k)
					}
				}
			}
			text := p.w.String()
			p.afterBlock(sectionID, nil)
			r.Cell(text, span(c.attr("cols")), span(c.attr("rows")))
		}
		row := r.End()
		if len(row) == 0 {
			continue
		}
		out = append(out, row)
		if len(keys) > 0 {
			p.doc.Mentions = append(p.doc.Mentions, record.Mention{RefKeys: keys, Sentence: strings.Join(row, " | "), SectionID: sectionID})
		}
	}
	return out
}

// span reads a cell's cols or rows attribute: at least 1, at most 100.
func span(v string) int {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 {
		return 1
	}
	return min(n, 100)
}

// footnote records the citing sentences of a note; its text stays out of
// the paragraphs, as the HTML parser keeps footnotes out.
func (p *parser) footnote(n *node, sectionID string) {
	p.w.reset()
	p.w.content(n)
	p.w.finish()
	p.mentions(p.w.String(), p.w.cites, p.w.sents, sectionID)
	p.afterBlock(sectionID, nil)
}

// countMissing counts a citation marker's targets that are no reference,
// and a marker without any target.
func (p *parser) countMissing(c cite) {
	if c.targets == 0 {
		p.doc.Conversion.MissingCitations++
	}
	for _, k := range c.keys {
		if !p.bibKeys[k] {
			p.doc.Conversion.MissingCitations++
		}
	}
}

// mentions turns the citation markers in text into one Mention per citing
// sentence, keeping only keys of real references. The sentences are
// GROBID's (<s>) when it segmented the text, else the HTML parser's.
func (p *parser) mentions(text string, cites []cite, sents [][2]int, sectionID string) {
	if len(cites) == 0 {
		return
	}
	for _, c := range cites {
		p.countMissing(c)
	}
	var bounds [][2]int
	if len(sents) > 0 {
		bounds = coverGaps(text, sents)
	} else {
		// Only bracketed markers ("(Kwon et al., 2023)", "[3, 4]") are
		// kept whole by the splitter; a narrative one ("Xiao et al.
		// (2024)") is part of its sentence like any words, so a sentence
		// that opens with it is not glued to the one before.
		var spans [][2]int
		for _, c := range cites {
			if c.end > c.start && strings.IndexByte("([", text[c.start]) >= 0 {
				spans = append(spans, [2]int{c.start, c.end})
			}
		}
		bounds = latexml.SentenceBounds(text, spans)
	}
	for _, b := range bounds {
		var keys []string
		for _, c := range cites {
			in := c.start < b[1] && c.end > b[0] || c.start == c.end && c.start >= b[0] && c.start <= b[1]
			if !in {
				continue
			}
			for _, k := range c.keys {
				if p.bibKeys[k] {
					keys = appendUnique(keys, k)
				}
			}
		}
		if len(keys) > 0 {
			p.doc.Mentions = append(p.doc.Mentions, record.Mention{
				RefKeys: keys, Sentence: strings.TrimSpace(text[b[0]:b[1]]), SectionID: sectionID,
			})
		}
	}
}

// coverGaps returns GROBID's sentences with the text between them (rare:
// a citation outside every <s>) as sentences of their own, in order.
func coverGaps(text string, sents [][2]int) [][2]int {
	sents = slices.Clone(sents)
	slices.SortFunc(sents, func(a, b [2]int) int { return cmp.Or(a[0]-b[0], b[1]-a[1]) })
	var out [][2]int
	pos := 0
	for _, s := range sents {
		if s[0] < pos {
			continue // nested or overlapping: the outer one stands
		}
		if strings.TrimSpace(text[pos:s[0]]) != "" {
			out = append(out, [2]int{pos, s[0]})
		}
		out = append(out, s)
		pos = s[1]
	}
	if strings.TrimSpace(text[pos:]) != "" {
		out = append(out, [2]int{pos, len(text)})
	}
	return out
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
