package tei

import (
	"cmp"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Patterns of section numbers. They are compiled once and never modified.
var (
	// A number as GROBID writes it in head/@n: "2", "2.1.", "A.1", "IV".
	reNumberAttr = regexp.MustCompile(`^[0-9A-Za-z]{1,6}(?:\.[0-9A-Za-z]{1,4}){0,5}$`)
	// A heading that is only a number: "2.2" (GROBID lost the title).
	reNumberOnly = regexp.MustCompile(`^(\d{1,3}(?:\.\d{1,3}){0,5})\.?$`)
	// A heading that starts with a number GROBID did not split off.
	reNumberLead = regexp.MustCompile(`^(\d{1,3}(?:\.\d{1,3}){0,5})\.?\s+(\S.*)$`)
	// An appendix heading that starts with its letter: "A Proof of ...",
	// "C.1 Soft Heading Recall", "A. Appendix".
	reLetterLead = regexp.MustCompile(`^([A-Z])((?:\.\d{1,3}){0,4})(\.?)\s+(\S.*)$`)
	// "Appendix A. Evaluation", "Appendix B: Prompts", "Appendix C".
	reAppendix = regexp.MustCompile(`(?i)^appendix\s+([A-Z](?:\.\d{1,3}){0,4})(?:[.:]\s*|\s+|$)(.*)$`)
	// Roman section numbers (IEEE style), I to XXXIX, and a heading that
	// starts with one: "II. RELATED WORK".
	reRoman     = regexp.MustCompile(`^X{0,3}(?:IX|IV|VI{0,3}|I{1,3})$|^X{1,3}$`)
	reRomanLead = regexp.MustCompile(`^([IVX]{1,6})\.\s+(\S.*)$`)
	// An IEEE subsection heading: "A. Dataset".
	reSubLead = regexp.MustCompile(`^([A-Z])\.\s+(\S.*)$`)
	// Headings of sections that stand at the top level even when they
	// carry no number: an unnumbered "Limitations" after "6 Conclusion"
	// is no subsection of the conclusion.
	reTopLevel = regexp.MustCompile(`(?i)^(?:introduction|related works?|background|conclusions?|concluding remarks|discussion|limitations?|ethics|ethics statement|ethical considerations?|ethical statement|broader impacts?|impact statement|acknowledge?ments?|references|bibliography|appendix|appendices|supplementary materials?|reproducibility statement|funding|author contributions?|competing interests?|conflicts? of interests?|data availability|code availability|declarations?)\b`)
)

// headInfo is what a section's head says.
type headInfo struct {
	number   string // as written, without a trailing period; "" when unnumbered
	heading  string
	appendix bool // the number is an appendix letter ("A", "C.1")
	// sub marks a lettered subsection of a Roman-numbered section, as
	// IEEE papers number them ("II. METHOD", then "A. Dataset").
	sub bool
}

// numbering reads the numbers of a document's heads in document order. It
// knows the top-level numbers seen so far, so that a heading that is only
// a number is taken for one only when it fits the sequence ("2" after
// "1", not "22" after "8", which is a stray table cell); which appendix
// letters occur, so that "A Proof of ..." counts as appendix A only when
// B (or an unambiguous "A.1") is there too; and whether the paper numbers
// its sections in Roman numerals, where "A." is a subsection.
type numbering struct {
	roman   bool
	maxTop  int
	letters map[byte]bool // letters that occur as appendix candidates
	sure    map[byte]bool // letters seen in an unambiguous form
}

func newNumbering(heads []*node) *numbering {
	nb := &numbering{letters: map[byte]bool{}, sure: map[byte]bool{}}
	for _, h := range heads {
		if h == nil {
			continue
		}
		n := strings.TrimRight(strings.TrimSpace(h.attr("n")), ".")
		text := plain(h)
		if len(n) >= 2 && romanValue(n) > 0 {
			nb.roman = true
		}
		if m := reRomanLead.FindStringSubmatch(text); m != nil && len(m[1]) >= 2 && romanValue(m[1]) > 0 {
			nb.roman = true
		}
		if n != "" {
			continue
		}
		if m := reAppendix.FindStringSubmatch(text); m != nil {
			nb.letters[m[1][0]], nb.sure[m[1][0]] = true, true
			continue
		}
		if m := reLetterLead.FindStringSubmatch(text); m != nil && opensHeading(m[4]) {
			l := m[1][0]
			nb.letters[l] = true
			if m[2] != "" || m[3] != "" {
				nb.sure[l] = true
			}
		}
	}
	return nb
}

// read returns the number and heading of one head, in document order.
func (nb *numbering) read(h *node) headInfo {
	if h == nil {
		return headInfo{}
	}
	text := plain(h)
	if n := strings.TrimRight(strings.TrimSpace(h.attr("n")), "."); n != "" && reNumberAttr.MatchString(n) {
		switch {
		case nb.roman && romanValue(n) > 0:
			return headInfo{number: n, heading: text}
		case nb.roman && len(n) == 1 && n[0] >= 'A' && n[0] <= 'Z':
			return headInfo{number: n, heading: text, sub: true}
		}
		nb.see(n)
		return headInfo{number: n, heading: text, appendix: isLetter(n)}
	}
	if m := reAppendix.FindStringSubmatch(text); m != nil {
		return headInfo{number: m[1], heading: cmp.Or(strings.TrimSpace(m[2]), text), appendix: true}
	}
	if nb.roman {
		if m := reRomanLead.FindStringSubmatch(text); m != nil && romanValue(m[1]) > 0 && opensHeading(m[2]) {
			return headInfo{number: m[1], heading: m[2]}
		}
		if m := reSubLead.FindStringSubmatch(text); m != nil && opensHeading(m[2]) {
			return headInfo{number: m[1], heading: m[2], sub: true}
		}
	}
	if m := reNumberOnly.FindStringSubmatch(text); m != nil && nb.plausible(m[1]) {
		nb.see(m[1])
		return headInfo{number: m[1]}
	}
	if m := reNumberLead.FindStringSubmatch(text); m != nil && opensHeading(m[2]) && nb.plausible(m[1]) {
		nb.see(m[1])
		return headInfo{number: m[1], heading: m[2]}
	}
	if m := reLetterLead.FindStringSubmatch(text); !nb.roman && m != nil && opensHeading(m[4]) && nb.confirmed(m[1][0]) {
		return headInfo{number: m[1] + m[2], heading: m[4], appendix: true}
	}
	return headInfo{heading: text}
}

// confirmed reports whether letter l is an appendix letter.
func (nb *numbering) confirmed(l byte) bool {
	return nb.sure[l] || nb.letters[l-1] || nb.letters[l+1]
}

// plausible reports whether a number read from heading text continues the
// document's numbering: its top-level part at most one past the highest
// seen so far.
func (nb *numbering) plausible(num string) bool {
	top, err := strconv.Atoi(strings.SplitN(num, ".", 2)[0])
	return err == nil && top >= 1 && top <= nb.maxTop+1
}

func (nb *numbering) see(num string) {
	if top, err := strconv.Atoi(strings.SplitN(num, ".", 2)[0]); err == nil {
		nb.maxTop = max(nb.maxTop, top)
	}
}

// opensHeading reports whether s can be the text after a section number:
// it starts with a capital letter, a digit or a quote.
func opensHeading(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r) || unicode.IsDigit(r) || r == '"' || r == '\u201c'
}

// isLetter reports whether a number's first part is an appendix letter.
func isLetter(num string) bool {
	first, _, _ := strings.Cut(num, ".")
	return len(first) == 1 && first[0] >= 'A' && first[0] <= 'Z'
}

// isPrefix reports whether number parent is a proper prefix of child, part
// by part: "2" of "2.1", "C" of "C.1.2".
func isPrefix(parent, child string) bool {
	return parent != "" && strings.HasPrefix(child, parent+".")
}

// topLevelHeading reports whether an unnumbered heading names a section
// that stands at the top level (see reTopLevel).
func topLevelHeading(h string) bool {
	return reTopLevel.MatchString(h) && len(strings.Fields(h)) <= 5
}

// romanValue returns the value of a Roman numeral from I to XXXIX, or 0.
func romanValue(s string) int {
	if s == "" || !reRoman.MatchString(s) {
		return 0
	}
	digit := func(c byte) int {
		switch c {
		case 'I':
			return 1
		case 'V':
			return 5
		}
		return 10
	}
	v := 0
	for i := 0; i < len(s); i++ {
		if d := digit(s[i]); i+1 < len(s) && d < digit(s[i+1]) {
			v -= d
		} else {
			v += d
		}
	}
	return v
}

// partValue returns the value of a number's last part for a section id:
// 3 for "2.3", 2 for "B" or "II"; 0 when it has none.
func partValue(num string, roman bool) int {
	last := num
	if i := strings.LastIndexByte(num, '.'); i >= 0 {
		last = num[i+1:]
	}
	if n, err := strconv.Atoi(last); err == nil && n > 0 {
		return n
	}
	if roman && !strings.Contains(num, ".") {
		if v := romanValue(last); v > 0 && (len(last) > 1 || last == "I" || last == "V" || last == "X") {
			return v
		}
	}
	if len(last) == 1 && last[0] >= 'A' && last[0] <= 'Z' {
		return int(last[0]-'A') + 1
	}
	return 0
}
