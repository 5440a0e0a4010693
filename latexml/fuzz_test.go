package latexml

import (
	"os"
	"path/filepath"
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
			return
		}
		if d.Conversion.Severity == "" {
			t.Fatalf("Document without a conversion severity")
		}
		keys := map[string]bool{}
		for _, r := range d.References {
			keys[r.Key] = true
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
