package latexml

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"github.com/groundwork/curate/record"
)

// TestAgainstGoquery checks the parser against an independent reading of
// each fixture page written with goquery's CSS selectors: the same title,
// reference count, table count, section structure and abstract words.
func TestAgainstGoquery(t *testing.T) {
	for _, p := range fixturePages(t) {
		t.Run(p.name, func(t *testing.T) {
			d, g := readBoth(t, p)
			// Conversion status: every ltx_ERROR (MathML included) and
			// every citation without a target.
			if n := g.Find(".ltx_ERROR").Length(); n != d.Conversion.Errors {
				t.Errorf("conversion errors = %d, goquery counts %d .ltx_ERROR", d.Conversion.Errors, n)
			}
			if n := independentMissing(g, d); n != d.Conversion.MissingCitations {
				t.Errorf("missing citations = %d, goquery counts %d", d.Conversion.MissingCitations, n)
			}
			g.Find("math, .ltx_note, .ltx_ERROR").Remove()

			// Title.
			h1 := g.Find("h1.ltx_title_document").First()
			switch {
			case h1.Length() == 0 && d.Title != nil:
				t.Errorf("title = %q, but the page has no title heading", *d.Title)
			case h1.Length() > 0 && d.Title == nil:
				t.Errorf("title missing, page has %q", h1.Text())
			case h1.Length() > 0 && letters(h1.Text()) != letters(*d.Title):
				t.Errorf("title = %q, goquery reads %q", *d.Title, strings.TrimSpace(h1.Text()))
			}

			// Reference and table counts.
			if n := g.Find(".ltx_bibliography .ltx_bibitem").Length(); n != len(d.References) {
				t.Errorf("references = %d, goquery counts %d bibitems", len(d.References), n)
			}
			if n := independentTables(g); n != len(d.Tables) {
				t.Errorf("tables = %d, goquery counts %d", len(d.Tables), n)
			}

			// Section structure: ids in document order, and headings.
			var want []string
			wantHeading := map[string]string{}
			g.Find("section.ltx_section, section.ltx_subsection, section.ltx_subsubsection, section.ltx_paragraph, section.ltx_subparagraph, section.ltx_appendix, section.ltx_chapter, section.ltx_part").Each(func(_ int, s *goquery.Selection) {
				id, _ := s.Attr("id")
				want = append(want, id)
				h := s.ChildrenFiltered("h1, h2, h3, h4, h5, h6").First().Clone()
				h.Find(".ltx_tag").Remove()
				wantHeading[id] = letters(h.Text())
			})
			var got []string
			gotHeading := map[string]string{}
			var flat func([]record.Section)
			flat = func(ss []record.Section) {
				for _, s := range ss {
					got = append(got, s.ID)
					gotHeading[s.ID] = letters(s.Heading)
					flat(s.Sections)
				}
			}
			flat(d.Sections)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("section ids\n got: %v\nwant: %v", got, want)
			}
			// goquery drops math, the parser writes its TeX: compare in order,
			// allowing the parser's extra TeX.
			for id, h := range wantHeading {
				if !subsequence(h, gotHeading[id]) {
					t.Errorf("section %s heading = %q, goquery reads %q", id, gotHeading[id], h)
				}
			}

			// Abstract: every word goquery sees is in the parser's abstract.
			abs := g.Find(".ltx_abstract").First().Clone()
			abs.Find("h6").Remove()
			if abs.Length() > 0 {
				have := map[string]bool{}
				for _, w := range words(d.Abstract) {
					have[w] = true
				}
				var missing []string
				ws := words(abs.Text())
				for _, w := range ws {
					if !have[w] {
						missing = append(missing, w)
					}
				}
				if len(ws) == 0 || len(missing) > 0 {
					t.Errorf("abstract lacks %d of %d words goquery sees: %v", len(missing), len(ws), missing)
				}
			}
		})
	}
}

// independentTables counts the tables of a page as a reader would: every
// ltx_table element (a figure, or a div or span when rotated or in running
// text) with a numbered caption of its own, and every uncaptioned one
// holding cells that is no part of another table; a subtable ("(a) ...")
// is part of its table.
func independentTables(g *goquery.Document) int {
	n := 0
	g.Find(".ltx_table").Not("table").Each(func(_ int, s *goquery.Selection) {
		own := s.Find(".ltx_caption, figcaption").FilterFunction(func(_ int, c *goquery.Selection) bool {
			return c.ParentsFiltered(".ltx_table").Not("table").First().IsSelection(s)
		}).First()
		if own.Length() > 0 {
			tag := strings.TrimSpace(own.Find(".ltx_tag").First().Text())
			if !strings.HasPrefix(tag, "(") {
				n++
			}
			return
		}
		if s.ParentsFiltered(".ltx_table").Not("table").Length() > 0 {
			return // an uncaptioned part of another table
		}
		nested := s.Find(".ltx_table").Not("table")
		if s.Find(".ltx_tabular").Length() > nested.Find(".ltx_tabular").Length() {
			n++
		}
	})
	return n
}

// independentMissing counts the citations without a target: LaTeXML's
// missing-citation marks, links to entries the page lacks, and citations
// with neither a link nor a mark that show a "?".
func independentMissing(g *goquery.Document, d *record.Document) int {
	keys := map[string]bool{}
	for _, r := range d.References {
		keys[r.Key] = true
	}
	n := g.Find(".ltx_missing_citation").Length()
	g.Find("cite").Each(func(_ int, c *goquery.Selection) {
		if c.ParentsFiltered("cite").Length() > 0 {
			return
		}
		links := 0
		c.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
			href, _ := a.Attr("href")
			i := strings.LastIndex(href, "#")
			if i < 0 || i+1 == len(href) {
				return
			}
			links++
			if k := href[i+1:]; strings.HasPrefix(k, "bib") && !keys[k] {
				n++
			}
		})
		if links == 0 && c.Find(".ltx_missing_citation").Length() == 0 && strings.Contains(c.Text(), "?") {
			n++
		}
	})
	return n
}

// TestFullTextCoverage checks that the Document's full text holds the
// readable text of every fixture page: the words of the article as
// goquery reads them (without the table of contents, dates, unconverted
// macro names and MathML, whose TeX the parser writes instead), counted
// with their repeats, once for the body alone (no bibliography, no author
// block) and once for the whole article. Each reading must keep at least
// 80% of its words.
func TestFullTextCoverage(t *testing.T) {
	for _, p := range fixturePages(t) {
		t.Run(p.name, func(t *testing.T) { checkCoverage(t, p) })
	}
}

// TestFullTextCoveragePages runs the same check over the pages written for
// these tests: swallowed sections, boxes, notes, tables of every kind.
func TestFullTextCoveragePages(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "pages", "*.html"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test pages: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := fixturePage{name: filepath.Base(f), html: data}
		t.Run(p.name, func(t *testing.T) { checkCoverage(t, p) })
	}
}

// readBoth parses a page twice: with the parser and with goquery.
func readBoth(t *testing.T, p fixturePage) (*record.Document, *goquery.Document) {
	t.Helper()
	d, err := Parse(p.html, Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	g, err := goquery.NewDocumentFromReader(bytes.NewReader(p.html))
	if err != nil {
		t.Fatal(err)
	}
	return d, g
}

func checkCoverage(t *testing.T, p fixturePage) {
	t.Helper()
	d, g := readBoth(t, p)
	have := map[string]int{}
	for _, w := range coverageWords(d.FullText) {
		have[w]++
	}
	// The body: the article without the bibliography and the author block.
	// The page: everything readable in the article.
	for _, reading := range []struct{ name, drop string }{
		{"body", ".ltx_bibliography, .ltx_authors, "},
		{"page", ""},
	} {
		body := g.Find("article.ltx_document").First()
		if body.Length() == 0 {
			body = g.Find("body")
		}
		body = body.Clone()
		body.Find("math, script, style, nav, .ltx_TOC, .ltx_dates, " + reading.drop +
			".ltx_classification, .ltx_pagination, .ltx_ERROR, .ltx_note_mark, .ltx_tag_note, .ltx_tag_equation").Remove()
		page := map[string]int{}
		total := 0
		body.Find("*").AddSelection(body).Contents().Each(func(_ int, s *goquery.Selection) {
			if n := s.Get(0); n.Type == html.TextNode {
				for _, w := range coverageWords(n.Data) {
					page[w]++
					total++
				}
			}
		})
		covered := 0
		for w, n := range page {
			covered += min(n, have[w])
		}
		if total == 0 {
			if d.FullText != "" && !d.Conversion.Empty {
				t.Errorf("the page has no readable words, the Document has %d bytes of text", len(d.FullText))
			}
			return
		}
		share := float64(covered) / float64(total)
		t.Logf("%s: full text holds %.1f%% of the %s's %d readable words (%d bytes of full text)",
			p.name, 100*share, reading.name, total, len(d.FullText))
		if share < 0.80 {
			t.Errorf("full text holds %.1f%% of the %s's readable words, want at least 80%%", 100*share, reading.name)
		}
	}
}

// coverageWords splits s into lower-cased words of two letters or more.
func coverageWords(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if utf8.RuneCountInString(f) >= 2 {
			out = append(out, strings.ToLower(f))
		}
	}
	return out
}

// letters keeps the letters and digits of s, lower-cased: what two
// extractions of one text must agree on whatever their spacing.
func letters(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// subsequence reports whether the runes of a appear in b in order.
func subsequence(a, b string) bool {
	rb := []rune(b)
	j := 0
	for _, r := range a {
		for j < len(rb) && rb[j] != r {
			j++
		}
		if j == len(rb) {
			return false
		}
		j++
	}
	return true
}

func words(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(f) >= 4 {
			out = append(out, strings.ToLower(f))
		}
	}
	return out
}
