package latexml

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"github.com/PuerkitoBio/goquery"

	"github.com/groundwork/curate/record"
)

// TestAgainstGoquery checks the parser against an independent reading of
// each fixture page written with goquery's CSS selectors: the same title,
// reference count, table count, section structure and abstract words.
func TestAgainstGoquery(t *testing.T) {
	for _, p := range fixturePages(t) {
		t.Run(p.name, func(t *testing.T) {
			d, err := Parse(p.html, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			g, err := goquery.NewDocumentFromReader(bytes.NewReader(p.html))
			if err != nil {
				t.Fatal(err)
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
			if n := g.Find("figure.ltx_table").Length(); n != len(d.Tables) {
				t.Errorf("tables = %d, goquery counts %d figure.ltx_table", len(d.Tables), n)
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
