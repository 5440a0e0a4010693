package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pretokenizer cuts a piece of text into smaller pieces.
type pretokenizer func(string) []string

// gpt2Pattern is the pre-tokenization regex of GPT-2's ByteLevel
// (use_regex: true).
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// parsePreTokenizer returns the pre-tokenizers in order and whether one of
// them is ByteLevel (the model then sees the byte-level alphabet).
func parsePreTokenizer(raw json.RawMessage) ([]pretokenizer, bool, error) {
	if isNull(raw) {
		return nil, false, nil
	}
	typ, err := typed(raw)
	if err != nil {
		return nil, false, err
	}
	switch typ {
	case "Sequence":
		var c struct {
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, false, fmt.Errorf("pre-tokenizer Sequence: %w", err)
		}
		var (
			out []pretokenizer
			bl  bool
		)
		for i, p := range c.PreTokenizers {
			ps, b, err := parsePreTokenizer(p)
			if err != nil {
				return nil, false, fmt.Errorf("pre-tokenizer Sequence[%d]: %w", i, err)
			}
			out, bl = append(out, ps...), bl || b
		}
		return out, bl, nil
	case "ByteLevel":
		var c struct {
			AddPrefixSpace bool  `json:"add_prefix_space"`
			UseRegex       *bool `json:"use_regex"` // absent: true
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, false, fmt.Errorf("pre-tokenizer ByteLevel: %w", err)
		}
		var split *pattern
		if c.UseRegex == nil || *c.UseRegex {
			if split, err = compilePattern(gpt2Pattern); err != nil {
				return nil, false, err
			}
		}
		return []pretokenizer{func(s string) []string {
			if c.AddPrefixSpace && !strings.HasPrefix(s, " ") {
				s = " " + s
			}
			if split == nil {
				return []string{s}
			}
			return isolate(s, split.matches(s), true)
		}}, true, nil
	case "Split":
		var c struct {
			Pattern struct {
				String *string `json:"String"`
				Regex  *string `json:"Regex"`
			} `json:"pattern"`
			Behavior string `json:"behavior"`
			Invert   bool   `json:"invert"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, false, fmt.Errorf("pre-tokenizer Split: %w", err)
		}
		if c.Invert {
			return nil, false, errors.New("pre-tokenizer Split: invert is not supported")
		}
		var src string
		switch {
		case c.Pattern.Regex != nil:
			src = *c.Pattern.Regex
		case c.Pattern.String != nil:
			src = regexp.QuoteMeta(*c.Pattern.String)
		default:
			return nil, false, errors.New("pre-tokenizer Split: no pattern")
		}
		m, err := compilePattern(src)
		if err != nil {
			return nil, false, fmt.Errorf("pre-tokenizer Split: %w", err)
		}
		var keep bool
		switch c.Behavior {
		case "Isolated":
			keep = true
		case "Removed":
		default:
			return nil, false, fmt.Errorf("pre-tokenizer Split: behavior %q is not supported", c.Behavior)
		}
		return []pretokenizer{func(s string) []string { return isolate(s, m.matches(s), keep) }}, false, nil
	case "Whitespace":
		word := regexp.MustCompile(`[\p{L}\p{N}\p{M}\p{Pc}]+|[^\p{L}\p{N}\p{M}\p{Pc}\s\x0B\x{85}\p{Z}]+`)
		return []pretokenizer{func(s string) []string { return word.FindAllString(s, -1) }}, false, nil
	case "WhitespaceSplit":
		return []pretokenizer{func(s string) []string { return strings.FieldsFunc(s, unicode.IsSpace) }}, false, nil
	case "Digits":
		var c struct {
			Individual bool `json:"individual_digits"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, false, fmt.Errorf("pre-tokenizer Digits: %w", err)
		}
		re := regexp.MustCompile(`\p{N}+`)
		if c.Individual {
			re = regexp.MustCompile(`\p{N}`)
		}
		return []pretokenizer{func(s string) []string {
			var locs [][2]int
			for _, l := range re.FindAllStringIndex(s, -1) {
				locs = append(locs, [2]int{l[0], l[1]})
			}
			return isolate(s, locs, true)
		}}, false, nil
	case "BertPreTokenizer":
		return []pretokenizer{bertPreTokenize}, false, nil
	}
	return nil, false, fmt.Errorf("unsupported pre-tokenizer %q", typ)
}

// isolate returns the gaps between matches and, when keep is set, the
// matches themselves, in order ("Isolated"; without keep, "Removed").
func isolate(s string, locs [][2]int, keep bool) []string {
	var out []string
	last := 0
	for _, l := range locs {
		if l[0] > last {
			out = append(out, s[last:l[0]])
		}
		if keep && l[1] > l[0] {
			out = append(out, s[l[0]:l[1]])
		}
		last = l[1]
	}
	if last < len(s) {
		out = append(out, s[last:])
	}
	return out
}

// bertPreTokenize splits on white space and sets every punctuation
// character apart.
func bertPreTokenize(s string) []string {
	var out []string
	start := -1
	flush := func(i int) {
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	for i, r := range s {
		switch {
		case unicode.IsSpace(r):
			flush(i)
		case isBertPunct(r):
			flush(i)
			out = append(out, string(r))
		default:
			if start < 0 {
				start = i
			}
		}
	}
	flush(len(s))
	return out
}

func isBertPunct(r rune) bool {
	return r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126 || unicode.IsPunct(r)
}

// pattern is a compiled Split regex.
type pattern struct {
	re *regexp.Regexp // the whole pattern, when it needs no emulation
	// With the \s+(?!\S) alternative emulated: the alternatives before it
	// and after it, each anchored (nil when there are none).
	before, after *regexp.Regexp
}

// lookahead is the one lookaround the tokenizers of current models use.
const lookahead = `\s+(?!\S)`

func compilePattern(src string) (*pattern, error) {
	alts, err := alternatives(src)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w", src, err)
	}
	at := -1
	for i, a := range alts {
		if a == lookahead {
			at = i
			continue
		}
		if strings.Contains(a, "(?=") || strings.Contains(a, "(?!") || strings.Contains(a, "(?<") {
			return nil, fmt.Errorf("regex %q: lookaround other than %s is not supported", src, lookahead)
		}
	}
	compile := func(alts []string, anchored bool) (*regexp.Regexp, error) {
		if len(alts) == 0 {
			return nil, nil
		}
		parts := make([]string, len(alts))
		for i, a := range alts {
			t, err := widenSpace(a)
			if err != nil {
				return nil, err
			}
			parts[i] = t
		}
		expr := "(?:" + strings.Join(parts, "|") + ")"
		if anchored {
			expr = "^" + expr
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("regex %q: %w", src, err)
		}
		return re, nil
	}
	p := &pattern{}
	if at < 0 {
		p.re, err = compile(alts, false)
		return p, err
	}
	if p.before, err = compile(alts[:at], true); err != nil {
		return nil, err
	}
	if p.after, err = compile(alts[at+1:], true); err != nil {
		return nil, err
	}
	return p, nil
}

// matches returns the non-overlapping matches of p in s, leftmost first.
func (p *pattern) matches(s string) [][2]int {
	var out [][2]int
	if p.re != nil {
		for _, l := range p.re.FindAllStringIndex(s, -1) {
			if l[1] > l[0] {
				out = append(out, [2]int{l[0], l[1]})
			}
		}
		return out
	}
	for i := 0; i < len(s); {
		n := p.matchAt(s[i:])
		if n == 0 {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			continue
		}
		out = append(out, [2]int{i, i + n})
		i += n
	}
	return out
}

// matchAt returns the length of the match anchored at the start of s, 0
// for none, trying the alternatives in order as a backtracking engine
// would.
func (p *pattern) matchAt(s string) int {
	if p.before != nil {
		if l := p.before.FindStringIndex(s); l != nil && l[1] > 0 {
			return l[1]
		}
	}
	// \s+(?!\S): the longest run of white space not followed by a
	// non-space, i.e. the whole run at the end of s, else the run less its
	// last character.
	end, last := 0, 0
	for end < len(s) {
		r, w := utf8.DecodeRuneInString(s[end:])
		if !unicode.IsSpace(r) {
			break
		}
		end, last = end+w, w
	}
	switch {
	case end == len(s) && end > 0:
		return end
	case end > last:
		return end - last
	}
	if p.after != nil {
		if l := p.after.FindStringIndex(s); l != nil {
			return l[1]
		}
	}
	return 0
}

// alternatives splits a regex at its top-level '|'.
func alternatives(src string) ([]string, error) {
	var out []string
	depth, class, start := 0, false, 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\':
			i++
		case class:
			if c == ']' {
				class = false
			}
		case c == '[':
			class = true
			if i+1 < len(src) && src[i+1] == '^' {
				i++
			}
			if i+1 < len(src) && src[i+1] == ']' {
				i++ // a literal ']' first in a class
			}
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return nil, errors.New("unbalanced parenthesis")
			}
		case c == '|' && depth == 0:
			out = append(out, src[start:i])
			start = i + 1
		}
	}
	if depth != 0 || class {
		return nil, errors.New("unbalanced parenthesis or bracket")
	}
	return append(out, src[start:]), nil
}

// Oniguruma's \s is Unicode white space; RE2's is ASCII. These stand in
// for \s inside and outside a character class.
const (
	spaceInClass = `\s\x0B\x{85}\p{Z}`
	space        = `[` + spaceInClass + `]`
	nonSpace     = `[^` + spaceInClass + `]`
)

// widenSpace rewrites \s and \S to Unicode white space.
func widenSpace(src string) (string, error) {
	var b strings.Builder
	class := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\\' && i+1 < len(src) {
			n := src[i+1]
			i++
			switch {
			case n == 's' && class:
				b.WriteString(spaceInClass)
			case n == 's':
				b.WriteString(space)
			case n == 'S' && class:
				return "", errors.New(`\S inside a character class is not supported`)
			case n == 'S':
				b.WriteString(nonSpace)
			default:
				b.WriteByte(c)
				b.WriteByte(n)
			}
			continue
		}
		switch {
		case !class && c == '[':
			class = true
			b.WriteByte(c)
			if i+1 < len(src) && src[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(src) && src[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
			continue
		case class && c == ']':
			class = false
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}

// byteRunes maps each byte to the printable character GPT-2's byte-level
// alphabet gives it.
var byteRunes = func() [256]rune {
	var m [256]rune
	n := 0
	for b := range 256 {
		switch {
		case b >= '!' && b <= '~', b >= 0xA1 && b <= 0xAC, b >= 0xAE && b <= 0xFF:
			m[b] = rune(b)
		default:
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}()

func toByteLevel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(byteRunes[s[i]])
	}
	return b.String()
}
