package paperprompt

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
)

func parseFixture(t *testing.T, name string) *record.Document {
	t.Helper()
	page, err := os.ReadFile(filepath.Join(fixtures.Dir(t, "arxiv-html"), name))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := latexml.Parse(page, latexml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestSectionPriority(t *testing.T) {
	tests := []struct {
		heading  string
		appendix bool
		want     int
	}{
		{"Introduction", false, PriorityIntro},
		{"Statistical methodology", false, PriorityMethod},
		{"Our Approach", false, PriorityMethod},
		{"Empirical strategy", false, PriorityMethod},
		{"Experiments", false, PriorityResults},
		{"Results and Discussion", false, PriorityResults},
		{"Simulation studies", false, PriorityResults},
		{"Conclusion and Limitations", false, PriorityConclusion},
		{"Concluding remarks and future research directions", false, PriorityConclusion},
		{"Discussion", false, PriorityConclusion},
		{"Related Work", false, PriorityRest},
		{"Background", false, PriorityRest},
		{"Why Self-Attention", false, PriorityRest},
		{"Additional simulation results", true, PriorityAppendix},
		{"Supplementary Materials", false, PriorityAppendix},
		{"Acknowledgements", false, PriorityBackmatter},
		{"Data Availability", false, PriorityBackmatter},
	}
	for _, tt := range tests {
		if got := SectionPriority(record.Section{Heading: tt.heading, Appendix: tt.appendix}); got != tt.want {
			t.Errorf("SectionPriority(%q) = %d, want %d", tt.heading, got, tt.want)
		}
	}
}

// A long real paper keeps its abstract, introduction and method within the
// budget and loses its appendix first.
func TestTrimFixture(t *testing.T) {
	doc := parseFixture(t, "arxiv-2507.09057v1.html")
	var intro, method string
	var appendix []string
	for _, s := range doc.Sections {
		switch {
		case s.Appendix:
			appendix = append(appendix, headingLine(s))
		case s.Heading == "Introduction":
			intro = headingLine(s)
		case s.Heading == "Statistical methodology":
			method = headingLine(s)
		}
	}
	if intro == "" || method == "" || len(appendix) == 0 {
		t.Fatalf("fixture changed: intro %q method %q appendix %q", intro, method, appendix)
	}
	full := EstimateTokens(doc.FullText)

	for _, budget := range []int{4000, 8000, 12000} {
		tr := Trim(doc, budget)
		if tr.Tokens > budget || EstimateTokens(tr.Text) != tr.Tokens {
			t.Errorf("budget %d: %d tokens", budget, tr.Tokens)
		}
		if !tr.Truncated {
			t.Errorf("budget %d: a %d-token paper not truncated", budget, full)
		}
		if !strings.HasPrefix(tr.Text, "Abstract\n\n"+doc.Abstract) {
			t.Errorf("budget %d: text does not open with the abstract", budget)
		}
		for _, h := range []string{intro, method} {
			if !slices.Contains(tr.Kept, h) {
				t.Errorf("budget %d: %q left out; kept %q", budget, h, tr.Kept)
			}
		}
		for _, h := range appendix {
			if slices.Contains(tr.Kept, h) {
				t.Errorf("budget %d: appendix %q kept", budget, h)
			}
		}
		if !strings.Contains(tr.Text, "[Left out for length: ") || !slices.Contains(tr.Dropped, appendix[0]) {
			t.Errorf("budget %d: dropped %q", budget, tr.Dropped)
		}
		// Kept text is in document order: the introduction before the method.
		if strings.Index(tr.Text, "\n"+intro+"\n") > strings.Index(tr.Text, "\n"+method+"\n") {
			t.Errorf("budget %d: sections out of document order", budget)
		}
	}

	tr := Trim(doc, 10*full)
	if tr.Truncated || len(tr.Dropped) > 0 {
		t.Errorf("ample budget: truncated %v, dropped %q", tr.Truncated, tr.Dropped)
	}
	for _, h := range appendix {
		if !slices.Contains(tr.Kept, h) {
			t.Errorf("ample budget: appendix %q left out", h)
		}
	}
}

// Priority, not position, decides: results and conclusion outrank the
// related work that precedes them, a too-long paragraph is cut at a
// sentence, and nothing of lower priority fills in after it.
func TestTrimPriority(t *testing.T) {
	para := func(word string, n int) string {
		return strings.TrimSpace(strings.Repeat("The "+word+" sentence is here. ", n))
	}
	doc := &record.Document{
		Abstract: para("abstract", 4),
		Sections: []record.Section{
			{ID: "S1", Number: "1", Heading: "Introduction", Paragraphs: []string{para("intro", 10)}},
			{ID: "S2", Number: "2", Heading: "Related Work", Paragraphs: []string{para("related", 10)}},
			{ID: "S3", Number: "3", Heading: "Method", Paragraphs: []string{para("method", 10)},
				Sections: []record.Section{{ID: "S3.SS1", Number: "3.1", Heading: "Setting", Paragraphs: []string{para("setting", 5)}}}},
			{ID: "S4", Number: "4", Heading: "Experiments", Paragraphs: []string{para("result", 10)}},
			{ID: "S5", Number: "5", Heading: "Conclusion", Paragraphs: []string{para("conclusion", 30)}},
			{ID: "A1", Number: "A", Heading: "Proofs", Appendix: true, Paragraphs: []string{para("appendix", 2)}},
		},
	}
	// Room for everything up to the results and part of the conclusion.
	upto := len(Trim(&record.Document{Abstract: doc.Abstract, Sections: doc.Sections[:4]}, 1<<20).Text)
	budget := (upto + 600) / 4
	tr := Trim(doc, budget)
	if tr.Tokens > budget {
		t.Fatalf("%d tokens over the budget %d", tr.Tokens, budget)
	}
	for _, want := range []string{"1 Introduction", "3 Method", "3.1 Setting", "4 Experiments", "5 Conclusion"} {
		if !slices.Contains(tr.Kept, want) {
			t.Errorf("%q not kept; kept %q", want, tr.Kept)
		}
	}
	if slices.Contains(tr.Kept, "2 Related Work") || slices.Contains(tr.Kept, "A Proofs") {
		t.Errorf("kept %q: lower priority than the cut conclusion", tr.Kept)
	}
	if !strings.Contains(tr.Text, "The conclusion sentence is here.") || strings.Count(tr.Text, "conclusion sentence") >= 30 {
		t.Error("conclusion not cut at a sentence")
	}
	if !strings.HasSuffix(tr.Text, "[Left out for length: 2 Related Work; A Proofs]") {
		t.Errorf("text ends %q", tr.Text[len(tr.Text)-80:])
	}
}
