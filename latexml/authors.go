package latexml

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// authors returns the author names of an .ltx_authors block. LaTeXML keeps
// names, affiliations and e-mails together in one personname when a class
// writes "Name \\ Affiliation \And Name ...", so the names are the first
// line of each "&"/"\And"-separated block; bold name spans win when present.
func authors(block *html.Node) []string {
	creators := findAll(nil, block, func(x *html.Node) bool {
		return hasClass(x, "ltx_creator") && !hasClass(x, "ltx_role_editor")
	})
	if len(creators) == 0 {
		creators = []*html.Node{block}
	}
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, c := range creators {
		pn := find(c, func(x *html.Node) bool { return hasClass(x, "ltx_personname") })
		if pn == nil {
			pn = c
		}
		for _, n := range personNames(pn) {
			add(n)
		}
	}
	return names
}

// personNames extracts the names inside one ltx_personname.
func personNames(pn *html.Node) []string {
	bold := findAll(nil, pn, func(x *html.Node) bool { return hasClass(x, "ltx_font_bold") })
	var names []string
	if len(bold) > 0 {
		for _, b := range bold {
			for _, line := range strings.Split(authorText(b), "\n") {
				names = append(names, splitNames(line)...)
			}
		}
		if len(names) > 0 {
			return names
		}
	}
	text := authorText(pn)
	for _, blk := range strings.Split(text, "&") {
		for _, line := range strings.Split(blk, "\n") {
			if strings.TrimSpace(strings.Trim(line, ";,")) == "" {
				continue
			}
			names = append(names, splitNames(line)...)
			break // only the first line of a block holds names
		}
	}
	return names
}

// authorText renders an author block with line breaks kept, "\And"
// separators turned into "&", affiliation marks (sup) into ";" and e-mail
// addresses dropped.
func authorText(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
		default:
			return
		}
		switch n.DataAtom {
		case atom.Br:
			b.WriteByte('\n')
			return
		case atom.Sup:
			b.WriteByte(';')
			return
		case atom.Math:
			b.WriteString(strings.ReplaceAll(attr(n, "alttext"), "&", " and "))
			return
		case atom.Script, atom.Style:
			return
		}
		switch {
		case hasClass(n, "ltx_ERROR"):
			if t := strings.ToLower(strings.TrimSpace(plainTextRaw(n))); t == `\and` {
				b.WriteString("\n&\n")
			}
			return
		case hasClass(n, "ltx_note"), hasClass(n, "ltx_font_typewriter"), hasClass(n, "ltx_author_notes"),
			hasClass(n, "ltx_contact"):
			b.WriteByte(';')
			return
		}
		if strings.HasPrefix(attr(n, "href"), "mailto:") && strings.Contains(plainTextRaw(n), "@") {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
		if isBlock(n.DataAtom) {
			b.WriteByte('\n')
		}
	}
	rec(n)
	return b.String()
}

// plainTextRaw concatenates the text nodes under n.
func plainTextRaw(n *html.Node) string {
	var b strings.Builder
	walk(n, func(x *html.Node) bool {
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
		}
		return true
	})
	return b.String()
}

// institutionWords mark an affiliation rather than a person (whole words,
// lower case); institutionParts do so anywhere in the text.
var institutionWords = map[string]bool{
	"university": true, "department": true, "dept": true, "institute": true, "school": true,
	"college": true, "lab": true, "labs": true, "inc": true, "ltd": true, "llc": true, "gmbh": true,
	"corporation": true, "corp": true, "company": true, "center": true, "centre": true, "faculty": true,
	"research": true, "google": true, "microsoft": true, "meta": true, "openai": true, "deepmind": true,
	"academy": true, "hospital": true, "foundation": true, "group": true, "brain": true, "ai": true,
	"email": true, "e-mail": true, "corresponding": true, "author": true, "authors": true,
	"contribution": true, "equal": true, "usa": true, "uk": true, "china": true, "abstract": true,
}

var institutionParts = []string{"universit", "laborator", "institut", "@", "http", "www."}

// splitNames splits one line of names ("A, B and C", "A; B") into names,
// dropping pieces that do not look like a person's name.
func splitNames(line string) []string {
	line = strings.NewReplacer(" and ", ";", ",", ";", "\u2003", ";", "\u2002", ";", "  ", ";", "\u00a0\u00a0", ";").Replace(line)
	var out []string
	for _, piece := range strings.Split(line, ";") {
		name := cleanName(piece)
		if name != "" && looksLikeName(name) {
			out = append(out, name)
		}
	}
	return out
}

func cleanName(s string) string {
	s = collapse(s)
	trim := func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsDigit(r) || strings.ContainsRune("*∗†‡§¶⋆✉,;:&()[]{}\"·", r)
	}
	s = strings.TrimFunc(s, trim)
	s = strings.TrimPrefix(s, "and ")
	return strings.TrimFunc(s, trim)
}

// looksLikeName reports whether s is plausibly a person's name: one to six
// words, letters (and initials, hyphens, apostrophes), capitalised apart
// from name particles, no digits and no institution words.
func looksLikeName(s string) bool {
	if s == "" || utf8.RuneCountInString(s) > 60 {
		return false
	}
	low := strings.ToLower(s)
	for _, w := range institutionParts {
		if strings.Contains(low, w) {
			return false
		}
	}
	for _, w := range strings.Fields(low) {
		if institutionWords[strings.Trim(w, ".,;:()")] {
			return false
		}
	}
	words := strings.Fields(s)
	if len(words) > 6 {
		return false
	}
	caps := 0
	for _, w := range words {
		r, _ := utf8.DecodeRuneInString(w)
		switch {
		case unicode.IsUpper(r):
			caps++
		case particles[strings.ToLower(w)]:
		default:
			return false
		}
		for _, r := range w {
			if unicode.IsDigit(r) {
				return false
			}
		}
	}
	return caps > 0
}

var particles = map[string]bool{
	"de": true, "van": true, "der": true, "den": true, "von": true, "da": true, "di": true,
	"la": true, "le": true, "du": true, "dos": true, "das": true, "del": true, "della": true,
	"ten": true, "ter": true, "bin": true, "ibn": true, "al": true, "el": true, "y": true,
	"zu": true, "af": true, "st.": true,
}
