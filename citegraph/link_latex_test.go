package citegraph

import (
	"testing"

	"github.com/groundwork/curate/record"
)

// TestLinkLaTeXMathAndSpacing: a title whose LaTeX math the HTML gives as
// "\alpha ilp" meets S2's "αILP", and titles equal but for spacing
// ("neuro-symbolic", "neurosymbolic") link, found on the 2507.11127 page.
func TestLinkLaTeXMathAndSpacing(t *testing.T) {
	doc := &record.Document{References: []record.Reference{
		{Key: "b1", Title: `\alpha ilp: thinking visual scenes as differentiable logic programs`, Year: 2023},
		{Key: "b2", Title: `\pi-nesy: A possibilistic neuro-symbolic approach`, Year: 2025},
		{Key: "b3", Title: "Neuro-symbolic program search for autonomous driving", Year: 2024},
		{Key: "b4", Title: `A \multicolumn{2}{c}{study} of tables`, Year: 2020},
	}}
	refs := []Ref{
		{PaperID: "s1", Title: "αILP: thinking visual scenes as differentiable logic programs"},
		{PaperID: "s2", Title: "π-NeSy: A Possibilistic Neuro-Symbolic Approach"},
		{PaperID: "s3", Title: "Neurosymbolic Program Search for Autonomous Driving"},
		{PaperID: "s4", Title: "μlticolumn 2 c study of tables"},
	}
	edges, rep := Link("T", doc, refs)
	got := map[string]string{}
	for _, e := range edges {
		if e.S2PaperID != nil && e.RefKey != nil {
			got[*e.S2PaperID] = *e.RefKey
		}
	}
	for s, want := range map[string]string{"s1": "b1", "s2": "b2", "s3": "b3"} {
		if got[s] != want {
			t.Errorf("%s linked to %q, want %q", s, got[s], want)
		}
	}
	if got["s4"] != "" {
		t.Errorf(`\multicolumn read as \mu: s4 linked to %q`, got["s4"])
	}
	if rep.ByTitle != 3 {
		t.Errorf("%d linked by title, want 3", rep.ByTitle)
	}
}
