package paperprompt

import (
	"bytes"
	"os"
	"testing"
)

// TestSchemaInAgreementCorpus: the validator's agreement corpus
// (client/llm/testdata/agreement) holds the answer schema as sent, so the
// library's verdicts on its answers are held to the home-made validator's.
func TestSchemaInAgreementCorpus(t *testing.T) {
	b, err := os.ReadFile("../client/llm/testdata/agreement/" + Schema.Name() + ".schema.json")
	if err != nil || !bytes.Equal(bytes.TrimSpace(b), Schema.JSON()) {
		t.Errorf("client/llm/testdata/agreement has %s (%v), want %s; replace the schema file there, delete its verdicts and run go test ./client/llm -run TestValidatorAgreement -update-agreement", b, err, Schema.JSON())
	}
}
