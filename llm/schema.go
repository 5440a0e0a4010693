package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Schema is a JSON schema an answer must conform to, under a name sent to
// the server with structured output.
//
// It supports the subset of JSON Schema that structured-output servers
// accept and stage schemas need: type (one or a list), properties,
// required, additionalProperties, items, minItems, maxItems, enum, const,
// minLength, maxLength, pattern, minimum, maximum, anyOf, and $ref into
// $defs or definitions. Annotations (title, description, default,
// examples, format, $schema, $id, $comment) are accepted and not checked.
// NewSchema rejects any other keyword, so a schema never looks enforced
// while part of it is silently ignored.
type Schema struct {
	name string
	raw  json.RawMessage // compact
	root *node
	defs map[string]*node
}

// NewSchema compiles schema under name (letters, digits, '_' and '-', as
// OpenAI requires).
func NewSchema(name string, schema []byte) (*Schema, error) {
	if !validSchemaName(name) {
		return nil, fmt.Errorf("compile schema %q: name must be 1-64 letters, digits, '_' or '-'", name)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, schema); err != nil {
		return nil, fmt.Errorf("compile schema %q: %w", name, err)
	}
	v, err := decodeJSON(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("compile schema %q: %w", name, err)
	}
	s := &Schema{name: name, raw: buf.Bytes(), defs: map[string]*node{}}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("compile schema %q: top level is not an object", name)
	}
	for _, key := range []string{"$defs", "definitions"} {
		defs, ok := top[key].(map[string]any)
		if !ok {
			if _, present := top[key]; present {
				return nil, fmt.Errorf("compile schema %q: %s is not an object", name, key)
			}
			continue
		}
		for dn, dv := range defs {
			n, err := compile(dv, "#/"+key+"/"+dn)
			if err != nil {
				return nil, fmt.Errorf("compile schema %q: %w", name, err)
			}
			s.defs["#/"+key+"/"+dn] = n
		}
	}
	if s.root, err = compile(top, "#"); err != nil {
		return nil, fmt.Errorf("compile schema %q: %w", name, err)
	}
	if err := s.checkRefs(s.root); err != nil {
		return nil, fmt.Errorf("compile schema %q: %w", name, err)
	}
	for _, n := range s.defs {
		if err := s.checkRefs(n); err != nil {
			return nil, fmt.Errorf("compile schema %q: %w", name, err)
		}
	}
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

// Name returns the schema's name.
func (s *Schema) Name() string { return s.name }

// JSON returns the schema as compact JSON.
func (s *Schema) JSON() json.RawMessage { return bytes.Clone(s.raw) }

// Validate checks a JSON document against the schema. The error names the
// first offending location as a JSON path ($.refs[2].labels).
func (s *Schema) Validate(doc json.RawMessage) error {
	v, err := decodeJSON(doc)
	if err != nil {
		return err
	}
	return s.validate(s.root, v, "$", 0)
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

// node is one compiled schema.
type node struct {
	types      []string // empty: any
	props      map[string]*node
	propOrder  []string
	required   []string
	addlFalse  bool
	addl       *node
	items      *node
	minItems   int // -1: none
	maxItems   int
	enum       []any
	constVal   any
	hasConst   bool
	minLen     int
	maxLen     int
	pattern    *regexp.Regexp
	minimum    *float64
	maximum    *float64
	anyOf      []*node
	ref        string
	ignoreSelf bool // true for the boolean schema true
}

var annotations = []string{"title", "description", "default", "examples", "format", "$schema", "$id", "$comment", "$defs", "definitions"}

func compile(v any, at string) (*node, error) {
	if b, ok := v.(bool); ok {
		if !b {
			// A false schema admits nothing; no stage needs it.
			return nil, fmt.Errorf("%s: the false schema is not supported", at)
		}
		return &node{ignoreSelf: true, minItems: -1, maxItems: -1, minLen: -1, maxLen: -1}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: schema is not an object", at)
	}
	n := &node{minItems: -1, maxItems: -1, minLen: -1, maxLen: -1}
	for k, kv := range m {
		var err error
		switch k {
		case "type":
			n.types, err = compileTypes(kv)
		case "properties":
			pm, ok := kv.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: properties is not an object", at)
			}
			n.props = make(map[string]*node, len(pm))
			for pn, pv := range pm {
				if n.props[pn], err = compile(pv, at+"/properties/"+pn); err != nil {
					return nil, err
				}
				n.propOrder = append(n.propOrder, pn)
			}
			slices.Sort(n.propOrder)
		case "required":
			n.required, err = stringList(kv)
		case "additionalProperties":
			if b, ok := kv.(bool); ok {
				n.addlFalse = !b
			} else {
				n.addl, err = compile(kv, at+"/additionalProperties")
			}
		case "items":
			n.items, err = compile(kv, at+"/items")
		case "minItems":
			n.minItems, err = nonNegInt(kv)
		case "maxItems":
			n.maxItems, err = nonNegInt(kv)
		case "minLength":
			n.minLen, err = nonNegInt(kv)
		case "maxLength":
			n.maxLen, err = nonNegInt(kv)
		case "enum":
			l, ok := kv.([]any)
			if !ok || len(l) == 0 {
				err = errors.New("want a non-empty array")
			}
			n.enum = l
		case "const":
			n.constVal, n.hasConst = kv, true
		case "pattern":
			s, ok := kv.(string)
			if !ok {
				err = errors.New("want a string")
				break
			}
			n.pattern, err = regexp.Compile(s)
		case "minimum", "maximum":
			num, ok := kv.(json.Number)
			if !ok {
				err = errors.New("want a number")
				break
			}
			f, ferr := num.Float64()
			if ferr != nil {
				err = ferr
				break
			}
			if k == "minimum" {
				n.minimum = &f
			} else {
				n.maximum = &f
			}
		case "anyOf":
			l, ok := kv.([]any)
			if !ok || len(l) == 0 {
				err = errors.New("want a non-empty array")
				break
			}
			for i, sub := range l {
				c, cerr := compile(sub, at+"/anyOf/"+strconv.Itoa(i))
				if cerr != nil {
					return nil, cerr
				}
				n.anyOf = append(n.anyOf, c)
			}
		case "$ref":
			s, ok := kv.(string)
			if !ok {
				err = errors.New("want a string")
			}
			n.ref = s
		default:
			if !slices.Contains(annotations, k) {
				return nil, fmt.Errorf("%s: keyword %q is not supported", at, k)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", at, k, err)
		}
	}
	return n, nil
}

var jsonTypes = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

func compileTypes(v any) ([]string, error) {
	if s, ok := v.(string); ok {
		v = []any{s}
	}
	l, err := stringList(v)
	if err != nil {
		return nil, err
	}
	for _, t := range l {
		if !slices.Contains(jsonTypes, t) {
			return nil, fmt.Errorf("unknown type %q", t)
		}
	}
	return l, nil
}

func stringList(v any) ([]string, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, errors.New("want an array of strings")
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, errors.New("want an array of strings")
		}
		out = append(out, s)
	}
	return out, nil
}

func nonNegInt(v any) (int, error) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, errors.New("want a non-negative integer")
	}
	i, err := strconv.Atoi(num.String())
	if err != nil || i < 0 {
		return 0, errors.New("want a non-negative integer")
	}
	return i, nil
}

func (s *Schema) checkRefs(n *node) error {
	if n == nil {
		return nil
	}
	if n.ref != "" {
		if _, ok := s.defs[n.ref]; !ok {
			return fmt.Errorf("$ref %q: only #/$defs/NAME and #/definitions/NAME are supported", n.ref)
		}
	}
	subs := []*node{n.addl, n.items}
	for _, p := range n.propOrder {
		subs = append(subs, n.props[p])
	}
	subs = append(subs, n.anyOf...)
	for _, c := range subs {
		if err := s.checkRefs(c); err != nil {
			return err
		}
	}
	return nil
}

// maxDepth stops a recursive $ref on a pathological document.
const maxDepth = 200

func (s *Schema) validate(n *node, v any, path string, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%s: nested deeper than %d", path, maxDepth)
	}
	if n.ignoreSelf {
		return nil
	}
	if n.ref != "" {
		if err := s.validate(s.defs[n.ref], v, path, depth+1); err != nil {
			return err
		}
	}
	if len(n.types) > 0 && !slices.ContainsFunc(n.types, func(t string) bool { return hasType(v, t) }) {
		return fmt.Errorf("%s: got %s, want %s", path, typeName(v), strings.Join(n.types, " or "))
	}
	if n.hasConst && !jsonEqual(v, n.constVal) {
		return fmt.Errorf("%s: got %s, want %s", path, short(v), short(n.constVal))
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return jsonEqual(v, e) }) {
		opts := make([]string, len(n.enum))
		for i, e := range n.enum {
			opts[i] = short(e)
		}
		return fmt.Errorf("%s: got %s, want one of %s", path, short(v), strings.Join(opts, ", "))
	}
	switch v := v.(type) {
	case map[string]any:
		for _, r := range n.required {
			if _, ok := v[r]; !ok {
				return fmt.Errorf("%s: missing required property %q", path, r)
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // report the same first error every time
		for _, k := range keys {
			sub, ok := n.props[k]
			switch {
			case ok:
			case n.addlFalse:
				return fmt.Errorf("%s: unexpected property %q", path, k)
			case n.addl != nil:
				sub = n.addl
			default:
				continue
			}
			if err := s.validate(sub, v[k], path+"."+k, depth+1); err != nil {
				return err
			}
		}
	case []any:
		if n.minItems >= 0 && len(v) < n.minItems {
			return fmt.Errorf("%s: %d items, want at least %d", path, len(v), n.minItems)
		}
		if n.maxItems >= 0 && len(v) > n.maxItems {
			return fmt.Errorf("%s: %d items, want at most %d", path, len(v), n.maxItems)
		}
		if n.items != nil {
			for i, e := range v {
				if err := s.validate(n.items, e, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
					return err
				}
			}
		}
	case string:
		l := len([]rune(v))
		if n.minLen >= 0 && l < n.minLen {
			return fmt.Errorf("%s: string of %d characters, want at least %d", path, l, n.minLen)
		}
		if n.maxLen >= 0 && l > n.maxLen {
			return fmt.Errorf("%s: string of %d characters, want at most %d", path, l, n.maxLen)
		}
		if n.pattern != nil && !n.pattern.MatchString(v) {
			return fmt.Errorf("%s: %s does not match pattern %q", path, short(v), n.pattern)
		}
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return fmt.Errorf("%s: number %s: %w", path, v, err)
		}
		if n.minimum != nil && f < *n.minimum {
			return fmt.Errorf("%s: %s is below the minimum %g", path, v, *n.minimum)
		}
		if n.maximum != nil && f > *n.maximum {
			return fmt.Errorf("%s: %s is above the maximum %g", path, v, *n.maximum)
		}
	}
	if len(n.anyOf) > 0 {
		var errs []string
		for _, sub := range n.anyOf {
			err := s.validate(sub, v, path, depth+1)
			if err == nil {
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("%s: matches none of anyOf: %s", path, strings.Join(errs, "; "))
	}
	return nil
}

func hasType(v any, t string) bool {
	switch v := v.(type) {
	case map[string]any:
		return t == "object"
	case []any:
		return t == "array"
	case string:
		return t == "string"
	case bool:
		return t == "boolean"
	case nil:
		return t == "null"
	case json.Number:
		if t == "number" {
			return true
		}
		if t == "integer" {
			f, err := v.Float64()
			return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
		}
	}
	return false
}

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
	case json.Number:
		if hasType(v, "integer") {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// jsonEqual compares decoded JSON values; numbers compare by value.
func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		fa, ea := a.Float64()
		fb, eb := bn.Float64()
		return ea == nil && eb == nil && fa == fb
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !jsonEqual(av, bv) {
				return false
			}
		}
		return true
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], bl[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
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
