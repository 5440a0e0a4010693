package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema is a JSON schema an answer must conform to, under a name sent to
// the server with structured output.
//
// Stages derive it from the Go type they decode the answer into
// (SchemaFor), with the constraints a type cannot say — label enums from
// the taxonomy, non-empty strings, list sizes — given as SchemaOptions. The
// full schema validates every answer locally; what is sent on the wire is
// compiled for each endpoint (see WireSchema), since OpenAI's strict mode,
// Anthropic and local servers each accept a different subset.
//
// Answers are validated by the JSON Schema library (jsonschema-go). A
// schema may use type (one or a list), properties, required,
// additionalProperties, items, minItems, maxItems, enum, const, minLength,
// maxLength, pattern, minimum, maximum, anyOf, and $ref into $defs or
// definitions, and the annotations title, description, default,
// examples, format, $schema, $id and $comment. Any other keyword is
// refused when the schema is built: the library would check it, but the
// wire compilers (WireSchema) know what each endpoint does with these
// keywords only, and a keyword they pass on blindly could be refused by a
// strict endpoint or silently dropped by its decoder.
type Schema struct {
	name string
	root *jsonschema.Schema
	raw  json.RawMessage // compact JSON of root: the schema's identity in cache keys
	defs map[string]*jsonschema.Schema
	// resolved holds every subschema of root (root too) resolved by the
	// JSON Schema library, with root's definitions, which validates
	// answers: the whole answer against root, and on a failure each value
	// against its own subschema, to find the one that breaks it.
	resolved map[*jsonschema.Schema]*resolvedSchema
	// optional: some property is not required, so strict mode may send
	// it as null (see normalize).
	optional bool

	wireMu sync.Mutex
	wire   map[Dialect]json.RawMessage
}

// SchemaOption adds a constraint that the Go type cannot express.
type SchemaOption func(*jsonschema.Schema) error

// SchemaFor derives the schema of the JSON encoding of T: struct fields
// become properties (named by their json tags), required unless tagged
// omitempty or omitzero, no other property allowed; slices are arrays,
// never null. Options add enums and bounds at paths (see At).
func SchemaFor[T any](name string, opts ...SchemaOption) (*Schema, error) {
	js, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, fmt.Errorf("derive schema %q: %w", name, err)
	}
	noNullArrays(js)
	for _, o := range opts {
		if err := o(js); err != nil {
			return nil, fmt.Errorf("derive schema %q: %w", name, err)
		}
	}
	return newSchema(name, js)
}

// MustSchemaFor is SchemaFor for schemas fixed in the source; it panics on
// error.
func MustSchemaFor[T any](name string, opts ...SchemaOption) *Schema {
	s, err := SchemaFor[T](name, opts...)
	if err != nil {
		panic(err)
	}
	return s
}

// NewSchema compiles a schema written as JSON under name (letters, digits,
// '_' and '-', as OpenAI requires). Prefer SchemaFor: a literal is a second
// description of a Go type, kept in step by hand.
func NewSchema(name string, schema []byte) (*Schema, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, schema); err != nil {
		return nil, fmt.Errorf("compile schema %q: %w", name, err)
	}
	if t := bytes.TrimSpace(buf.Bytes()); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("compile schema %q: top level is not an object", name)
	}
	js := new(jsonschema.Schema)
	if err := json.Unmarshal(buf.Bytes(), js); err != nil {
		return nil, fmt.Errorf("compile schema %q: %w", name, err)
	}
	s, err := newSchema(name, js)
	if err != nil {
		return nil, err
	}
	s.raw = buf.Bytes() // the literal as written keeps its cache keys
	return s, nil
}

// MustSchema is NewSchema for schemas fixed in the source; it panics on
// error.
func MustSchema(name string, schema []byte) *Schema {
	s, err := NewSchema(name, schema)
	if err != nil {
		panic(err)
	}
	return s
}

func newSchema(name string, js *jsonschema.Schema) (*Schema, error) {
	if !validSchemaName(name) {
		return nil, fmt.Errorf("compile schema %q: name must be 1-64 letters, digits, '_' or '-'", name)
	}
	s := &Schema{name: name, root: js, defs: map[string]*jsonschema.Schema{}, resolved: map[*jsonschema.Schema]*resolvedSchema{}}
	for k, d := range js.Defs {
		s.defs["#/$defs/"+k] = d
	}
	for k, d := range js.Definitions {
		s.defs["#/definitions/"+k] = d
	}
	if err := s.check(js, "#", map[*jsonschema.Schema]bool{}); err != nil {
		return nil, fmt.Errorf("compile schema %q: %w", name, err)
	}
	if err := s.resolve(); err != nil {
		return nil, fmt.Errorf("compile schema %q: %w", name, err)
	}
	raw, err := json.Marshal(js)
	if err != nil {
		return nil, fmt.Errorf("compile schema %q: %w", name, err)
	}
	s.raw = raw
	s.optional = hasOptional(js)
	return s, nil
}

// Name returns the schema's name.
func (s *Schema) Name() string { return s.name }

// JSON returns the full schema as compact JSON.
func (s *Schema) JSON() json.RawMessage { return bytes.Clone(s.raw) }

// Validate checks a JSON document against the schema with the JSON
// Schema library. The error names the first offending value as a JSON
// path ($.refs[2].labels) and says what is wrong with it; it is what the
// model is told in a follow-up, so it is the same every time: a value's
// own keywords (type, enum, required, bounds, ...) are its fault before
// its properties' or items', which are taken in key and index order.
func (s *Schema) Validate(doc json.RawMessage) error {
	v, err := decodeValue(doc)
	if err != nil {
		return err
	}
	if s.resolved[s.root].full.Validate(v) == nil {
		return nil
	}
	return s.locate(s.root, v, "$", 0)
}

// resolvedSchema is a subschema resolved by the library: in full, and
// shallow (its own keywords only: its properties, items and anyOf taken
// as anything), which tells a value's own fault from its parts'.
type resolvedSchema struct {
	full, shallow *jsonschema.Resolved
}

// resolve resolves every subschema with the library: each on its own, as
// the one schema of an allOf beside root's definitions, so that its $refs
// resolve as they do in root.
func (s *Schema) resolve() error {
	var err error
	alone := func(n *jsonschema.Schema) (*jsonschema.Resolved, error) {
		w := &jsonschema.Schema{Schema: s.root.Schema, Defs: s.root.Defs, Definitions: s.root.Definitions, AllOf: []*jsonschema.Schema{n}}
		return w.CloneSchemas().Resolve(nil)
	}
	eachSchema(s.root, func(n *jsonschema.Schema) {
		if err != nil || s.resolved[n] != nil {
			return
		}
		sh := *n.CloneSchemas()
		sh.Ref, sh.Items, sh.AnyOf = "", nil, nil
		sh.Properties = map[string]*jsonschema.Schema{}
		for k := range n.Properties {
			sh.Properties[k] = &jsonschema.Schema{} // named, so additionalProperties false sees them
		}
		if sh.AdditionalProperties != nil && !isFalse(sh.AdditionalProperties) {
			sh.AdditionalProperties = nil
		}
		var r resolvedSchema
		if r.full, err = alone(n); err == nil {
			r.shallow, err = alone(&sh)
		}
		s.resolved[n] = &r
	})
	return err
}

// locate names the first value below v that breaks its subschema n (or v
// itself): n's $ref first, then n's own keywords, then its properties in
// key order or its items in order, then its anyOf.
func (s *Schema) locate(n *jsonschema.Schema, v any, path string, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%s: nested deeper than %d", path, maxDepth)
	}
	if d := s.defs[n.Ref]; d != nil && s.breaks(d, v) {
		return s.locate(d, v, path, depth+1)
	}
	if err := s.resolved[n].shallow.Validate(v); err != nil {
		return fmt.Errorf("%s: %s", path, s.reason(n, v, err))
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			sub, ok := n.Properties[k]
			if !ok {
				sub = n.AdditionalProperties
			}
			if sub != nil && s.breaks(sub, v[k]) {
				return s.locate(sub, v[k], path+"."+k, depth+1)
			}
		}
	case []any:
		for i, e := range v {
			if n.Items != nil && s.breaks(n.Items, e) {
				return s.locate(n.Items, e, path+"["+strconv.Itoa(i)+"]", depth+1)
			}
		}
	}
	if len(n.AnyOf) > 0 {
		errs := make([]string, len(n.AnyOf))
		for i, sub := range n.AnyOf {
			errs[i] = s.locate(sub, v, path, depth+1).Error()
		}
		return fmt.Errorf("%s: matches none of anyOf: %s", path, strings.Join(errs, "; "))
	}
	return fmt.Errorf("%s: does not match the schema", path) // not reached: some part of n failed
}

// breaks reports whether v breaks the subschema n.
func (s *Schema) breaks(n *jsonschema.Schema, v any) bool {
	r := s.resolved[n]
	return r != nil && r.full.Validate(v) != nil
}

// reason says what is wrong with v, which breaks one of n's own keywords:
// the keyword the library names, in words a model reads (the library's
// own are for programmers: "0/1 is less than 1.000000").
func (s *Schema) reason(n *jsonschema.Schema, v any, err error) string {
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u // the innermost: the broken keyword, not the schema locations leading to it
	}
	msg := err.Error()
	keyword, _, _ := strings.Cut(msg, ":")
	switch {
	case keyword == "type":
		return fmt.Sprintf("got %s, want %s", typeName(v), strings.Join(types(n), " or "))
	case keyword == "const" && n.Const != nil:
		return fmt.Sprintf("got %s, want %s", short(v), short(*n.Const))
	case keyword == "enum":
		opts := make([]string, len(n.Enum))
		for i, e := range n.Enum {
			opts[i] = short(e)
		}
		return fmt.Sprintf("got %s, want one of %s", short(v), strings.Join(opts, ", "))
	case keyword == "required" || strings.HasPrefix(msg, "unexpected additional properties"):
		// A property missing is named before one not allowed.
		m, _ := v.(map[string]any)
		for _, r := range n.Required {
			if _, ok := m[r]; !ok {
				return fmt.Sprintf("missing required property %q", r)
			}
		}
		for _, k := range sortedKeys(m) {
			if _, ok := n.Properties[k]; !ok {
				return fmt.Sprintf("unexpected property %q", k)
			}
		}
	}
	l, _ := v.([]any)
	str, _ := v.(string)
	switch {
	case keyword == "minItems" && n.MinItems != nil:
		return fmt.Sprintf("%d items, want at least %d", len(l), *n.MinItems)
	case keyword == "maxItems" && n.MaxItems != nil:
		return fmt.Sprintf("%d items, want at most %d", len(l), *n.MaxItems)
	case keyword == "minLength" && n.MinLength != nil:
		return fmt.Sprintf("string of %d characters, want at least %d", utf8.RuneCountInString(str), *n.MinLength)
	case keyword == "maxLength" && n.MaxLength != nil:
		return fmt.Sprintf("string of %d characters, want at most %d", utf8.RuneCountInString(str), *n.MaxLength)
	case keyword == "pattern":
		return fmt.Sprintf("%s does not match pattern %q", short(v), n.Pattern)
	case keyword == "minimum" && n.Minimum != nil:
		return fmt.Sprintf("%s is below the minimum %g", short(v), *n.Minimum)
	case keyword == "maximum" && n.Maximum != nil:
		return fmt.Sprintf("%s is above the maximum %g", short(v), *n.Maximum)
	}
	return clip(strings.ReplaceAll(msg, "\n", "; "), 300)
}

// decodeValue decodes exactly one JSON value as the library validates it:
// numbers as float64, which a number past float64's range is not (it is
// refused as such).
func decodeValue(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v any
	if err := dec.Decode(&v); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return nil, fmt.Errorf("%s is out of range", te.Value)
		}
		return nil, fmt.Errorf("not json: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("not json: text after the value")
	}
	return v, nil
}

// At applies opts to the subschema at path: property names joined by '.',
// "[]" for the items of an array, "" for the root. For example
// At("references[].labels[]", Enum(record.Labels()...)).
func At(path string, opts ...SchemaOption) SchemaOption {
	return func(root *jsonschema.Schema) error {
		n, err := walkPath(root, path)
		if err != nil {
			return err
		}
		for _, o := range opts {
			if err := o(n); err != nil {
				return fmt.Errorf("%s: %w", cmpPath(path), err)
			}
		}
		return nil
	}
}

// Enum restricts a value to the given ones.
func Enum[T any](values ...T) SchemaOption {
	return func(s *jsonschema.Schema) error {
		if len(values) == 0 {
			return errors.New("enum: no values")
		}
		s.Enum = make([]any, len(values))
		for i, v := range values {
			s.Enum[i] = v
		}
		return nil
	}
}

// MinLength and MaxLength bound a string's length in characters.
func MinLength(n int) SchemaOption {
	return func(s *jsonschema.Schema) error { s.MinLength = &n; return nil }
}

// MaxLength bounds a string's length in characters.
func MaxLength(n int) SchemaOption {
	return func(s *jsonschema.Schema) error { s.MaxLength = &n; return nil }
}

// MinItems bounds an array's length from below.
func MinItems(n int) SchemaOption {
	return func(s *jsonschema.Schema) error { s.MinItems = &n; return nil }
}

// MaxItems bounds an array's length from above.
func MaxItems(n int) SchemaOption {
	return func(s *jsonschema.Schema) error { s.MaxItems = &n; return nil }
}

// Pattern requires a string to match a regular expression.
func Pattern(re string) SchemaOption {
	return func(s *jsonschema.Schema) error {
		if _, err := regexp.Compile(re); err != nil {
			return fmt.Errorf("pattern: %w", err)
		}
		s.Pattern = re
		return nil
	}
}

// Minimum and Maximum bound a number.
func Minimum(f float64) SchemaOption {
	return func(s *jsonschema.Schema) error { s.Minimum = &f; return nil }
}

// Maximum bounds a number from above.
func Maximum(f float64) SchemaOption {
	return func(s *jsonschema.Schema) error { s.Maximum = &f; return nil }
}

// Type replaces the JSON type derived from the Go type, e.g. "integer"
// for a float64 field that must hold a whole number.
func Type(t string) SchemaOption {
	return func(s *jsonschema.Schema) error {
		if !slices.Contains(jsonTypes, t) {
			return fmt.Errorf("type: unknown type %q", t)
		}
		s.Type, s.Types = t, nil
		return nil
	}
}

// Description documents a property for the model.
func Description(d string) SchemaOption {
	return func(s *jsonschema.Schema) error { s.Description = d; return nil }
}

// NonEmptyStrings gives every string property of the schema (not array
// items) a minimum length of 1: the model must say something in each.
func NonEmptyStrings() SchemaOption {
	return func(root *jsonschema.Schema) error {
		eachSchema(root, func(n *jsonschema.Schema) {
			for _, p := range n.Properties {
				if p.Type == "string" && p.MinLength == nil {
					p.MinLength = new(int)
					*p.MinLength = 1
				}
			}
		})
		return nil
	}
}

func cmpPath(p string) string {
	if p == "" {
		return "$"
	}
	return "$." + p
}

// walkPath finds the subschema at path (see At).
func walkPath(root *jsonschema.Schema, path string) (*jsonschema.Schema, error) {
	n := root
	if path == "" {
		return n, nil
	}
	for seg := range strings.SplitSeq(path, ".") {
		name, items := seg, 0
		for strings.HasSuffix(name, "[]") {
			name, items = name[:len(name)-2], items+1
		}
		if name != "" {
			p, ok := n.Properties[name]
			if !ok {
				return nil, fmt.Errorf("%s: no property %q", cmpPath(path), name)
			}
			n = p
		}
		for range items {
			if n.Items == nil {
				return nil, fmt.Errorf("%s: %q is not an array", cmpPath(path), seg)
			}
			n = n.Items
		}
	}
	return n, nil
}

// noNullArrays makes the arrays jsonschema.For allows to be null (a nil
// slice marshals so) plain arrays: an answer gives a list, if empty.
func noNullArrays(root *jsonschema.Schema) {
	eachSchema(root, func(n *jsonschema.Schema) {
		if len(n.Types) == 2 && slices.Contains(n.Types, "null") && slices.Contains(n.Types, "array") {
			n.Types, n.Type = nil, "array"
		}
	})
}

// eachSchema calls f on root and every subschema below it.
func eachSchema(root *jsonschema.Schema, f func(*jsonschema.Schema)) {
	if root == nil {
		return
	}
	f(root)
	for _, k := range sortedKeys(root.Properties) {
		eachSchema(root.Properties[k], f)
	}
	for _, k := range sortedKeys(root.Defs) {
		eachSchema(root.Defs[k], f)
	}
	for _, k := range sortedKeys(root.Definitions) {
		eachSchema(root.Definitions[k], f)
	}
	eachSchema(root.Items, f)
	if !isFalse(root.AdditionalProperties) {
		eachSchema(root.AdditionalProperties, f)
	}
	for _, a := range root.AnyOf {
		eachSchema(a, f)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// isFalse reports whether s is the schema false ({"not": {}}).
func isFalse(s *jsonschema.Schema) bool {
	if s == nil || s.Not == nil || !reflect.ValueOf(*s.Not).IsZero() {
		return false
	}
	c := *s
	c.Not = nil
	return reflect.ValueOf(c).IsZero()
}

func validSchemaName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// decodeJSON decodes exactly one JSON value, numbers kept as json.Number.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not json: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("not json: text after the value")
	}
	return v, nil
}

// Keywords of a schema: the ones the wire compilers know, and annotations.
var (
	validated   = []string{"type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems", "enum", "const", "minLength", "maxLength", "pattern", "minimum", "maximum", "anyOf", "$ref"}
	annotations = []string{"title", "description", "default", "examples", "format", "$schema", "$id", "$comment", "$defs", "definitions"}
	jsonTypes   = []string{"object", "array", "string", "number", "integer", "boolean", "null"}
)

// check verifies what a built schema uses: keywords the wire compilers
// know and $refs into its own definitions (the library resolves any
// $ref; the compilers and normalize follow these only).
func (s *Schema) check(n *jsonschema.Schema, at string, seen map[*jsonschema.Schema]bool) error {
	if n == nil || seen[n] {
		return nil
	}
	seen[n] = true
	if isFalse(n) {
		return fmt.Errorf("%s: the false schema is not supported", at)
	}
	b, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	var keys map[string]json.RawMessage
	if string(b) != "true" { // the empty schema marshals as true
		if err := json.Unmarshal(b, &keys); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
	}
	for _, k := range sortedKeys(keys) {
		if !slices.Contains(validated, k) && !slices.Contains(annotations, k) {
			return fmt.Errorf("%s: keyword %q is not supported", at, k)
		}
	}
	for k, c := range map[string]*int{"minItems": n.MinItems, "maxItems": n.MaxItems, "minLength": n.MinLength, "maxLength": n.MaxLength} {
		if c != nil && *c < 0 {
			return fmt.Errorf("%s: %s: want a non-negative integer", at, k)
		}
	}
	if n.AnyOf != nil && len(n.AnyOf) == 0 {
		return fmt.Errorf("%s: anyOf: want a non-empty array", at)
	}
	if n.Ref != "" {
		if _, ok := s.defs[n.Ref]; !ok {
			return fmt.Errorf("%s: $ref %q: only #/$defs/NAME and #/definitions/NAME are supported", at, n.Ref)
		}
	}
	if n.Enum != nil && len(n.Enum) == 0 {
		return fmt.Errorf("%s: enum: want a non-empty array", at)
	}
	for _, t := range append([]string{n.Type}, n.Types...) {
		if t != "" && !slices.Contains(jsonTypes, t) {
			return fmt.Errorf("%s: type: unknown type %q", at, t)
		}
	}
	for _, k := range sortedKeys(n.Properties) {
		if err := s.check(n.Properties[k], at+"/properties/"+k, seen); err != nil {
			return err
		}
	}
	for _, k := range sortedKeys(n.Defs) {
		if err := s.check(n.Defs[k], at+"/$defs/"+k, seen); err != nil {
			return err
		}
	}
	for _, k := range sortedKeys(n.Definitions) {
		if err := s.check(n.Definitions[k], at+"/definitions/"+k, seen); err != nil {
			return err
		}
	}
	if err := s.check(n.Items, at+"/items", seen); err != nil {
		return err
	}
	if !isFalse(n.AdditionalProperties) {
		if err := s.check(n.AdditionalProperties, at+"/additionalProperties", seen); err != nil {
			return err
		}
	}
	for i, a := range n.AnyOf {
		if err := s.check(a, at+"/anyOf/"+strconv.Itoa(i), seen); err != nil {
			return err
		}
	}
	return nil
}

func types(n *jsonschema.Schema) []string {
	if n.Type != "" {
		return []string{n.Type}
	}
	return n.Types
}

// maxDepth stops a recursive $ref on a pathological document.
const maxDepth = 200

func typeName(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// short renders v as JSON for an error message, cut to a readable length.
func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip(string(b), 80)
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
