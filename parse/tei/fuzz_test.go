package tei

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

// FuzzParse checks that no input makes the parser panic or loop, and that
// a Document, when returned, is well formed: every mention cites real
// references, section ids are unique, levels follow the nesting. Its seed
// corpus (the edge files and fragments of odd markup) runs in every go
// test.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "tei", "*.tei.xml"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	const open = `<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body>`
	for _, s := range []string{
		open + `<div><head n="1.1.1.1.1.1">x</head><div><head n="1.1.1.1.1.1">y</head></div></div>`,
		open + `<div><head n="2.1"/><p><ref type="bibr" target="#b0"><ref type="bibr" target="#b0">[1]</ref></ref>.</p></div>`,
		open + `<div><head>A.1 X</head></div><div><head>A.1 X</head></div><div><head n="A.1">x</head></div>`,
		open + `<figure type="table"><table><row><cell cols="999999999" rows="-3">a</cell></row><row/></table></figure>`,
		open + `<div><head>H</head><p><s><s>a.</s>b<ref type="bibr" target="#b0"/></s></p></div></body><back><div type="references"><listBibl><biblStruct xml:id="b0"/></listBibl></div></back></text></TEI>`,
		open + `<note place="foot" xml:id="foot_0"><ref type="foot" target="#foot_0">1</ref><note>n</note></note>`,
		open + `<div><head>II. X</head></div><div><head n="V">y</head></div><div><head n="XXXX">z</head></div>`,
		`<TEI><teiHeader><fileDesc><sourceDesc><biblStruct><idno type="arXiv">arXiv:[</idno></biblStruct></sourceDesc></fileDesc></teiHeader></TEI>`,
		`<TEI>` + strings.Repeat(`<div><head>x</head>`, 300),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(data, Options{})
		if err != nil {
			if d != nil {
				t.Fatalf("Parse returned both a Document and an error: %v", err)
			}
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("Parse panicked: %v", err)
			}
			return
		}
		if d.Conversion.Severity == "" || d.ServedBy == "" || d.Source != "pdf" {
			t.Fatalf("Document without severity, converter or source: %+v", d.Conversion)
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
		ids := map[string]bool{}
		var check func(level int, ss []record.Section)
		check = func(level int, ss []record.Section) {
			for _, s := range ss {
				if ids[s.ID] || s.ID == "" {
					t.Fatalf("section id %q empty or repeated", s.ID)
				}
				ids[s.ID] = true
				if s.Level != level {
					t.Fatalf("section %s at depth %d has level %d", s.ID, level, s.Level)
				}
				check(level+1, s.Sections)
			}
		}
		check(1, d.Sections)
	})
}
