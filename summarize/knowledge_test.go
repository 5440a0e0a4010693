package summarize

import (
	"strconv"
	"strings"
	"testing"

	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// putVersion stores a Document of version v under item, its record
// saying the version as the fetch stage's does.
func putVersion(t *testing.T, st *store.Store, item, id string, v int, title string) {
	t.Helper()
	doc := testDoc(id+"v"+strconv.Itoa(v), title)
	if _, err := record.Documents.Put(t.Context(), st, item, doc, map[string]string{"source": record.SourceArxiv, "version": strconv.Itoa(v)}); err != nil {
		t.Fatal(err)
	}
}

// TestStageKnowledgeCut: under the cut a source revised after its
// target's cutoff is carded from its pinned version's own item, a source
// first published after the cutoff is not carded, and every card says
// the version it was written from; under off the version served now is
// carded. A gold card whose target's stored text changed version (read
// at v1 since) is written again.
func TestStageKnowledgeCut(t *testing.T) {
	st := openStore(t)
	const late = "2502.00009"
	putVersion(t, st, idA, idA, 1, "Paper A")
	putVersion(t, st, idS, idS, 2, "Paper S")
	putVersion(t, st, record.VersionItem(idS, 1), idS, 1, "Paper S")
	putVersion(t, st, late, late, 1, "Paper L")
	cut := record.KnowledgeCut{Target: idA, Sources: []record.SourcePin{
		{RefKey: "bib.bib1", PaperPin: record.PaperPin{ArxivID: idS, Pin: &record.Pin{Version: 1, Latest: 2, Later: true}}},
		{RefKey: "bib.bib5", PaperPin: record.PaperPin{ArxivID: late, Pin: &record.Pin{Latest: 1, Later: true, FirstAfter: true}}},
	}}
	if _, err := record.KnowledgeCuts.Put(t.Context(), st, idA, &cut, nil); err != nil {
		t.Fatal(err)
	}
	refS := SourceRef{Key: "bib.bib1", ArxivID: idS, Title: "Paper S"}
	refL := SourceRef{Key: "bib.bib5", ArxivID: late, Title: "Paper L"}

	s := &Stage{Store: st, Mode: knowledgecut.Flag}
	res, err := processTarget(t, s, idA, []SourceRef{refS, refL})
	if err != nil {
		t.Fatal(err)
	}
	if res.Gold.Version != 1 {
		t.Errorf("gold card of version %d, want 1", res.Gold.Version)
	}
	if c := res.Sources[0]; c.Card == nil || c.Paper != record.VersionItem(idS, 1) || c.Version != 1 {
		t.Errorf("pinned source: %+v", c)
	}
	if c := res.Sources[1]; c.Card != nil || !c.Unsummarizable || !strings.Contains(c.Failure, "first published after") {
		t.Errorf("source first published after the cutoff: %+v", c)
	}

	s = &Stage{Store: st, Mode: knowledgecut.Off}
	res, err = processTarget(t, s, idA, []SourceRef{refS, refL})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Sources[0]; c.Card == nil || c.Paper != idS || c.Version != 2 {
		t.Errorf("off: %+v", c)
	}
	if c := res.Sources[1]; c.Card == nil || c.Version != 1 {
		t.Errorf("off, the later source: %+v", c)
	}

	// The target's stored text becomes v2: its gold card is written
	// again, and says so.
	putVersion(t, st, idA, idA, 2, "Paper A")
	res, err = processTarget(t, s, idA, []SourceRef{refS, refL})
	if err != nil {
		t.Fatal(err)
	}
	if res.Gold.Reused || res.Gold.Version != 2 {
		t.Errorf("gold after the text changed version: reused %v, version %d", res.Gold.Reused, res.Gold.Version)
	}
	res, err = processTarget(t, s, idA, []SourceRef{refS, refL})
	if err != nil || !res.Gold.Reused || res.Gold.Version != 2 || res.Written != 0 {
		t.Errorf("again: %+v %v", res, err)
	}
}
