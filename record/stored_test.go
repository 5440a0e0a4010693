package record

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/groundwork/curate/store"
)

// The files in testdata/stored are records as stores hold them: written
// by the shapes that embedded the Semantic Scholar and arXiv API clients'
// types (demo-* by `curate demo` itself, the others from values that set
// every field; sft-reject.json in the field order of the sft package's
// own shape of it), and arxiv-meta-legacy.json as stores wrote it before
// the entry's fields had snake_case names. Every store keeps such
// records, so the shapes of today must read them, and write them again
// byte for byte.

// storedCase is one stored record: read into its kind's shape, checked,
// and written again.
type storedCase[T any] struct {
	file  string
	kind  Kind[T]
	check func(t *testing.T, v *T)
	// rewritten: the record is written in another form than it was read
	// (a legacy one), so only the decoded value is checked.
	rewritten bool
}

func (c storedCase[T]) run(t *testing.T, st *store.Store) {
	t.Run(c.file, func(t *testing.T) {
		ctx := context.Background()
		old, err := os.ReadFile(filepath.Join("testdata", "stored", c.file))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.PutBytes(ctx, "old:"+c.file, c.kind.Name(), old, nil); err != nil {
			t.Fatal(err)
		}
		v, _, err := c.kind.Get(ctx, st, "old:"+c.file)
		if err != nil {
			t.Fatalf("read the stored %s record: %v", c.kind.Name(), err)
		}
		c.check(t, v)
		if _, err := c.kind.Put(ctx, st, "new:"+c.file, v, nil); err != nil {
			t.Fatal(err)
		}
		again, _, err := st.GetBytes(ctx, "new:"+c.file, c.kind.Name())
		if err != nil {
			t.Fatal(err)
		}
		if c.rewritten {
			v2, _, err := c.kind.Get(ctx, st, "new:"+c.file)
			if err != nil {
				t.Fatalf("read the rewritten record: %v", err)
			}
			c.check(t, v2)
			return
		}
		if !bytes.Equal(again, old) {
			t.Errorf("written again, the record changed:\n got %s\nwant %s", again, old)
		}
	})
}

// TestStoredRecordsRead: records stored by earlier versions decode into
// today's shapes, and the same value is stored as the same bytes.
func TestStoredRecordsRead(t *testing.T) {
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	want := func(t *testing.T, what string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}

	storedCase[S2Paper]{file: "s2-paper.json", kind: S2Papers, check: func(t *testing.T, v *S2Paper) {
		if !v.Found || v.Paper == nil {
			t.Fatalf("paper not found: %+v", v)
		}
		p := v.Paper
		want(t, "paperId", p.PaperID, "175a265398c5139a455cfee54a12c07da9e98f70")
		want(t, "arXiv id", p.ArxivID(), "2503.07215")
		want(t, "DOI", p.DOI(), "10.5555/demo.2025.0001")
		want(t, "ACL id", p.ExternalIDs.ACL, "2025.demo-main.7")
		want(t, "corpus id", *p.ExternalIDs.CorpusID, int64(273228133))
		want(t, "other ids", string(p.ExternalIDs.Other["OpenAlex"]), `"W4400000001"`)
		want(t, "pdf", p.PDFURL(), "https://demo.invalid/2503.07215.pdf")
		want(t, "pdf licence", p.OpenAccessPDF.License, "CCBY")
		want(t, "influential citations", *p.InfluentialCitationCount, 1)
		want(t, "second author", p.Authors[1].Name, "Samuel Osei")
	}}.run(t, st)
	storedCase[S2Paper]{file: "s2-paper-not-found.json", kind: S2Papers, check: func(t *testing.T, v *S2Paper) {
		want(t, "found", v.Found, false)
		want(t, "paper is nil", v.Paper == nil, true)
	}}.run(t, st)
	storedCase[S2Paper]{file: "demo-s2-paper.json", kind: S2Papers, check: func(t *testing.T, v *S2Paper) {
		want(t, "arXiv id", v.Paper.ArxivID(), "2503.07215")
		want(t, "citations", *v.Paper.CitationCount, 4)
		want(t, "abstract is null", v.Paper.Abstract == nil, true)
	}}.run(t, st)

	storedCase[S2ReferenceList]{file: "s2-references.json", kind: S2References, check: func(t *testing.T, v *S2ReferenceList) {
		want(t, "status", v.Status, S2Partial)
		l := v.List
		want(t, "edges", len(l.Edges), 3)
		want(t, "pages", l.Pages, 2)
		want(t, "complete", l.Complete(), false)
		want(t, "influential", l.Edges[0].IsInfluential, true)
		want(t, "context intent", l.Edges[0].ContextsWithIntent[0].Intents[0], "methodology")
		want(t, "cited arXiv id", l.Edges[0].CitedPaper.ArxivID(), "2503.07215")
		want(t, "unresolved", l.Edges[1].CitedPaper.Resolved(), false)
	}}.run(t, st)
	storedCase[S2ReferenceList]{file: "s2-references-withheld.json", kind: S2References, check: func(t *testing.T, v *S2ReferenceList) {
		want(t, "elided", v.List.Elided, true)
		want(t, "disclaimer", v.List.Disclaimer, "The publisher withheld the list (invented).")
	}}.run(t, st)
	storedCase[S2ReferenceList]{file: "s2-references-missing.json", kind: S2References, check: func(t *testing.T, v *S2ReferenceList) {
		want(t, "status", v.Status, S2Missing)
		want(t, "list is nil", v.List == nil, true)
	}}.run(t, st)
	storedCase[S2ReferenceList]{file: "s2-references-capped.json", kind: S2References, check: func(t *testing.T, v *S2ReferenceList) {
		want(t, "capped", v.List.Capped, true)
	}}.run(t, st)
	storedCase[S2ReferenceList]{file: "demo-s2-references.json", kind: S2References, check: func(t *testing.T, v *S2ReferenceList) {
		want(t, "paper asked", v.List.PaperID, "ARXIV:2503.07215")
		want(t, "complete", v.List.Complete(), true)
		want(t, "first cited", v.List.Edges[0].CitedPaper.ArxivID(), "2210.05521")
	}}.run(t, st)

	storedCase[S2Filled]{file: "s2-batch.json", kind: S2Batches, check: func(t *testing.T, v *S2Filled) {
		want(t, "papers", len(*v), 2)
		want(t, "filled date", *(*v)["42eadc93371ed11855e91bbfca1f248d33085635"].PublicationDate, "2024-01-15")
	}}.run(t, st)
	storedCase[S2Filled]{file: "demo-s2-batch.json", kind: S2Batches, check: func(t *testing.T, v *S2Filled) {
		want(t, "filled arXiv id", (*v)["42eadc93371ed11855e91bbfca1f248d33085635"].ArxivID(), "2306.11842")
	}}.run(t, st)

	storedCase[ArxivMeta]{file: "arxiv-meta.json", kind: ArxivMetas, check: func(t *testing.T, v *ArxivMeta) {
		e := v.Entry
		want(t, "id", e.ID, "2503.07215")
		want(t, "version", e.Version, 2)
		want(t, "published", e.Published.Format("2006-01-02T15:04:05Z07:00"), "2025-03-10T16:41:09Z")
		want(t, "primary category", e.PrimaryCategory, "cs.CL")
		want(t, "categories", len(e.Categories), 3)
		want(t, "journal", e.JournalRef, "Invented Journal 12 (2025) 1-20")
	}}.run(t, st)
	storedCase[ArxivMeta]{file: "arxiv-meta-not-found.json", kind: ArxivMetas, check: func(t *testing.T, v *ArxivMeta) {
		want(t, "found", v.Found, false)
		want(t, "checked", v.CheckedAt, "2026-12-01T23:02:48Z")
	}}.run(t, st)
	storedCase[ArxivMeta]{file: "demo-arxiv-meta.json", kind: ArxivMetas, check: func(t *testing.T, v *ArxivMeta) {
		want(t, "primary category", v.Entry.PrimaryCategory, "cs.CL")
		want(t, "comment", v.Entry.Comment, "12 pages, 3 figures")
	}}.run(t, st)
	storedCase[SFTReject]{file: "sft-reject.json", kind: SFTRejects, check: func(t *testing.T, v *SFTReject) {
		want(t, "stage", v.Stage, "sft-ideas")
		want(t, "attempts", v.Attempts, 2)
		want(t, "at", v.At.Format("2006-01-02T15:04:05Z07:00"), "2026-11-30T08:15:00Z")
	}}.run(t, st)
	storedCase[ArxivMeta]{file: "arxiv-meta-legacy.json", kind: ArxivMetas, rewritten: true, check: func(t *testing.T, v *ArxivMeta) {
		want(t, "primary category", v.Entry.PrimaryCategory, "cs.LG")
		want(t, "journal", v.Entry.JournalRef, "Invented Letters 1 (2024)")
	}}.run(t, st)
}
