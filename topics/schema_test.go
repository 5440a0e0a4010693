package topics

import (
	"bytes"
	"os"
	"testing"

	"github.com/groundwork/curate/client/llm"
)

// TestTagSchemaUnchanged: the schema derived from the answer type is the literal
// the stage sent before, byte for byte, so the LLM cache keys of stored
// answers still match.
func TestTagSchemaUnchanged(t *testing.T) {
	for _, tt := range []struct {
		derived *llm.Schema
		literal string
	}{
		{tagSchema, `{"type":"object","properties":{"tag":{"type":"string","minLength":1,"maxLength":100}},"required":["tag"],"additionalProperties":false}`},
	} {
		lit := llm.MustSchema(tt.derived.Name(), []byte(tt.literal))
		if got, want := string(tt.derived.JSON()), string(lit.JSON()); got != want {
			t.Errorf("%s: derived schema\n%s\nwant\n%s", tt.derived.Name(), got, want)
		}
		// The validator's agreement corpus holds the schema as sent.
		if b, err := os.ReadFile("../client/llm/testdata/agreement/" + tt.derived.Name() + ".schema.json"); err != nil || string(bytes.TrimSpace(b)) != string(tt.derived.JSON()) {
			t.Errorf("%s: client/llm/testdata/agreement has %s (%v), want the schema sent; replace the schema file there, delete its verdicts and run go test ./client/llm -run TestValidatorAgreement -update-agreement", tt.derived.Name(), b, err)
		}
		req := llm.Request{Stage: "s", PromptVersion: "v", User: "u", Schema: tt.derived}
		old := req
		old.Schema = lit
		if llm.CacheKey("m", req) != llm.CacheKey("m", old) {
			t.Errorf("%s: the cache key changed", tt.derived.Name())
		}
	}
}
