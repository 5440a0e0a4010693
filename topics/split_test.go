package topics

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/groundwork/curate/record"
)

// A 2025 paper and a 2026 paper that build on the same work: by default
// no topic holds the 2026 (test) paper, as a supporting paper or in a
// background, and every paper's split is recorded; asked for by name,
// both splits are drawn on.
func TestTopicsKeepSplitsApart(t *testing.T) {
	at := func(g *record.Graph, published string) *record.Graph {
		g.Meta.Published, g.Meta.Year = published, 0
		fmt.Sscanf(published[:4], "%d", &g.Meta.Year)
		return g
	}
	graphs := []*record.Graph{
		at(handGraph("2501.00001", "Abstention for Question Answering", "ACL", "cs.CL", 2025, 10, infl(1, 2, 3, 4, 5)...), "2025-01-10"),
		at(handGraph("2502.00002", "Attribution for Question Answering", "EMNLP", "cs.CL", 2025, 7, infl(1, 2, 3, 4, 6)...), "2025-02-10"),
		at(handGraph("2601.00003", "Calibration for Question Answering", "NAACL", "cs.CL", 2026, 3, infl(1, 2, 3, 4, 7)...), "2026-01-20"),
	}
	// A test target cited influentially by a training paper, and a
	// background paper with a 2026 arXiv ID.
	s2, ax, title := "T2601", "2601.00003", "Calibration for Question Answering"
	graphs[1].Edges = append(graphs[1].Edges, record.Edge{S2PaperID: &s2, ArxivID: &ax, Title: &title, IsInfluential: true})
	s2b, axb, titleb := "P2602", "2602.00077", "A 2026 background paper"
	for _, g := range graphs[:2] {
		g.Edges = append(g.Edges, record.Edge{S2PaperID: &s2b, ArxivID: &axb, Title: &titleb, IsInfluential: true})
	}

	opt := DefaultOptions()
	opt.MinSupport, opt.MinBackground, opt.MaxBackground, opt.IoU = 2, 3, 10, 0.5
	res, err := (&Builder{}).Build(context.Background(), graphs, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Topics) == 0 {
		t.Fatal("no topic from the two training papers")
	}
	for _, tp := range res.Topics {
		for _, s := range tp.Supporting {
			if s.Split != record.SplitTrain {
				t.Errorf("topic %s: supporting %s has split %q", tp.ID, s.ArxivID, s.Split)
			}
		}
		for _, b := range tp.Background {
			if b.Split != record.SplitTrain || b.ArxivID == "2601.00003" || b.ArxivID == "2602.00077" {
				t.Errorf("topic %s: background %s (%s) has split %q", tp.ID, b.ID, b.ArxivID, b.Split)
			}
		}
	}
	i := slices.IndexFunc(res.Seeds, func(s SeedStatus) bool { return s.ID == "2601.00003" })
	if i < 0 || res.Seeds[i].Status != ReasonTestSplit || res.Seeds[i].Split != record.SplitTest {
		t.Errorf("the 2026 seed: %+v", res.Seeds)
	}

	// Asked for by name, test papers are drawn on, and labelled.
	opt.Splits = []string{record.SplitTrain, record.SplitTest}
	res, err = (&Builder{}).Build(context.Background(), graphs, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tp := range res.Topics {
		for _, s := range tp.Supporting {
			if s.ArxivID == "2601.00003" {
				found = s.Split == record.SplitTest
			}
		}
	}
	if !found {
		t.Errorf("with both splits, no topic holds the 2026 paper labelled test: %+v", res.Topics)
	}
}

func TestSplitOfRef(t *testing.T) {
	cutoff, _ := time.Parse("2006-01-02", "2026-01-01")
	mid, _ := time.Parse("2006-01-02", "2026-01-15")
	tests := []struct {
		r      Ref
		cutoff time.Time
		want   string
	}{
		{Ref{ArxivID: "2512.00001"}, cutoff, record.SplitTrain},
		{Ref{ArxivID: "2601.00001"}, cutoff, record.SplitTest},
		{Ref{ArxivID: "2601.00001"}, mid, record.SplitTest},                 // straddles the cutoff: test
		{Ref{ArxivID: "2512.00001", Year: 2026}, cutoff, record.SplitTrain}, // the arXiv date wins over a venue year
		{Ref{ArxivID: "hep-th/9901001"}, cutoff, record.SplitTrain},
		{Ref{PublicationDate: "2025-12-31"}, cutoff, record.SplitTrain},
		{Ref{PublicationDate: "2026-01-01"}, cutoff, record.SplitTest},
		{Ref{Year: 2025}, cutoff, record.SplitTrain},
		{Ref{Year: 2026}, cutoff, record.SplitTest},
		{Ref{}, cutoff, record.SplitTest}, // undated: test
		{Ref{S2PaperID: "S1", Year: 2020}, cutoff, record.SplitTest},
	}
	for _, tt := range tests {
		if got := splitOfRef(&tt.r, tt.cutoff, map[string]bool{IdentityS2 + "S1": true}); got != tt.want {
			t.Errorf("splitOfRef(%+v, %s) = %s, want %s", tt.r, tt.cutoff.Format("2006-01-02"), got, tt.want)
		}
	}
}
