package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// SchemaAnswer returns a JSON document valid against schema, the JSON
// Schema a request asks its answer to follow, as a model keeping to it
// would write one: every property, each value of its type within its
// bounds, one of its enum, a string matching its pattern; free strings are
// sentences of text (the paper a request is about), so that any string
// asked to be a quote of it is one. The same schema, text and seed give
// the same document. The answer is checked against the schema with the
// JSON Schema library before it is returned; a schema it cannot satisfy
// (an unsatisfiable pattern, contradictory bounds) is an error.
//
// It covers what curate's schemas and the providers' structured outputs
// use: type (one or a list), properties, required, additionalProperties,
// items, prefixItems, minItems, maxItems, uniqueItems, enum, const,
// minLength, maxLength, pattern, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, multipleOf, anyOf, oneOf, allOf (the first
// alternative that yields a valid value) and $ref into $defs or
// definitions.
func SchemaAnswer(schema json.RawMessage, text, seed string) (json.RawMessage, error) {
	root := new(jsonschema.Schema)
	if err := json.Unmarshal(schema, root); err != nil {
		return nil, fmt.Errorf("sim: answer schema: %w", err)
	}
	rs, err := root.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: false})
	if err != nil {
		return nil, fmt.Errorf("sim: answer schema: %w", err)
	}
	g := &answerGen{root: root, text: sentences(text), seed: seed, res: map[string]*jsonschema.Resolved{}}
	v, err := g.value(root, "$", 0)
	if err != nil {
		return nil, fmt.Errorf("sim: answer schema: %w", err)
	}
	var buf bytes.Buffer
	if err := writeOrdered(&buf, v); err != nil {
		return nil, err
	}
	var inst any
	if err := json.Unmarshal(buf.Bytes(), &inst); err != nil {
		return nil, err
	}
	if err := rs.Validate(inst); err != nil {
		return nil, fmt.Errorf("sim: the answer made for the schema breaks it: %w", err)
	}
	return buf.Bytes(), nil
}

// answerGen makes the values of one answer.
type answerGen struct {
	root *jsonschema.Schema
	text []string
	seed string
	res  map[string]*jsonschema.Resolved
}

// answerObject is a JSON object whose keys keep the order they were made
// in.
type answerObject struct {
	keys []string
	vals map[string]any
}

// draw returns a number in [0, n) fixed by the seed and what is drawn.
func (g *answerGen) draw(n int, what ...string) int {
	if n <= 1 {
		return 0
	}
	sum := sha256.Sum256([]byte(g.seed + "\x00" + strings.Join(what, "\x00")))
	return int(binary.LittleEndian.Uint64(sum[:]) % uint64(n))
}

const maxAnswerDepth = 32

func (g *answerGen) value(s *jsonschema.Schema, path string, depth int) (any, error) {
	if depth > maxAnswerDepth {
		return nil, fmt.Errorf("%s: nested deeper than %d", path, maxAnswerDepth)
	}
	if s == nil {
		return "", nil
	}
	if s.Ref != "" {
		d, err := g.def(s.Ref)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return g.value(d, path, depth+1)
	}
	if s.Const != nil {
		return *s.Const, nil
	}
	if len(s.Enum) > 0 {
		return s.Enum[g.draw(len(s.Enum), path, "enum")], nil
	}
	for _, alts := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf} {
		if len(alts) == 0 {
			continue
		}
		// The first alternative that is not null, then null: a model
		// answers the thing asked for when it may.
		order := slices.Clone(alts)
		slices.SortStableFunc(order, func(a, b *jsonschema.Schema) int { return boolInt(isNullSchema(a)) - boolInt(isNullSchema(b)) })
		var errs []error
		for _, a := range order {
			merged := merge(s, a)
			v, err := g.value(merged, path, depth+1)
			if err == nil && g.valid(merged, v) {
				return v, nil
			}
			errs = append(errs, err)
		}
		return nil, fmt.Errorf("%s: no alternative of anyOf/oneOf can be answered: %w", path, errors.Join(errs...))
	}
	if len(s.AllOf) > 0 {
		m := *s
		m.AllOf = nil
		for _, a := range s.AllOf {
			m = *merge(&m, a)
		}
		return g.value(&m, path, depth+1)
	}
	switch typeOf(s) {
	case "object":
		return g.object(s, path, depth)
	case "array":
		return g.array(s, path, depth)
	case "string":
		return g.str(s, path)
	case "integer":
		return g.number(s, path, true)
	case "number":
		return g.number(s, path, false)
	case "boolean":
		return true, nil
	case "null":
		return nil, nil
	}
	return "", nil
}

// valid reports whether v is valid against s, checked by the library.
func (g *answerGen) valid(s *jsonschema.Schema, v any) bool {
	c := *s
	c.Defs, c.Definitions = g.root.Defs, g.root.Definitions
	b, err := json.Marshal(&c)
	if err != nil {
		return false
	}
	rs, ok := g.res[string(b)]
	if !ok {
		var cp jsonschema.Schema
		if json.Unmarshal(b, &cp) != nil {
			return false
		}
		if rs, err = cp.Resolve(nil); err != nil {
			return false
		}
		g.res[string(b)] = rs
	}
	var buf bytes.Buffer
	if writeOrdered(&buf, v) != nil {
		return false
	}
	var inst any
	if json.Unmarshal(buf.Bytes(), &inst) != nil {
		return false
	}
	return rs.Validate(inst) == nil
}

func (g *answerGen) def(ref string) (*jsonschema.Schema, error) {
	for prefix, defs := range map[string]map[string]*jsonschema.Schema{"#/$defs/": g.root.Defs, "#/definitions/": g.root.Definitions} {
		if name, ok := strings.CutPrefix(ref, prefix); ok {
			if d := defs[name]; d != nil {
				return d, nil
			}
		}
	}
	if ref == "#" {
		return g.root, nil
	}
	return nil, fmt.Errorf("$ref %q names no definition", ref)
}

func (g *answerGen) object(s *jsonschema.Schema, path string, depth int) (any, error) {
	o := &answerObject{vals: map[string]any{}}
	keys := slices.Clone(s.Required)
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		sub, ok := s.Properties[k]
		if !ok {
			sub = s.AdditionalProperties
			if sub == nil || isFalseSchema(sub) {
				sub = &jsonschema.Schema{Type: "string"}
			}
		}
		v, err := g.value(sub, path+"."+k, depth+1)
		if err != nil {
			return nil, err
		}
		o.keys = append(o.keys, k)
		o.vals[k] = v
	}
	return o, nil
}

func (g *answerGen) array(s *jsonschema.Schema, path string, depth int) (any, error) {
	n := max(len(s.PrefixItems), 1)
	if s.MinItems != nil {
		n = max(n, *s.MinItems)
	}
	if s.MaxItems != nil {
		n = min(n, *s.MaxItems)
	}
	out := make([]any, 0, n)
	seen := map[string]bool{}
	for i := 0; len(out) < n; i++ {
		if i > 8*n+8 {
			return nil, fmt.Errorf("%s: cannot make %d distinct items", path, n)
		}
		item := s.Items
		if len(out) < len(s.PrefixItems) {
			item = s.PrefixItems[len(out)]
		}
		v, err := g.value(item, path+"["+strconv.Itoa(i)+"]", depth+1)
		if err != nil {
			return nil, err
		}
		if s.UniqueItems {
			var b bytes.Buffer
			writeOrdered(&b, v)
			if seen[b.String()] {
				continue
			}
			seen[b.String()] = true
		}
		out = append(out, v)
	}
	return out, nil
}

func (g *answerGen) str(s *jsonschema.Schema, path string) (any, error) {
	lo, hi := 0, math.MaxInt
	if s.MinLength != nil {
		lo = *s.MinLength
	}
	if s.MaxLength != nil {
		hi = *s.MaxLength
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return nil, fmt.Errorf("%s: pattern: %w", path, err)
		}
		for try := range 8 {
			v, err := g.matching(s.Pattern, path, try, lo)
			if err != nil {
				return nil, err
			}
			if n := utf8.RuneCountInString(v); n >= lo && n <= hi && re.MatchString(v) {
				return v, nil
			}
		}
		return nil, fmt.Errorf("%s: no string of %d to %d characters matching %q found", path, lo, hi, s.Pattern)
	}
	v := g.sentence(path, 0)
	for i := 1; utf8.RuneCountInString(v) < lo; i++ {
		v += " " + g.sentence(path, i)
	}
	return clipRunes(v, hi), nil
}

// sentence returns a sentence of the text, drawn for path.
func (g *answerGen) sentence(path string, i int) string {
	if len(g.text) == 0 {
		return "The answer."
	}
	return g.text[g.draw(len(g.text), path, strconv.Itoa(i))]
}

// clipRunes cuts s to at most n runes, at a word boundary when there is one.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n])
	if i := strings.LastIndexByte(cut, ' '); i > 0 && utf8.RuneCountInString(cut[:i]) >= n/2 {
		return cut[:i]
	}
	return cut
}

// matching makes a string matching pattern: each repetition as few times
// as it allows (once for + and {1,}), except that a repetition of any
// character is a sentence of the text; alternatives are drawn.
func (g *answerGen) matching(pattern, path string, try, minLen int) (string, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", fmt.Errorf("%s: pattern: %w", path, err)
	}
	var b strings.Builder
	n := 0
	var walk func(re *syntax.Regexp) error
	walk = func(re *syntax.Regexp) error {
		n++
		switch re.Op {
		case syntax.OpLiteral:
			b.WriteString(string(re.Rune))
		case syntax.OpCharClass:
			b.WriteRune(classRune(re.Rune, g.draw(len(re.Rune)/2, path, "class", strconv.Itoa(n), strconv.Itoa(try))))
		case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
			b.WriteByte('a')
		case syntax.OpCapture:
			return walk(re.Sub[0])
		case syntax.OpConcat:
			for _, s := range re.Sub {
				if err := walk(s); err != nil {
					return err
				}
			}
		case syntax.OpAlternate:
			return walk(re.Sub[g.draw(len(re.Sub), path, "alt", strconv.Itoa(n), strconv.Itoa(try))])
		case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
			lo := map[syntax.Op]int{syntax.OpStar: 0, syntax.OpPlus: 1, syntax.OpQuest: 0, syntax.OpRepeat: re.Min}[re.Op]
			if sub := re.Sub[0]; (sub.Op == syntax.OpAnyCharNotNL || sub.Op == syntax.OpAnyChar) && (re.Op != syntax.OpRepeat || re.Max < 0) {
				// Free text: a sentence, as long as minLen asks.
				s := g.sentence(path, try)
				for i := 1; utf8.RuneCountInString(s) < max(lo, minLen-b.Len()); i++ {
					s += " " + g.sentence(path, try+i)
				}
				b.WriteString(strings.ReplaceAll(s, "\n", " "))
				return nil
			}
			if try > 0 && re.Op != syntax.OpQuest && (re.Max < 0 || re.Max > lo) {
				lo++ // a later try repeats once more
			}
			for range lo {
				if err := walk(re.Sub[0]); err != nil {
					return err
				}
			}
		case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
			syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		default:
			return fmt.Errorf("%s: pattern %q: cannot make a string for %s", path, pattern, re.Op)
		}
		return nil
	}
	if err := walk(re); err != nil {
		return "", err
	}
	return b.String(), nil
}

// classRune picks a rune of a character class given as ranges: a letter
// or digit when the ranges hold one, else the low end of range i.
func classRune(ranges []rune, i int) rune {
	for j := 0; j+1 < len(ranges); j += 2 {
		for _, c := range []rune{'a', 'A', '0', ' '} {
			if ranges[j] <= c && c <= ranges[j+1] {
				return c
			}
		}
	}
	if len(ranges) < 2 {
		return 'a'
	}
	return ranges[2*min(i, len(ranges)/2-1)]
}

func (g *answerGen) number(s *jsonschema.Schema, path string, integer bool) (any, error) {
	lo, hi := math.Inf(-1), math.Inf(1)
	loOpen, hiOpen := false, false
	if s.Minimum != nil {
		lo = *s.Minimum
	}
	if s.ExclusiveMinimum != nil && *s.ExclusiveMinimum >= lo {
		lo, loOpen = *s.ExclusiveMinimum, true
	}
	if s.Maximum != nil {
		hi = *s.Maximum
	}
	if s.ExclusiveMaximum != nil && *s.ExclusiveMaximum <= hi {
		hi, hiOpen = *s.ExclusiveMaximum, true
	}
	in := func(v float64) bool { return (v > lo || !loOpen && v == lo) && (v < hi || !hiOpen && v == hi) }
	step := 0.0
	if integer {
		step = 1
	}
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		step = *s.MultipleOf
	}
	var v float64
	switch {
	case step > 0:
		// The least multiple in range, or the one nearest 1 when unbounded.
		base := 1.0
		if !math.IsInf(lo, -1) {
			base = lo
		} else if !math.IsInf(hi, 1) {
			base = math.Min(hi, 1)
		}
		v = math.Ceil(base/step) * step
		if !in(v) {
			v += step
		}
		if integer && v != math.Trunc(v) {
			return nil, fmt.Errorf("%s: no integer multiple of %g", path, step)
		}
	case !math.IsInf(lo, -1) && !math.IsInf(hi, 1):
		v = lo + (hi-lo)/2
	case !math.IsInf(lo, -1):
		v = lo + boolFloat(loOpen)
	case !math.IsInf(hi, 1):
		v = hi - boolFloat(hiOpen)
	default:
		v = 1
	}
	if !in(v) {
		return nil, fmt.Errorf("%s: no number between %g and %g", path, lo, hi)
	}
	if integer {
		return int64(v), nil
	}
	return v, nil
}

func boolFloat(b bool) float64 { return float64(boolInt(b)) }

// typeOf returns the type a value of s is made as: its type, or the first
// of its types that is not null, or what its keywords suggest.
func typeOf(s *jsonschema.Schema) string {
	if s.Type != "" {
		return s.Type
	}
	for _, t := range s.Types {
		if t != "null" {
			return t
		}
	}
	if len(s.Types) > 0 {
		return "null"
	}
	switch {
	case s.Properties != nil || s.Required != nil:
		return "object"
	case s.Items != nil || s.PrefixItems != nil:
		return "array"
	case s.Pattern != "" || s.MinLength != nil || s.MaxLength != nil:
		return "string"
	case s.Minimum != nil || s.Maximum != nil:
		return "number"
	}
	return "string"
}

func isNullSchema(s *jsonschema.Schema) bool {
	return s != nil && (s.Type == "null" || len(s.Types) == 1 && s.Types[0] == "null")
}

// isFalseSchema reports whether s is the schema false ({"not": {}}).
func isFalseSchema(s *jsonschema.Schema) bool {
	return s != nil && s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// merge returns s with the keywords of alt over it, the alternatives
// dropped: the schema a value of one alternative meets.
func merge(s, alt *jsonschema.Schema) *jsonschema.Schema {
	base, _ := json.Marshal(s)
	var m map[string]json.RawMessage
	json.Unmarshal(base, &m)
	delete(m, "anyOf")
	delete(m, "oneOf")
	delete(m, "allOf")
	over, _ := json.Marshal(alt)
	var o map[string]json.RawMessage
	json.Unmarshal(over, &o)
	for k, v := range o {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	out := new(jsonschema.Schema)
	json.Unmarshal(b, out)
	return out
}

// sentences splits text into its sentences (what ends at ". ", "? ", "!
// " or a line end), trimmed, dropping the empty ones and the ones too
// short to say anything.
func sentences(text string) []string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		rest := strings.TrimSpace(line)
		for rest != "" {
			i := strings.IndexAny(rest, ".?!")
			for i >= 0 && i+1 < len(rest) && rest[i+1] != ' ' {
				j := strings.IndexAny(rest[i+1:], ".?!")
				if j < 0 {
					i = -1
					break
				}
				i += 1 + j
			}
			s := rest
			if i >= 0 {
				s, rest = rest[:i+1], strings.TrimSpace(rest[i+1:])
			} else {
				rest = ""
			}
			if s = strings.TrimSpace(s); utf8.RuneCountInString(s) >= 12 {
				out = append(out, s)
			}
		}
	}
	return out
}

// writeOrdered writes v as JSON, an object's keys in the order made.
func writeOrdered(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case *answerObject:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			if err := writeOrdered(b, v.vals[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeOrdered(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		e, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(e)
	}
	return nil
}
