package latexml

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

// flatSections lists the ids of a section tree in document order, each
// with its depth.
func flatSections(ss []record.Section, depth int) []string {
	var out []string
	for _, s := range ss {
		out = append(out, fmt.Sprintf("%d:%s", depth, s.ID))
		out = append(out, flatSections(s.Sections, depth+1)...)
	}
	return out
}

// TestSwallowedSections covers sections a conversion left inside other
// elements: a table cell and the rest of an unclosed table float, a figure
// four levels down, the bibliography. Each appears once, in document
// order, at the level of its rank, and the repair is reported.
func TestSwallowedSections(t *testing.T) {
	d := parseFile(t, "broken-nesting.html")
	want := []string{"0:S1", "0:S2", "1:S2.SS1", "0:S3", "0:S4", "1:S4.SS1", "2:S4.SS1.SSS1", "0:S5", "0:S6", "0:A1"}
	if got := flatSections(d.Sections, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("sections\n got %v\nwant %v", got, want)
	}
	if d.Conversion.RepairedSections != 5 {
		t.Errorf("repaired sections = %d, want 5 (S2, S3, S5, S6, A1)", d.Conversion.RepairedSections)
	}
	if !strings.Contains(strings.Join(d.Conversion.Notes, "\n"), "structure repaired: 5 sections") {
		t.Errorf("notes do not report the repair: %q", d.Conversion.Notes)
	}
	if len(d.Tables) != 1 || len(d.Tables[0].Rows) != 2 || d.Tables[0].Caption != "An unclosed matrix." {
		t.Errorf("the table that swallowed the sections keeps its own cells only: %+v", d.Tables)
	}
	if !inOrder(d.FullText, "1 Setup", "Table 1: An unclosed matrix.", "alpha | beta", "2 Method", "The method swallowed",
		"2.1 Details", "3 Results", "4.1.1 Code", "Figure 1: A listing.", "5 Discussion", "6 Conclusion", "A Proofs",
		"A closing remark after the bibliography.") {
		t.Errorf("full text out of order:\n%s", d.FullText)
	}
	if got := d.Preamble; !reflect.DeepEqual(got, []string{"A closing remark after the bibliography."}) {
		t.Errorf("preamble = %q", got)
	}
	wantMentions := []record.Mention{
		{RefKeys: []string{"bib.bib1"}, Sentence: "We begin with a table [1].", SectionID: "S1"},
		{RefKeys: []string{"bib.bib2"}, Sentence: "Results after the table, still inside its float [2].", SectionID: "S3"},
	}
	if !reflect.DeepEqual(d.Mentions, wantMentions) {
		t.Errorf("mentions\n got %+v\nwant %+v", d.Mentions, wantMentions)
	}
}

// TestSectionsByID covers pages whose HTML nests sections where LaTeXML
// did not put them: each section inside the last subsection of the one
// before (a page of severity fatal), a paragraph left open around a
// section, an appendix that closes right after its heading with its
// subsections and text after it, and a subsection whose id names a
// section the page lacks (it stays where it is). The tree follows the
// ids and ranks, and every move is counted.
func TestSectionsByID(t *testing.T) {
	d := parseFile(t, "broken-ids.html")
	want := []string{"0:S1", "0:S2", "1:S2.SS1", "1:S2.SS2", "1:S2.SS3", "1:S2.SS4", "0:S3", "1:S3.SS1", "1:S3.SS2",
		"2:S3.SS2.SSS1", "2:S3.SS2.SSS2", "3:S3.SS2.SSS2.Px1", "0:S4", "1:S4.SS1", "0:S5", "1:S9.SS1",
		"0:A1", "1:A1.SS1", "1:A1.SS2", "1:A1.SS3", "1:A1.SS4"}
	if got := flatSections(d.Sections, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("sections\n got %v\nwant %v", got, want)
	}
	if d.Conversion.RepairedSections != 7 {
		t.Errorf("repaired sections = %d, want 7 (S3, S4, S5, A1.SS1-A1.SS4): %q", d.Conversion.RepairedSections, d.Conversion.Notes)
	}
	a := d.Sections[len(d.Sections)-1]
	var numbers []string
	for _, s := range a.Sections {
		numbers = append(numbers, s.Number)
	}
	if !a.Appendix || a.Number != "A" || !reflect.DeepEqual(numbers, []string{"A.1", "A.2", "A.3", "A.4"}) ||
		!reflect.DeepEqual(a.Paragraphs, []string{"The proofs follow."}) || len(d.Preamble) != 0 {
		t.Errorf("appendix %s %q with subsections %v, paragraphs %q; preamble %q", a.ID, a.Number, numbers, a.Paragraphs, d.Preamble)
	}
	if !inOrder(d.FullText, "2.4 Background part 4", "3 Method", "3.2.2 Loss", "Weights", "4 Results", "4.1 Main results",
		"A paragraph left open.", "5 Conclusion", "9.1 Stray", "References", "A Proofs", "The proofs follow.", "A.1 Proof of lemma 1") {
		t.Errorf("full text out of order:\n%s", d.FullText)
	}
	if len(d.Mentions) != 1 || d.Mentions[0].SectionID != "S3" {
		t.Errorf("mentions %+v: want the method's citation, in S3", d.Mentions)
	}

	// Parts and chapters: a section goes under the chapter its id names,
	// and a section of a one-part id stays in the chapter around it.
	page := hostilePage("")
	body := `<section class="ltx_part" id="Pt1"><h1 class="ltx_title ltx_title_part">Part I</h1>` +
		`<section class="ltx_chapter" id="Ch1"><h1 class="ltx_title ltx_title_chapter">Chapter 1</h1>` +
		`<section class="ltx_section" id="Ch1.S1"><h2 class="ltx_title ltx_title_section">1.1 One</h2>` +
		`<section class="ltx_subsection" id="Ch1.S1.SS1"><h3 class="ltx_title ltx_title_subsection">1.1.1 Sub</h3>` +
		`<section class="ltx_section" id="Ch1.S2"><h2 class="ltx_title ltx_title_section">1.2 Two</h2><p>Two.</p></section>` +
		`</section></section></section>` +
		`<section class="ltx_chapter" id="Ch2"><h1 class="ltx_title ltx_title_chapter">Chapter 2</h1>` +
		`<section class="ltx_section" id="S7"><h2 class="ltx_title ltx_title_section">Seven</h2><p>Seven.</p></section></section></section>`
	page = []byte(strings.Replace(string(page), `<section class="ltx_section" id="S1"><h2 class="ltx_title ltx_title_section">1 Intro</h2>`, body+"<div>", 1))
	page = []byte(strings.Replace(string(page), `</section></article>`, `</div></article>`, 1))
	d, err := Parse(page, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"0:Pt1", "1:Ch1", "2:Ch1.S1", "3:Ch1.S1.SS1", "2:Ch1.S2", "1:Ch2", "2:S7"}
	if got := flatSections(d.Sections, 0); !reflect.DeepEqual(got, want) || d.Conversion.RepairedSections != 1 {
		t.Errorf("sections %v (repaired %d), want %v (repaired 1)", got, d.Conversion.RepairedSections, want)
	}
}

// TestSectionsOutsideArticle covers a stray end tag that closes the
// article early: the sections after it are moved back in.
func TestSectionsOutsideArticle(t *testing.T) {
	d := parseFile(t, "broken-article.html")
	if got := flatSections(d.Sections, 0); !reflect.DeepEqual(got, []string{"0:S1", "0:S2"}) {
		t.Errorf("sections %v, want S1 and S2", got)
	}
	if d.Conversion.RepairedSections != 1 || !strings.Contains(d.FullText, "This section stands outside the article.") {
		t.Errorf("repaired %d, full text %q", d.Conversion.RepairedSections, d.FullText)
	}
}

// TestBoxesNotesFootnotes covers text the full text used to lose: boxes
// drawn as SVG (in a paragraph and in a figure), notes under a table,
// footnotes, and a paragraph after the bibliography.
func TestBoxesNotesFootnotes(t *testing.T) {
	d := parseFile(t, "boxes.html")
	if !inOrder(d.FullText,
		"Prompts are shown in boxes.", "The boxes are verbatim model outputs.",
		"Example 1. The gene regulates flowering", "Answer: photoperiod sensitivity.",
		"Case study. A farmer in Kenya", "Box label", "Figure 1: A case study box.",
		"Table 1: Wages by region.", "Region | Wage\nNorth | 12.5", "Notes: Wages are hourly",
		"Table 1 lists wages.", "Acknowledgements: we thank the farmers.") {
		t.Errorf("full text lacks boxed text, notes or footnotes, or has them out of place:\n%s", d.FullText)
	}
	if got := d.Sections[0].Paragraphs[1]; !strings.HasPrefix(got, "Example 1. The gene") {
		t.Errorf("a boxed paragraph is a paragraph of its section: %q", got)
	}
	keys := map[string]string{}
	for _, m := range d.Mentions {
		keys[strings.Join(m.RefKeys, ",")] = m.Sentence
	}
	if !strings.HasPrefix(keys["bib.bib1"], "The gene regulates") || !strings.HasPrefix(keys["bib.bib2"], "Notes: Wages") {
		t.Errorf("citations in boxes and table notes are mentions: %+v", d.Mentions)
	}
	if d.Conversion.MissingCitations != 1 {
		t.Errorf("missing citations = %d, want the one in the table notes", d.Conversion.MissingCitations)
	}
}

// TestMinipageTables covers tables that LaTeXML wraps in a minipage: a
// table float around a figure.ltx_figure.ltx_minipage holding the tabular
// and the caption, one around a span minipage in a flex cell, and a
// \captionof{table} minipage beside a figure's. Each keeps its number,
// caption and rows.
func TestMinipageTables(t *testing.T) {
	d := parseFile(t, "tables-minipage.html")
	want := []record.Table{
		{ID: "S1.T1", Number: "1", Caption: "Accuracy on the test set.", Rows: [][]string{{"Model", "Accuracy"}, {"Baseline", "71.2"}, {"Ours", "78.9"}}},
		{ID: "S1.T2", Number: "2", Caption: "Sizes of the splits.", Rows: [][]string{{"Split", "Size"}, {"Train", "9000"}, {"Test", "1000"}}},
		{ID: "S1.T3", Number: "3", Caption: "The learning rate, beside a figure.", Rows: [][]string{{"Rate", "0.1"}}},
	}
	if !reflect.DeepEqual(d.Tables, want) {
		t.Errorf("tables\n got %+v\nwant %+v", d.Tables, want)
	}
	if !inOrder(d.FullText, "Ours | 78.9", "Table 1: Accuracy on the test set.", "Test | 1000", "Table 2: Sizes",
		"Rate | 0.1", "Table 3: The learning rate", "Figure 1: The loss curve.") {
		t.Errorf("full text out of order:\n%s", d.FullText)
	}
}

// TestListingLineNumbers checks that a code listing's line numbers stay
// out of its text, in running text and in a float.
func TestListingLineNumbers(t *testing.T) {
	listing := func(id string) string {
		return `<div class="ltx_listing ltx_lst_numbers_left ltx_listing" id="` + id + `">` +
			`<div class="ltx_listingline" id="` + id + `.l1"><span class="ltx_tag ltx_tag_listingline">1</span><span class="ltx_text ltx_lst_keyword ltx_font_bold">def</span><span class="ltx_text ltx_lst_space"> </span>rank(x):</div>` +
			`<div class="ltx_listingline" id="` + id + `.l3"><span class="ltx_tag ltx_tag_listingline">3</span><span class="ltx_text ltx_lst_comment">#Based on the rule</span></div>` +
			`<div class="ltx_listingline" id="` + id + `.l4"><span class="ltx_tag ltx_tag_listingline">4</span>return<span class="ltx_text ltx_lst_space"> </span>x</div></div>`
	}
	d, err := Parse(hostilePage(`<div class="ltx_para"><p class="ltx_p">The code:</p>`+listing("S1.p1.l")+`</div>`+
		`<figure class="ltx_float ltx_lstlisting" id="S1.F1">`+listing("S1.F1.l")+
		`<figcaption class="ltx_caption"><span class="ltx_tag ltx_tag_float">Listing 1: </span>Ranking.</figcaption></figure>`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(d.FullText, "1def") || strings.Contains(d.FullText, "3#Based") || strings.Contains(d.FullText, "4return") ||
		strings.Count(d.FullText, "def rank(x): #Based on the rule return x") != 2 {
		t.Errorf("line numbers in the listing's text:\n%s", d.FullText)
	}
}

// TestTableKinds covers tables LaTeXML writes in other shapes than a
// figure holding a <table>: rotated floats (a div around a bare figure),
// sideways tabulars, span tables in running text and in layout cells,
// minipages side by side, subtables, captions after the cells, and a
// tabular drawn inside an SVG picture.
func TestTableKinds(t *testing.T) {
	d := parseFile(t, "tables.html")
	type tab struct {
		ID, Number, Caption string
		Rows                [][]string
	}
	want := []tab{
		{"S1.T1", "1", "Summary Descriptions of the Experiments", [][]string{{"Experiment", "Treatment"}, {"E1", "Gift exchange"}, {"E2", "Public goods [fehr2000]"}}},
		{"S1.T2", "2", "A sideways tabular, caption below.", [][]string{{"sideways", "cells"}}},
		{"S1.T3.m1", "3", "Left table.", [][]string{{"l1", "l2"}}},
		{"S1.T3.m2", "4", "Right table [1].", [][]string{{"r1", "r2"}}},
		{"S1.T5", "5", "Two subtables.", [][]string{{"a1", "a2"}, {"b1", "b2"}}},
		{"S1.T6", "6", "Caption after the cells.", [][]string{{"i1", "i2"}}},
		{"S1.T7", "7", "In a layout cell.", [][]string{{"c1"}}},
		{"S1.T8", "8", "Beside it.", [][]string{{"d1", "d2", "d2"}}},
		{"S1.T9", "9", "Drawn as a picture.", [][]string{{"p1", "p2"}}},
	}
	var got []tab
	for _, x := range d.Tables {
		got = append(got, tab{x.ID, x.Number, x.Caption, x.Rows})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tables\n got %+v\nwant %+v", got, want)
	}
	if d.Conversion.MissingCitations != 1 {
		t.Errorf("missing citations = %d, want 1 (in a cell)", d.Conversion.MissingCitations)
	}
	if !inOrder(d.FullText, "Table 1: Summary Descriptions", "E1 | Gift exchange", "sideways | cells", "Table 2:",
		"Table 3: Left table.", "l1 | l2", "Table 4:", "Table 5: Two subtables.", "(a) First.", "a1 | a2", "(b) Second.") {
		t.Errorf("full text:\n%s", d.FullText)
	}
}

// TestConversionCounts covers the conversion status: every ltx_ERROR (body,
// math, bibliography) and every missing citation (heading, text, footnote,
// caption, table cell, bibliography; unresolved marks, links to no entry,
// "[?]").
func TestConversionCounts(t *testing.T) {
	d := parseFile(t, "errors.html")
	if d.Conversion.Errors != 6 {
		t.Errorf("errors = %d, want 6 (1 in the text, 3 in math, 2 in the bibliography)", d.Conversion.Errors)
	}
	if d.Conversion.MissingCitations != 7 {
		t.Errorf("missing citations = %d, want 7", d.Conversion.MissingCitations)
	}
	if d.Conversion.Severity != record.SeverityError {
		t.Errorf("severity = %q", d.Conversion.Severity)
	}
	if !strings.Contains(d.FullText, "Body text with an error and math \\rFloor x and \\foo\\bar.") {
		t.Errorf("math keeps its TeX, the macro name is dropped:\n%s", d.FullText)
	}
}

// hostilePage wraps body in a minimal LaTeXML page.
func hostilePage(body string) []byte {
	return []byte(`<!DOCTYPE html><html><head><title>x</title></head><body><article class="ltx_document">` +
		`<h1 class="ltx_title ltx_title_document">Hostile</h1><section class="ltx_section" id="S1">` +
		`<h2 class="ltx_title ltx_title_section">1 Intro</h2>` + body + `</section></article></body></html>`)
}

// spanTable is a table of rows×cols cells, each spanning span columns
// and rows.
func spanTable(rows, cols, span int) string {
	var b strings.Builder
	b.WriteString(`<figure class="ltx_table" id="S1.T1"><figcaption class="ltx_caption">Table 1: spans</figcaption><table class="ltx_tabular">`)
	for r := 0; r < rows; r++ {
		b.WriteString(`<tr>`)
		for c := 0; c < cols; c++ {
			fmt.Fprintf(&b, `<td colspan="%d" rowspan="%d">r%dc%d</td>`, span, span, r, c)
		}
		b.WriteString(`</tr>`)
	}
	b.WriteString(`</table></figure>`)
	return b.String()
}

// TestSpanBounds checks that a table asking for far more positions than it
// has cells is expanded only up to its bound, keeps every cell it has, and
// says it was cut; and that an ordinary spanning table is not cut.
func TestSpanBounds(t *testing.T) {
	const rows, cols = 60, 40
	d, err := Parse(hostilePage(spanTable(rows, cols, 100)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tab := d.Tables[0]
	expanded := 0
	seen := map[string]bool{}
	for _, r := range tab.Rows {
		expanded += len(r)
		for _, c := range r {
			seen[c] = true
		}
	}
	if limit := MaxSpanFactor*rows*cols + rows*cols; expanded > limit {
		t.Errorf("%d expanded cells from %d present, bound is %d", expanded, rows*cols, limit)
	}
	if len(seen) != rows*cols {
		t.Errorf("%d distinct cells kept, want all %d", len(seen), rows*cols)
	}
	if d.Conversion.TruncatedTables != 1 || !strings.Contains(strings.Join(d.Conversion.Notes, " "), "table S1.T1: spanning cells expanded only up to the limit") {
		t.Errorf("truncation not recorded: %+v", d.Conversion)
	}
	if strings.Count(d.FullText, "r0c0") != 1 {
		t.Errorf("the full text holds each cell once")
	}

	// A rowspan reaching past the last row stops there, and a modest
	// table is expanded in full.
	d, err = Parse(hostilePage(spanTable(3, 2, 2)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"r0c0", "r0c0", "r0c1", "r0c1"},
		{"r0c0", "r0c0", "r0c1", "r0c1", "r1c0", "r1c0", "r1c1", "r1c1"},
		{"r2c0", "r2c0", "r2c1", "r2c1", "r1c0", "r1c0", "r1c1", "r1c1"},
	}
	if !reflect.DeepEqual(d.Tables[0].Rows, want) || d.Conversion.TruncatedTables != 0 {
		t.Errorf("rows %v, truncated %d", d.Tables[0].Rows, d.Conversion.TruncatedTables)
	}
}

// citingSentence is one sentence citing n references, with the
// bibliography it cites.
func citingSentence(n int) []byte {
	var b strings.Builder
	b.WriteString(`<div class="ltx_para"><p class="ltx_p">We cite <cite class="ltx_cite">[`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `<a class="ltx_ref" href="#bib.bib%d">%d</a>, <a class="ltx_ref" href="#bib.bib%d">%d</a>, `, i, i, i, i)
	}
	b.WriteString(`]</cite> here. Next sentence.</p></div></section><section class="ltx_bibliography" id="bib"><ul class="ltx_biblist">`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `<li class="ltx_bibitem" id="bib.bib%d"><span class="ltx_tag ltx_tag_bibitem">[%d]</span><span class="ltx_bibblock">A. Author. Paper %d. 2020.</span></li>`, i, i, i)
	}
	b.WriteString(`</ul>`)
	return hostilePage(b.String())
}

// TestManyCitations checks that one sentence citing thousands of
// references (each twice) gives one mention with every key once, in
// order.
func TestManyCitations(t *testing.T) {
	const n = 5000
	d, err := Parse(citingSentence(n), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Mentions) != 1 || len(d.Mentions[0].RefKeys) != n {
		t.Fatalf("%d mentions, want 1 with %d keys", len(d.Mentions), n)
	}
	for i, k := range d.Mentions[0].RefKeys {
		if want := fmt.Sprintf("bib.bib%d", i+1); k != want {
			t.Fatalf("key %d = %q, want %q", i, k, want)
		}
	}
}

// TestDeepNesting checks that a page nesting elements deeper than the HTML
// parser allows is refused with an error naming the cause, not a crash.
func TestDeepNesting(t *testing.T) {
	body := strings.Repeat("<span>a", 5000) + strings.Repeat("</span>", 5000)
	_, err := Parse(hostilePage(`<div class="ltx_para"><p class="ltx_p">`+body+`</p></div>`), Options{})
	if err == nil || !strings.Contains(err.Error(), "open stack of elements") {
		t.Errorf("err = %v, want the HTML parser's nesting limit", err)
	}
}

// TestAuthorSeparators covers the spaces and marks LaTeXML writes between
// author names: three-per-em and four-per-em spaces, en and em spaces,
// runs of spaces, middle dots, bullets and bars, the ideographic and
// medium math spaces; no-break and thin spaces stay inside a name.
func TestAuthorSeparators(t *testing.T) {
	d := parseFile(t, "authors-unicode.html")
	want := []string{"Amara Okafor", "Bruno Lindqvist", "Chen Wei", "Dana Kowalski", "Emil Haas", "Farah Siddiqui",
		"Goran Petrov", "Hana Sato", "Ivo Novak", "Jun Park", "Kofi Mensah", "Lena Fischer", "Mateo Ruiz",
		"Nadia Haddad", "Olu Adeyemi", "Pia Larsen", "Quinn Murphy", "Rosa Delgado"}
	if !reflect.DeepEqual(d.Authors, want) {
		t.Errorf("authors\n got %q\nwant %q", d.Authors, want)
	}
	for _, tt := range []struct {
		line string
		want []string
	}{
		{"Ada Lovelace\u2004Charles Babbage", []string{"Ada Lovelace", "Charles Babbage"}},
		{"Ada Lovelace\u2003\u2003Charles Babbage", []string{"Ada Lovelace", "Charles Babbage"}},
		{"J.\u2009R.\u2009R. Tolkien and C.\u00a0S. Lewis", []string{"J. R. R. Tolkien", "C. S. Lewis"}},
		{"Ada Lovelace\u00a0and\u00a0Mary Somerville", []string{"Ada Lovelace", "Mary Somerville"}},
	} {
		if got := splitNames(tt.line); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitNames(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestFloatsNoRuleReaches checks that a float in a container the walk
// skips (here the keywords line) is still recorded.
func TestFloatsNoRuleReaches(t *testing.T) {
	page := hostilePage(`<div class="ltx_para"><p class="ltx_p">Text.</p></div>`)
	page = []byte(strings.Replace(string(page), `<section class="ltx_section" id="S1">`,
		`<div class="ltx_dates">(Received 2024) <figure class="ltx_table" id="T9"><figcaption class="ltx_caption"><span class="ltx_tag ltx_tag_table">Table 9: </span>Hidden.</figcaption>`+
			`<table class="ltx_tabular"><tr><td>h1</td></tr></table></figure></div><section class="ltx_section" id="S1">`, 1))
	d, err := Parse(page, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tables) != 1 || d.Tables[0].Number != "9" || !strings.Contains(d.FullText, "Table 9: Hidden.") {
		t.Errorf("tables %+v, full text %q", d.Tables, d.FullText)
	}
}
