package tei

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/internal/testneeds"
	"github.com/groundwork/curate/record"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

type fixtureTEI struct {
	name string
	data []byte
}

// fixtureFiles returns the recorded GROBID TEI files of ../shared/fixtures.
func fixtureFiles(tb testing.TB) []fixtureTEI {
	tb.Helper()
	dir := fixtures.Dir(tb, "grobid-tei")
	files, err := filepath.Glob(filepath.Join(dir, "*.tei.xml"))
	if err != nil || len(files) == 0 {
		testneeds.Skip(tb, testneeds.Fixtures, "no TEI fixtures in %s", dir)
	}
	var out []fixtureTEI
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, fixtureTEI{name: filepath.Base(f), data: data})
	}
	return out
}

// summary is what the golden files keep of a parsed fixture: structure
// and metadata, and digests of the text. The files are other people's
// papers, so their text stays out of this repository.
type summary struct {
	ID               string             `json:"id"`
	Source           string             `json:"source"`
	ServedBy         string             `json:"served_by"`
	ConverterVersion string             `json:"converter_version"`
	Title            *string            `json:"title"`
	Authors          []string           `json:"authors"`
	AbstractChars    int                `json:"abstract_chars"`
	AbstractSHA256   string             `json:"abstract_sha256"`
	PreambleParas    int                `json:"preamble_paragraphs"`
	Sections         []sectionSummary   `json:"sections"`
	Tables           []tableSummary     `json:"tables"`
	Figures          []figureSummary    `json:"figures"`
	References       []record.Reference `json:"references"`
	Mentions         int                `json:"mentions"`
	MentionsBySec    map[string]int     `json:"mentions_by_section"`
	MentionKeys      int                `json:"mentioned_references"`
	MentionsSHA256   string             `json:"mentions_sha256"`
	FullTextChars    int                `json:"full_text_chars"`
	FullTextSHA256   string             `json:"full_text_sha256"`
	Conversion       record.Conversion  `json:"conversion"`
}

type sectionSummary struct {
	ID         string           `json:"id"`
	Number     string           `json:"number,omitempty"`
	Heading    string           `json:"heading"`
	Level      int              `json:"level"`
	Appendix   bool             `json:"appendix,omitempty"`
	Paragraphs int              `json:"paragraphs"`
	Sections   []sectionSummary `json:"sections,omitempty"`
}

type tableSummary struct {
	ID      string `json:"id"`
	Number  string `json:"number,omitempty"`
	Caption int    `json:"caption_chars"`
	Rows    int    `json:"rows"`
	Columns int    `json:"columns"`
}

type figureSummary struct {
	ID      string `json:"id"`
	Number  string `json:"number,omitempty"`
	Caption int    `json:"caption_chars"`
}

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

func summarize(d *record.Document) summary {
	s := summary{
		ID: d.ID, Source: d.Source, ServedBy: d.ServedBy, ConverterVersion: d.ConverterVersion,
		Title: d.Title, Authors: d.Authors,
		AbstractChars: len(d.Abstract), AbstractSHA256: digest(d.Abstract),
		PreambleParas: len(d.Preamble), Mentions: len(d.Mentions),
		MentionsBySec: map[string]int{}, FullTextChars: len(d.FullText),
		FullTextSHA256: digest(d.FullText), Conversion: d.Conversion,
	}
	var secs func([]record.Section) []sectionSummary
	secs = func(ss []record.Section) []sectionSummary {
		var out []sectionSummary
		for _, x := range ss {
			out = append(out, sectionSummary{ID: x.ID, Number: x.Number, Heading: x.Heading, Level: x.Level,
				Appendix: x.Appendix, Paragraphs: len(x.Paragraphs), Sections: secs(x.Sections)})
		}
		return out
	}
	s.Sections = secs(d.Sections)
	for _, t := range d.Tables {
		cols := 0
		for _, r := range t.Rows {
			cols = max(cols, len(r))
		}
		s.Tables = append(s.Tables, tableSummary{ID: t.ID, Number: t.Number, Caption: len(t.Caption), Rows: len(t.Rows), Columns: cols})
	}
	for _, f := range d.Figures {
		s.Figures = append(s.Figures, figureSummary{ID: f.ID, Number: f.Number, Caption: len(f.Caption)})
	}
	for _, r := range d.References {
		r.Text = digest(r.Text) // keep the parsed fields, not the entry
		s.References = append(s.References, r)
	}
	keys := map[string]bool{}
	var all strings.Builder
	for _, m := range d.Mentions {
		s.MentionsBySec[m.SectionID]++
		for _, k := range m.RefKeys {
			keys[k] = true
		}
		all.WriteString(strings.Join(m.RefKeys, ",") + "\t" + m.Sentence + "\n")
	}
	s.MentionKeys = len(keys)
	s.MentionsSHA256 = digest(all.String())
	return s
}

// TestFixturesGolden parses every recorded TEI file and compares the
// result with its golden summary. Run with -update after an intended
// change and review the diff.
func TestFixturesGolden(t *testing.T) {
	for _, f := range fixtureFiles(t) {
		t.Run(f.name, func(t *testing.T) {
			d, err := Parse(f.data, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			checkGolden(t, filepath.Join("testdata", "golden", strings.TrimSuffix(f.name, ".tei.xml")+".json"), summarize(d))
		})
	}
}

func checkGolden(t *testing.T, golden string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (run go test ./parse/tei -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("result differs from %s; run 'go test ./parse/tei -run %s -update' and review the diff\n%s",
			golden, strings.Split(t.Name(), "/")[0], firstDiff(string(want), string(got)))
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g
		}
	}
	return ""
}

// TestEdgeGolden parses this package's own edge-case TEI files and keeps
// the whole Document as golden JSON: they are ours, so their text may be.
func TestEdgeGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "tei", "*.tei.xml"))
	if err != nil || len(files) == 0 {
		t.Fatal("no edge-case TEI files in testdata/tei")
	}
	for _, name := range files {
		base := strings.TrimSuffix(filepath.Base(name), ".tei.xml")
		t.Run(base, func(t *testing.T) {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			d, err := Parse(data, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			checkGolden(t, filepath.Join("testdata", "golden", "edge", base+".json"), d)
		})
	}
}
