package latexml

import (
	"regexp"
	"strconv"
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
// several lines before the affiliations start, when the personname is one
// block; with several, each block is "Name \\ Affiliation ..."), or the
// bold name spans when those give more. A line set smaller than the names
// (an organisation under them) is never a name, nor an e-mail address. A
// personname written with the JMLR class's \name, \email and \addr, which
// LaTeXML leaves unconverted, gives the names after each \name.
func personNames(pn *html.Node) []string {
	if find(pn, func(x *html.Node) bool { return isMacro(x, `\name`) }) != nil {
		return macroNames(pn)
	}
	var lines []string
	text := authorLines(pn)
	blocks := strings.Split(text, "&")
	several := 0
	for _, blk := range blocks {
		if strings.TrimSpace(strings.Trim(unmark(blk), ";,\n ")) != "" {
			several++
		}
	}
	for _, blk := range blocks {
		started := false
		for _, line := range strings.Split(blk, "\n") {
			small := smallLine(line)
			line = dropEmails(unmark(line))
			if strings.TrimSpace(strings.Trim(line, ";, ")) == "" {
				continue
			}
			if started && small {
				break // an organisation set under the names
			}
			names, all := nameLine(line)
			if !started {
				lines = append(lines, names...)
				started = true
				if several > 1 {
					break // one name line per block; the rest is affiliation
				}
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
			bold = append(bold, splitNames(dropEmails(line))...)
		}
	}
	if len(bold) > len(lines) {
		return bold
	}
	return lines
}

// isMacro reports whether n is an unconverted macro (an ltx_ERROR span)
// named name, in any case.
func isMacro(n *html.Node, name string) bool {
	return hasClass(n, "ltx_ERROR") && strings.EqualFold(strings.TrimSpace(plainTextRaw(n)), name)
}

// macroNames reads a personname in the JMLR class's markup: "\name Ada
// Lovelace \email ada@x.org \\ \addr Department ... \AND \name ...".
// A name is the text after a \name up to the next macro, line break,
// footnote or mark; the rest (e-mails, addresses, affiliations) is not.
func macroNames(pn *html.Node) []string {
	var names []string
	var cur strings.Builder
	in := false
	flush := func() {
		if in {
			for _, piece := range strings.Split(separateNames(dropEmails(cur.String())), ";") {
				if n := cleanName(piece); n != "" && looksLikePerson(n) {
					names = append(names, n)
				}
			}
		}
		cur.Reset()
		in = false
	}
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			if in {
				cur.WriteString(n.Data)
			}
			return
		case html.ElementNode:
		default:
			return
		}
		switch {
		case n.DataAtom == atom.Br || n.DataAtom == atom.Sup || n.DataAtom == atom.Script || n.DataAtom == atom.Style:
			flush()
			return
		case n.DataAtom == atom.Math:
			if in {
				cur.WriteString(mathName(attr(n, "alttext")))
			}
			return
		case hasClass(n, "ltx_ERROR"):
			open := isMacro(n, `\name`)
			flush()
			in = open
			return
		case hasClass(n, "ltx_note"), hasClass(n, "ltx_font_typewriter"), hasClass(n, "ltx_author_notes"),
			hasClass(n, "ltx_contact"), strings.HasPrefix(attr(n, "href"), "mailto:"):
			flush()
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
		if isBlock(n.DataAtom) {
			flush()
		}
	}
	rec(pn)
	flush()
	return names
}

// dropEmails removes the e-mail addresses from a line of an author block.
func dropEmails(line string) string {
	if !strings.Contains(line, "@") {
		return line
	}
	f := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
	kept := f[:0]
	for _, w := range f {
		if !strings.Contains(w, "@") {
			kept = append(kept, w)
		}
	}
	return strings.Join(kept, " ")
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
func authorText(n *html.Node) string { return renderAuthors(n, false) }

// authorLines is authorText with the text set smaller than the rest (an
// organisation under the names: style font-size below 100%, LaTeXML's
// small font classes) between smallOpen and smallClose.
func authorLines(n *html.Node) string { return renderAuthors(n, true) }

const smallOpen, smallClose = '\x01', '\x02'

func renderAuthors(n *html.Node, markSmall bool) string {
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
		small := markSmall && isSmallFont(n)
		if small {
			b.WriteByte(smallOpen)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
		if small {
			b.WriteByte(smallClose)
		}
		if isBlock(n.DataAtom) {
			b.WriteByte('\n')
		}
	}
	rec(n)
	return b.String()
}

// isSmallFont reports whether n sets its text smaller than the text
// around it: a font-size below 100% or one of LaTeXML's small classes.
func isSmallFont(n *html.Node) bool {
	cl := attr(n, "class")
	if classListHas(cl, "ltx_font_small") || classListHas(cl, "ltx_font_footnote") || classListHas(cl, "ltx_font_script") ||
		classListHas(cl, "ltx_font_tiny") {
		return true
	}
	st := attr(n, "style")
	i := strings.Index(st, "font-size:")
	if i < 0 {
		return false
	}
	v := strings.TrimSpace(st[i+len("font-size:"):])
	j := strings.IndexByte(v, '%')
	if j < 0 {
		return false
	}
	pct, err := strconv.ParseFloat(strings.TrimSpace(v[:j]), 64)
	return err == nil && pct < 100
}

// smallLine reports whether the text of a line is all set small.
func smallLine(line string) bool {
	if !strings.ContainsRune(line, smallOpen) {
		return false
	}
	var rest strings.Builder
	depth := 0
	for _, r := range line {
		switch {
		case r == smallOpen:
			depth++
		case r == smallClose:
			depth = max(depth-1, 0)
		case depth == 0:
			rest.WriteRune(r)
		}
	}
	return strings.TrimSpace(strings.Trim(rest.String(), ";,&")) == ""
}

// unmark drops the small-text marks of authorLines.
func unmark(s string) string {
	if !strings.ContainsAny(s, "\x01\x02") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == smallOpen || r == smallClose {
			return -1
		}
		return r
	}, s)
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
	return looksLikePerson(s)
}

// looksLikePerson is looksLikeName for text that the markup says is a
// name (after the JMLR class's \name): words such as "Ai" or "Page" are
// given names there, not institutions.
func looksLikePerson(s string) bool {
	if s == "" || utf8.RuneCountInString(s) > 60 || strings.ContainsAny(s, "@/") {
		return false
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
