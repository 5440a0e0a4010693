package paperprompt

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// EstimateTokens is the token estimate the whole pipeline uses: four bytes
// a token.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

// Sentences splits text into sentences at ".", "!" or "?" followed by space
// and a capital, digit, bracket or quote, except after common
// abbreviations ("et al.", "e.g.", "Fig.") and initials.
func Sentences(text string) []string {
	text = strings.Join(strings.Fields(text), " ")
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		if i+2 >= len(text) || text[i+1] != ' ' {
			continue
		}
		next, _ := utf8.DecodeRuneInString(text[i+2:])
		if !unicode.IsUpper(next) && !unicode.IsDigit(next) && !strings.ContainsRune("([\"'“\\", next) {
			continue
		}
		if c == '.' && abbreviation(lastWord(text[start:i])) {
			continue
		}
		if s := strings.TrimSpace(text[start : i+1]); s != "" {
			out = append(out, s)
		}
		start = i + 2
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

func lastWord(s string) string {
	if i := strings.LastIndexAny(s, " ("); i >= 0 {
		return s[i+1:]
	}
	return s
}

// abbreviation reports whether a word followed by "." is an abbreviation
// or an initial rather than a sentence end.
func abbreviation(w string) bool {
	if utf8.RuneCountInString(w) == 1 {
		r, _ := utf8.DecodeRuneInString(w)
		return unicode.IsUpper(r)
	}
	switch strings.ToLower(w) {
	case "al", "e.g", "i.e", "fig", "figs", "eq", "eqs", "sec", "secs", "vs", "cf", "resp",
		"approx", "no", "ref", "refs", "tab", "dr", "prof", "mr", "ms", "st", "vol", "pp",
		"ch", "ca", "thm", "def", "lem", "prop", "cor", "app", "appx", "viz", "nos", "eqn":
		return true
	}
	return false
}
