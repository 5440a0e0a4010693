package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

func parseNormalizer(raw json.RawMessage) (func(string) string, error) {
	if isNull(raw) {
		return func(s string) string { return s }, nil
	}
	typ, err := typed(raw)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "NFC":
		return norm.NFC.String, nil
	case "NFD":
		return norm.NFD.String, nil
	case "NFKC":
		return norm.NFKC.String, nil
	case "NFKD":
		return norm.NFKD.String, nil
	case "Lowercase":
		return strings.ToLower, nil
	case "Strip":
		var c struct {
			Left  bool `json:"strip_left"`
			Right bool `json:"strip_right"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("normalizer Strip: %w", err)
		}
		return func(s string) string {
			if c.Left {
				s = strings.TrimLeftFunc(s, unicode.IsSpace)
			}
			if c.Right {
				s = strings.TrimRightFunc(s, unicode.IsSpace)
			}
			return s
		}, nil
	case "Prepend":
		var c struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("normalizer Prepend: %w", err)
		}
		return func(s string) string {
			if s == "" {
				return s
			}
			return c.Prepend + s
		}, nil
	case "Replace":
		var c struct {
			Pattern struct {
				String *string `json:"String"`
				Regex  *string `json:"Regex"`
			} `json:"pattern"`
			Content string `json:"content"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("normalizer Replace: %w", err)
		}
		if c.Pattern.String != nil {
			old := *c.Pattern.String
			return func(s string) string { return strings.ReplaceAll(s, old, c.Content) }, nil
		}
		if c.Pattern.Regex == nil {
			return nil, errors.New("normalizer Replace: no pattern")
		}
		m, err := compilePattern(*c.Pattern.Regex)
		if err != nil {
			return nil, fmt.Errorf("normalizer Replace: %w", err)
		}
		return func(s string) string {
			var b strings.Builder
			last := 0
			for _, loc := range m.matches(s) {
				b.WriteString(s[last:loc[0]])
				b.WriteString(c.Content)
				last = loc[1]
			}
			b.WriteString(s[last:])
			return b.String()
		}, nil
	case "BertNormalizer":
		return bertNormalizer(raw)
	case "Sequence":
		var c struct {
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("normalizer Sequence: %w", err)
		}
		var fs []func(string) string
		for i, n := range c.Normalizers {
			f, err := parseNormalizer(n)
			if err != nil {
				return nil, fmt.Errorf("normalizer Sequence[%d]: %w", i, err)
			}
			fs = append(fs, f)
		}
		return func(s string) string {
			for _, f := range fs {
				s = f(s)
			}
			return s
		}, nil
	}
	return nil, fmt.Errorf("unsupported normalizer %q", typ)
}

// bertNormalizer is BERT's cleanup: control characters removed, white
// space made a plain space, CJK characters set apart, accents stripped and
// text lowercased as configured.
func bertNormalizer(raw json.RawMessage) (func(string) string, error) {
	var c struct {
		CleanText    bool  `json:"clean_text"`
		ChineseChars bool  `json:"handle_chinese_chars"`
		StripAccents *bool `json:"strip_accents"`
		Lowercase    bool  `json:"lowercase"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("normalizer BertNormalizer: %w", err)
	}
	strip := c.Lowercase // strip_accents null follows lowercase, as in BERT
	if c.StripAccents != nil {
		strip = *c.StripAccents
	}
	return func(s string) string {
		var b strings.Builder
		for _, r := range s {
			switch {
			case c.CleanText && (r == 0 || r == 0xFFFD || (unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r')):
				continue
			case c.CleanText && unicode.IsSpace(r):
				b.WriteByte(' ')
			case c.ChineseChars && isCJK(r):
				b.WriteByte(' ')
				b.WriteRune(r)
				b.WriteByte(' ')
			default:
				b.WriteRune(r)
			}
		}
		s = b.String()
		if strip {
			b.Reset()
			for _, r := range norm.NFD.String(s) {
				if !unicode.Is(unicode.Mn, r) {
					b.WriteRune(r)
				}
			}
			s = b.String()
		}
		if c.Lowercase {
			s = strings.ToLower(s)
		}
		return s
	}, nil
}

func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}
