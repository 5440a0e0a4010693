package llm

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

func TestSchemaValidate(t *testing.T) {
	card := MustSchema("card", []byte(`{
		"$defs": {"label": {"type": "string", "enum": ["motivates", "exposes_gap", "foundation", "extends"]}},
		"type": "object",
		"properties": {
			"title": {"type": "string", "minLength": 1, "maxLength": 10},
			"n": {"type": "integer", "minimum": 1, "maximum": 99},
			"score": {"type": ["number", "null"]},
			"labels": {"type": "array", "items": {"$ref": "#/$defs/label"}, "minItems": 1, "maxItems": 2},
			"gap": {"type": "string", "pattern": "^\\[[A-Z]"},
			"kind": {"const": "card"},
			"either": {"anyOf": [{"type": "boolean"}, {"type": "string", "enum": ["yes"]}]},
			"extra": {"type": "object", "additionalProperties": {"type": "integer"}}
		},
		"required": ["title", "n"],
		"additionalProperties": false
	}`))
	tests := []struct {
		doc     string
		wantErr string // "" for valid
	}{
		{`{"title":"t","n":1}`, ""},
		{`{"title":"t","n":1.0}`, ""},
		{`{"title":"t","n":5,"score":null,"labels":["extends"],"gap":"[Evidence Gap] x","kind":"card","either":true,"extra":{"a":1}}`, ""},
		{`{"title":"t","n":5,"score":0.5,"either":"yes"}`, ""},
		{`{"title":"t"}`, `$: missing required property "n"`},
		{`{"title":"t","n":1,"x":1}`, `$: unexpected property "x"`},
		{`{"title":"t","n":1.5}`, `$.n: got number, want integer`},
		{`{"title":"t","n":0}`, `$.n: 0 is below the minimum 1`},
		{`{"title":"t","n":100}`, `$.n: 100 is above the maximum 99`},
		{`{"title":"","n":1}`, `$.title: string of 0 characters, want at least 1`},
		{`{"title":"ééééééééééé","n":1}`, `$.title: string of 11 characters, want at most 10`},
		{`{"title":"t","n":1,"score":"high"}`, `$.score: got string, want number or null`},
		{`{"title":"t","n":1,"labels":[]}`, `$.labels: 0 items, want at least 1`},
		{`{"title":"t","n":1,"labels":["extends","extends","extends"]}`, `$.labels: 3 items, want at most 2`},
		{`{"title":"t","n":1,"labels":["extends","inspires"]}`, `$.labels[1]: got "inspires", want one of "motivates", "exposes_gap", "foundation", "extends"`},
		{`{"title":"t","n":1,"gap":"no label"}`, `$.gap: "no label" does not match pattern`},
		{`{"title":"t","n":1,"kind":"cards"}`, `$.kind: got "cards", want "card"`},
		{`{"title":"t","n":1,"either":"no"}`, `$.either: matches none of anyOf`},
		{`{"title":"t","n":1,"extra":{"a":"1"}}`, `$.extra.a: got string, want integer`},
		{`[1]`, `$: got array, want object`},
		{`{"title":"t","n":1} {}`, `text after the value`},
		{`{"title":`, `not json`},
	}
	for _, tt := range tests {
		err := card.Validate([]byte(tt.doc))
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("Validate(%s) = %v, want nil", tt.doc, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("Validate(%s) = %v, want error containing %q", tt.doc, err, tt.wantErr)
		}
	}
}

func TestNewSchemaRejects(t *testing.T) {
	tests := []struct {
		name, schema, wantErr string
	}{
		{"card", `{"type":"object","oneOf":[{}]}`, `keyword "oneOf" is not supported`},
		{"card", `{"type":"object","properties":{"a":{"uniqueItems":true}}}`, `#/properties/a: keyword "uniqueItems" is not supported`},
		{"card", `{"type":"thing"}`, `unknown type "thing"`},
		{"card", `{"$ref":"#/properties/a"}`, `only #/$defs/NAME`},
		{"card", `{"$ref":"#/$defs/missing"}`, `only #/$defs/NAME`},
		{"card", `{"enum":[]}`, `want a non-empty array`},
		{"card", `{"minItems":-1}`, `non-negative integer`},
		{"card", `{"pattern":"("}`, `pattern`},
		{"card", `[]`, `top level is not an object`},
		{"card", `{`, `unexpected end`},
		{"card", `{"properties":{"a":false}}`, `false schema`},
		{"bad name", `{}`, `name must be`},
		{"", `{}`, `name must be`},
	}
	for _, tt := range tests {
		_, err := NewSchema(tt.name, []byte(tt.schema))
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("NewSchema(%q, %s) = %v, want error containing %q", tt.name, tt.schema, err, tt.wantErr)
		}
	}
	// Annotations are accepted.
	if _, err := NewSchema("ok", []byte(`{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"t","description":"d",
		"type":"string","format":"date","default":"x","examples":["y"],"$comment":"c"}`)); err != nil {
		t.Errorf("annotations rejected: %v", err)
	}
}

func TestSchemaJSON(t *testing.T) {
	s := MustSchema("s", []byte("{\n  \"type\": \"object\"\n}"))
	if got := string(s.JSON()); got != `{"type":"object"}` {
		t.Errorf("JSON() = %s, want compact", got)
	}
	if s.Name() != "s" {
		t.Errorf("Name() = %q", s.Name())
	}
}

func TestExtractJSON(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{`{"a":1}`, `{"a":1}`, ""},
		{"  {\n \"a\": 1\n}\n", `{"a":1}`, ""},
		{"```json\n{\"a\":1}\n```", `{"a":1}`, ""},
		{"```JSON\n[1, 2]\n```", `[1,2]`, ""},
		{"Here:\n```\n{\"a\":1}\n```\nDone.", `{"a":1}`, ""},
		{`The answer is {"a":{"b":[1]}}.`, `{"a":{"b":[1]}}`, ""},
		{`["x"] is the list`, `["x"]`, ""},
		{"```json\n{\"a\":1}", `{"a":1}`, ""}, // unclosed fence
		{`"just a string"`, `"just a string"`, ""},
		{`not json at all`, "", "not valid JSON"},
		{`{"a":1`, "", "not valid JSON"},
		{``, "", "empty"},
	}
	for _, tt := range tests {
		got, err := extractJSON(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("extractJSON(%q) = %s, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("extractJSON(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestSplitThink(t *testing.T) {
	tests := []struct{ in, reasoning, answer string }{
		{"plain", "", "plain"},
		{"<think>a\nb</think>\n\nanswer", "a\nb", "answer"},
		{"\n <think></think>answer", "", "answer"},
		{"<think>never finished", "never finished", ""},
		{"answer mentions <think>tags</think>", "", "answer mentions <think>tags</think>"},
	}
	for _, tt := range tests {
		r, a := splitThink(tt.in)
		if r != tt.reasoning || a != tt.answer {
			t.Errorf("splitThink(%q) = %q, %q; want %q, %q", tt.in, r, a, tt.reasoning, tt.answer)
		}
	}
}

// The stages' answer types, as the stages declare them, and the schema
// literals they replace: a schema derived from the type must be the
// literal, byte for byte, so that cache keys do not change.
type classifyAnswer struct {
	References []struct {
		N         float64  `json:"n"`
		Role      string   `json:"role"`
		Labels    []string `json:"labels"`
		Rationale string   `json:"rationale"`
		Quotes    []string `json:"quotes"`
	} `json:"references"`
}

type goldAnswer struct {
	ProblemGap  string `json:"problem_gap"`
	CoreClaim   string `json:"core_claim"`
	Method      string `json:"method"`
	Inspiration string `json:"inspiration"`
}

type sourceAnswer struct {
	goldAnswer
	Results   string `json:"results"`
	Takeaways string `json:"takeaways"`
}

func TestSchemaForMatchesStageLiterals(t *testing.T) {
	tests := []struct {
		name    string
		derived *Schema
		literal string
	}{
		{"reference_classification", MustSchemaFor[classifyAnswer]("reference_classification",
			At("references[].n", Type("integer")),
			At("references[].role", Enum(record.RoleSource, record.RoleOther)),
			At("references[].labels[]", Enum(record.Labels()...))), `{
	"type": "object",
	"properties": {
		"references": {
			"type": "array",
			"items": {
				"type": "object",
				"properties": {
					"n": {"type": "integer"},
					"role": {"type": "string", "enum": ["source", "other"]},
					"labels": {"type": "array", "items": {"type": "string", "enum": ["motivates", "exposes_gap", "foundation", "extends"]}},
					"rationale": {"type": "string"},
					"quotes": {"type": "array", "items": {"type": "string"}}
				},
				"required": ["n", "role", "labels", "rationale", "quotes"],
				"additionalProperties": false
			}
		}
	},
	"required": ["references"],
	"additionalProperties": false
}`},
		{"gold_card", MustSchemaFor[goldAnswer]("gold_card", NonEmptyStrings()), `{
		"type": "object",
		"properties": {
			"problem_gap": {"type": "string", "minLength": 1},
			"core_claim": {"type": "string", "minLength": 1},
			"method": {"type": "string", "minLength": 1},
			"inspiration": {"type": "string", "minLength": 1}
		},
		"required": ["problem_gap", "core_claim", "method", "inspiration"],
		"additionalProperties": false
	}`},
		{"source_card", MustSchemaFor[sourceAnswer]("source_card", NonEmptyStrings()), `{
		"type": "object",
		"properties": {
			"problem_gap": {"type": "string", "minLength": 1},
			"core_claim": {"type": "string", "minLength": 1},
			"method": {"type": "string", "minLength": 1},
			"inspiration": {"type": "string", "minLength": 1},
			"results": {"type": "string", "minLength": 1},
			"takeaways": {"type": "string", "minLength": 1}
		},
		"required": ["problem_gap", "core_claim", "method", "inspiration", "results", "takeaways"],
		"additionalProperties": false
	}`},
		{"topic_tag", MustSchemaFor[struct {
			Tag string `json:"tag"`
		}]("topic_tag", At("tag", MinLength(1), MaxLength(100))), `{
		"type": "object",
		"properties": {"tag": {"type": "string", "minLength": 1, "maxLength": 100}},
		"required": ["tag"],
		"additionalProperties": false
	}`},
		{"openings", MustSchemaFor[struct {
			Openings []string `json:"openings"`
		}]("openings"), `{
		"type": "object",
		"properties": {"openings": {"type": "array", "items": {"type": "string"}}},
		"required": ["openings"],
		"additionalProperties": false
	}`},
	}
	for _, tt := range tests {
		lit := MustSchema(tt.name, []byte(tt.literal))
		if got, want := string(tt.derived.JSON()), string(lit.JSON()); got != want {
			t.Errorf("%s: derived schema\n%s\nwant the literal\n%s", tt.name, got, want)
		}
		if a, b := CacheKey("m", Request{Stage: "s", PromptVersion: "v", User: "u", Schema: tt.derived}),
			CacheKey("m", Request{Stage: "s", PromptVersion: "v", User: "u", Schema: lit}); a != b {
			t.Errorf("%s: cache key changed with the derived schema", tt.name)
		}
	}
}

func TestSchemaOptionErrors(t *testing.T) {
	for _, tt := range []struct {
		opt  SchemaOption
		want string
	}{
		{At("nope", MinLength(1)), `$.nope: no property "nope"`},
		{At("references[].role[]", MinLength(1)), `is not an array`},
		{At("references[].role", Enum[string]()), "enum: no values"},
		{At("references[].role", Pattern("(")), "pattern"},
		{At("references[].n", Type("int")), `unknown type "int"`},
	} {
		if _, err := SchemaFor[classifyAnswer]("x", tt.opt); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want %q", err, tt.want)
		}
	}
	if _, err := SchemaFor[struct{ C chan int }]("x"); err == nil {
		t.Error("a channel field derived a schema")
	}
}

// TestWireSchemas checks what each dialect is sent: OpenAI's strict mode
// gets no keyword it rejects and every property required; Anthropic gets
// no bounds it rejects; the others the full schema.
func TestWireSchemas(t *testing.T) {
	type opt struct {
		Name  string   `json:"name"`
		Note  string   `json:"note,omitempty"`
		Items []string `json:"items"`
		Score int      `json:"score"`
	}
	s := MustSchemaFor[opt]("opt", NonEmptyStrings(), At("items", MinItems(2), MaxItems(5)), At("score", Minimum(0), Maximum(10)),
		At("name", MaxLength(40), Pattern("^[A-Z]")))
	strict := decodeSchema(t, s.WireSchema(DialectOpenAI))
	walkSchemaMaps(strict, func(m map[string]any) {
		for _, k := range []string{"minLength", "maxLength", "default", "examples", "$schema"} {
			if _, ok := m[k]; ok {
				t.Errorf("openai wire schema has %q: %v", k, m)
			}
		}
		if m["type"] == "object" {
			if m["additionalProperties"] != false {
				t.Errorf("openai object without additionalProperties false: %v", m)
			}
			req, _ := m["required"].([]any)
			if props, _ := m["properties"].(map[string]any); len(req) != len(props) {
				t.Errorf("openai object does not require every property: %v", m)
			}
		}
	})
	note := strict["properties"].(map[string]any)["note"].(map[string]any)
	if !reflect.DeepEqual(note["type"], []any{"string", "null"}) {
		t.Errorf("optional property in strict mode = %v, want nullable", note)
	}
	if strict["properties"].(map[string]any)["name"].(map[string]any)["pattern"] != "^[A-Z]" {
		t.Errorf("strict mode lost the pattern it supports")
	}
	anth := decodeSchema(t, s.WireSchema(DialectAnthropic))
	walkSchemaMaps(anth, func(m map[string]any) {
		for _, k := range []string{"minLength", "maxLength", "minimum", "maximum", "maxItems"} {
			if _, ok := m[k]; ok {
				t.Errorf("anthropic wire schema has %q: %v", k, m)
			}
		}
		if mi, ok := m["minItems"].(float64); ok && mi > 1 {
			t.Errorf("anthropic wire schema has minItems %v", mi)
		}
	})
	for _, d := range []Dialect{DialectVLLM, DialectOllama, DialectLlamaCpp, DialectCompatible} {
		if string(s.WireSchema(d)) != string(s.JSON()) {
			t.Errorf("%s gets %s, want the full schema", d, s.WireSchema(d))
		}
	}
	// The full schema still validates: strict mode's null for the optional
	// note is taken as absent, a too-short list is not.
	req := &Request{Schema: s}
	if _, reason := checkJSON(req, []byte(`{"name":"A","note":null,"items":["a","b"],"score":3}`)); reason != "" {
		t.Errorf("strict answer with a null optional: %s", reason)
	}
	if _, reason := checkJSON(req, []byte(`{"name":"A","items":["a"],"score":3}`)); !strings.Contains(reason, "$.items: 1 items, want at least 2") {
		t.Errorf("reason = %q", reason)
	}
}

func decodeSchema(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func walkSchemaMaps(v any, f func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(v)
		for _, e := range v {
			walkSchemaMaps(e, f)
		}
	case []any:
		for _, e := range v {
			walkSchemaMaps(e, f)
		}
	}
}
