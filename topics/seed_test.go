package topics

import (
	"reflect"
	"testing"

	"github.com/groundwork/curate/record"
)

func TestPublished(t *testing.T) {
	tests := []struct {
		venue string
		want  bool
	}{
		{"", false},
		{"  ", false},
		{"arXiv", false},
		{"ArXiv", false},
		{"arXiv.org", false},
		{"ArXiv preprint", false},
		{"CoRR", false},
		{"CoRR abs/2101.00001", false},
		{"bioRxiv", false},
		{"medRxiv : the preprint server for health sciences", false},
		{"OSF Preprints", false},
		{"Authorea", false},
		{"medRxiv", false},
		{"ChemRxiv", false},
		{"SSRN Electronic Journal", false},
		{"Research Square", false},
		{"Preprints.org", false},
		{"Annual Meeting of the Association for Computational Linguistics", true},
		{"NeurIPS", true},
		{"Corrosion Science", true},
		{"Physical Review E", true},
	}
	for _, tt := range tests {
		got, why := Published(tt.venue)
		if got != tt.want {
			t.Errorf("Published(%q) = %v (%s), want %v", tt.venue, got, why, tt.want)
		}
		if !got && why == "" {
			t.Errorf("Published(%q) gives no reason", tt.venue)
		}
	}
}

func intp(n int) *int { return &n }

func TestFilter(t *testing.T) {
	seed := func(id, venue string, year int, cites *int) Seed {
		return Seed{ID: id, Venue: venue, Year: year, CitationCount: cites, Influential: refs(1)}
	}
	seeds := []Seed{
		seed("p10", "NeurIPS", 2024, intp(10)),
		seed("p05a", "ICML", 2024, intp(5)),
		seed("p05b", "ICML", 2024, intp(5)),
		seed("p01", "ICLR", 2024, intp(1)),
		seed("q03", "ACL", 2025, intp(3)),
		seed("q00", "ACL", 2025, intp(0)),
		seed("r-pre", "arXiv.org", 2024, intp(100)),
		seed("s-nocount", "EMNLP", 2024, nil),
		seed("t-noyear", "EMNLP", 0, intp(50)),
		{ID: "u-empty", Venue: "ACL", Year: 2024, CitationCount: intp(9)},
	}
	tests := []struct {
		name string
		opt  Options
		want map[string]string // id -> status
	}{
		{"no filter", Options{}, map[string]string{
			"p10": ReasonKept, "p05a": ReasonKept, "p05b": ReasonKept, "p01": ReasonKept, "q03": ReasonKept, "q00": ReasonKept,
			"r-pre": ReasonKept, "s-nocount": ReasonKept, "t-noyear": ReasonKept, "u-empty": ReasonNoInfluential,
		}},
		{"published only", Options{PublishedOnly: true}, map[string]string{
			"p10": ReasonKept, "p05a": ReasonKept, "p05b": ReasonKept, "p01": ReasonKept, "q03": ReasonKept, "q00": ReasonKept,
			"r-pre": ReasonNotPublished, "s-nocount": ReasonKept, "t-noyear": ReasonKept, "u-empty": ReasonNoInfluential,
		}},
		// 2024 ranks 4 papers: ceil(4·25/100) = 1, the cut is 10. 2025
		// ranks 2: ceil(0.5) = 1, the cut is 3.
		{"top 25% of published", Options{PublishedOnly: true, TopPercent: 25}, map[string]string{
			"p10": ReasonKept, "p05a": ReasonNotTopPercent, "p05b": ReasonNotTopPercent, "p01": ReasonNotTopPercent,
			"q03": ReasonKept, "q00": ReasonNotTopPercent,
			"r-pre": ReasonNotPublished, "s-nocount": ReasonNoCitations, "t-noyear": ReasonNoYear, "u-empty": ReasonNoInfluential,
		}},
		// ceil(4·50/100) = 2: the cut is 5, and both papers with 5 stay.
		{"top 50%: ties at the cut are kept", Options{PublishedOnly: true, TopPercent: 50}, map[string]string{
			"p10": ReasonKept, "p05a": ReasonKept, "p05b": ReasonKept, "p01": ReasonNotTopPercent,
			"q03": ReasonKept, "q00": ReasonNotTopPercent,
			"r-pre": ReasonNotPublished, "s-nocount": ReasonNoCitations, "t-noyear": ReasonNoYear, "u-empty": ReasonNoInfluential,
		}},
		// Without the publication filter the preprint ranks too: 2024 has
		// 5 ranked papers, ceil(1.25) = 2, the cut is 10.
		{"top 25% of all", Options{TopPercent: 25}, map[string]string{
			"p10": ReasonKept, "p05a": ReasonNotTopPercent, "p05b": ReasonNotTopPercent, "p01": ReasonNotTopPercent,
			"q03": ReasonKept, "q00": ReasonNotTopPercent,
			"r-pre": ReasonKept, "s-nocount": ReasonNoCitations, "t-noyear": ReasonNoYear, "u-empty": ReasonNoInfluential,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, status := Filter(seeds, tt.opt)
			got := map[string]string{}
			for _, s := range status {
				got[s.ID] = s.Status
				if (s.Status == ReasonKept) != (s.Influential != nil) {
					t.Errorf("%s: status %s with influential set %v", s.ID, s.Status, s.Influential)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("statuses:\n got %v\nwant %v", got, tt.want)
			}
			n := 0
			for _, st := range tt.want {
				if st == ReasonKept {
					n++
				}
			}
			if len(kept) != n {
				t.Errorf("%d kept, want %d", len(kept), n)
			}
			for i := 1; i < len(status); i++ {
				if status[i-1].ID > status[i].ID {
					t.Errorf("statuses not sorted by ID")
				}
			}
		})
	}
}

func sp(s string) *string { return &s }

func TestIdentities(t *testing.T) {
	edge := func(s2, ax, doi string, infl bool) record.Edge {
		e := record.Edge{IsInfluential: infl}
		if s2 != "" {
			e.S2PaperID = sp(s2)
		}
		if ax != "" {
			e.ArxivID = sp(ax)
		}
		if doi != "" {
			e.DOI = sp(doi)
		}
		return e
	}
	graphs := []*record.Graph{
		{TargetID: "2401.00001", Edges: []record.Edge{
			edge("S1", "2301.00001v2", "", true),
			edge("S2", "", "10.1/ABC", true),
			edge("S3", "2301.00003", "", true),
			edge("S4", "2301.00003", "", true),  // two S2 IDs for one arXiv ID: ambiguous
			edge("S9", "2309.00009", "", false), // not influential: teaches nothing
		}},
		{TargetID: "2401.00002", Edges: []record.Edge{
			edge("", "2301.00001", "", true),               // -> S1 through its arXiv ID
			edge("", "", "https://doi.org/10.1/abc", true), // -> S2 through its DOI
			edge("", "2301.00003", "", true),               // ambiguous: stays arxiv:
			edge("", "2309.00009", "", true),               // the alias is not influential: arxiv:
			edge("", "", "", true),                         // no identity at all
			edge("", "", "10.2/xyz.", true),                // doi:, normalized
		}},
	}
	ids := NewIdentities(graphs)
	s := NewSeed(graphs[1], ids, nil)
	want := []string{"arxiv:2301.00003", "arxiv:2309.00009", "doi:10.2/xyz", "s2:S1", "s2:S2"}
	if !reflect.DeepEqual(s.Influential, want) {
		t.Errorf("influential set %v, want %v", s.Influential, want)
	}
	if s.Unidentified != 1 {
		t.Errorf("unidentified %d, want 1", s.Unidentified)
	}
}
