// Package arxiv knows arXiv identifiers: which strings are valid IDs, how
// they split into parts, and which year and month a paper entered arXiv.
package arxiv

import (
	"fmt"
	"strconv"
	"strings"
)

// ID is a validated arXiv identifier.
//
// New-style IDs (April 2007 on) are YYMM.NNNN (to 1412) or YYMM.NNNNN (from
// 1501); old-style IDs are archive[.SUBJ]/YYMMNNN (1991 to March 2007). Both
// may carry a version suffix vN.
type ID struct {
	Archive string // old style only: "hep-th", "math", "astro-ph"
	Subject string // old style only, optional: "GT" in "math.GT/0309136"
	YYMM    string
	Number  string
	Version int // 0 when the ID names no version
}

// Parse validates s as an arXiv identifier. It accepts an optional "arXiv:"
// prefix and surrounding whitespace, and rejects anything else, naming s.
func Parse(s string) (ID, error) {
	in := s
	s = strings.TrimSpace(s)
	if len(s) > 6 && strings.EqualFold(s[:6], "arxiv:") {
		s = s[6:]
	}
	if s == "" {
		return ID{}, fmt.Errorf("parse arxiv id %q: empty", in)
	}
	var id ID
	var err error
	if slash := strings.IndexByte(s, '/'); slash >= 0 {
		id, err = parseOld(s[:slash], s[slash+1:])
	} else {
		id, err = parseNew(s)
	}
	if err != nil {
		return ID{}, fmt.Errorf("parse arxiv id %q: %w", in, err)
	}
	return id, nil
}

func parseNew(s string) (ID, error) {
	dot := strings.IndexByte(s, '.')
	if dot != 4 {
		return ID{}, fmt.Errorf("want YYMM.NNNNN, YYMM.NNNN or archive/YYMMNNN")
	}
	yymm, rest := s[:4], s[5:]
	if !digits(yymm) {
		return ID{}, fmt.Errorf("year-month %q is not four digits", yymm)
	}
	num, version, err := splitVersion(rest)
	if err != nil {
		return ID{}, err
	}
	if !digits(num) {
		return ID{}, fmt.Errorf("number %q is not digits", num)
	}
	yy, _ := strconv.Atoi(yymm[:2])
	mm, _ := strconv.Atoi(yymm[2:])
	if mm < 1 || mm > 12 {
		return ID{}, fmt.Errorf("month %02d out of range", mm)
	}
	// The new scheme began in April 2007 (0704); four-digit numbers run to
	// 1412 and five-digit ones start with 1501.
	ym := yy*100 + mm
	if ym < 704 {
		return ID{}, fmt.Errorf("new-style ids start in 0704, got %s", yymm)
	}
	want := 5
	if ym <= 1412 {
		want = 4
	}
	if len(num) != want {
		return ID{}, fmt.Errorf("number %q: ids from %s have %d digits", num, yymm, want)
	}
	return ID{YYMM: yymm, Number: num, Version: version}, nil
}

func parseOld(archive, rest string) (ID, error) {
	var subject string
	if dot := strings.IndexByte(archive, '.'); dot >= 0 {
		archive, subject = archive[:dot], archive[dot+1:]
		if len(subject) < 2 || !letters(subject, true) {
			return ID{}, fmt.Errorf("subject class %q is not letters", subject)
		}
	}
	if !validArchive(archive) {
		return ID{}, fmt.Errorf("archive %q is not a lowercase arXiv archive name", archive)
	}
	num, version, err := splitVersion(rest)
	if err != nil {
		return ID{}, err
	}
	if len(num) != 7 || !digits(num) {
		return ID{}, fmt.Errorf("old-style number %q is not YYMMNNN", num)
	}
	yy, _ := strconv.Atoi(num[:2])
	mm, _ := strconv.Atoi(num[2:4])
	if mm < 1 || mm > 12 {
		return ID{}, fmt.Errorf("month %02d out of range", mm)
	}
	// Old-style ids ran from 9107 to 0703.
	if (yy < 91 && yy > 7) || (yy == 91 && mm < 7) || (yy == 7 && mm > 3) {
		return ID{}, fmt.Errorf("old-style ids run from 9107 to 0703, got %s", num[:4])
	}
	return ID{Archive: archive, Subject: subject, YYMM: num[:4], Number: num[4:], Version: version}, nil
}

// splitVersion splits "12345v2" into "12345" and 2.
func splitVersion(s string) (string, int, error) {
	v := strings.IndexByte(s, 'v')
	if v < 0 {
		return s, 0, nil
	}
	n, err := strconv.Atoi(s[v+1:])
	if err != nil || n < 1 || s[v+1] == '0' || !digits(s[v+1:]) {
		return "", 0, fmt.Errorf("version %q: want v1 or higher", s[v:])
	}
	return s[:v], n, nil
}

func validArchive(a string) bool {
	// archive names: letters, optionally one hyphenated part ("hep-th",
	// "cond-mat", "astro-ph", "q-alg", "chao-dyn").
	if a == "" {
		return false
	}
	parts := strings.Split(a, "-")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || !letters(p, false) {
			return false
		}
	}
	return true
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func letters(s string, upperOK bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
		case upperOK && c >= 'A' && c <= 'Z':
		case upperOK && c == '-':
		default:
			return false
		}
	}
	return s != ""
}

// OldStyle reports whether id uses the pre-2007 archive/YYMMNNN scheme.
func (id ID) OldStyle() bool { return id.Archive != "" }

// String returns the ID as arXiv writes it, with its version if it has one.
func (id ID) String() string {
	s := id.Base()
	if id.Version > 0 {
		s += "v" + strconv.Itoa(id.Version)
	}
	return s
}

// Base returns the ID without version. Old-style IDs keep their subject
// class, as arXiv's own URLs do.
func (id ID) Base() string {
	if id.OldStyle() {
		a := id.Archive
		if id.Subject != "" {
			a += "." + id.Subject
		}
		return a + "/" + id.YYMM + id.Number
	}
	return id.YYMM + "." + id.Number
}

// Canonical returns the versionless ID in its preferred external form: old
// style without the subject class ("math/0309136"), new style unchanged. Use
// it to compare identities of papers.
func (id ID) Canonical() string {
	if id.OldStyle() {
		return id.Archive + "/" + id.YYMM + id.Number
	}
	return id.YYMM + "." + id.Number
}

// Year returns the year the paper entered arXiv, from its ID.
func (id ID) Year() int {
	yy, _ := strconv.Atoi(id.YYMM[:2])
	if id.OldStyle() && yy >= 91 {
		return 1900 + yy
	}
	return 2000 + yy
}

// Month returns the month (1-12) the paper entered arXiv, from its ID.
func (id ID) Month() int {
	mm, _ := strconv.Atoi(id.YYMM[2:])
	return mm
}

// FileName returns a name for id that is safe as one path element on every
// file system: the old-style slash becomes "_" (which no ID contains).
func (id ID) FileName() string {
	return strings.ReplaceAll(id.String(), "/", "_")
}

// Normalize returns the canonical versionless form of s when s is an arXiv
// ID, and "" otherwise. It is the identity used to compare papers.
func Normalize(s string) string {
	id, err := Parse(s)
	if err != nil {
		return ""
	}
	return id.Canonical()
}
