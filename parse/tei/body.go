package tei

import (
	"strconv"
	"strings"

	"github.com/groundwork/curate/record"
)

// raw is a section as the TEI holds it, before nesting: a <div> with a
// head, its content blocks in order, and the headed divs nested inside it.
type raw struct {
	head     *node // nil for a section implied by its subsections' numbers
	info     headInfo
	blocks   []*node
	children []*raw // headed divs inside the div, then sections nested by number
	id       string
	appendix bool
}

// floatRef is a figure, table or note waiting to be placed: in the section
// that first refers to it, else where it stands.
type floatRef struct {
	n  *node
	at *raw // the section it stands in; nil outside every section
}

// container collects the sections of one top-level container (the body,
// or a back div such as the annex or the acknowledgement).
type container struct {
	lead     []*node // content before its first section
	sections []*raw
	cur      *raw
	floats   *[]floatRef
}

// collect reads the children of div into c: a headed div opens a section;
// the content of a headless div belongs to the section open before it.
func (c *container) collect(div *node) {
	for _, ch := range div.children {
		switch {
		case ch.name == "div" && hasHead(ch):
			s := &raw{}
			fill(s, ch, c.floats)
			c.sections = append(c.sections, s)
			c.cur = s
		case ch.name == "div":
			c.collect(ch)
		case ch.name == "head" || ch.name == "listBibl":
		case ch.name == "figure" || ch.name == "note":
			// GROBID gathers floats and footnotes at the end of the body:
			// where they stand says nothing of their section.
			*c.floats = append(*c.floats, floatRef{n: ch})
		case ch.name == "" && strings.TrimSpace(ch.text) == "":
		case c.cur != nil:
			c.cur.blocks = append(c.cur.blocks, ch)
		default:
			c.lead = append(c.lead, ch)
		}
	}
}

// fill reads a headed div into s.
func fill(s *raw, div *node, floats *[]floatRef) {
	for _, ch := range div.children {
		switch {
		case ch.name == "head" && s.head == nil && hasText(ch):
			s.head = ch
		case ch.name == "div" && hasHead(ch):
			k := &raw{}
			fill(k, ch, floats)
			s.children = append(s.children, k)
		case ch.name == "div":
			fill(s, ch, floats)
		case ch.name == "figure" || ch.name == "note":
			*floats = append(*floats, floatRef{n: ch, at: s})
		case ch.name == "listBibl":
		case ch.name == "" && strings.TrimSpace(ch.text) == "":
		default:
			s.blocks = append(s.blocks, ch)
		}
	}
}

// hasHead reports whether div has a head with text or a number.
func hasHead(div *node) bool {
	for _, ch := range div.children {
		if ch.name == "head" && hasText(ch) {
			return true
		}
	}
	return false
}

func hasText(h *node) bool { return h.attr("n") != "" || plain(h) != "" }

// sections reads the sections of the body and the back containers, nests
// them, gives them ids, and fills the Document's sections, preamble,
// tables, figures and mentions.
func (p *parser) sections(divs []*node) {
	var floats []floatRef
	conts := make([]*container, len(divs))
	var heads []*node
	for i, d := range divs {
		c := &container{floats: &floats}
		c.collect(d)
		conts[i] = c
		walkRaw(c.sections, func(s *raw) { heads = append(heads, s.head) })
	}
	nb := newNumbering(heads)
	for _, c := range conts {
		walkRaw(c.sections, func(s *raw) { s.info = nb.read(s.head) })
	}

	var top, implied []*raw
	for i, c := range conts {
		sections, imp := nest(c.sections)
		implied = append(implied, imp...)
		switch {
		case len(c.lead) == 0:
		case i > 0 && len(sections) > 0:
			// A back container (the annex) that opens without a heading:
			// the text before its first heading belongs to its first
			// section (GROBID lost that section's own heading).
			first := sections[0]
			first.blocks = append(append([]*node(nil), c.lead...), first.blocks...)
		case i > 0 && lastRaw(top) != nil:
			// A back container without any heading continues the section
			// before it.
			last := lastRaw(top)
			last.blocks = append(last.blocks, c.lead...)
		default:
			// Text before the body's first heading.
			for _, b := range c.lead {
				p.doc.Preamble = append(p.doc.Preamble, p.blockTexts(b, SectionPreamble, nil)...)
			}
		}
		top = append(top, sections...)
	}
	if len(implied) > 0 {
		nums := make([]string, len(implied))
		for i, s := range implied {
			nums[i] = s.info.number
		}
		p.note("sections implied by their subsections' numbers (the tei has no heading for them): " + strings.Join(nums, ", "))
	}
	used := map[string]bool{}
	assignIDs(top, "", nb.roman, false, used)
	for _, s := range top {
		p.doc.Sections = append(p.doc.Sections, p.build(s, 1))
	}
	p.floats(floats)
}

// walkRaw calls fn for every section in document order.
func walkRaw(ss []*raw, fn func(*raw)) {
	for _, s := range ss {
		fn(s)
		walkRaw(s.children, fn)
	}
}

func lastRaw(ss []*raw) *raw {
	if len(ss) == 0 {
		return nil
	}
	s := ss[len(ss)-1]
	if k := lastRaw(s.children); k != nil {
		return k
	}
	return s
}

// nest rebuilds the hierarchy of a flat list of sibling sections from
// their numbers: "2.1" goes under "2"; an unnumbered section goes under
// the numbered section open before it, unless its heading names a
// top-level section ("Limitations"); a lettered IEEE subsection goes under
// the Roman-numbered section before it. A section whose parent number
// never had a heading ("2.1" with no "2": GROBID lost it) gets that
// parent as an implied section without heading or text.
func nest(list []*raw) (top, implied []*raw) {
	var stack []*raw
	attach := func(parent, s *raw) {
		if parent == nil {
			top = append(top, s)
		} else {
			parent.children = append(parent.children, s)
		}
		stack = append(stack, s)
	}
	var placeNumbered func(s *raw)
	placeNumbered = func(s *raw) {
		num := s.info.number
		for len(stack) > 0 && !isPrefix(stack[len(stack)-1].info.number, num) {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			attach(stack[len(stack)-1], s)
			return
		}
		if i := strings.LastIndexByte(num, '.'); i > 0 {
			parent := &raw{info: headInfo{number: num[:i], appendix: s.info.appendix}}
			implied = append(implied, parent)
			placeNumbered(parent)
			attach(parent, s)
			return
		}
		attach(nil, s)
	}
	for _, s := range list {
		switch {
		case s.info.number == "" && topLevelHeading(s.info.heading):
			stack = stack[:0]
			attach(nil, s)
		case s.info.number == "":
			var parent *raw
			for i := len(stack) - 1; i >= 0; i-- {
				if stack[i].info.number != "" {
					parent = stack[i]
					stack = stack[:i+1]
					break
				}
			}
			attach(parent, s)
		case s.info.sub:
			for len(stack) > 0 && (stack[len(stack)-1].info.number == "" || stack[len(stack)-1].info.sub) {
				stack = stack[:len(stack)-1]
			}
			var parent *raw
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			attach(parent, s)
		default:
			placeNumbered(s)
		}
	}
	return top, implied
}

// assignIDs gives sections ids in the HTML parser's scheme: "S2",
// "S2.SS1", "S2.SS1.SSS3", deeper "….P1"; appendices "A1", "A1.SS2";
// unnumbered sections "Sx1", "S2.SSx1". Numbers give the digits where they
// can ("2.3" is SS3), and a counter does otherwise; ids never repeat.
func assignIDs(ss []*raw, parent string, roman, inAppendix bool, used map[string]bool) {
	unnumbered := 0
	for _, s := range ss {
		s.appendix = inAppendix || s.info.appendix && !s.info.sub ||
			s.info.number == "" && strings.HasPrefix(strings.ToLower(s.info.heading), "appendi")
		prefix := "S"
		switch {
		case parent == "" && s.appendix:
			prefix = "A"
		case parent != "":
			prefix = parent + "." + levelPrefix(strings.Count(parent, ".")+2)
		}
		id := ""
		if v := partValue(s.info.number, roman); s.info.number != "" && v > 0 {
			id = prefix + strconv.Itoa(v)
		}
		for id == "" || used[id] {
			unnumbered++
			id = prefix + "x" + strconv.Itoa(unnumbered)
		}
		used[id] = true
		s.id = id
		assignIDs(s.children, id, roman, s.appendix, used)
	}
}

// levelPrefix is the id part of a section at level (1-based).
func levelPrefix(level int) string {
	switch level {
	case 1:
		return "S"
	case 2:
		return "SS"
	case 3:
		return "SSS"
	}
	return "P"
}

// build converts a section and its subsections, extracting their text.
func (p *parser) build(s *raw, level int) record.Section {
	out := record.Section{
		ID: s.id, Number: s.info.number, Heading: s.info.heading, Level: level,
		Appendix: s.appendix, Paragraphs: []string{},
	}
	prefix := ""
	if s.head != nil {
		p.headMentions(s.head, s.id)
	}
	for _, b := range s.blocks {
		if b.name == "head" {
			// A second heading in one div runs into the next paragraph.
			prefix = runIn(p.blockText(b, s.id, s))
			continue
		}
		for _, t := range p.blockTexts(b, s.id, s) {
			if prefix != "" {
				t = prefix + t
				prefix = ""
			}
			out.Paragraphs = append(out.Paragraphs, t)
		}
	}
	if prefix != "" {
		out.Paragraphs = append(out.Paragraphs, strings.TrimSpace(prefix))
	}
	for _, k := range s.children {
		out.Sections = append(out.Sections, p.build(k, level+1))
	}
	return out
}

// headMentions records citations in a heading (rare, but they count).
func (p *parser) headMentions(h *node, sectionID string) {
	p.w.reset()
	p.w.content(h)
	p.w.finish()
	if len(p.w.cites) > 0 {
		p.mentions(strings.Clone(p.w.String()), p.w.cites, p.w.sents, sectionID)
	}
	p.afterBlock(sectionID, nil)
}

// blockTexts returns the paragraphs of one content block: one for a
// paragraph or formula, one per item for a list.
func (p *parser) blockTexts(b *node, sectionID string, at *raw) []string {
	if b.name == "list" {
		var out []string
		for _, it := range b.children {
			if it.name == "item" {
				if t := p.blockText(it, sectionID, at); t != "" {
					out = append(out, t)
				}
			}
		}
		return out
	}
	if t := p.blockText(b, sectionID, at); t != "" {
		return []string{t}
	}
	return nil
}

// blockText extracts one block's text and records its citing sentences,
// the floats and footnotes it refers to, and those inside it.
func (p *parser) blockText(b *node, sectionID string, at *raw) string {
	p.w.reset()
	p.w.content(b)
	p.w.finish()
	text := p.w.String()
	p.mentions(text, p.w.cites, p.w.sents, sectionID)
	p.afterBlock(sectionID, at)
	return text
}

// afterBlock places what the writer met: referred floats and notes in
// sectionID unless placed already, and floats and notes inside the block
// handled at once.
func (p *parser) afterBlock(sectionID string, at *raw) {
	for _, id := range p.w.refs {
		if _, ok := p.placement[id]; !ok {
			p.placement[id] = sectionID
		}
	}
	inner := append(append([]*node(nil), p.w.notes...), p.w.floats...)
	for _, n := range inner {
		if id := n.attr("id"); id != "" {
			if _, ok := p.placement[id]; !ok {
				p.placement[id] = sectionID
			}
		}
		p.pending = append(p.pending, floatRef{n: n, at: at})
	}
}
