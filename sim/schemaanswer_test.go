package sim_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/groundwork/curate/sim"
)

const answerText = `Quiet gradients hide the failure of deep readers on noisy scans. We extend the reader of Smith et al. to handwritten pages.
Readers break down when the page is rotated. The method of [3] builds directly on span audits.`

// TestSchemaAnswer: for each schema, an answer the schema accepts (the
// library checks it inside SchemaAnswer), the same for the same seed,
// whose free strings are sentences of the text.
func TestSchemaAnswer(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		check        func(t *testing.T, v map[string]any)
	}{
		{"classification", `{"type":"object","additionalProperties":false,"required":["references"],"properties":{
			"references":{"type":"array","minItems":2,"items":{"type":"object","additionalProperties":false,
				"required":["n","role","labels","rationale","quotes"],"properties":{
				"n":{"type":"integer","minimum":1},"role":{"type":"string","enum":["source","other"]},
				"labels":{"type":"array","maxItems":2,"items":{"type":"string","enum":["motivates","exposes_gap","foundation","extends"]}},
				"rationale":{"type":"string","minLength":1,"maxLength":60},
				"quotes":{"type":"array","items":{"type":"string"}}}}}}}`,
			func(t *testing.T, v map[string]any) {
				refs := v["references"].([]any)
				if len(refs) != 2 {
					t.Errorf("%d references, want minItems 2", len(refs))
				}
				for _, r := range refs {
					for _, q := range r.(map[string]any)["quotes"].([]any) {
						if !strings.Contains(answerText, q.(string)) {
							t.Errorf("quote %q is not in the text", q)
						}
					}
				}
			}},
		{"card with patterns", `{"type":"object","required":["problem_gap","method","core_claim"],"properties":{
			"problem_gap":{"type":"string","pattern":"^\\[(Puzzle / Contradiction|Evidence Gap)\\] .+"},
			"method":{"type":"string","pattern":"^\\[(Robustification|Empirical Mapping)\\] .{10,}$"},
			"core_claim":{"type":"string","minLength":150}}}`,
			func(t *testing.T, v map[string]any) {
				if g := v["problem_gap"].(string); !strings.HasPrefix(g, "[") || !strings.Contains(answerText, g[strings.Index(g, "] ")+2:]) {
					t.Errorf("problem_gap %q: want a label, then a sentence of the text", g)
				}
			}},
		{"strict mode's nullable fields and $defs", `{"type":"object","additionalProperties":false,"required":["card","references"],
			"$defs":{"card":{"type":"object","required":["title"],"properties":{"title":{"type":"string"}},"additionalProperties":false}},
			"properties":{"card":{"anyOf":[{"$ref":"#/$defs/card"},{"type":"null"}]},"references":{"type":["array","null"],"items":{"type":"integer","minimum":3,"maximum":3}}}}`,
			func(t *testing.T, v map[string]any) {
				if v["card"] == nil || v["references"] == nil {
					t.Errorf("null where a value may be: %v", v)
				}
			}},
		{"tag", `{"type":"object","required":["tag"],"properties":{"tag":{"type":"string","maxLength":12}}}`,
			func(t *testing.T, v map[string]any) {
				if n := len([]rune(v["tag"].(string))); n == 0 || n > 12 {
					t.Errorf("tag %q", v["tag"])
				}
			}},
		{"unique items and numbers", `{"type":"object","required":["ids","score","ok"],"properties":{
			"ids":{"type":"array","minItems":3,"uniqueItems":true,"items":{"type":"string","enum":["a","b","c","d"]}},
			"score":{"type":"number","exclusiveMinimum":0.5,"maximum":0.9},"ok":{"type":"boolean"},"none":{"type":"null"}}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := sim.SchemaAnswer(json.RawMessage(tc.schema), answerText, "seed")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := sim.SchemaAnswer(json.RawMessage(tc.schema), answerText, "seed")
			if string(a) != string(b) {
				t.Errorf("two answers for one seed:\n%s\n%s", a, b)
			}
			var v map[string]any
			if err := json.Unmarshal(a, &v); err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, v)
			}
			t.Logf("%s", a)
		})
	}
	for _, bad := range []string{
		`{"type":"string","minLength":5,"maxLength":2}`,
		`{"type":"integer","minimum":3,"maximum":2}`,
		`{"$ref":"#/$defs/none"}`,
		`{"type":"array","minItems":3,"uniqueItems":true,"items":{"enum":["a"]}}`,
	} {
		if a, err := sim.SchemaAnswer(json.RawMessage(bad), answerText, "seed"); err == nil {
			t.Errorf("%s: answered %s", bad, a)
		}
	}
}
