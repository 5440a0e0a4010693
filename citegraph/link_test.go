package citegraph

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
)

type pairFile struct {
	Page  string `json:"page"`
	Edges []struct {
		PaperID string `json:"paperId"`
		Title   string `json:"title"`
		Arxiv   string `json:"arxiv"`
		DOI     string `json:"doi"`
		Year    int    `json:"year"`
		Want    string `json:"want"`
	} `json:"edges"`
}

// TestLinkFixturePairs links hand-written S2-style edges to the parsed
// bibliography of a recorded page and checks every pairing.
func TestLinkFixturePairs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "pairs-*.json"))
	if len(files) == 0 {
		t.Fatal("no pairing files in testdata")
	}
	dir := fixtures.Dir(t, "arxiv-html")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			var pf pairFile
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &pf); err != nil {
				t.Fatal(err)
			}
			page, err := os.ReadFile(filepath.Join(dir, pf.Page))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := latexml.Parse(page, latexml.Options{})
			if err != nil {
				t.Fatal(err)
			}
			years := map[string]int{}
			for _, r := range doc.References {
				years[r.Key] = r.Year
			}
			var refs []Ref
			for _, e := range pf.Edges {
				y := e.Year
				if y == 0 {
					y = years[e.Want] // S2 agrees with the bibliography unless told
				}
				refs = append(refs, Ref{PaperID: e.PaperID, Title: e.Title, ArxivID: e.Arxiv, DOI: e.DOI, Year: y})
			}
			edges, rep := Link(doc.ID, doc, refs)
			got := map[string]string{} // paperId -> ref key
			for _, e := range edges {
				if e.S2PaperID != nil && e.RefKey != nil {
					got[*e.S2PaperID] = *e.RefKey
				}
			}
			for _, e := range pf.Edges {
				if e.PaperID == "" {
					continue
				}
				if got[e.PaperID] != e.Want {
					t.Errorf("%q linked to %q, want %q", e.Title, got[e.PaperID], e.Want)
				}
			}
			if rep.WithID > 0 && float64(rep.WithIDLinked)/float64(rep.WithID) < 0.95 {
				t.Errorf("only %d of %d edges with an arXiv ID or DOI linked", rep.WithIDLinked, rep.WithID)
			}
			if n := len(edges); n != rep.Bibliography+rep.S2Only {
				t.Errorf("%d edges, want one per bibliography entry plus %d S2-only", n, rep.S2Only)
			}
			t.Logf("%s: %d S2 edges, %d entries; linked %d (arXiv %d, DOI %d, title %d) = %.1f%%; with id %d/%d",
				pf.Page, rep.S2Edges, rep.Bibliography, rep.Linked(), rep.ByArxivID, rep.ByDOI, rep.ByTitle, 100*rep.Rate(), rep.WithIDLinked, rep.WithID)
		})
	}
}

func TestNormalizeTitle(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Attention Is All You Need!", "attention is all you need"},
		{`G\"{o}del's {T}heorem`, "godel s theorem"},
		{`G\"odel's Theorem`, "godel s theorem"},
		{"Gödel’s theorem", "godel s theorem"},
		{`\emph{Deep} learning -- a review`, "deep learning a review"},
		{"Łukasz Kaiser and Søren", "lukasz kaiser and soren"},
		{"RNN Encoder–Decoder", "rnn encoder decoder"},
		{"  ", ""},
	}
	for _, tt := range tests {
		if got := record.NormalizeTitle(tt.in); got != tt.want {
			t.Errorf("NormalizeTitle(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLinkRules(t *testing.T) {
	doc := &record.Document{
		References: []record.Reference{
			{Key: "b1", Text: "A. Author. Deep nets for things. arXiv:2101.00001, 2021.", Title: "Deep nets for things", ArxivID: "2101.00001", Year: 2021},
			{Key: "b2", Text: "B. Author. Shallow nets. J. Nets, 2019. doi:10.1000/ABC", Title: "Shallow nets", DOI: "10.1000/ABC", Year: 2019},
			{Key: "b3", Text: "C. Author. A study of the long and winding road in optimization landscapes, 2018.", Title: "", Year: 2018},
			{Key: "b4", Text: "D. Author. Only in the bibliography, 2017.", Title: "Only in the bibliography", Year: 2017},
			{Key: "b5", Text: "E. Author. Same title twice. 2020. arXiv:2002.00002", Title: "Same title twice", ArxivID: "2002.00002", Year: 2020},
		},
		Mentions: []record.Mention{
			{RefKeys: []string{"b1", "b2"}, Sentence: "We build on deep nets [1, 2].", SectionID: "S1"},
			{RefKeys: []string{"b1"}, Sentence: "Following [1], we go.", SectionID: "S3"},
		},
	}
	refs := []Ref{
		{PaperID: "s1", Title: "Deep Nets For Things", ArxivID: "2101.00001", Contexts: []string{"We build on deep nets [1,2].", "An S2-only context about deep nets."}, IsInfluential: true, Intents: []string{"methodology"}},
		{PaperID: "s2", Title: "Shallow Networks (journal version)", DOI: "10.1000/abc"},
		{PaperID: "s3", Title: "A Study of the Long and Winding Road in Optimization Landscapes", Year: 2018},
		{PaperID: "s4", Title: "Not In The Bibliography At All"},
		{PaperID: "s5", Title: "Same Title Twice", ArxivID: "1912.99999"}, // the bibliography's entry names another arXiv ID
		{PaperID: "", Title: "D Author"},
	}
	edges, rep := Link("T", doc, refs)
	byKey := map[string]record.Edge{}
	var s2only []record.Edge
	for _, e := range edges {
		if e.RefKey != nil {
			byKey[*e.RefKey] = e
		} else {
			s2only = append(s2only, e)
		}
	}
	if l := byKey["b1"].Link; l != record.LinkArxivID {
		t.Errorf("b1 link %q, want arxiv_id", l)
	}
	if l := byKey["b2"].Link; l != record.LinkDOI {
		t.Errorf("b2 link %q, want doi (case-insensitive)", l)
	}
	if l := byKey["b3"].Link; l != record.LinkTitle {
		t.Errorf("b3 link %q, want title (found in the entry's text)", l)
	}
	if e := byKey["b4"]; e.Link != record.LinkNone || e.S2PaperID != nil || *e.Title != "Only in the bibliography" {
		t.Errorf("b4 should be a bibliography-only edge: %+v", e)
	}
	if e := byKey["b5"]; e.S2PaperID != nil {
		t.Errorf("b5 linked to %v although the arXiv IDs differ", *e.S2PaperID)
	}
	if len(s2only) != 3 || rep.S2Only != 3 || rep.Unresolved != 1 || rep.BibOnly != 2 {
		t.Errorf("S2-only %d (report %d), unresolved %d, bib-only %d; want 3, 3, 1, 2", len(s2only), rep.S2Only, rep.Unresolved, rep.BibOnly)
	}
	e1 := byKey["b1"]
	wantCtx := []string{"We build on deep nets [1, 2].", "Following [1], we go.", "An S2-only context about deep nets."}
	if len(e1.Contexts) != 3 || e1.Contexts[0] != wantCtx[0] || e1.Contexts[1] != wantCtx[1] || e1.Contexts[2] != wantCtx[2] {
		t.Errorf("b1 contexts %q, want %q (HTML first, S2 duplicate dropped)", e1.Contexts, wantCtx)
	}
	if len(e1.MentionSections) != 2 || !e1.IsInfluential || e1.Intents[0] != "methodology" {
		t.Errorf("b1 edge %+v", e1)
	}
	if rep.Rate() != 0.5 {
		t.Errorf("rate %.2f, want 0.5 (3 of 6)", rep.Rate())
	}
}
