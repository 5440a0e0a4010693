package llm

import (
	"encoding/json"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// Dialect is what an endpoint accepts as structured output: the schema it
// is sent, and where in the request.
type Dialect string

// Dialects.
const (
	// DialectOpenAI is OpenAI's strict mode: response_format json_schema
	// with strict true, which needs every property required (optional ones
	// become nullable), additionalProperties false on every object, and
	// rejects length constraints, default and examples.
	DialectOpenAI Dialect = "openai"
	// DialectAnthropic is Anthropic's output_config.format (or a strict
	// tool's input_schema): additionalProperties false on every object, no
	// numeric or length bounds, minItems only 0 or 1, no maxItems.
	DialectAnthropic Dialect = "anthropic"
	// DialectVLLM is vLLM's response_format json_schema (guided_json was
	// removed in v0.12); its grammar engines take the full schema.
	DialectVLLM Dialect = "vllm"
	// DialectOllama is Ollama: the schema as the top-level format field
	// (its native field; its OpenAI layer maps response_format to it too).
	DialectOllama Dialect = "ollama"
	// DialectLlamaCpp is llama.cpp's server: response_format
	// {"type":"json_object","schema":…}.
	DialectLlamaCpp Dialect = "llamacpp"
	// DialectCompatible is any other OpenAI-compatible server:
	// response_format json_schema, not strict, with the full schema.
	DialectCompatible Dialect = "compatible"
)

// Dialects lists the dialects, for flag help and checks.
func Dialects() []Dialect {
	return []Dialect{DialectOpenAI, DialectAnthropic, DialectVLLM, DialectOllama, DialectLlamaCpp, DialectCompatible}
}

// WireSchema returns the schema as sent to an endpoint of dialect d: the
// full schema compiled to what that endpoint accepts. The answer is still
// validated against the full schema.
func (s *Schema) WireSchema(d Dialect) json.RawMessage {
	s.wireMu.Lock()
	defer s.wireMu.Unlock()
	if w, ok := s.wire[d]; ok {
		return w
	}
	var out *jsonschema.Schema
	switch d {
	case DialectOpenAI:
		out = strictOpenAI(s.root)
	case DialectAnthropic:
		out = forAnthropic(s.root)
	default:
		out = s.root
	}
	b, err := json.Marshal(out)
	if err != nil {
		b = s.raw // cannot happen: the clone of a schema that marshalled
	}
	if s.wire == nil {
		s.wire = map[Dialect]json.RawMessage{}
	}
	s.wire[d] = b
	return b
}

// strictOpenAI compiles root for OpenAI's strict structured output.
func strictOpenAI(root *jsonschema.Schema) *jsonschema.Schema {
	c := root.CloneSchemas()
	eachSchema(c, func(n *jsonschema.Schema) {
		n.MinLength, n.MaxLength = nil, nil
		n.Default, n.Examples = nil, nil
		n.Schema, n.ID, n.Comment = "", "", ""
		if !isObject(n) {
			return
		}
		for _, p := range n.PropertyOrder {
			if !slices.Contains(n.Required, p) {
				nullable(n.Properties[p])
			}
		}
		n.Required = propertyNames(n)
		n.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	})
	return c
}

// forAnthropic compiles root for Anthropic's structured outputs.
func forAnthropic(root *jsonschema.Schema) *jsonschema.Schema {
	c := root.CloneSchemas()
	eachSchema(c, func(n *jsonschema.Schema) {
		n.MinLength, n.MaxLength, n.Minimum, n.Maximum, n.MaxItems = nil, nil, nil, nil, nil
		if n.MinItems != nil && *n.MinItems > 1 {
			n.MinItems = jsonschema.Ptr(1)
		}
		n.Schema, n.ID = "", ""
		if isObject(n) {
			n.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
		}
	})
	return c
}

func isObject(n *jsonschema.Schema) bool {
	return n.Type == "object" || slices.Contains(n.Types, "object") || n.Properties != nil
}

// propertyNames returns n's properties in their order: the declared order,
// then the rest sorted.
func propertyNames(n *jsonschema.Schema) []string {
	names := slices.Clone(n.PropertyOrder)
	for _, k := range sortedKeys(n.Properties) {
		if !slices.Contains(names, k) {
			names = append(names, k)
		}
	}
	return slices.DeleteFunc(names, func(k string) bool { return n.Properties[k] == nil })
}

// nullable lets a property be null: strict mode's way of saying optional.
func nullable(p *jsonschema.Schema) {
	switch {
	case p.Type != "":
		p.Types, p.Type = []string{p.Type, "null"}, ""
	case len(p.Types) > 0 && !slices.Contains(p.Types, "null"):
		p.Types = append(p.Types, "null")
	case p.Ref != "" || len(p.AnyOf) > 0:
		p.AnyOf = append(p.AnyOf, &jsonschema.Schema{Type: "null"})
		if p.Ref != "" {
			p.AnyOf = append([]*jsonschema.Schema{{Ref: p.Ref}}, p.AnyOf...)
			p.Ref = ""
		}
	}
	if p.Enum != nil && !slices.Contains(p.Enum, any(nil)) {
		p.Enum = append(p.Enum, nil)
	}
}

// normalize removes the null values strict mode gives properties that
// the full schema leaves optional, so that the answer validates (and
// decodes) as if the model had left them out.
func (s *Schema) normalize(doc json.RawMessage) json.RawMessage {
	if !s.optional {
		return doc
	}
	v, err := decodeJSON(doc)
	if err != nil {
		return doc
	}
	changed := false
	v = s.dropNulls(s.root, v, 0, &changed)
	if !changed {
		return doc
	}
	b, err := json.Marshal(v)
	if err != nil {
		return doc
	}
	return b
}

func (s *Schema) dropNulls(n *jsonschema.Schema, v any, depth int, changed *bool) any {
	if n == nil || depth > maxDepth {
		return v
	}
	if n.Ref != "" {
		v = s.dropNulls(s.defs[n.Ref], v, depth+1, changed)
	}
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			p, ok := n.Properties[k]
			if !ok {
				continue
			}
			if e == nil && !slices.Contains(n.Required, k) && !slices.Contains(types(p), "null") {
				delete(v, k)
				*changed = true
				continue
			}
			v[k] = s.dropNulls(p, e, depth+1, changed)
		}
	case []any:
		for i, e := range v {
			v[i] = s.dropNulls(n.Items, e, depth+1, changed)
		}
	}
	return v
}

// hasOptional reports whether some object of root has a property it does
// not require.
func hasOptional(root *jsonschema.Schema) bool {
	found := false
	eachSchema(root, func(n *jsonschema.Schema) {
		for k := range n.Properties {
			if !slices.Contains(n.Required, k) {
				found = true
			}
		}
	})
	return found
}
