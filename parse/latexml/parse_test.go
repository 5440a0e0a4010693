package latexml

import (
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
	page, err := os.ReadFile(filepath.Join("testdata", "pages", name))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(page, Options{})
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

func TestEdgeArxivPage(t *testing.T) {
	d := parseFile(t, "edge-arxiv.html")
	checks := []struct {
		name      string
		got, want any
	}{
		{"id", d.ID, "2401.00001v2"},
		{"source", d.Source, record.SourceArxiv},
		{"url", d.URL, "https://arxiv.org/html/2401.00001v2"},
		{"title without footnote", str(d.Title), "A Small Test Paper"},
		{"authors split at \\And and &", d.Authors, []string{"Ada Lovelace", "Charles Babbage", "Mary Somerville"}},
		{"abstract with TeX", d.Abstract, "We study x^{2} in small papers. It works."},
		{"top sections", len(d.Sections), 2},
		{"appendix", d.Sections[1].Appendix, true},
		{"appendix number", d.Sections[1].Number, "A"},
		{"subsection number", d.Sections[0].Sections[0].Number, "1.1"},
		{"subsection level", d.Sections[0].Sections[0].Level, 2},
		{"theorem run-in heading opens its paragraph", d.Sections[0].Sections[0].Paragraphs, []string{"Theorem 1. Every engine halts."}},
		{"data tables only (not the equation)", len(d.Tables), 1},
		{"table number", d.Tables[0].Number, "1"},
		{"table caption without tag", d.Tables[0].Caption, "Results, as in [1]."},
		{"rowspan and colspan repeated", d.Tables[0].Rows, [][]string{{"Method", "Score", "Score"}, {"Method", "A", "B"}, {"Engine [2]", "0.9", "0.8"}}},
		{"references", len(d.References), 4},
		{"arXiv id without version", d.References[0].ArxivID, "1706.03762"},
		{"newblock title", d.References[0].Title, "Attention is all you need"},
		{"year", d.References[0].Year, 2017},
		{"doi", d.References[1].DOI, "10.1000/xyz123"},
		{"single-block title", d.References[1].Title, "Counting engines carefully"},
		{"old-style arXiv id from link", d.References[2].ArxivID, "hep-th/9901001"},
		{"quoted title", d.References[2].Title, "A survey of difference engines"},
		{"structured title", d.References[3].Title, "Notes on the analytical engine"},
		{"structured text", d.References[3].Text, "A. Lovelace, Notes on the analytical engine, 1843."},
		{"missing citations: ltx_missing_citation and dangling link", d.Conversion.MissingCitations, 2},
		{"errors", d.Conversion.Errors, 1},
		{"severity from visible errors", d.Conversion.Severity, record.SeverityError},
		{"not truncated", d.Conversion.Truncated, false},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
		}
	}
	wantMentions := []record.Mention{
		{RefKeys: []string{"bib.bib1", "bib.bib2"}, Sentence: "Engines compute [1, 2].", SectionID: "S1"},
		{RefKeys: []string{"bib.bib2"}, Sentence: "Smith et al. showed more, e.g. in Fig. 2 of their paper.[2]", SectionID: "S1"},
		{RefKeys: []string{"bib.bib3"}, Sentence: "See also the survey [3].", SectionID: "S1"},
		{RefKeys: []string{"bib.bib4"}, Sentence: "Lovelace [4] disagrees, though a broken link [99] remains.", SectionID: "S1"},
		{RefKeys: []string{"bib.bib1"}, Sentence: "Results, as in [1].", SectionID: "S1.SS1"},
		{RefKeys: []string{"bib.bib2"}, Sentence: "Engine [2] | 0.9 | 0.8", SectionID: "S1.SS1"},
	}
	if !reflect.DeepEqual(d.Mentions, wantMentions) {
		t.Errorf("mentions:\n got %+v\nwant %+v", d.Mentions, wantMentions)
	}
	// The full text carries math as TeX, and each footnote right after the
	// block that holds it (the title's thanks after the title).
	for _, order := range [][]string{
		{"A Small Test Paper", "Funded by nobody.", "Abstract\nWe study"},
		{"Prior work is scattered", "See also the survey [3].", "E=mc^{2}"},
		{"Table 1: Results, as in [1].", "Method | Score", "Engine [2] | 0.9 | 0.8", "A Proofs"},
	} {
		if !inOrder(d.FullText, order...) {
			t.Errorf("full text lacks %q in that order:\n%s", order, d.FullText)
		}
	}
}

func TestEdgeAr5ivPage(t *testing.T) {
	d := parseFile(t, "edge-ar5iv.html")
	checks := []struct {
		name      string
		got, want any
	}{
		{"id from the arXiv link", d.ID, "cs/0101001"},
		{"source", d.Source, record.SourceAr5iv},
		{"no title heading is said, not guessed from <title>", d.Title, (*string)(nil)},
		{"note says so", strings.Join(d.Conversion.Notes, ";"), "no title heading (h1.ltx_title_document): the title must come from metadata"},
		{"authors from a bold paragraph", d.Authors, []string{"Alan Turing", "Alonzo Church"}},
		{"abstract from an 'Abstract.' paragraph", d.Abstract, "We ask whether machines think (Turing 1950)."},
		{"preamble keeps other front matter", d.Preamble, []string{"Permission to reproduce is granted."}},
		{"span table with colspan", d.Tables[0].Rows, [][]string{{"Type", "Pair", "Pair"}, {"Capital", "Athens", "Greece"}}},
		{"both bibliographies", len(d.References), 3},
		{"second bibliography key", d.References[2].Key, "biba.bib3"},
		{"author-year label year", d.References[2].Year, 1980},
		{"author-year title", d.References[0].Title, "Computing machinery and intelligence"},
		{"severity from footer", d.Conversion.Severity, record.SeverityWarning},
		{"mentions", d.Mentions, []record.Mention{
			{RefKeys: []string{"bib.bib1", "bib.bib2"}, Sentence: "Machines can think (Turing, 1950; Church, 1936).", SectionID: "S1"},
			{RefKeys: []string{"biba.bib3"}, Sentence: "Others doubt it (Searle, 1980).", SectionID: "S1"},
		}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestBrokenPages(t *testing.T) {
	tests := []struct {
		file      string
		severity  string
		empty     bool
		truncated bool
		sections  int
	}{
		{"edge-fatal.html", record.SeverityFatal, true, false, 0},
		{"edge-truncated.html", record.SeverityUnknown, false, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			d := parseFile(t, tt.file)
			c := d.Conversion
			if c.Severity != tt.severity || c.Empty != tt.empty || c.Truncated != tt.truncated || len(d.Sections) != tt.sections {
				t.Errorf("conversion = %+v with %d sections; want severity %s, empty %v, truncated %v, %d sections",
					c, len(d.Sections), tt.severity, tt.empty, tt.truncated, tt.sections)
			}
			if len(c.Notes) == 0 {
				t.Errorf("a broken page must say what is wrong in its notes")
			}
		})
	}
}

func TestNotLaTeXML(t *testing.T) {
	for _, in := range []string{"", "hello", `{"error": "not found"}`, "<html><body><p>Plain page</p></body></html>", "\x00\xff\xfe<<<>>>"} {
		_, err := Parse([]byte(in), Options{})
		if !errors.Is(err, ErrNotLaTeXML) {
			t.Errorf("Parse(%q) error = %v, want ErrNotLaTeXML", in, err)
		}
	}
}

func TestOptionsOverride(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("testdata", "pages", "edge-truncated.html"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(page, Options{ID: "2402.00002", Source: record.SourceAr5iv, URL: "http://mirror.test/x"})
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != "2402.00002" || d.Source != record.SourceAr5iv || d.URL != "http://mirror.test/x" {
		t.Errorf("options not applied: id %q source %q url %q", d.ID, d.Source, d.URL)
	}
}

func TestSentenceBounds(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"One. Two.", []string{"One.", "Two."}},
		{"Smith et al. showed it. Next one.", []string{"Smith et al. showed it.", "Next one."}},
		{"We use e.g. this, i.e. that. Then more.", []string{"We use e.g. this, i.e. that.", "Then more."}},
		{"See Fig. 3 and Eq. 2 for details. Done.", []string{"See Fig. 3 and Eq. 2 for details.", "Done."}},
		{"The value is 3.5 here. Ok.", []string{"The value is 3.5 here.", "Ok."}},
		{"J. R. Smith wrote it. Yes.", []string{"J. R. Smith wrote it.", "Yes."}},
		{"It failed (badly). Then \"quoted.\" Next.", []string{"It failed (badly).", "Then \"quoted.\"", "Next."}},
		{"lower case. continues here.", []string{"lower case. continues here."}},
		{"Questions? Answers! End.", []string{"Questions?", "Answers!", "End."}},
		{"I.I. Dubovets'ka and O.Yu. Masyutka wrote it.", []string{"I.I. Dubovets'ka and O.Yu. Masyutka wrote it."}},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, b := range sentenceBounds(tt.text, nil) {
			got = append(got, tt.text[b[0]:b[1]])
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("sentenceBounds(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestSentenceBoundsCitations(t *testing.T) {
	// A citation after the period joins its sentence; no split inside one.
	text := "Known. [1] Next (Smith et al., 2020. Vol. 2). Last."
	cites := []citeSpan{{start: 7, end: 10}, {start: 16, end: 44}}
	var got []string
	for _, b := range sentenceBounds(text, cites) {
		got = append(got, text[b[0]:b[1]])
	}
	want := []string{"Known. [1]", "Next (Smith et al., 2020. Vol. 2).", "Last."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// A citation that is the subject of the next sentence opens it.
	text = "It grows. [1] leaves open why. Done."
	cites = []citeSpan{{start: 10, end: 13}}
	got = nil
	for _, b := range sentenceBounds(text, cites) {
		got = append(got, text[b[0]:b[1]])
	}
	want = []string{"It grows.", "[1] leaves open why.", "Done."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestFindFields(t *testing.T) {
	tests := []struct {
		text       string
		arxiv, doi string
		year       int
	}{
		{"arXiv preprint arXiv:2504.07055v3, 2025.", "2504.07055", "", 2025},
		{"CoRR, abs/1409.0473, 2014.", "1409.0473", "", 2014},
		{"CoRR, abs/cs/0511042, 2005.", "cs/0511042", "", 2005},
		{"https://arxiv.org/abs/hep-th/9901001v2", "hep-th/9901001", "", 0},
		{"doi:10.1016/j.jdeveco.2007.12.002.", "", "10.1016/j.jdeveco.2007.12.002", 0},
		{"https://doi.org/10.48550/arXiv.2312.07559", "2312.07559", "10.48550/arXiv.2312.07559", 0},
		{"Nature 438, 355–359 (2005).", "", "", 2005},
		{"Theor. Probab. 84(2012), 43 - 56.", "", "", 2012},
		{"pages 1999–2004, 1998.", "", "", 1998},
		{"arXiv 1234.5678 is not an id", "", "", 0},
	}
	for _, tt := range tests {
		clean := reIDLike.ReplaceAllString(reURL.ReplaceAllString(reDOI.ReplaceAllString(tt.text, " "), " "), " ")
		if got := findArxivID(tt.text); got != tt.arxiv {
			t.Errorf("findArxivID(%q) = %q, want %q", tt.text, got, tt.arxiv)
		}
		if got := findDOI(tt.text); got != tt.doi {
			t.Errorf("findDOI(%q) = %q, want %q", tt.text, got, tt.doi)
		}
		if got := findYear(clean); got != tt.year {
			t.Errorf("findYear(%q) = %d, want %d", tt.text, got, tt.year)
		}
	}
}

// TestFrontMatterVariants covers markup seen on real pages the fixtures
// lack: a title page holding the authors and an "Abstract:" paragraph,
// tables made of panels, colour macros and phantoms in cells, equation
// numbers, names typeset in math or over several lines, and bold labels
// that are not names.
func TestFrontMatterVariants(t *testing.T) {
	tp := parseFile(t, "edge-titlepage.html")
	au := parseFile(t, "edge-authors.html")
	checks := []struct {
		name      string
		got, want any
	}{
		{"title page: no h1 means no title", tp.Title, (*string)(nil)},
		{"title page: abstract", tp.Abstract, "We compile programs before anyone thought it possible."},
		{"title page: bold author", tp.Authors, []string{"Grace Hopper"}},
		{"panels: one table", len(tp.Tables), 1},
		{"panels: captions joined", tp.Tables[0].Caption, "Left panel. Right panel."},
		{"panels: number of the first", tp.Tables[0].Number, "1"},
		{"panels: rows of both, colour argument and phantom dropped", tp.Tables[0].Rows, [][]string{{"Group", "Group"}, {"RRLBM", "1"}, {"B", "2"}}},
		{"equation number not in the text", tp.Sections[0].Paragraphs, []string{"It works [1].", "x=1."}},
		{"old-style arXiv DOI", tp.References[0].ArxivID, "astro-ph/9901380"},
		{"authors over lines, in math, not labels", au.Authors, []string{"Xiaocun Zong", "Fan Yang", "Shenheng Xu", "Maokun Li", "Hadi Alzayer", "Yunzhi Zhang"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

// TestAuthorLayouts covers author blocks whose names the layout, not a
// separator, tells from the rest: the JMLR class's \name, \email, \addr
// and \AND left unconverted (names with and without a footnote, e-mails
// as plain text, an address on the name's line); a name, a line of
// affiliation and "& Name" on the next line, in one personname; and an
// organisation set smaller under the names. Names only: no affiliation,
// address, e-mail or macro.
func TestAuthorLayouts(t *testing.T) {
	for _, tt := range []struct {
		page string
		want []string
	}{
		{"authors-jmlr.html", []string{"Ada Lovelace", "Charles Babbage", "Mary Somerville", "Alan Turing"}},
		{"authors-breaks.html", []string{"Ada Lovelace", "Charles Babbage", "Mary Somerville"}},
		{"authors-org.html", []string{"Ada Lovelace", "Charles Babbage", "Mary Somerville"}},
	} {
		d := parseFile(t, tt.page)
		if !reflect.DeepEqual(d.Authors, tt.want) {
			t.Errorf("%s: authors %q, want %q", tt.page, d.Authors, tt.want)
		}
	}
}

// inOrder reports whether every part occurs in text, each after the one
// before.
func inOrder(text string, parts ...string) bool {
	for _, part := range parts {
		i := strings.Index(text, part)
		if i < 0 {
			return false
		}
		text = text[i+len(part):]
	}
	return true
}

// TestMaxBytes: a page longer than the bound is refused before it is
// parsed; the default bound is MaxPageBytes, and a negative one is none.
func TestMaxBytes(t *testing.T) {
	page := []byte(`<html><body><article class="ltx_document"><h1 class="ltx_title ltx_title_document">A title</h1><p class="ltx_p">` +
		strings.Repeat("word ", 200) + `</p></article></body></html>`)
	for _, tt := range []struct {
		max     int64
		refused bool
	}{
		{0, false},
		{-1, false},
		{int64(len(page)), false},
		{int64(len(page)) - 1, true},
		{10, true},
	} {
		_, err := Parse(page, Options{ID: "2501.00001", Source: record.SourceArxiv, MaxBytes: tt.max})
		if got := errors.Is(err, ErrTooLarge); got != tt.refused {
			t.Errorf("MaxBytes %d, page of %d: err %v, want refused %v", tt.max, len(page), err, tt.refused)
		}
	}
	if MaxBytes(0) != MaxPageBytes || MaxBytes(-5) != -1 || MaxBytes(7) != 7 {
		t.Errorf("MaxBytes: %d %d %d", MaxBytes(0), MaxBytes(-5), MaxBytes(7))
	}
}

// TestIndexFrom checks the search that starts from a rare byte of the
// pattern against bytes.Index.
func TestIndexFrom(t *testing.T) {
	for _, s := range []string{"", "ar5iv", "xar5iv-footer", "5iv-footer ar5iv-footer", "aar5iv-footer", "ar5iv-foote", "5iv-footer", "r5iv-footer ar5iv-footer!"} {
		if got, want := indexFrom([]byte(s), "ar5iv-footer", 2), strings.Index(s, "ar5iv-footer"); got != want {
			t.Errorf("indexFrom(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestMathLineComments: LaTeXML wraps a long formula's TeX with a comment
// at each break ("\epsilon%" and a newline, as the recorded arXiv pages
// 2507.09057v1, 2507.11127v1, 2507.13317v1 and 2510.11261v1 have it); TeX
// reads the comment, its newline and the next line's indentation as
// nothing, so the text does too (it showed "\epsilon% _{ij}", which a
// model reads as a comment to the end of the formula and quotes without).
// An escaped per cent sign is kept, an escaped backslash before one is
// not an escape, and the annotation of an older page is read the same way.
func TestMathLineComments(t *testing.T) {
	page := `<html><head><meta name="generator" content="LaTeXML"></head><body><article class="ltx_document">` +
		`<section class="ltx_section" id="S1"><h2 class="ltx_title ltx_title_section">1 Model</h2>` +
		`<div class="ltx_para"><p class="ltx_p">We set <math alttext="b_{ij}+\epsilon%&#10;_{ij}" display="inline"><mi>b</mi></math> with ` +
		`<math alttext="k%&#10;   =0,1,\ldots,K" display="inline"><mi>k</mi></math>, a share of ` +
		`<math alttext="10\%" display="inline"><mi>10</mi></math> and ` +
		`<math alttext="\text{ is %&#10;symmetric}\\%&#10;x" display="inline"><mi>x</mi></math>, and ` +
		`<math display="inline"><semantics><mi>y</mi><annotation encoding="application/x-tex">\sigma%` + "\n" + `_{b} % note` + "\n" + `+1</annotation></semantics></math>.</p></div>` +
		`</section></article></body></html>`
	d, err := Parse([]byte(page), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `We set b_{ij}+\epsilon_{ij} with k=0,1,\ldots,K, a share of 10\% and \text{ is symmetric}\\x, and \sigma_{b} +1.`
	if len(d.Sections) != 1 || len(d.Sections[0].Paragraphs) != 1 || d.Sections[0].Paragraphs[0] != want {
		t.Errorf("paragraphs %q\nwant %q", d.Sections[0].Paragraphs, want)
	}
}
