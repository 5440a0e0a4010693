package latexml

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

	"github.com/groundwork/curate/record"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// summary is what the golden files keep of a parsed fixture page: its
// structure and metadata, and a digest of its text. The pages are other
// people's papers, so their text stays out of this repository.
type summary struct {
	ID             string             `json:"id"`
	Source         string             `json:"source"`
	Title          *string            `json:"title"`
	Authors        []string           `json:"authors"`
	AbstractChars  int                `json:"abstract_chars"`
	AbstractSHA256 string             `json:"abstract_sha256"`
	PreambleParas  int                `json:"preamble_paragraphs"`
	Sections       []sectionSummary   `json:"sections"`
	Tables         []tableSummary     `json:"tables"`
	References     []record.Reference `json:"references"`
	Mentions       int                `json:"mentions"`
	MentionsBySec  map[string]int     `json:"mentions_by_section"`
	MentionKeys    int                `json:"mentioned_references"`
	FullTextChars  int                `json:"full_text_chars"`
	FullTextSHA256 string             `json:"full_text_sha256"`
	Conversion     record.Conversion  `json:"conversion"`
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

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

func summarize(d *record.Document) summary {
	s := summary{
		ID: d.ID, Source: d.Source, Title: d.Title, Authors: d.Authors,
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
	for _, r := range d.References {
		r.Text = digest(r.Text) // keep the parsed fields, not the entry
		s.References = append(s.References, r)
	}
	keys := map[string]bool{}
	for _, m := range d.Mentions {
		s.MentionsBySec[m.SectionID]++
		for _, k := range m.RefKeys {
			keys[k] = true
		}
	}
	s.MentionKeys = len(keys)
	return s
}

// TestFixturesGolden parses every recorded page and compares the result
// with its golden summary. Run with -update after an intended change and
// review the diff.
func TestFixturesGolden(t *testing.T) {
	for _, p := range fixturePages(t) {
		t.Run(p.name, func(t *testing.T) {
			d, err := Parse(p.html, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := json.MarshalIndent(summarize(d), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(p.name, ".html")+".json")
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
				t.Fatalf("read golden file (run go test -update to create it): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("summary of %s differs from %s; run 'go test ./parse/latexml -run TestFixturesGolden -update' and review the diff\n%s",
					p.name, golden, firstDiff(string(want), string(got)))
			}
		})
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
