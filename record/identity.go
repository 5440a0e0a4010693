package record

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/groundwork/curate/parse/arxiv"
)

// Key returns the store item of an arXiv paper: its versionless ID, so a
// paper that is a target in one instance and a source in another is one
// item, whatever version each named.
func Key(id arxiv.ID) string { return id.Canonical() }

// The identity rules: how papers are compared across the citation graph,
// the bibliography and the dataset's contamination check.

// latexAccents maps the letters of LaTeX accent commands (\"o, \'e, \^a,
// \`e, \~n, \=o, \.z, \u{g}, \v{s}, \H{o}, \c{c}, \k{a}, \r{a}) to nothing:
// the command is dropped and its letter kept, so "G\"{o}del" and "Gödel"
// both fold to "godel".
const latexAccentLetters = "\"'^`~=.uvHckr"

// NormalizeTitle folds a title for matching: LaTeX accent commands and
// braces removed, Unicode accents stripped, lower case, punctuation and
// math dropped, whitespace collapsed. "Attention Is All You Need!" and
// "attention is all you need" fold alike.
func NormalizeTitle(s string) string {
	s = stripLaTeX(s)
	var b strings.Builder
	b.Grow(len(s))
	space := true
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
			// combining accent: dropped
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(foldLetter(r)))
			space = false
		default:
			if !space {
				b.WriteByte(' ')
				space = true
			}
		}
	}
	return strings.TrimSpace(b.String())
}

// foldLetter maps letters NFD does not decompose to their ASCII look-alike.
func foldLetter(r rune) rune {
	switch r {
	case 'ø', 'Ø':
		return 'o'
	case 'ł', 'Ł':
		return 'l'
	case 'đ', 'Đ':
		return 'd'
	case 'ß':
		return 's'
	case 'æ', 'Æ':
		return 'a'
	case 'ı':
		return 'i'
	}
	return r
}

// stripLaTeX removes accent commands and grouping braces: \"{o} and \"o
// become o, \emph{x} becomes x, $...$ math is kept as text.
func stripLaTeX(s string) string {
	if !strings.ContainsAny(s, `\{}`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '{' || c == '}':
			continue
		case c == '\\' && i+1 < len(s):
			n := s[i+1]
			if strings.IndexByte(latexAccentLetters, n) >= 0 {
				// \"o, \'{e}, \v s: drop the command, keep the letter
				i++
				if n >= 'a' && n <= 'z' || n >= 'A' && n <= 'Z' {
					// letter commands (\u, \v, \H, \c, \k, \r) may be
					// followed by a space before their argument
					if i+1 < len(s) && s[i+1] == ' ' {
						i++
					}
				}
				continue
			}
			// \emph, \textit, ...: drop the command name
			j := i + 1
			for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			if j > i+1 {
				i = j - 1
				b.WriteByte(' ')
				continue
			}
			b.WriteByte(' ')
			i++ // an escaped symbol (\&, \%): dropped
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// NormalizeDOI lower-cases a DOI and strips resolver prefixes.
func NormalizeDOI(s string) string {
	s = strings.TrimSpace(strings.ToLower(s))
	for _, p := range []string{"https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi:"} {
		s = strings.TrimPrefix(s, p)
	}
	return strings.TrimRight(s, ".,;")
}
