package sim_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/conformance"
)

const tagSchema = `{"type":"object","properties":{"tag":{"type":"string","minLength":1,"maxLength":40}},"required":["tag"],"additionalProperties":false}`

// TestSchemaModel: the simulated model answers from the request's schema,
// or one its prompt spells out; free strings are sentences of the prompt;
// an invalid draw breaks the schema.
func TestSchemaModel(t *testing.T) {
	user := "Tag this topic. Readers fail on scanned pages. Audits find the gaps in the readers."
	for _, tc := range []struct {
		name string
		req  sim.LLMRequest
	}{
		{"schema sent", sim.LLMRequest{Schema: json.RawMessage(tagSchema), Messages: []sim.LLMMessage{{Role: "user", Content: user}}, Task: "t1"}},
		{"schema in the system prompt", sim.LLMRequest{System: "Answer with JSON that conforms to the JSON schema below.\nJSON schema \"tag\":\n" + tagSchema,
			Messages: []sim.LLMMessage{{Role: "user", Content: user}}, Task: "t2"}},
	} {
		a := sim.SchemaModel(tc.req)
		if err := conformance.CheckAnswerSchema([]byte(tagSchema), a); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var v struct{ Tag string }
		json.Unmarshal([]byte(a), &v)
		if !strings.Contains(user, v.Tag) {
			t.Errorf("%s: tag %q is not drawn from the prompt", tc.name, v.Tag)
		}
		bad := tc.req
		bad.Invalid = true
		for i := range 6 {
			bad.Task = tc.req.Task + strings.Repeat("x", i)
			if a := sim.SchemaModel(bad); conformance.CheckAnswerSchema([]byte(tagSchema), a) == nil {
				t.Errorf("%s: an invalid draw answers %s, which the schema accepts", tc.name, a)
			}
		}
	}
	if a := sim.SchemaModel(sim.LLMRequest{Messages: []sim.LLMMessage{{Role: "user", Content: user}}}); !strings.Contains(user, a) {
		t.Errorf("free answer %q: want sentences of the prompt", a)
	}
}

// TestLLMAnswerHook: a declared hook answers first, in the order given;
// what it leaves goes to the schema.
func TestLLMAnswerHook(t *testing.T) {
	req := sim.LLMRequest{Schema: json.RawMessage(tagSchema), Messages: []sim.LLMMessage{{Role: "user", Content: "Tag: shared readers."}}}
	var asked []string
	hook := sim.Answers(
		func(r sim.LLMRequest) (sim.LLMReply, bool) {
			asked = append(asked, "first")
			return sim.LLMReply{}, false
		},
		func(r sim.LLMRequest) (sim.LLMReply, bool) {
			asked = append(asked, "second")
			return sim.Say(`{"tag":"From the hook"}`), true
		},
		func(r sim.LLMRequest) (sim.LLMReply, bool) {
			asked = append(asked, "third")
			return sim.LLMReply{}, true
		},
	)
	if a, ok := hook(req); !ok || a.Text != `{"tag":"From the hook"}` || strings.Join(asked, " ") != "first second" {
		t.Errorf("hook: %q %v, asked %v", a.Text, ok, asked)
	}
	if _, ok := sim.CurateModel(req); ok {
		t.Error("CurateModel answers a prompt that is none of curate's")
	}
}
