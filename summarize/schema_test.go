package summarize

import (
	"testing"

	"github.com/groundwork/curate/client/llm"
)

// TestCardSchemasUnchanged: the schema derived from the answer type is the literal
// the stage sent before, byte for byte, so the LLM cache keys of stored
// answers still match.
func TestCardSchemasUnchanged(t *testing.T) {
	for _, tt := range []struct {
		derived *llm.Schema
		literal string
	}{
		{goldSchema, `{"type":"object","properties":{"problem_gap":{"type":"string","minLength":1},"core_claim":{"type":"string","minLength":1},"method":{"type":"string","minLength":1},"inspiration":{"type":"string","minLength":1}},"required":["problem_gap","core_claim","method","inspiration"],"additionalProperties":false}`},
		{sourceSchema, `{"type":"object","properties":{"problem_gap":{"type":"string","minLength":1},"core_claim":{"type":"string","minLength":1},"method":{"type":"string","minLength":1},"inspiration":{"type":"string","minLength":1},"results":{"type":"string","minLength":1},"takeaways":{"type":"string","minLength":1}},"required":["problem_gap","core_claim","method","inspiration","results","takeaways"],"additionalProperties":false}`},
	} {
		lit := llm.MustSchema(tt.derived.Name(), []byte(tt.literal))
		if got, want := string(tt.derived.JSON()), string(lit.JSON()); got != want {
			t.Errorf("%s: derived schema\n%s\nwant\n%s", tt.derived.Name(), got, want)
		}
		req := llm.Request{Stage: "s", PromptVersion: "v", User: "u", Schema: tt.derived}
		old := req
		old.Schema = lit
		if llm.CacheKey("m", req) != llm.CacheKey("m", old) {
			t.Errorf("%s: the cache key changed", tt.derived.Name())
		}
	}
}
