package sim

import (
	"fmt"
	"html"
	"strings"
	"time"
)

// TEI returns the TEI XML that GROBID of the given version makes of p's
// PDF, in the shape of GROBID's real output (../shared/fixtures/grobid-tei):
// the header with the title, the authors in sourceDesc, the application
// and the abstract; body sections as flat <div>s whose <head> carries the
// number; sentences as <s> (the request asks for segmentSentences);
// citations as <ref type="bibr" target="#bN">; and the bibliography as
// biblStruct entries with their DOI or arXiv idno and raw reference.
func (w *World) TEI(p *Paper, version string) []byte {
	refs := w.References(p)
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	esc := html.EscapeString
	when := p.Updated.Add(72 * time.Hour).UTC().Format("2006-01-02T15:04-0700")
	f("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	f("<TEI xml:space=\"preserve\" xmlns=\"http://www.tei-c.org/ns/1.0\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" ")
	f("xsi:schemaLocation=\"http://www.tei-c.org/ns/1.0 https://raw.githubusercontent.com/kermitt2/grobid/master/grobid-home/schemas/xsd/Grobid.xsd\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n")
	f("\t<teiHeader xml:lang=\"en\">\n\t\t<fileDesc>\n\t\t\t<titleStmt>\n\t\t\t\t<title level=\"a\" type=\"main\">%s</title>\n\t\t\t</titleStmt>\n", esc(p.Title))
	f("\t\t\t<publicationStmt>\n\t\t\t\t<publisher/>\n\t\t\t\t<availability status=\"unknown\"><licence/></availability>\n\t\t\t</publicationStmt>\n")
	f("\t\t\t<sourceDesc>\n\t\t\t\t<biblStruct>\n\t\t\t\t\t<analytic>\n")
	for _, a := range p.Authors {
		f("\t\t\t\t\t\t<author>\n\t\t\t\t\t\t\t%s\n\t\t\t\t\t\t</author>\n", persName(a))
	}
	f("\t\t\t\t\t\t<title level=\"a\" type=\"main\">%s</title>\n\t\t\t\t\t</analytic>\n", esc(p.Title))
	f("\t\t\t\t\t<monogr>\n\t\t\t\t\t\t<imprint>\n\t\t\t\t\t\t\t<date/>\n\t\t\t\t\t\t</imprint>\n\t\t\t\t\t</monogr>\n")
	f("\t\t\t\t\t%s\n\t\t\t\t</biblStruct>\n\t\t\t</sourceDesc>\n\t\t</fileDesc>\n", idnos(p))
	f("\t\t<encodingDesc>\n\t\t\t<appInfo>\n\t\t\t\t<application version=\"%s\" ident=\"GROBID\" when=\"%s\">\n", esc(version), when)
	f("\t\t\t\t\t<desc>GROBID - A machine learning software for extracting information from scholarly documents</desc>\n")
	f("\t\t\t\t\t<ref target=\"https://github.com/kermitt2/grobid\"/>\n\t\t\t\t</application>\n\t\t\t</appInfo>\n\t\t</encodingDesc>\n")
	f("\t\t<profileDesc>\n\t\t\t<abstract>\n<div xmlns=\"http://www.tei-c.org/ns/1.0\"><p>")
	for _, s := range strings.SplitAfter(p.Abstract, ". ") {
		if s = strings.TrimSpace(s); s != "" {
			f("<s>%s</s>", esc(s))
		}
	}
	f("</p></div>\n\t\t\t</abstract>\n\t\t</profileDesc>\n\t</teiHeader>\n\t<text xml:lang=\"en\">\n\t\t<body>\n")
	for i, sec := range w.body(p, refs) {
		f("<div xmlns=\"http://www.tei-c.org/ns/1.0\"><head n=\"%d\">%s</head>", i+1, esc(sec.title))
		for _, para := range sec.paras {
			f("<p>")
			for _, st := range para {
				f("<s>")
				for _, g := range st {
					if g.cite > 0 {
						f("<ref type=\"bibr\" target=\"#b%d\">[%d]</ref>", g.cite-1, g.cite)
					} else {
						b.WriteString(esc(g.text))
					}
				}
				f("</s>")
			}
			f("</p>")
		}
		f("</div>\n")
	}
	f("\t\t</body>\n\t\t<back>\n\t\t\t<div type=\"references\">\n\n\t\t\t\t<listBibl>\n\n")
	for i, ref := range refs {
		q := ref.Paper
		f("<biblStruct xml:id=\"b%d\">\n\t<analytic>\n\t\t<title level=\"a\" type=\"main\">%s</title>\n", i, esc(q.Title))
		for _, a := range q.Authors {
			f("\t\t<author>\n\t\t\t%s\n\t\t</author>\n", persName(a))
		}
		f("\t\t%s\n\t</analytic>\n\t<monogr>\n", idnos(&q))
		venue := q.Venue
		if q.ArxivID != "" {
			venue = "arXiv"
		}
		f("\t\t<title level=\"j\">%s</title>\n\t\t<imprint>\n\t\t\t<date type=\"published\" when=\"%d\">%d</date>\n\t\t</imprint>\n\t</monogr>\n", esc(venue), q.Year(), q.Year())
		raw := fmt.Sprintf("%s. %s. %s, %d.", joinAuthors(q.Authors), q.Title, venue, q.Year())
		f("\t<note type=\"raw_reference\">%s</note>\n</biblStruct>\n\n", esc(raw))
	}
	f("\t\t\t\t</listBibl>\n\t\t\t</div>\n\t\t</back>\n\t</text>\n</TEI>\n")
	return []byte(b.String())
}

// persName writes a name as GROBID splits it.
func persName(name string) string {
	first, last, ok := strings.Cut(name, " ")
	if !ok {
		return "<persName><surname>" + html.EscapeString(name) + "</surname></persName>"
	}
	return "<persName><forename type=\"first\">" + html.EscapeString(first) + "</forename><surname>" + html.EscapeString(last) + "</surname></persName>"
}

// idnos writes a paper's identifiers as GROBID's idno elements.
func idnos(p *Paper) string {
	if p.ArxivID != "" {
		return "<idno type=\"arXiv\">arXiv:" + p.IDv() + "</idno>"
	}
	return "<idno type=\"DOI\">" + html.EscapeString(p.DOI) + "</idno>"
}
