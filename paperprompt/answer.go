package paperprompt

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/record"
)

// Answer is the model's answer to any paper task: a classification fills
// References and leaves Card nil; a card fills Card and leaves References
// empty. One schema for every task keeps the prefix the calls share the
// same: the providers put the schema ahead of the system prompt in their
// cache's prefix (OpenAI documents it; a changed Anthropic schema misses
// the cache too).
type Answer struct {
	References []Reference `json:"references"`
	Card       *Card       `json:"card"`
}

// Reference is one reference's classification.
type Reference struct {
	N         float64  `json:"n"` // a float, so that 3.0 decodes; the classify stage checks it is whole
	Role      string   `json:"role"`
	Labels    []string `json:"labels"`
	Rationale string   `json:"rationale"`
	Quotes    []string `json:"quotes"`
}

// Card is an idea card as the model writes it; Results and Takeaways are
// a source card's.
type Card struct {
	ProblemGap  string `json:"problem_gap"`
	CoreClaim   string `json:"core_claim"`
	Method      string `json:"method"`
	Inspiration string `json:"inspiration"`
	Results     string `json:"results,omitempty"`
	Takeaways   string `json:"takeaways,omitempty"`
}

// Schema is the answer schema of every paper task: card fields non-empty
// when given, roles and labels from the taxonomy, reference numbers whole.
// What a task requires of it (every reference answered, the card's fields
// of its kind) is the task's validator's to check.
var Schema = llm.MustSchemaFor[Answer]("paper_task",
	llm.At("references[].n", llm.Type("integer")),
	llm.At("references[].role", llm.Enum(record.RoleSource, record.RoleOther)),
	llm.At("references[].labels[]", llm.Enum(record.Labels()...)),
	llm.At("card", llm.NonEmptyStrings()))

// Decode reads an answer that passed Schema.
func Decode(doc json.RawMessage) (*Answer, error) {
	var a Answer
	if err := json.Unmarshal(doc, &a); err != nil {
		return nil, fmt.Errorf("decode the answer: %w", err)
	}
	return &a, nil
}

// CardJSON returns an answer's card as the JSON of a record.Card's text
// fields, or an error when the answer has none.
func CardJSON(doc json.RawMessage) (json.RawMessage, error) {
	a, err := Decode(doc)
	if err != nil {
		return nil, err
	}
	if a.Card == nil {
		return nil, errors.New(`the answer has no card: fill "card" and leave "references" empty`)
	}
	return json.Marshal(a.Card)
}
