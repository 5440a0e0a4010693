package summarize

import (
	"github.com/groundwork/curate/paperprompt"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

func TestParseLabel(t *testing.T) {
	tests := []struct {
		field, axis string
		label, rest string
		err         string
	}{
		{"[Evidence Gap] No benchmark grades density.", record.AxisOpportunity, record.Evidence, "No benchmark grades density.", ""},
		{"  [failure/risk gap] Models break.", record.AxisOpportunity, record.FailureRisk, "Models break.", ""},
		{"[Relax  /  Extend Scope] Drop the assumption.", record.AxisParadigm, record.RelaxExtend, "Drop the assumption.", ""},
		{"[Other] Outside the taxonomy.", record.AxisParadigm, record.Other, "Outside the taxonomy.", ""},
		{"[Evidence Gap] As shown in [12], nothing grades density.", record.AxisOpportunity, record.Evidence, "As shown in [12], nothing grades density.", ""},
		{"Evidence Gap: no benchmark.", record.AxisOpportunity, "", "", "must open with exactly one bracketed opportunity-pattern label"},
		{"[Evidence Gap no benchmark.", record.AxisOpportunity, "", "", "never closed"},
		{"[Gap] no benchmark.", record.AxisOpportunity, "", "", "is not one opportunity-pattern label"},
		{"[Synthesis / Unification] Connect A and B.", record.AxisOpportunity, "", "", "a label of the other axis"},
		{"[Bridge Opportunity] Connect A and B.", record.AxisParadigm, "", "", "a label of the other axis"},
		{"[Evidence Gap][Bridge Opportunity] Both.", record.AxisOpportunity, "", "", "second label"},
		{"[Evidence Gap] Nothing grades it, a [Scope Mismatch] too.", record.AxisOpportunity, "", "", "second label [Scope Mismatch]"},
		{"[Evidence Gap]", record.AxisOpportunity, "", "", "no text after it"},
	}
	for _, tt := range tests {
		label, rest, err := record.ParseCardLabel(tt.field, tt.axis)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseLabel(%q) error = %v, want %q", tt.field, err, tt.err)
			}
			continue
		}
		if err != nil || label != tt.label || rest != tt.rest {
			t.Errorf("ParseLabel(%q) = %q, %q, %v; want %q, %q", tt.field, label, rest, err, tt.label, tt.rest)
		}
	}
}

func TestCheckClaim(t *testing.T) {
	gap := "Nobody can yet measure how language models behave under dense instructions."
	tests := []struct {
		claim string
		err   string // "" = a claim
	}{
		{"We claim that accuracy falls linearly with instruction density.", ""},
		{"Language models follow dense instructions far worse than sparse ones.", ""},
		{"Current LLMs do not reliably follow more than a hundred instructions.", ""}, // a finding about models, not a gap in prior work
		{"There is no benchmark of dense instructions.", "opens like a gap"},
		{"We claim that there is a lack of dense benchmarks.", "opens like a gap"},
		{"It remains unclear how models handle dense instructions.", "opens like a gap"},
		{"Existing benchmarks lack dense instructions.", "opens like a gap"},
		{"Most current evaluation methods fail to grade density.", "opens like a gap"},
		{"The key gap is the missing density axis.", "opens like a gap"},
		{"Little is known about dense prompts.", "opens like a gap"},
		{"Nobody can measure how language models behave under dense instructions yet.", "repeats problem_gap"},
		{"Do models follow dense instructions?", "is a question"},
		{"[Evidence Gap] Models fail.", "bracketed label"},
	}
	for _, tt := range tests {
		err := checkClaim(tt.claim, gap)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("checkClaim(%q) = %v, want a claim", tt.claim, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("checkClaim(%q) = %v, want %q", tt.claim, err, tt.err)
		}
	}
}

func TestValidate(t *testing.T) {
	good := record.Card{
		ProblemGap: "[Scope Mismatch] Results hold only for short prompts.", CoreClaim: "We claim that long prompts change the ranking of models.",
		Method: "[Relax / Extend Scope] Re-run the comparisons at every prompt length.", Inspiration: "Smith et al. (2020) used short prompts only.",
		Opportunity: record.Scope, Paradigm: record.RelaxExtend, Model: "m", PromptVersion: "v1",
	}
	source := good
	source.Results, source.Takeaways = "Rankings flip at 4k tokens.", "Report prompt length."
	tests := []struct {
		name string
		card record.Card
		kind string
		err  string
	}{
		{"gold", good, record.CardGold, ""},
		{"source", source, record.CardSource, ""},
		{"gold with results", source, record.CardGold, "results must be empty on a gold card"},
		{"source without results", good, record.CardSource, "results is empty"},
		{"opportunity field disagrees", func() record.Card { c := good; c.Opportunity = record.Bridge; return c }(), record.CardGold, `opportunity is "Bridge Opportunity" but problem_gap says [Scope Mismatch]`},
		{"no model", func() record.Card { c := good; c.Model = ""; return c }(), record.CardGold, "no model"},
		{"unknown kind", good, "idea", "unknown card kind"},
	}
	for _, tt := range tests {
		err := Validate(&tt.card, tt.kind)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
		}
	}
}

func TestSentences(t *testing.T) {
	got := paperprompt.Sentences("Vaswani et al. (2017) proposed it. See Fig. 3 for e.g. details. J. Smith agreed! Is 3.5 big? Yes.")
	want := []string{"Vaswani et al. (2017) proposed it.", "See Fig. 3 for e.g. details.", "J. Smith agreed!", "Is 3.5 big?", "Yes."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sentences = %q\nwant %q", got, want)
	}
}
