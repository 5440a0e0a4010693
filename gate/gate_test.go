package gate

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

func goodCards(k int) []record.Card {
	cards := make([]record.Card, k)
	for i := range cards {
		cards[i] = record.Card{
			ProblemGap:  "[Evidence Gap] Nobody measures whether the cited passage supports the answer.",
			CoreClaim:   "We claim that span-level audits expose most reader errors.",
			Method:      "[Empirical Mapping] Build a benchmark of adjudicated spans and compare readers on it.",
			Inspiration: "Document 1 checks answers only. Document 2 has spans but no audit. Joining them is not obvious.",
		}
	}
	return cards
}

func mustFormat(t *testing.T, think string, cards []record.Card) string {
	t.Helper()
	s, err := Format(think, cards)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkCase is one completion and the gate's verdict on it.
type checkCase struct {
	name       string
	completion string
	k          int
	reason     string // "" passes
	card       int
}

// checkCases are the gate's test cases; TestPythonGateAgrees runs the
// Python reward's gate on every one of them.
func checkCases(t *testing.T) []checkCase {
	t.Helper()
	good := mustFormat(t, "Let me look at the documents first.", goodCards(3))
	answer := func(body string) string { return "<think>\nhmm\n</think>\n<answer>\n" + body + "\n</answer>" }
	withCard := func(edit func(*record.Card)) string {
		cards := goodCards(3)
		edit(&cards[1])
		return mustFormat(t, "thinking", cards)
	}
	one := `[{"problem_gap":"[Evidence Gap] a","core_claim":"b","method":"[Robustification] c","inspiration":"d"}]`
	return []checkCase{
		{"good", good, 3, "", 0},
		{"no-think variant", mustFormat(t, "", goodCards(3)), 3, "", 0},
		{"one card", mustFormat(t, "x", goodCards(1)), 1, "", 0},
		{"prose around the blocks", "Sure.\n" + good + "\nDone.", 3, "", 0},
		{"loose label spelling", withCard(func(c *record.Card) { c.ProblemGap = "[evidence  gap] x" }), 3, "", 0},
		{"Other on both axes", withCard(func(c *record.Card) { c.ProblemGap, c.Method = "[Other] x", "[Other] y" }), 3, "", 0},
		{"extra keys ignored", answer(`[{"problem_gap":"[Evidence Gap] a","core_claim":"b","method":"[Robustification] c","inspiration":"d","extra":1}]`), 1, "", 0},

		{"missing think", strings.Replace(good, "<think>", "", 1), 3, ReasonMissingThink, 0},
		{"unclosed think", strings.Replace(good, "</think>", "", 1), 3, ReasonMissingThink, 0},
		{"missing answer", strings.Replace(good, "<answer>", "", 1), 3, ReasonMissingAnswer, 0},
		{"unclosed answer", strings.Replace(good, "</answer>", "", 1), 3, ReasonMissingAnswer, 0},
		{"answer before think", "<answer>[]</answer><think>x</think>", 3, ReasonMissingAnswer, 0},
		{"non-JSON answer", answer("Idea 1: do better retrieval."), 3, ReasonNotJSON, 0},
		{"JSON object, not array", answer(`{"problem_gap":"[Evidence Gap] a"}`), 1, ReasonNotJSON, 0},
		{"truncated JSON", answer(`[{"problem_gap":"[Evidence Gap] a"`), 1, ReasonNotJSON, 0},
		{"text after the array", answer(`[] and more`), 0 + 1, ReasonNotJSON, 0},
		{"array of strings", answer(`["a","b","c"]`), 3, ReasonNotJSON, 1},
		{"K-1 cards", mustFormat(t, "x", goodCards(2)), 3, ReasonWrongCount, 0},
		{"K+1 cards", mustFormat(t, "x", goodCards(4)), 3, ReasonWrongCount, 0},
		{"empty field", withCard(func(c *record.Card) { c.CoreClaim = "  " }), 3, ReasonEmptyField, 2},
		{"missing field", answer(`[{"problem_gap":"[Evidence Gap] a","core_claim":"b","method":"[Robustification] c"}]`), 1, ReasonEmptyField, 1},
		{"field not a string", answer(`[{"problem_gap":"[Evidence Gap] a","core_claim":3,"method":"[Robustification] c","inspiration":"d"}]`), 1, ReasonEmptyField, 1},
		{"no label", withCard(func(c *record.Card) { c.ProblemGap = "Nobody measures it." }), 3, ReasonBadLabel, 2},
		{"unknown label", withCard(func(c *record.Card) { c.Method = "[Deep Learning] train a model" }), 3, ReasonBadLabel, 2},
		{"two labels", withCard(func(c *record.Card) { c.Method = "[Robustification] x [Empirical Mapping] y" }), 3, ReasonBadLabel, 2},
		{"label without text", withCard(func(c *record.Card) { c.ProblemGap = "[Evidence Gap]" }), 3, ReasonBadLabel, 2},
		{"paradigm in problem_gap", withCard(func(c *record.Card) { c.ProblemGap = "[Robustification] readers fail" }), 3, ReasonWrongAxis, 2},
		{"opportunity in method", withCard(func(c *record.Card) { c.Method = "[Bridge Opportunity] connect them" }), 3, ReasonWrongAxis, 2},

		// Edges where two implementations of the gate could part ways.
		{"unicode spaces around the blocks", "<think>\u00a0x\u2003</think>\u3000<answer>\u2028" + one + "\u00a0\u2029</answer>", 1, "", 0},
		{"second answer block ignored", answer(one) + "\n<answer>junk</answer>", 1, "", 0},
		{"answer in a code fence", answer("```json\n" + one + "\n```"), 1, ReasonNotJSON, 0},
		{"whitespace-only answer", answer(" \n "), 1, ReasonNotJSON, 0},
		{"empty array", answer("[]"), 1, ReasonWrongCount, 0},
		{"trailing comma", answer(`[{"problem_gap":"[Evidence Gap] a","core_claim":"b","method":"[Robustification] c","inspiration":"d"},]`), 1, ReasonNotJSON, 0},
		{"NaN", answer(`[{"problem_gap":"[Evidence Gap] a","core_claim":NaN,"method":"[Robustification] c","inspiration":"d"}]`), 1, ReasonNotJSON, 0},
		{"Infinity", answer(`[{"problem_gap":"[Evidence Gap] a","core_claim":Infinity,"method":"[Robustification] c","inspiration":"d"}]`), 1, ReasonNotJSON, 0},
		{"raw newline in a string", answer("[{\"problem_gap\":\"[Evidence Gap] a\nb\",\"core_claim\":\"b\",\"method\":\"[Robustification] c\",\"inspiration\":\"d\"}]"), 1, ReasonNotJSON, 0},
		{"lone surrogate escape", answer(`[{"problem_gap":"[Evidence Gap] a \ud800","core_claim":"b","method":"[Robustification] c","inspiration":"d"}]`), 1, "", 0},
		{"null field", answer(`[{"problem_gap":"[Evidence Gap] a","core_claim":null,"method":"[Robustification] c","inspiration":"d"}]`), 1, ReasonEmptyField, 1},
		{"duplicate key, the last empty", answer(`[{"problem_gap":"[Evidence Gap] a","core_claim":"b","core_claim":" ","method":"[Robustification] c","inspiration":"d"}]`), 1, ReasonEmptyField, 1},
		{"keys are case-sensitive", answer(`[{"Problem_Gap":"[Evidence Gap] a","core_claim":"b","method":"[Robustification] c","inspiration":"d"}]`), 1, ReasonEmptyField, 1},
		{"field of no-break spaces", withCard(func(c *record.Card) { c.Inspiration = "\u00a0\u2003" }), 3, ReasonEmptyField, 2},
		{"field of a next-line character", withCard(func(c *record.Card) { c.CoreClaim = "\u0085" }), 3, ReasonEmptyField, 2},
		{"field of a file separator (no space to Go)", withCard(func(c *record.Card) { c.CoreClaim = "\x1c" }), 3, "", 0},
		{"label then only a no-break space", withCard(func(c *record.Card) { c.ProblemGap = "[Evidence Gap]\u00a0" }), 3, ReasonBadLabel, 2},
		{"upper-case label", withCard(func(c *record.Card) { c.ProblemGap = "[EVIDENCE GAP] x" }), 3, "", 0},
		{"spaces around the slash", withCard(func(c *record.Card) { c.ProblemGap = "[Failure  /  risk gap] x" }), 3, "", 0},
		{"dotted capital I", withCard(func(c *record.Card) { c.ProblemGap = "[Brİdge Opportunity] x" }), 3, "", 0},
		{"nested brackets", withCard(func(c *record.Card) { c.ProblemGap = "[[Evidence Gap]] x" }), 3, ReasonBadLabel, 2},
		{"second label [Other]", withCard(func(c *record.Card) { c.ProblemGap = "[Evidence Gap] x [other] y" }), 3, ReasonBadLabel, 2},
		{"bracketed non-label after the label", withCard(func(c *record.Card) { c.Method = "[Robustification] harden [12] and [the reader]" }), 3, "", 0},
		{"padded second label of 60 runes", withCard(func(c *record.Card) {
			c.Method = "[Robustification] x [Empirical Mapping" + strings.Repeat(" ", 60-17) + "] y"
		}), 3, ReasonBadLabel, 2},
		{"padded second label of 61 runes", withCard(func(c *record.Card) {
			c.Method = "[Robustification] x [Empirical Mapping" + strings.Repeat(" ", 61-17) + "] y"
		}), 3, "", 0},
		{"Other with a paradigm's name on the other axis", withCard(func(c *record.Card) { c.ProblemGap = "[Other] x [Robustification] y" }), 3, ReasonBadLabel, 2},
		{"unclosed label bracket", withCard(func(c *record.Card) { c.ProblemGap = "[Evidence Gap x" }), 3, ReasonBadLabel, 2},
		{"wrong axis label with a second label", withCard(func(c *record.Card) { c.ProblemGap = "[Robustification] x [Evidence Gap] y" }), 3, ReasonBadLabel, 2},
		{"think tags inside the answer text", answer(`[{"problem_gap":"[Evidence Gap] a <think>","core_claim":"b","method":"[Robustification] c","inspiration":"d"}]`), 1, "", 0},
	}
}

func TestCheck(t *testing.T) {
	tests := checkCases(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cards, err := Check(tt.completion, tt.k)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Check failed: %v", err)
				}
				if len(cards) != tt.k {
					t.Fatalf("%d cards, want %d", len(cards), tt.k)
				}
				for _, c := range cards {
					if c.Opportunity == "" || c.Paradigm == "" {
						t.Errorf("card without labels: %+v", c)
					}
				}
				return
			}
			var ge *Error
			if !errors.As(err, &ge) {
				t.Fatalf("Check = %v, want a gate error %s", err, tt.reason)
			}
			if ge.Reason != tt.reason || ReasonOf(err) != tt.reason {
				t.Errorf("reason %s (%v), want %s", ge.Reason, err, tt.reason)
			}
			if ge.Card != tt.card {
				t.Errorf("card %d, want %d (%v)", ge.Card, tt.card, err)
			}
			if !strings.HasPrefix(err.Error(), "gate: "+tt.reason+": ") {
				t.Errorf("message %q", err)
			}
		})
	}
}

func TestCheckLabels(t *testing.T) {
	cards, err := Check(mustFormat(t, "x", []record.Card{{
		ProblemGap: "[bridge opportunity] a", CoreClaim: "b", Method: "[synthesis/unification] c", Inspiration: "d",
	}}), 1)
	if err != nil {
		t.Fatal(err)
	}
	if cards[0].Opportunity != "Bridge Opportunity" || cards[0].Paradigm != "Synthesis / Unification" {
		t.Errorf("labels %q / %q", cards[0].Opportunity, cards[0].Paradigm)
	}
	if cards[0].ProblemGap != "[bridge opportunity] a" {
		t.Errorf("the gate rewrote the text: %q", cards[0].ProblemGap)
	}
}

func TestFormat(t *testing.T) {
	s := mustFormat(t, "", goodCards(1))
	if !strings.HasPrefix(s, "<think>\n</think>\n<answer>\n[\n  {\n    \"problem_gap\": ") || !strings.HasSuffix(s, "]\n</answer>") {
		t.Errorf("no-think completion:\n%s", s)
	}
	s = mustFormat(t, "  I think.  ", goodCards(1))
	if !strings.HasPrefix(s, "<think>\nI think.\n</think>\n<answer>\n") {
		t.Errorf("think completion:\n%s", s)
	}
	think, answer, err := Split(s)
	if err != nil || think != "I think." || !strings.HasPrefix(answer, "[") {
		t.Errorf("Split = %q, %q, %v", think, answer, err)
	}
	if !HasTag("a </think> b") || HasTag("a think b") {
		t.Error("HasTag")
	}
	if _, err := CheckAnswer("[]", 0); err == nil || ReasonOf(err) != "" {
		t.Errorf("k = 0: %v", err)
	}
}

// The answer's card objects carry the idea fields of record.CardFields,
// in order.
func TestAnswerCardFields(t *testing.T) {
	typ := reflect.TypeFor[answerCard]()
	var names []string
	for i := range typ.NumField() {
		names = append(names, typ.Field(i).Tag.Get("json"))
	}
	if want := record.IdeaFieldNames(); !slices.Equal(names, want) {
		t.Errorf("answer cards have %q, the idea fields are %q", names, want)
	}
}
