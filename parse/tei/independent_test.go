package tei

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/internal/testneeds"
	"github.com/groundwork/curate/record"
)

// tokenCounts is an independent reading of a TEI file: a single pass over
// encoding/xml tokens with an element stack, no tree and none of the
// parser's code.
type tokenCounts struct {
	title        string
	abstract     string
	heads        []string // n and text of every headed div of the text, in order
	biblStructs  int      // entries of listBibl
	bibKeys      map[string]bool
	bibr         int      // <ref type="bibr"> markers in the header and the text
	bibrTargets  []string // their targets, in order
	bibrNoTarget int
	withArxiv    int // listBibl entries with an idno type="arXiv"
	withDOI      int // listBibl entries with an idno type="DOI"
	tables       int // <figure type="table">
	figures      int // other <figure>
	version      string
}

func countTokens(t *testing.T, data []byte) tokenCounts {
	t.Helper()
	c := tokenCounts{bibKeys: map[string]bool{}}
	d := xml.NewDecoder(bytes.NewReader(data))
	type frame struct {
		name    string
		attrs   map[string]string
		text    strings.Builder
		hasHead bool // a div that already has its head
		arxiv   bool // a biblStruct with an arXiv idno
		doi     bool // a biblStruct with a DOI idno
	}
	var stack []*frame
	in := func(name string) bool {
		for _, f := range stack {
			if f.name == name {
				return true
			}
		}
		return false
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("independent reading: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			f := &frame{name: x.Name.Local, attrs: map[string]string{}}
			for _, a := range x.Attr {
				f.attrs[a.Name.Local] = a.Value
			}
			parent := ""
			if len(stack) > 0 {
				parent = stack[len(stack)-1].name
			}
			switch {
			case f.name == "biblStruct" && parent == "listBibl":
				c.biblStructs++
				c.bibKeys[f.attrs["id"]] = true
			case f.name == "ref" && f.attrs["type"] == "bibr" && !in("biblStruct"):
				c.bibr++
				ts := strings.Fields(f.attrs["target"])
				if len(ts) == 0 {
					c.bibrNoTarget++
				}
				for _, tg := range ts {
					c.bibrTargets = append(c.bibrTargets, strings.TrimPrefix(tg, "#"))
				}
			case f.name == "figure" && f.attrs["type"] == "table":
				c.tables++
			case f.name == "figure":
				c.figures++
			case f.name == "application" && f.attrs["ident"] == "GROBID":
				c.version = f.attrs["version"]
			}
			stack = append(stack, f)
			for _, g := range stack {
				g.text.WriteByte(' ') // element boundaries separate words ("</s><s>")
			}
		case xml.CharData:
			for _, f := range stack {
				f.text.Write(x)
			}
		case xml.EndElement:
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, g := range stack {
				g.text.WriteByte(' ')
			}
			var parent *frame
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			switch {
			case f.name == "title" && parent != nil && parent.name == "titleStmt" && f.attrs["type"] == "main" && c.title == "":
				c.title = f.text.String()
			case f.name == "abstract":
				c.abstract = f.text.String()
			case f.name == "idno" && in("listBibl"):
				for _, g := range stack {
					if g.name == "biblStruct" {
						g.arxiv = g.arxiv || strings.EqualFold(f.attrs["type"], "arXiv") && strings.Contains(f.text.String(), ".")
						g.doi = g.doi || strings.EqualFold(f.attrs["type"], "DOI") && strings.Contains(f.text.String(), "10.")
					}
				}
			case f.name == "biblStruct" && parent != nil && parent.name == "listBibl":
				if f.arxiv {
					c.withArxiv++
				}
				if f.doi {
					c.withDOI++
				}
			case f.name == "head" && parent != nil && parent.name == "div" && !parent.hasHead && in("text"):
				text := strings.TrimSpace(f.text.String())
				if text != "" || f.attrs["n"] != "" {
					parent.hasHead = true
					c.heads = append(c.heads, f.attrs["n"]+" "+text)
				}
			}
		}
	}
	return c
}

// manifest reads MANIFEST.tsv: file name -> column -> value.
func manifest(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		testneeds.Skip(t, testneeds.Fixtures, "no MANIFEST.tsv in %s: %v", dir, err)
	}
	defer f.Close()
	out := map[string]map[string]string{}
	sc := bufio.NewScanner(f)
	var cols []string
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if cols == nil {
			cols = fields
			continue
		}
		row := map[string]string{}
		for i, v := range fields {
			if i < len(cols) {
				row[cols[i]] = v
			}
		}
		out[row["file"]] = row
	}
	return out
}

// TestAgainstTokenCount checks the parser against the independent token
// reading and against MANIFEST.tsv on every fixture: every headed div is a
// section, in order (any other section is an implied parent); the
// references are the listBibl entries; every citation marker either
// resolves to a reference that a mention cites or counts as missing; the
// tables, figures, title, abstract and GROBID version agree.
func TestAgainstTokenCount(t *testing.T) {
	dir := fixtures.Dir(t, "grobid-tei")
	man := manifest(t, dir)
	for _, f := range fixtureFiles(t) {
		t.Run(f.name, func(t *testing.T) {
			d, err := Parse(f.data, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			c := countTokens(t, f.data)

			// Sections.
			secs := flat(d.Sections)
			i, implied := 0, 0
			for k, s := range secs {
				if i < len(c.heads) && sameHeading(c.heads[i], s) {
					i++
					continue
				}
				next := ""
				if k+1 < len(secs) {
					next = secs[k+1].Number
				}
				if s.Heading == "" && isPrefix(s.Number, next) {
					implied++
					continue
				}
				t.Errorf("section %s %q %q is no headed div of the TEI (next head: %q)", s.ID, s.Number, s.Heading, at(c.heads, i))
			}
			if i != len(c.heads) {
				t.Errorf("headed div %d of %d (%q) is no section", i+1, len(c.heads), at(c.heads, i))
			}

			// References.
			if len(d.References) != c.biblStructs {
				t.Errorf("references = %d, listBibl has %d biblStruct", len(d.References), c.biblStructs)
			}
			if row, ok := man[f.name]; ok {
				if n, _ := strconv.Atoi(row["n_biblStruct"]); n != len(d.References) {
					t.Errorf("references = %d, MANIFEST.tsv says %d", len(d.References), n)
				}
				if row["has_bibr_refs"] == "yes" && c.bibr == 0 {
					t.Errorf("MANIFEST.tsv says the file has bibr refs; the token reading finds none")
				}
				if row["grobid_version"] != d.ConverterVersion {
					t.Errorf("converter version = %q, MANIFEST.tsv says %q", d.ConverterVersion, row["grobid_version"])
				}
			} else {
				t.Errorf("%s is not in MANIFEST.tsv", f.name)
			}
			arx, dois := 0, 0
			for _, r := range d.References {
				if r.ArxivID != "" {
					arx++
				}
				if r.DOI != "" {
					dois++
				}
			}
			if arx < c.withArxiv || dois < c.withDOI {
				t.Errorf("references with an arXiv id %d, with a DOI %d; the token reading finds %d arXiv and %d DOI idnos", arx, dois, c.withArxiv, c.withDOI)
			}
			if d.ConverterVersion != c.version || d.ServedBy != record.ServedByGrobid {
				t.Errorf("served by %q %q, header says GROBID %q", d.ServedBy, d.ConverterVersion, c.version)
			}

			// Citations.
			missing := c.bibrNoTarget
			cited := map[string]bool{}
			for _, tg := range c.bibrTargets {
				if c.bibKeys[tg] {
					cited[tg] = true
				} else {
					missing++
				}
			}
			if d.Conversion.MissingCitations != missing {
				t.Errorf("missing citations = %d, token reading: %d of %d markers without a target, %d with an unknown one",
					d.Conversion.MissingCitations, c.bibrNoTarget, c.bibr, missing-c.bibrNoTarget)
			}
			inMentions := map[string]bool{}
			for _, m := range d.Mentions {
				if len(m.RefKeys) == 0 || strings.TrimSpace(m.Sentence) == "" {
					t.Errorf("mention without keys or sentence: %+v", m)
				}
				for _, k := range m.RefKeys {
					if !c.bibKeys[k] {
						t.Errorf("mention cites %q, which is no listBibl entry", k)
					}
					inMentions[k] = true
				}
			}
			for k := range cited {
				if !inMentions[k] {
					t.Errorf("reference %s is cited by a marker but by no mention", k)
				}
			}

			// Floats, title, abstract.
			if len(d.Tables) != c.tables || len(d.Figures) != c.figures {
				t.Errorf("tables %d, figures %d; token reading: %d and %d", len(d.Tables), len(d.Figures), c.tables, c.figures)
			}
			if letters(c.title) != letters(str(d.Title)) {
				t.Errorf("title = %q, token reading %q", str(d.Title), c.title)
			}
			have := map[string]bool{}
			for _, w := range words(d.Abstract) {
				have[w] = true
			}
			for _, w := range words(c.abstract) {
				if !have[w] {
					t.Errorf("abstract lacks %q", w)
				}
			}
			t.Logf("sections %d (headed divs %d, implied %d), biblStruct %d (arXiv idno %d, parsed %d; DOI idno %d, parsed %d), bibr markers %d (no target %d, unknown target %d), cited references %d, mentions %d, tables %d, figures %d",
				len(secs), len(c.heads), implied, c.biblStructs, c.withArxiv, arx, c.withDOI, dois, c.bibr, c.bibrNoTarget, missing-c.bibrNoTarget, len(cited), len(d.Mentions), c.tables, c.figures)
		})
	}
}

// sameHeading reports whether a section is the head read by the token
// reading: the same letters and digits, number and heading together (an
// "Appendix A." prefix may be read off as the number).
func sameHeading(head string, s record.Section) bool {
	h, g := letters(head), letters(s.Number+" "+s.Heading)
	return h == g || g != "" && strings.HasSuffix(h, letters(s.Heading)) && strings.HasPrefix(h, "appendix")
}

func at(list []string, i int) string {
	if i < len(list) {
		return list[i]
	}
	return "(none)"
}

// letters keeps the letters and digits of s, lower-cased, without the
// private-use glyphs the parser drops.
func letters(s string) string {
	var b strings.Builder
	for _, r := range s {
		if (unicode.IsLetter(r) || unicode.IsDigit(r)) && !unicode.Is(unicode.Co, r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func words(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(f) >= 4 && !slices.ContainsFunc([]rune(f), func(r rune) bool { return unicode.Is(unicode.Co, r) }) {
			out = append(out, strings.ToLower(f))
		}
	}
	return out
}
