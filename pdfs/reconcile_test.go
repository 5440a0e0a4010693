package pdfs

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

func strp(s string) *string { return &s }

// TestReconcile covers each correction of GROBID's metadata by the
// source's Semantic Scholar record, and what stays as GROBID read it.
func TestReconcile(t *testing.T) {
	rec := &record.ScholarPaper{PaperID: "x", Title: "Trade and Growth in Small Economies",
		Authors:  []record.ScholarAuthor{{Name: "Guy Paré"}, {Name: "Ana Silva"}},
		Abstract: strp("Small economies trade more.")}
	for _, tt := range []struct {
		name         string
		title        *string
		authors      []string
		abstract     string
		rec          *record.ScholarPaper
		wantTitle    string
		wantAuthors  []string
		wantAbstract string
		notes        []string // each note holds one of these, in order
	}{
		{name: "banner", title: strp("Munich Personal RePEc Archive"), authors: []string{"Guy Paré", "Ana Silva"}, rec: rec,
			wantTitle: rec.Title, wantAuthors: []string{"Guy Paré", "Ana Silva"}, wantAbstract: "Small economies trade more.",
			notes: []string{"banner", "abstract from Semantic Scholar"}},
		{name: "banner with a number", title: strp("MPRA Paper No. 41250"), rec: rec, wantTitle: rec.Title,
			wantAuthors: []string{"Guy Paré", "Ana Silva"}, wantAbstract: "Small economies trade more.",
			notes: []string{"banner", "authors from Semantic Scholar", "abstract from"}},
		{name: "journal name", title: strp("Mathematical Foundations of Computing"), abstract: "Ours.", authors: []string{"Ana Silva"}, rec: rec,
			wantTitle: rec.Title, wantAuthors: []string{"Ana Silva"}, wantAbstract: "Ours.", notes: []string{"shares hardly a word"}},
		{name: "no title", abstract: "Ours.", authors: []string{"Ana Silva"}, rec: rec, wantTitle: rec.Title,
			wantAuthors: []string{"Ana Silva"}, wantAbstract: "Ours.", notes: []string{"the tei has none"}},
		{name: "same title, other case and punctuation", title: strp("TRADE AND GROWTH IN SMALL ECONOMIES."), abstract: "Ours.",
			authors: []string{"Guy Par", "Guy Paré", "Ana Silva"}, rec: rec, wantTitle: "TRADE AND GROWTH IN SMALL ECONOMIES.",
			wantAuthors: []string{"Guy Paré", "Ana Silva"}, wantAbstract: "Ours.", notes: []string{`"Guy Par" dropped`}},
		{name: "a title cut short matches", title: strp("Trade and Growth"), abstract: "Ours.", authors: []string{"Ana Silva"}, rec: rec,
			wantTitle: "Trade and Growth", wantAuthors: []string{"Ana Silva"}, wantAbstract: "Ours."},
		{name: "a real title that opens like a banner", title: strp("Open Access Publishing and Citations"), abstract: "Ours.",
			authors: []string{"Ana Silva"}, rec: &record.ScholarPaper{PaperID: "y", Title: "Open access publishing and citations"},
			wantTitle: "Open Access Publishing and Citations", wantAuthors: []string{"Ana Silva"}, wantAbstract: "Ours."},
		{name: "two authors, one's name inside the other's, both listed", title: strp(rec.Title), abstract: "Ours.",
			authors: []string{"Wei Li", "Wei Lin"}, rec: &record.ScholarPaper{PaperID: "z", Title: rec.Title, Authors: []record.ScholarAuthor{{Name: "Wei Li"}, {Name: "Wei Lin"}}},
			wantTitle: rec.Title, wantAuthors: []string{"Wei Li", "Wei Lin"}, wantAbstract: "Ours."},
		{name: "no record", title: strp("Munich Personal RePEc Archive"), wantTitle: "Munich Personal RePEc Archive"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := &record.Document{Title: tt.title, Authors: tt.authors, Abstract: tt.abstract}
			reconcile(doc, tt.rec)
			if got := func() string {
				if doc.Title == nil {
					return ""
				}
				return *doc.Title
			}(); got != tt.wantTitle || !reflect.DeepEqual(doc.Authors, tt.wantAuthors) || doc.Abstract != tt.wantAbstract {
				t.Errorf("title %q authors %q abstract %q; want %q %q %q", got, doc.Authors, doc.Abstract, tt.wantTitle, tt.wantAuthors, tt.wantAbstract)
			}
			if len(doc.Conversion.Notes) != len(tt.notes) {
				t.Fatalf("notes %q, want %d", doc.Conversion.Notes, len(tt.notes))
			}
			for i, n := range tt.notes {
				if !strings.Contains(doc.Conversion.Notes[i], n) {
					t.Errorf("note %d %q lacks %q", i, doc.Conversion.Notes[i], n)
				}
			}
			if len(tt.notes) > 0 && !strings.HasPrefix(doc.FullText, tt.wantTitle) {
				t.Errorf("full text %q does not follow the corrections", doc.FullText)
			}
		})
	}
}

// TestMetadataReconciled runs the stage on a source whose stored TEI has
// GROBID's mistakes (a banner for the title, an author twice, the abstract
// in the body) and whose Semantic Scholar record citegraph stored: the
// Document stored has the record's title, each author once, the abstract,
// and a note for each correction.
func TestMetadataReconciled(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	list := &record.ScholarReferences{PaperID: "ARXIV:" + target, Edges: []record.ScholarReference{{CitedPaper: record.ScholarPaper{PaperID: "mpra",
		Title:   "Trade and Growth in Small Economies",
		Authors: []record.ScholarAuthor{{Name: "Guy Paré"}, {Name: "Ana Silva"}, {Name: "Wei Li"}, {Name: "Wei Lin"}}}}}}
	if _, err := record.S2References.Put(ctx, e.st, target, &record.S2ReferenceList{Status: record.S2OK, List: list}, nil); err != nil {
		t.Fatal(err)
	}
	tei, err := os.ReadFile(filepath.Join("testdata", "banner.tei.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := record.TEIFiles.Put(ctx, e.st, "s2:mpra", tei, nil); err != nil {
		t.Fatal(err)
	}
	res, err := e.stage.ProcessTarget(ctx, target, []Source{src("mpra")})
	if err != nil || res.Converted != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	doc, ok, err := record.PDFDocuments.Lookup(ctx, e.st, "s2:mpra")
	if err != nil || !ok {
		t.Fatalf("no document: %v", err)
	}
	if doc.Title == nil || *doc.Title != "Trade and Growth in Small Economies" ||
		!reflect.DeepEqual(doc.Authors, []string{"Guy Paré", "Ana Silva", "Wei Li", "Wei Lin"}) ||
		doc.Abstract != "We study how small economies trade [1]. Exports rise with openness." {
		t.Errorf("title %v authors %q abstract %q", doc.Title, doc.Authors, doc.Abstract)
	}
	notes := strings.Join(doc.Conversion.Notes, "\n")
	for _, want := range []string{"abstract read from the paragraph", `"Guy Par" dropped`, `"Munich Personal RePEc Archive" is a repository's`} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if !strings.HasPrefix(doc.FullText, "Trade and Growth in Small Economies\n\nAbstract\nWe study") {
		t.Errorf("full text opens %q", doc.FullText[:min(80, len(doc.FullText))])
	}
}
