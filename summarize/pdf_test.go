package summarize

import (
	"sync/atomic"
	"testing"

	"github.com/groundwork/curate/record"
)

// pdfDoc is the Document the pdfs stage makes of a paper's PDF.
func pdfDoc(id, title string) *record.Document {
	d := testDoc(id, title)
	d.Source, d.ServedBy, d.ConverterVersion = record.SourcePDF, record.ServedByGrobid, "0.8.1"
	return d
}

// TestStagePDFText: a source without an arXiv page is carded from its
// PDF full text once the pdfs stage has stored it; the card written from
// the abstract before is written again, once, and nothing else is; a
// rewrite that fails keeps the card there was.
func TestStagePDFText(t *testing.T) {
	w := newWorld(t)
	var broken atomic.Bool
	srv := newFakeLLM(t, func(r fakeRequest) string {
		if broken.Load() && r.title() == "Paper N" {
			return "no card today"
		}
		return validCard(r.title(), r.source())
	})
	s := &Stage{Store: w.st, LLM: srv.client(t, nil)}
	ctx := t.Context()
	refN := SourceRef{Key: "bib.bib5", ArxivID: "2402.00009", S2PaperID: "s2N", Title: "Paper N", Abstract: refT.Abstract}
	refs := []SourceRef{refS, refT, refN}
	w.fetchSources(t, refs...) // N has no HTML anywhere
	levels := func(res *record.Summary) []string {
		var out []string
		for _, r := range res.Sources {
			out = append(out, r.TextLevel)
		}
		return out
	}
	res, err := processTarget(t, s, idA, refs)
	if err != nil {
		t.Fatal(err)
	}
	if got := levels(res); got[0] != record.TextFull || got[1] != record.TextAbstract || got[2] != record.TextAbstract {
		t.Fatalf("first run: levels %v", got)
	}

	// The pdfs stage converts T's PDF (stored under its S2 item) and N's
	// (under its arXiv item).
	for item, title := range map[string]string{"s2:s2T": "Paper T", "2402.00009": "Paper N"} {
		if _, err := record.PDFDocuments.Put(ctx, w.st, item, pdfDoc(item, title), nil); err != nil {
			t.Fatal(err)
		}
	}
	broken.Store(true)
	res, err = processTarget(t, s, idA, refs)
	if err != nil {
		t.Fatal(err)
	}
	if got := levels(res); got[0] != record.TextFull || got[1] != record.TextPDF || got[2] != record.TextAbstract {
		t.Errorf("second run: levels %v, want full, PDF, and abstract kept (N's rewrite failed)", got)
	}
	if res.Written != 1 || res.Reused != 3 || res.Failed != 0 {
		t.Errorf("second run: %+v", res)
	}
	if n := srv.callsFor("Paper T", true); n != 2 {
		t.Errorf("T carded %d times, want 2", n)
	}
	if n := srv.callsFor("Paper S", true); n != 1 {
		t.Errorf("S, whose text did not change, carded %d times", n)
	}
	c, rec, err := record.CardKind(record.CardSource, "test-model", sourceVersion(t)).Get(ctx, w.st, "s2:s2T")
	if err != nil || c == nil || rec.Meta["text_level"] != record.TextPDF {
		t.Errorf("T's stored card: %v %+v", err, rec.Meta)
	}

	// N's LLM works again: its card is rewritten, then nothing more.
	broken.Store(false)
	if res, err = processTarget(t, s, idA, refs); err != nil {
		t.Fatal(err)
	}
	if got := levels(res); got[2] != record.TextPDF || res.Written != 1 {
		t.Errorf("third run: levels %v, written %d", got, res.Written)
	}
	calls := srv.calls()
	if res, err = processTarget(t, s, idA, refs); err != nil {
		t.Fatal(err)
	}
	if res.Written != 0 || srv.calls() != calls {
		t.Errorf("fourth run wrote %d cards, %d calls", res.Written, srv.calls()-calls)
	}

	// The arXiv page appearing later outranks the PDF.
	putDoc(t, w.st, "2402.00009", testDoc("2402.00009v1", "Paper N"))
	if res, err = processTarget(t, s, idA, refs); err != nil {
		t.Fatal(err)
	}
	if got := levels(res); got[2] != record.TextFull || res.Written != 1 {
		t.Errorf("after the page appeared: levels %v, written %d", got, res.Written)
	}
}

func TestLevel(t *testing.T) {
	for _, tt := range []struct {
		in   Input
		want string
	}{
		{Input{Doc: testDoc("x", "X")}, record.TextFull},
		{Input{Doc: pdfDoc("x", "X")}, record.TextPDF},
		{Input{Doc: pdfDoc("x", "X"), TextLevel: record.TextAbstract}, record.TextAbstract},
		{Input{Doc: &record.Document{Source: record.SourcePDF, Abstract: "Only this."}}, record.TextAbstract},
		{Input{}, ""},
	} {
		if got := tt.in.Level(); got != tt.want {
			t.Errorf("Level() = %q, want %q", got, tt.want)
		}
	}
}
