package latexml

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that no input makes the parser panic and that a
// Document, when returned, is well formed. Its seed corpus (the edge pages
// and fragments of the odd markup) runs in every go test.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "pages", "*.html"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`<article class="ltx_document"><section class="ltx_section"><section class="ltx_section">`,
		`<div class="ltx_para"><cite class="ltx_cite"><cite class="ltx_cite"><a href="#bib.bib1">1</a></cite></cite>.</div>`,
		`<span class="ltx_tabular"><span class="ltx_tr"><span class="ltx_td ltx_colspan ltx_colspan_999999999">x</span></span></span>`,
		`<table class="ltx_tabular"><tr><td rowspan="-3">a</td><td rowspan="2">b</td></tr><tr></tr><tr><td>c</td></tr></table>`,
		`<math alttext="x" <math alttext='>'>y</math></math><p class="ltx_p">A. B. C.</p>`,
		`<h1 class="ltx_title ltx_title_document"><span class="ltx_note"><span class="ltx_note_content"><span class="ltx_note">`,
		`<li class="ltx_bibitem" id="bib.bib1"><span class="ltx_bibblock">“”“</span></li><section class="ltx_bibliography">`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		d, err := Parse(page, Options{})
		if err != nil {
			if d != nil {
				t.Fatalf("Parse returned both a Document and an error: %v", err)
			}
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("Parse failed inside: %v", err) // a recovered panic
			}
			return
		}
		if d.Conversion.Severity == "" {
			t.Fatalf("Document without a conversion severity")
		}
		keys := map[string]bool{}
		for _, r := range d.References {
			keys[r.Key] = true
			if r.Title != "" && !strings.Contains(r.Text, strings.Fields(r.Title)[0]) {
				t.Fatalf("title %q is not from its entry %q", r.Title, r.Text)
			}
		}
		for _, tab := range d.Tables {
			cells := 0
			for _, row := range tab.Rows {
				cells += len(row)
			}
			if cells > MaxTableCells+len(page) {
				t.Fatalf("table %s has %d cells from a %d-byte page", tab.ID, cells, len(page))
			}
		}
		for _, m := range d.Mentions {
			if len(m.RefKeys) == 0 {
				t.Fatalf("mention without keys: %+v", m)
			}
			for _, k := range m.RefKeys {
				if !keys[k] {
					t.Fatalf("mention cites %q, which is no reference", k)
				}
			}
		}
	})
}

// FuzzReferenceTitle checks that reading a title from any entry text, with
// any italic and bold ranges, never panics and returns text of the entry.
func FuzzReferenceTitle(f *testing.F) {
	for _, s := range []string{
		"C. A. Ullrich and Z.-h. Yang, Progress in time-dependent density-functional theory, Annu. Rev. Phys. Chem. 63, 287 (2012).",
		"Afflerbach, A., Churchwell, E., & DePree, C. G. 1996, ApJS, 106, 423",
		"Hansen, L. P. (1982): “Large Sample Properties of Generalized Method of Moments Estimators,” Econometrica, 50, 1029–1054.",
		"Vapnik, V.: The Nature of Statistical Learning Theory. Springer, New York (1995)",
		"Silver, D. et al. Mastering the game of Go. Nature 529, 484–489 (2016).",
		"A. Author, ‘A title’, J. 5, 1 (2000). “unbalanced",
		", . ; : ( ) [ ] “ ” . . ., et al. et al.: V.: (2001)",
	} {
		f.Add(s, uint16(10), uint16(40), uint16(50), uint16(52))
	}
	f.Fuzz(func(t *testing.T, text string, i0, i1, b0, b1 uint16) {
		n := len(text)
		r := func(a, b uint16) [][2]int { return styleRange(a, b, n) }
		r2 := func(a, b uint16) [][2]int { return styleRange(a, b, n-n/2) }
		blocks := []refBlock{{text: text, italic: r(i0, i1), bold: r(b0, b1)}}
		if n > 4 {
			blocks = append(blocks, refBlock{text: text[n/2:], italic: r2(i1, b0)})
		}
		for _, bs := range [][]refBlock{blocks[:1], blocks} {
			title := refTitle(bs)
			if title != "" && !strings.Contains(strings.Join([]string{bs[0].text, text[n/2:]}, " "), strings.Fields(title)[0]) {
				t.Fatalf("title %q is not from the entry %q", title, text)
			}
		}
	})
}

// styleRange turns two fuzzed numbers into a range within n bytes.
func styleRange(a, b uint16, n int) [][2]int {
	s, e := int(a)%(n+1), int(b)%(n+1)
	if s > e {
		s, e = e, s
	}
	return [][2]int{{s, e}}
}
