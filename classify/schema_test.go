package classify

import (
	"testing"

	"github.com/groundwork/curate/client/llm"
)

// TestAnswerSchemaUnchanged: the schema derived from the answer type is the literal
// the stage sent before, byte for byte, so the LLM cache keys of stored
// answers still match.
func TestAnswerSchemaUnchanged(t *testing.T) {
	for _, tt := range []struct {
		derived *llm.Schema
		literal string
	}{
		{answerSchema, `{"type":"object","properties":{"references":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer"},"role":{"type":"string","enum":["source","other"]},"labels":{"type":"array","items":{"type":"string","enum":["motivates","exposes_gap","foundation","extends"]}},"rationale":{"type":"string"},"quotes":{"type":"array","items":{"type":"string"}}},"required":["n","role","labels","rationale","quotes"],"additionalProperties":false}}},"required":["references"],"additionalProperties":false}`},
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
