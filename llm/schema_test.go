package llm

import (
	"strings"
	"testing"
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
