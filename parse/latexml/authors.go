package latexml

import (
	"regexp"
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

// personNames extracts the names inside one ltx_personname: the name
// lines at the top of each "&"/"\And"-separated block (names may run over
// several lines before the affiliations start), or the bold name spans when
// those give more.
func personNames(pn *html.Node) []string {
	var lines []string
	text := authorText(pn)
	for _, blk := range strings.Split(text, "&") {
		started := false
		for _, line := range strings.Split(blk, "\n") {
			if strings.TrimSpace(strings.Trim(line, ";, ")) == "" {
				continue
			}
			names, all := nameLine(line)
			if !started {
				lines = append(lines, names...)
				started = true
				continue
			}
			if !all || len(names) == 0 {
				break // the affiliations begin
			}
			lines = append(lines, names...)
		}
	}
	var bold []string
	for _, b := range findAll(nil, pn, func(x *html.Node) bool { return hasClass(x, "ltx_font_bold") }) {
		if insideTable(b, pn) {
			continue // "Website:" and the like in a links table
		}
		t := authorText(b)
		if strings.HasSuffix(strings.TrimSpace(t), ":") {
			continue // "Correspondence:"
		}
		for _, line := range strings.Split(t, "\n") {
			bold = append(bold, splitNames(line)...)
		}
	}
	if len(bold) > len(lines) {
		return bold
	}
	return lines
}

// nameLine returns the names on one line and whether every piece of the
// line is a name.
func nameLine(line string) ([]string, bool) {
	pieces := 0
	for _, piece := range strings.Split(separateNames(line), ";") {
		if cleanName(piece) != "" {
			pieces++
		}
	}
	names := splitNames(line)
	return names, len(names) == pieces
}

// insideTable reports whether n sits in a tabular below root.
func insideTable(n, root *html.Node) bool {
	for p := n.Parent; p != nil && p != root; p = p.Parent {
		if hasClass(p, "ltx_tabular") || hasClass(p, "ltx_td") || p.DataAtom == atom.Table {
			return true
		}
	}
	return false
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
			// Some templates typeset names in math: \textbf{Ada Lovelace}^{1,2}.
			b.WriteString(mathName(attr(n, "alttext")))
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

var (
	reMathMarks = regexp.MustCompile(`[\^_]\{[^}]*\}|[\^_][0-9*\\a-zA-Z]`)
	reMathCmds  = regexp.MustCompile(`\\[a-zA-Z]+\*?(?:\{[^}]*\})?`)
	reMathWraps = regexp.MustCompile(`\\(?:textbf|text|mathrm|mathbf|textrm|textsc|mbox)\s*\{([^}]*)\}`)
)

// mathName reads an author name typeset as math: wrappers unwrapped,
// super- and subscripts (affiliation marks) turned into separators.
func mathName(tex string) string {
	tex = reMathMarks.ReplaceAllString(tex, ";")
	tex = reMathWraps.ReplaceAllString(tex, " $1 ")
	tex = reMathCmds.ReplaceAllString(tex, ";") // \quad, \and, \hspace...
	tex = strings.NewReplacer("\\", "\n", "\\&", " and ", "&", " and ", "~", " ", "\\,", " ", "{", "", "}", "").Replace(tex)
	return tex
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
	"science": true, "sciences": true, "technology": true, "technologies": true, "engineering": true,
	"systems": true, "solutions": true, "team": true, "studio": true, "studios": true, "clinic": true,
	"medicine": true, "medical": true, "health": true, "physics": true, "mathematics": true, "computing": true,
	"informatics": true, "robotics": true, "analytics": true, "intelligence": true, "network": true,
	"networks": true, "agency": true, "council": true, "ministry": true, "office": true, "bureau": true,
	"national": true, "international": true, "federal": true, "royal": true, "website": true, "github": true,
	"project": true, "page": true, "code": true, "correspondence": true, "germany": true, "france": true,
	"japan": true, "korea": true, "canada": true, "india": true, "italy": true, "spain": true,
}

var institutionParts = []string{"universit", "laborator", "institut", "@", "http", "www."}

// namePieces turns the separators between names into ";".
var namePieces = strings.NewReplacer(" and ", ";", " AND ", ";", ",", ";", "\u00b7", ";", "\u2022", ";",
	"\u2219", ";", "\u22c5", ";", "|", ";", "\u2027", ";")

// separateNames marks every separator between names in line with ";".
// LaTeXML writes the space a template puts between names (\quad, \enskip,
// \;, \:, \hspace) as a Unicode space a quarter em or wider (U+2000 to
// U+2005, U+2007, U+2008, U+205F, U+3000) or as a run of spaces; a single
// no-break, thin, six-per-em or hair space (~, \,) sits inside a name and
// becomes a plain space.
func separateNames(line string) string {
	var b strings.Builder
	spaces := 0
	flush := func() {
		switch {
		case spaces > 1:
			b.WriteByte(';')
		case spaces == 1:
			b.WriteByte(' ')
		}
		spaces = 0
	}
	for _, r := range line {
		switch {
		case r >= '\u2000' && r <= '\u2005' || r == '\u2007' || r == '\u2008' || r == '\u205f' || r == '\u3000':
			spaces = 2 // a separator on its own
		case unicode.IsSpace(r) || r == '\u200b':
			spaces++
		default:
			flush()
			b.WriteRune(r)
		}
	}
	flush()
	return namePieces.Replace(b.String())
}

// splitNames splits one line of names ("A, B and C", "A; B") into names,
// dropping pieces that do not look like a person's name.
func splitNames(line string) []string {
	var out []string
	for _, piece := range strings.Split(separateNames(line), ";") {
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
	"zu": true, "af": true, "st.": true, "’t": true, "'t": true, "d’": true, "d'": true,
}
