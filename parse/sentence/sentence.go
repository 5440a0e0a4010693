// Package sentence splits a paper's text into sentences the way its
// parsers find citing sentences: one rule for the page parser, the TEI
// parser, the injection scan and the idea tuples' claims. It imports
// nothing of the module, so every layer may use it.
package sentence

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// abbreviations that end with a period without ending a sentence. Lower
// case; matched against the word before the period.
var abbreviations = map[string]bool{
	"al": true, "e.g": true, "i.e": true, "etc": true, "cf": true, "vs": true, "viz": true,
	"resp": true, "approx": true, "ca": true, "fig": true, "figs": true, "eq": true,
	"eqs": true, "eqn": true, "eqns": true, "sec": true, "secs": true, "sect": true,
	"ref": true, "refs": true, "tab": true, "tbl": true, "no": true, "nos": true,
	"vol": true, "pp": true, "p": true, "ch": true, "chap": true, "app": true,
	"appx": true, "def": true, "defn": true, "thm": true, "prop": true, "lem": true,
	"cor": true, "alg": true, "dr": true, "mr": true, "mrs": true, "ms": true,
	"prof": true, "st": true, "jr": true, "sr": true, "inc": true, "ltd": true,
	"co": true, "corp": true, "dept": true, "univ": true, "est": true, "avg": true,
	"max": true, "min": true, "std": true, "var": true, "w.r.t": true, "a.k.a": true,
	"u.s": true, "ph.d": true, "op": true, "cit": true, "ibid": true, "ed": true,
	"eds": true, "rev": true, "phys": true, "lett": true, "proc": true, "conf": true,
}

// Bounds splits text into sentences and returns their [start, end) byte
// ranges (trimmed). cites are the [start, end) ranges of the citations in
// text, in order: no boundary falls inside one, and a citation that
// directly follows a sentence's final period ("... known.[12] Next")
// belongs to that sentence.
func Bounds(text string, cites [][2]int) [][2]int {
	var out [][2]int
	start := 0
	ci := 0 // first citation not ending before i
	n := len(text)
	for i := 0; i < n; i++ {
		for ci < len(cites) && cites[ci][1] <= i {
			ci++
		}
		if ci < len(cites) && cites[ci][0] <= i && i < cites[ci][1] {
			i = cites[ci][1] - 1 // skip the citation
			continue
		}
		c := text[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		end := i + 1
		// Closing quotes and brackets belong to the sentence they close.
		for end < n && strings.IndexByte(")]\"'", text[end]) >= 0 {
			end++
		}
		if end < n && strings.HasPrefix(text[end:], "\u201d") {
			end += len("\u201d")
		}
		if end < n && strings.HasPrefix(text[end:], "\u2019") {
			end += len("\u2019")
		}
		// A citation right after the period is part of this sentence.
		j := end
		for j < n && text[j] == ' ' {
			j++
		}
		for k := ci; k < len(cites); k++ {
			if cites[k][0] == j && cites[k][1] > j {
				// "[1] leaves open ..." makes the citation the subject of
				// the next sentence; "known. [1] Next" ends this one.
				after := cites[k][1]
				for after < n && text[after] == ' ' {
					after++
				}
				if after < n && startsLower(text[after:]) {
					break
				}
				end = cites[k][1]
				j = after
				ci = k + 1
				continue
			}
			if cites[k][0] > j {
				break
			}
		}
		if end < n && text[end] != ' ' {
			continue // "3.5", "e.g.,", "arXiv.org"
		}
		if j < n && !startsSentence(text[j:]) {
			continue
		}
		if c == '.' && !periodEnds(text[:i]) {
			continue
		}
		out = appendTrimmed(out, text, start, end)
		start = end
		i = end - 1
	}
	return appendTrimmed(out, text, start, n)
}

func appendTrimmed(out [][2]int, text string, s, e int) [][2]int {
	for s < e && text[s] == ' ' {
		s++
	}
	for e > s && (text[e-1] == ' ' || text[e-1] == '\n') {
		e--
	}
	if e > s {
		out = append(out, [2]int{s, e})
	}
	return out
}

// startsLower reports whether s begins with a lower-case letter.
func startsLower(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLower(r)
}

// startsSentence reports whether s can open a sentence: an upper-case
// letter, a digit, an opening bracket or quote, or math/TeX.
func startsSentence(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	switch {
	case unicode.IsUpper(r), unicode.IsDigit(r), unicode.IsTitle(r):
		return true
	case strings.ContainsRune("([\"'\u201c\u2018\\$", r):
		return true
	case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
		return true
	}
	return false
}

// periodEnds reports whether a period after before ends a sentence, i.e.
// the word before it is not an abbreviation or an initial.
func periodEnds(before string) bool {
	k := len(before)
	for k > 0 {
		r, size := utf8.DecodeLastRuneInString(before[:k])
		if r == ' ' || r == '(' || r == '[' || r == '\n' {
			break
		}
		k -= size
	}
	word := before[k:]
	if word == "" {
		return true
	}
	// A single letter before the period is an initial ("J. Smith") or an
	// enumerator; neither ends a sentence.
	if r, size := utf8.DecodeRuneInString(word); size == len(word) && unicode.IsLetter(r) {
		return false
	}
	if abbreviations[strings.ToLower(word)] {
		return false
	}
	return !initials(word)
}

// initials reports whether word is a run of initials such as "I.I", "M.P"
// or "O.Yu" (the final period already cut off).
func initials(word string) bool {
	if !strings.Contains(word, ".") {
		return false
	}
	for _, part := range strings.Split(word, ".") {
		r, size := utf8.DecodeRuneInString(part)
		if part == "" || utf8.RuneCountInString(part) > 2 || !unicode.IsUpper(r) {
			return false
		}
		_ = size
	}
	return true
}

// StartsLower reports whether s begins with a lower-case letter: a piece
// that goes on the sentence before it.
func StartsLower(s string) bool { return startsLower(s) }

// PeriodEnds reports whether a period after before ends a sentence: the
// word before it is no abbreviation and no initial.
func PeriodEnds(before string) bool { return periodEnds(before) }
