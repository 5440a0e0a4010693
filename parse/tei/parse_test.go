package tei

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

func parseFile(t *testing.T, name string) *record.Document {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "tei", name))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(data, Options{})
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return d
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// flat lists a Document's sections in document order.
func flat(ss []record.Section) []record.Section {
	var out []record.Section
	for _, s := range ss {
		out = append(out, s)
		out = append(out, flat(s.Sections)...)
	}
	return out
}

func sectionByID(d *record.Document, id string) record.Section {
	for _, s := range flat(d.Sections) {
		if s.ID == id {
			return s
		}
	}
	return record.Section{}
}

func TestEdgeStructure(t *testing.T) {
	d := parseFile(t, "edge-structure.tei.xml")
	var ids []string
	for _, s := range flat(d.Sections) {
		ids = append(ids, s.ID)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"id from the sourceDesc arXiv idno, with version", d.ID, "2101.00001v3"},
		{"source", d.Source, record.SourcePDF},
		{"served by", d.ServedBy, record.ServedByGrobid},
		{"converter version", d.ConverterVersion, "0.8.2"},
		{"title with whitespace collapsed", str(d.Title), "Edge Cases of Structure"},
		{"authors with middle names and genName, none without persName", d.Authors, []string{"Ada B Lovelace", "Alan Turing Jr"}},
		{"structured abstract: heading runs in", d.Abstract, "Background: We study edge cases (Lovelace, 1843).\nSecond paragraph of the abstract."},
		{"text before the first heading is preamble", d.Preamble, []string{"Text before any heading cites nothing."}},
		{"section ids in document order", ids, []string{"S1", "S2", "S2.SS1", "S2.SS2", "S2.SS2.SSSx1", "S3", "S3.SSx1", "Sx1", "A1", "A2", "A2.SS1", "Sx2"}},
		{"headless nested div and formula (label dropped) belong to their section", sectionByID(d, "S1").Paragraphs[1:],
			[]string{"A headless nested div continues the introduction (Smith et al., 2020).", "E = mc 2"}},
		{"footnote mark and text out of the paragraph", strings.Contains(sectionByID(d, "S1").Paragraphs[0], "footnote"), false},
		{"implied parent of 2.1 has no heading", sectionByID(d, "S2").Heading, ""},
		{"implied parent number", sectionByID(d, "S2").Number, "2"},
		{"trailing period of head n dropped", sectionByID(d, "S2.SS2").Number, "2.2"},
		{"unnumbered heading under the numbered section before it", sectionByID(d, "S2.SS2.SSSx1").Level, 3},
		{"empty head continues the section before it", sectionByID(d, "S3").Paragraphs, []string{"Method text.", "An empty head is no heading."}},
		{"TEI-nested div is a subsection", sectionByID(d, "S3.SSx1").Heading, "Nested With Head"},
		{"Limitations stands at the top", sectionByID(d, "Sx1").Level, 1},
		{"lettered appendix read from the heading", []any{sectionByID(d, "A1").Number, sectionByID(d, "A1").Heading, sectionByID(d, "A1").Appendix}, []any{"A", "Proof of the Theorem", true}},
		{"appendix subsection", []any{sectionByID(d, "A2.SS1").Number, sectionByID(d, "A2.SS1").Appendix}, []any{"B.1", true}},
		{"back acknowledgement is a section", sectionByID(d, "Sx2").Heading, "Acknowledgements"},
		{"tables", len(d.Tables), 2},
		{"table placed where first referred to", d.Tables[0].ID, "S1.T1"},
		{"table number from label", d.Tables[0].Number, "1"},
		{"cols and rows spans repeated; empty row dropped", d.Tables[0].Rows, [][]string{{"Model", "Score", "Score"}, {"Ours", "1.0", "2.0"}, {"Ours", "3.0", "4.0 [2]"}}},
		{"unreferenced table outside every section; number from the head", []string{d.Tables[1].ID, d.Tables[1].Number}, []string{"T2", "2"}},
		{"caption without its repeated tag", d.Tables[1].Caption, "An unreferenced table without cells."},
		{"figure", d.Figures, []record.Figure{{ID: "S1.F1", Number: "1", Caption: "A figure that cites [3]."}}},
		{"references", len(d.References), 4},
		{"doi from resolver url, trailing period dropped", d.References[0].DOI, "10.1000/XYZ.123"},
		{"analytic title, not the journal", d.References[0].Title, "Notes on the analytical engine"},
		{"year from when", d.References[0].Year, 1843},
		{"only a monograph title", d.References[1].Title, "A Book Only Known by Its Monograph Title"},
		{"arXiv idno, versionless", d.References[1].ArxivID, "1706.03762"},
		{"year from a full date", d.References[1].Year, 2017},
		{"untyped CoRR idno", d.References[2].ArxivID, "1409.0473"},
		{"year from date text", d.References[2].Year, 2014},
		{"a journal name is no title", d.References[3].Title, ""},
		{"arXiv id from the arXiv DOI", d.References[3].ArxivID, "2001.08361"},
		{"raw reference kept as the text", d.References[3].Text, "J. Smith et al. 2020. Scaling laws. Journal Name Only."},
		{"composed text names authors, year, title, venue and ids", d.References[0].Text,
			"Ada Lovelace. 1843. Notes on the analytical engine. Scientific Memoirs, vol. 3, pp. 666-731. doi:10.1000/XYZ.123."},
		{"missing citations: no target, and a target that is no reference", d.Conversion.MissingCitations, 2},
		{"severity", d.Conversion.Severity, record.SeverityUnknown},
		{"note on the implied section", d.Conversion.Notes, []string{"sections implied by their subsections' numbers (the tei has no heading for them): 2"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", c.name, c.got, c.want)
		}
	}

	type m struct{ keys, sentence, section string }
	var got []m
	for _, x := range d.Mentions {
		got = append(got, m{strings.Join(x.RefKeys, " "), x.Sentence, x.SectionID})
	}
	want := []m{
		{"b0", "We study edge cases (Lovelace, 1843).", SectionAbstract},
		{"b0", "Prior work [1] set the stage.", "S1"},
		{"b1 b2", "Later work built on it [2, 3].", "S1"},
		{"b3", "A headless nested div continues the introduction (Smith et al., 2020).", "S1"},
		{"b1", "It cites [2] in one sentence.", "S2.SS2"}, // GROBID's own <s>
		{"b2", "And [3] in another.", "S2.SS2"},
		{"b2", "Figure 1: A figure that cites [3].", "S1"},
		{"b1", "Ours | 3.0 | 4.0 [2]", "S1"}, // a table row that cites
		{"b3", "A footnote that cites (Smith et al., 2020).", "S1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mentions:\n got %q\nwant %q", got, want)
	}
	if !strings.HasPrefix(d.FullText, "Edge Cases of Structure\n\nAbstract\nBackground: We study") ||
		!strings.Contains(d.FullText, "\n\n2.2 Data\n\nGROBID segmented this. It cites [2] in one sentence.") {
		t.Errorf("full text:\n%s", d.FullText)
	}
}

func TestHeaderOnly(t *testing.T) {
	d := parseFile(t, "edge-header-only.tei.xml")
	if str(d.Title) != "A Paper GROBID Read the Header Of" || d.Abstract != "" || len(d.Sections) != 0 || d.Conversion.Empty {
		t.Errorf("header-only document: title %q, abstract %q, %d sections, empty %v", str(d.Title), d.Abstract, len(d.Sections), d.Conversion.Empty)
	}
	want := []string{"tei has no body text: GROBID extracted the header only", "tei has no bibliography (no listBibl)"}
	if !reflect.DeepEqual(d.Conversion.Notes, want) {
		t.Errorf("notes = %q, want %q", d.Conversion.Notes, want)
	}
	if d.ID != "" || d.ConverterVersion != "0.7.3" {
		t.Errorf("id %q (want none: no arXiv idno), version %q", d.ID, d.ConverterVersion)
	}
}

func TestRomanNumbering(t *testing.T) {
	d := parseFile(t, "edge-ieee.tei.xml")
	var got []string
	for _, s := range flat(d.Sections) {
		got = append(got, s.ID+" "+s.Number+" "+s.Heading)
	}
	want := []string{"S1 I INTRODUCTION", "S2 II METHOD", "S2.SS1 A Dataset", "S2.SS2 B Model", "S3 III RESULTS", "S3.SSx1  22"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sections:\n got %q\nwant %q", got, want)
	}
	for _, s := range flat(d.Sections) {
		if s.Appendix {
			t.Errorf("section %s is marked an appendix: IEEE letters number subsections", s.ID)
		}
	}
}

func TestTruncated(t *testing.T) {
	d := parseFile(t, "edge-truncated.tei.xml")
	if !d.Conversion.Truncated {
		t.Error("a TEI cut short is not marked truncated")
	}
	if len(d.Sections) != 1 || !strings.HasPrefix(d.Sections[0].Paragraphs[0], "Prior work [1] set the stage. Later work") {
		t.Errorf("the text before the cut is lost: %+v", d.Sections)
	}
}

func TestEmptyDocument(t *testing.T) {
	d, err := Parse([]byte(`<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader/><text/></TEI>`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Conversion.Empty || d.Title != nil || d.FullText != "" {
		t.Errorf("empty TEI: empty %v, title %v, full text %q", d.Conversion.Empty, d.Title, d.FullText)
	}
	if d.Authors == nil || d.Sections == nil || d.Tables == nil || d.References == nil || d.Mentions == nil {
		t.Error("empty lists must be [] in JSON, not null")
	}
}

func TestErrors(t *testing.T) {
	deep := strings.Repeat("<div>", MaxDepth+10)
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", ErrNotTEI},
		{"html page", "<!DOCTYPE html><html><body><p>hi</p></body></html>", ErrNotTEI},
		{"other xml root", `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"/>`, ErrNotTEI},
		{"TEI of another namespace", `<TEI xmlns="urn:other"/>`, ErrNotTEI},
		{"not xml", "%PDF-1.7 binary", ErrNotTEI},
		{"too deep", `<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body>` + deep, ErrTooDeep},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Parse([]byte(c.in), Options{})
			if !errors.Is(err, c.want) || d != nil {
				t.Errorf("Parse = %v, %v; want error %v", d, err, c.want)
			}
		})
	}
	t.Run("malformed", func(t *testing.T) {
		_, err := Parse([]byte(`<TEI><text></body></text></TEI>`), Options{})
		if err == nil || !strings.Contains(err.Error(), "malformed xml") {
			t.Errorf("Parse = %v, want a malformed xml error", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		big := bytes.Repeat([]byte(" "), MaxSize+1)
		if _, err := Parse(big, Options{}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Parse = %v, want %v", err, ErrTooLarge)
		}
	})
}

func TestOptionsOverride(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "tei", "edge-structure.tei.xml"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(data, Options{ID: "CorpusId:42", URL: "https://aclanthology.org/P19-1285.pdf"})
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != "CorpusId:42" || d.URL != "https://aclanthology.org/P19-1285.pdf" {
		t.Errorf("id %q, url %q", d.ID, d.URL)
	}
}

// TestTextDetails covers what GROBID does to running text.
func TestTextDetails(t *testing.T) {
	body := func(p string) string {
		return `<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div><head n="1">H</head><p>` + p +
			`</p></div></body><back><div type="references"><listBibl><biblStruct xml:id="b0"/><biblStruct xml:id="b1"/></listBibl></div></back></text></TEI>`
	}
	cases := []struct {
		name, p    string
		text       string
		sentences  []string
		missing    int
		mentionKey string
	}{
		{"adjacent markers get their space back",
			`Known <ref type="bibr" target="#b0">(A et al., 2019;</ref><ref type="bibr" target="#b1">B, 2020)</ref>.`,
			"Known (A et al., 2019; B, 2020).", []string{"Known (A et al., 2019; B, 2020)."}, 0, "b0"},
		{"a narrative citation opens its own sentence",
			`One ends here. <ref type="bibr" target="#b0">Xiao et al. (2024)</ref>; <ref type="bibr" target="#b1">Han et al. (2023)</ref> propose more.`,
			"One ends here. Xiao et al. (2024); Han et al. (2023) propose more.", []string{"Xiao et al. (2024); Han et al. (2023) propose more."}, 0, "b0"},
		{"private-use glyphs and soft hyphens dropped",
			"Sym\uf064bol hy\u00adphen <ref type=\"bibr\" target=\"#b0\">[1]</ref>.",
			"Symbol hyphen [1].", []string{"Symbol hyphen [1]."}, 0, "b0"},
		{"a marker with two targets, one unknown",
			`Both <ref type="bibr" target="#b0 #b7">[1, 8]</ref>.`,
			"Both [1, 8].", []string{"Both [1, 8]."}, 1, "b0"},
		{"an empty marker still cites",
			`Cited here<ref type="bibr" target="#b1"/>. Not here.`,
			"Cited here. Not here.", []string{"Cited here."}, 0, "b1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Parse([]byte(body(c.p)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Sections[0].Paragraphs[0]; got != c.text {
				t.Errorf("text = %q, want %q", got, c.text)
			}
			var sents []string
			for _, m := range d.Mentions {
				sents = append(sents, m.Sentence)
			}
			if !reflect.DeepEqual(sents, c.sentences) {
				t.Errorf("citing sentences = %q, want %q", sents, c.sentences)
			}
			if len(d.Mentions) > 0 && d.Mentions[0].RefKeys[0] != c.mentionKey {
				t.Errorf("first key = %q, want %q", d.Mentions[0].RefKeys[0], c.mentionKey)
			}
			if d.Conversion.MissingCitations != c.missing {
				t.Errorf("missing citations = %d, want %d", d.Conversion.MissingCitations, c.missing)
			}
		})
	}
}

func TestCleanDOI(t *testing.T) {
	for in, want := range map[string]string{
		"10.18653/v1/N19-1300":                     "10.18653/v1/N19-1300",
		"https://doi.org/10.3102/0034654307313795": "10.3102/0034654307313795",
		"doi:10.1016/0191-491X(95)00015-M":         "10.1016/0191-491X(95)00015-M",
		"DOI: 10.1000/abc.":                        "10.1000/abc",
		"not a doi":                                "",
		"10.1000":                                  "",
	} {
		if got := cleanDOI(in); got != want {
			t.Errorf("cleanDOI(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTrimArxivIdno(t *testing.T) {
	for in, want := range map[string]string{
		"arXiv:2405.10637v1[cs.CL]": "2405.10637v1",
		"arXiv:2403.09054":          "2403.09054",
		"abs/1612.00796":            "1612.00796",
		" arXiv: hep-th/9901001 ":   "hep-th/9901001",
	} {
		if got := trimArxivIdno(in); got != want {
			t.Errorf("trimArxivIdno(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSniff(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{`<?xml version="1.0"?>` + "\n" + `<TEI xmlns="http://www.tei-c.org/ns/1.0">`, true},
		{`<TEI>`, true},
		{`<!-- GROBID --><TEI xml:space="preserve">`, true},
		{`<!DOCTYPE html><html><body><p>&lt;TEI&gt; <TEI></p>`, false},
		{`<TEIx>`, false},
		{`<html>`, false},
		{``, false},
	} {
		if got := Sniff([]byte(tt.in)); got != tt.want {
			t.Errorf("Sniff(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestMetadataMistakes covers GROBID's metadata mistakes that the TEI
// itself shows: the abstract left as the body's opening "Abstract."
// paragraph, in a section headed "Abstract" or as its first paragraph, and
// an author repeated, or in a spelling cut where an accented letter stood.
// Each correction is noted; a name that goes on in ASCII ("Wei Li", "Wei
// Lin") is another author.
func TestMetadataMistakes(t *testing.T) {
	d := parseFile(t, "edge-metadata.tei.xml")
	if want := "We study how small economies trade [1]. Exports rise with openness."; d.Abstract != want || len(d.Preamble) != 0 {
		t.Errorf("abstract %q, preamble %q; want the opening paragraph as the abstract", d.Abstract, d.Preamble)
	}
	if want := []string{"Guy Paré", "Ana Silva", "Wei Li", "Wei Lin"}; !reflect.DeepEqual(d.Authors, want) {
		t.Errorf("authors %q, want %q", d.Authors, want)
	}
	if len(d.Mentions) != 1 || d.Mentions[0].SectionID != SectionAbstract {
		t.Errorf("mentions %+v: want the abstract's citation, in the abstract", d.Mentions)
	}
	notes := strings.Join(d.Conversion.Notes, "\n")
	for _, want := range []string{"abstract read from the paragraph", `author "Guy Par" dropped`, `author "Ana Silva" dropped`} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if !strings.HasPrefix(d.FullText, "Munich Personal RePEc Archive\n\nAbstract\nWe study") {
		t.Errorf("full text opens %q", d.FullText[:min(len(d.FullText), 80)])
	}

	// A section headed "Abstract", and an "Abstract:" first paragraph.
	data, err := os.ReadFile(filepath.Join("testdata", "tei", "edge-metadata.tei.xml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ old, new string }{
		{`<p><s>Abstract. We study`, `<div><head>Abstract</head><p><s>We study`},
		{`<p><s>Abstract. We study`, `<div><head n="1">Introduction</head><p><s>ABSTRACT: We study`},
	} {
		page := strings.Replace(string(data), tt.old, tt.new, 1)
		page = strings.Replace(page, `Exports rise with openness.</s></p>`, `Exports rise with openness.</s></p></div>`, 1)
		d, err := Parse([]byte(page), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Abstract != "We study how small economies trade [1]. Exports rise with openness." || len(d.Sections) == 0 || d.Sections[0].Heading != "Introduction" {
			t.Errorf("%s: abstract %q, first section %+v", tt.new, d.Abstract, d.Sections[0])
		}
	}
}
