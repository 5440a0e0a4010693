package injection

import (
	"fmt"
	"strings"

	"github.com/groundwork/curate/record"
)

// DocumentTexts returns the texts of a target that curate's prompts carry,
// each named by where it stands: the title, the abstract, the preamble,
// every section's heading and paragraphs, the table and figure captions,
// the bibliography entries, the mention sentences (footnotes and captions
// among them) and, of each edge, the title and the citation contexts
// (Semantic Scholar's come from the PDF and may hold what the page does
// not). Table cells are left out: papers list prompts and attack strings
// there (see the package doc).
func DocumentTexts(doc *record.Document, edges []record.Edge) []Text {
	var out []Text
	add := func(where, body string) {
		if strings.TrimSpace(body) != "" {
			out = append(out, Text{Where: where, Body: body})
		}
	}
	if doc != nil {
		if doc.Title != nil {
			add("title", *doc.Title)
		}
		add("abstract", doc.Abstract)
		for i, p := range doc.Preamble {
			add(fmt.Sprintf("front matter, paragraph %d", i+1), p)
		}
		var walk func([]record.Section)
		walk = func(ss []record.Section) {
			for _, s := range ss {
				name := sectionName(s)
				add(name+", heading", s.Heading)
				for i, p := range s.Paragraphs {
					add(fmt.Sprintf("%s, paragraph %d", name, i+1), p)
				}
				walk(s.Sections)
			}
		}
		walk(doc.Sections)
		for _, t := range doc.Tables {
			add("caption of table "+strings.TrimSpace(t.Number+" "+t.ID), t.Caption)
		}
		for _, f := range doc.Figures {
			add("caption of figure "+strings.TrimSpace(f.Number+" "+f.ID), f.Caption)
		}
		for i, r := range doc.References {
			add(fmt.Sprintf("bibliography entry %d", i+1), r.Text)
		}
		for _, m := range doc.Mentions {
			add("citing sentence in "+m.SectionID, m.Sentence)
		}
	}
	for i, e := range edges {
		if e.Title != nil {
			add(fmt.Sprintf("title of reference %d", i+1), *e.Title)
		}
		for _, c := range e.Contexts {
			add(fmt.Sprintf("citation context of reference %d", i+1), c)
		}
	}
	return out
}

func sectionName(s record.Section) string {
	name := "section " + strings.TrimSpace(s.Number)
	if s.Number == "" {
		name = "section " + s.ID
	}
	if h := strings.TrimSpace(s.Heading); h != "" {
		if r := []rune(h); len(r) > 40 {
			h = string(r[:40]) + "…"
		}
		name += " (" + h + ")"
	}
	return name
}

// ScanDocument is Scan over DocumentTexts.
func ScanDocument(doc *record.Document, edges []record.Edge) []record.Instruction {
	return Scan(DocumentTexts(doc, edges))
}

// StripDocument returns a copy of doc and of edges with the sentences of
// findings taken out (Removed in their place) of every text that
// DocumentTexts covers; doc and edges themselves are not changed.
func StripDocument(doc *record.Document, edges []record.Edge, findings []record.Instruction) (*record.Document, []record.Edge) {
	if len(findings) == 0 {
		return doc, edges
	}
	st := func(s string) string { return Strip(s, findings) }
	var d *record.Document
	if doc != nil {
		c := *doc
		d = &c
		if doc.Title != nil {
			t := st(*doc.Title)
			d.Title = &t
		}
		d.Abstract = st(doc.Abstract)
		d.Preamble = mapStrings(doc.Preamble, st)
		d.Sections = stripSections(doc.Sections, st)
		d.Tables = make([]record.Table, len(doc.Tables))
		for i, t := range doc.Tables {
			t.Caption = st(t.Caption)
			d.Tables[i] = t
		}
		d.Figures = make([]record.Figure, len(doc.Figures))
		for i, f := range doc.Figures {
			f.Caption = st(f.Caption)
			d.Figures[i] = f
		}
		d.References = make([]record.Reference, len(doc.References))
		for i, r := range doc.References {
			r.Text = st(r.Text)
			d.References[i] = r
		}
		d.Mentions = make([]record.Mention, len(doc.Mentions))
		for i, m := range doc.Mentions {
			m.Sentence = st(m.Sentence)
			d.Mentions[i] = m
		}
		d.FullText = st(doc.FullText)
	}
	es := make([]record.Edge, len(edges))
	for i, e := range edges {
		if e.Title != nil {
			t := st(*e.Title)
			e.Title = &t
		}
		e.Contexts = mapStrings(e.Contexts, st)
		es[i] = e
	}
	return d, es
}

func stripSections(ss []record.Section, st func(string) string) []record.Section {
	if ss == nil {
		return nil
	}
	out := make([]record.Section, len(ss))
	for i, s := range ss {
		s.Heading = st(s.Heading)
		s.Paragraphs = mapStrings(s.Paragraphs, st)
		s.Sections = stripSections(s.Sections, st)
		out[i] = s
	}
	return out
}

func mapStrings(in []string, f func(string) string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}
