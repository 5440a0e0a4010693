package tuples_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/paperprompt"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/tuples"
)

// TestSimulatedModel: the simulated LLM, which knows nothing of this
// package, answers the shared paper schema's idea validly (in full and in OpenAI's strict
// form) with quotes drawn from the paper, so Verify keeps claims: a stage
// built on the package runs against the fake without teaching it its
// prompt.
func TestSimulatedModel(t *testing.T) {
	doc := paper()
	var text strings.Builder
	text.WriteString("Extract the idea tuple of this paper.\n" + *doc.Title + "\n" + doc.Abstract + "\n")
	for _, s := range doc.Sections {
		text.WriteString(strings.Join(s.Paragraphs, "\n") + "\n")
	}
	for _, schema := range []json.RawMessage{paperprompt.Schema.JSON(), paperprompt.Schema.WireSchema(llm.DialectOpenAI)} {
		for _, task := range []string{"a", "b", "c"} {
			answer := sim.SchemaModel(sim.LLMRequest{Schema: schema, Task: task,
				Messages: []sim.LLMMessage{{Role: "user", Content: text.String()}}})
			if err := paperprompt.Schema.Validate(json.RawMessage(answer)); err != nil {
				t.Errorf("task %s: %v\n%s", task, err, answer)
				continue
			}
			idea, err := paperprompt.IdeaJSON(json.RawMessage(answer))
			if err != nil {
				t.Fatalf("task %s: %v\n%s", task, err, answer)
			}
			tu, err := tuples.Decode(idea)
			if err != nil {
				t.Fatal(err)
			}
			kept, _ := tuples.Verify(doc, tu)
			n := len(kept.Summary) + len(kept.Motivations) + len(kept.ResearchQuestions) + len(kept.Methods) + len(kept.ExperimentalSettings) + len(kept.ExpectedResults)
			if n == 0 {
				t.Errorf("task %s: Verify kept no claim of %s", task, answer)
			}
		}
	}
}
