package latexml

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// citeSpan is a citation's place in extracted text.
type citeSpan struct {
	start, end int
	keys       []string // fragment ids the citation links to, in order
}

// textWriter extracts readable text from a subtree: whitespace collapsed,
// math as its TeX alttext, text drawn in SVG pictures (boxes, labels)
// included, footnotes and floats set aside for the caller, and citations
// recorded with their offsets so sentences can be matched to the
// references they cite.
type textWriter struct {
	buf      []byte
	lines    bool // keep <br> and block breaks as '\n' (author blocks)
	skipTags bool // drop .ltx_tag elements (numbers of captions, headings)
	cites    []citeSpan
	notes    []*html.Node // footnotes met, to be processed on their own
	floats   []*html.Node // figures and tables met inside the text
	inCite   *citeSpan
	colorArg bool // the next text node starts with a colour macro's argument

	// For reference entries: the byte ranges set in italics and bold, and
	// the fields of REVTeX markup left unconverted (\bibinfo{title}{...}).
	marks      bool
	italic     [][2]int
	bold       [][2]int
	fields     []bibField
	afterMacro string // the unconverted macro just met
}

// bibField is one \bibinfo field of an entry: its name and where its text
// starts.
type bibField struct {
	name  string
	start int
}

func (w *textWriter) reset() {
	w.buf = w.buf[:0]
	w.cites = w.cites[:0]
	w.notes = w.notes[:0]
	w.floats = w.floats[:0]
	w.inCite = nil
	w.italic, w.bold, w.fields, w.afterMacro = w.italic[:0], w.bold[:0], w.fields[:0], ""
}

// lead is the number of bytes String trims from the start of the text.
func (w *textWriter) lead() int {
	n := 0
	for n < len(w.buf) && (w.buf[n] == ' ' || w.buf[n] == '\n') {
		n++
	}
	return n
}

// String returns the text written so far, trimmed.
func (w *textWriter) String() string {
	return strings.TrimSpace(string(w.buf))
}

// space writes one separating space unless the text is empty or already
// ends with whitespace.
func (w *textWriter) space() {
	if n := len(w.buf); n > 0 && w.buf[n-1] != ' ' && w.buf[n-1] != '\n' {
		w.buf = append(w.buf, ' ')
	}
}

func (w *textWriter) newline() {
	if !w.lines {
		w.space()
		return
	}
	n := len(w.buf)
	for n > 0 && w.buf[n-1] == ' ' {
		n--
	}
	w.buf = w.buf[:n]
	if n > 0 && w.buf[n-1] != '\n' {
		w.buf = append(w.buf, '\n')
	}
}

// text writes s with every run of whitespace (including no-break and other
// Unicode spaces) collapsed to one space.
func (w *textWriter) text(s string) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' {
				w.space()
			} else {
				w.buf = append(w.buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\u200b' || r == '\u2062' || r == '\u2061' || r == '\u2063' || r == '\ufeff':
			// zero-width and invisible math operators carry no text
		case unicode.IsSpace(r):
			w.space()
		default:
			w.buf = append(w.buf, s[i:i+size]...)
		}
		i += size
	}
}

// node writes the text of n and its subtree.
func (w *textWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		data := n.Data
		if w.colorArg {
			w.colorArg = false
			data = stripColorArg(data)
		}
		if w.afterMacro != "" {
			data = w.macroArgument(data)
		}
		w.text(data)
		return
	case html.ElementNode:
	case html.DocumentNode:
		w.children(n)
		return
	default:
		return
	}
	if n.Namespace == "svg" {
		switch n.Data {
		case "title", "desc", "style", "script", "metadata", "defs":
			return
		}
	}
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Button, atom.Img, atom.Head, atom.Template:
		return
	case atom.Math:
		w.math(n)
		return
	case atom.Br:
		w.newline()
		return
	case atom.Cite:
		w.cite(n)
		return
	}
	cl := attr(n, "class")
	if cl != "" && strings.Contains(cl, "ltx_") {
		switch {
		case classListHas(cl, "ltx_note"):
			// A footnote: its mark stays out of the text (it would glue a
			// digit to the word before it); its content is handled apart.
			w.notes = append(w.notes, n)
			return
		case classListHas(cl, "ltx_ERROR"):
			// Unconverted macro names ("\AND", "\float@count"): noise. A
			// colour macro leaves its argument ("[HTML]EFEFEF") as text,
			// dropped from the next text node.
			t := strings.TrimSpace(plainTextRaw(n))
			if strings.HasSuffix(t, "color") {
				w.colorArg = true
			}
			if w.marks {
				w.afterMacro = t
			}
			return
		case classListHas(cl, "ltx_phantom"):
			// \phantom: space the size of invisible text, not text.
			return
		case classListHas(cl, "ltx_tag_equation"), classListHas(cl, "ltx_tag_listingline"):
			// An equation number "(11)" would open the next sentence, a
			// code listing's line number run into its line ("3Based on").
			return
		case w.skipTags && classListHas(cl, "ltx_tag"):
			return
		case isFloat(n):
			// Floats inside a paragraph are not part of its running text.
			w.floats = append(w.floats, n)
			return
		}
	}
	block := isBlock(n.DataAtom) || n.DataAtom == atom.Svg
	if block {
		w.newline()
	}
	if n.DataAtom == atom.A && w.inCite != nil {
		if k := fragment(attr(n, "href")); k != "" {
			w.inCite.keys = append(w.inCite.keys, k)
		}
	}
	start := len(w.buf)
	w.children(n)
	if w.marks && len(w.buf) > start {
		switch {
		case n.DataAtom == atom.Em || n.DataAtom == atom.I || classListHas(cl, "ltx_font_italic") || classListHas(cl, "ltx_font_slanted"):
			w.italic = append(w.italic, [2]int{start, len(w.buf)})
		case n.DataAtom == atom.B || n.DataAtom == atom.Strong || classListHas(cl, "ltx_font_bold"):
			w.bold = append(w.bold, [2]int{start, len(w.buf)})
		}
	}
	if block {
		w.newline()
	}
}

// bibFieldNames are the field names of REVTeX's \bibinfo and \bibfield.
var bibFieldNames = []string{"author", "title", "journal", "volume", "pages", "year", "eprint", "doi", "url",
	"publisher", "address", "editor", "booktitle", "note", "number", "series", "edition", "month",
	"organization", "school", "institution", "type", "howpublished", "chapter", "collaboration", "eid", "isbn", "issn"}

// macroArgument reads the text after an unconverted bibliography macro: a
// \bibinfo or \bibfield field name opens a field (and is dropped), and
// \BibitemShut's "Stop"/"NoStop" is dropped.
func (w *textWriter) macroArgument(data string) string {
	m := w.afterMacro
	w.afterMacro = ""
	t := strings.TrimLeft(data, " \n")
	switch m {
	case `\bibinfo`, `\bibfield`:
		for _, f := range bibFieldNames {
			if strings.HasPrefix(t, f) {
				w.fields = append(w.fields, bibField{name: f, start: len(w.buf)})
				return t[len(f):]
			}
		}
	case `\BibitemShut`:
		if r, ok := strings.CutPrefix(t, "NoStop"); ok {
			return r
		}
		if r, ok := strings.CutPrefix(t, "Stop"); ok {
			return r
		}
	}
	return data
}

func (w *textWriter) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
}

// noteContent writes a footnote's text without its repeated mark and type
// ("footnotemark:", "thanks:").
func (w *textWriter) noteContent(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if hasClass(c, "ltx_note_mark") || hasClass(c, "ltx_note_type") || hasClass(c, "ltx_tag_note") {
			continue
		}
		w.node(c)
	}
}

func (w *textWriter) math(n *html.Node) {
	tex := attr(n, "alttext")
	if tex == "" {
		// Older pages keep the TeX only in an annotation.
		if a := find(n, func(x *html.Node) bool {
			return isElem(x, atom.Annotation) && attr(x, "encoding") == "application/x-tex"
		}); a != nil && a.FirstChild != nil {
			tex = a.FirstChild.Data
		}
	}
	tex = stripTeXComments(tex)
	if tex == "" {
		return
	}
	block := attr(n, "display") == "block"
	if block {
		w.newline()
	}
	w.text(tex)
	if block {
		w.newline()
	}
}

// stripTeXComments removes the comments of TeX source as TeX reads it:
// from an unescaped '%' to the end of the line, the newline and the next
// line's indentation with it. LaTeXML breaks a long formula's alttext
// with one at each break ("\epsilon%" and a newline); left in, the
// collapsed text read "\epsilon% _{ij}".
func stripTeXComments(tex string) string {
	if !strings.Contains(tex, "%") {
		return tex
	}
	var b strings.Builder
	for i := 0; i < len(tex); i++ {
		c := tex[i]
		if c == '\\' && i+1 < len(tex) {
			b.WriteByte(c)
			b.WriteByte(tex[i+1])
			i++
			continue
		}
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		j := strings.IndexByte(tex[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		for i < len(tex) && (tex[i] == ' ' || tex[i] == '\t') {
			i++
		}
		i--
	}
	return b.String()
}

func (w *textWriter) cite(n *html.Node) {
	if w.inCite != nil { // nested cite: part of the outer one
		w.children(n)
		return
	}
	w.cites = append(w.cites, citeSpan{start: len(w.buf)})
	w.inCite = &w.cites[len(w.cites)-1]
	w.children(n)
	w.inCite.end = len(w.buf)
	if w.inCite.end > w.inCite.start && w.buf[w.inCite.end-1] == ' ' {
		w.inCite.end--
	}
	if w.inCite.start < len(w.buf) && w.buf[w.inCite.start] == ' ' {
		w.inCite.start++
	}
	w.inCite = nil
}

// stripColorArg removes a colour specification ("[HTML]EFEFEF",
// "[rgb]0.9,0.9,0.9", "{gray}") from the start of s.
func stripColorArg(s string) string {
	t := strings.TrimLeft(s, " ")
	if strings.HasPrefix(t, "[") {
		if i := strings.IndexByte(t, ']'); i > 0 {
			t = t[i+1:]
			j := 0
			for j < len(t) && (isHexOrNum(t[j]) || t[j] == ',' || t[j] == '.') {
				j++
			}
			return t[j:]
		}
	}
	if strings.HasPrefix(t, "{") {
		if i := strings.IndexByte(t, '}'); i > 0 {
			return t[i+1:]
		}
	}
	return s
}

func isHexOrNum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isBlock reports whether a element breaks the text flow.
func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Li, atom.Ul, atom.Ol, atom.Dl, atom.Dt, atom.Dd,
		atom.Table, atom.Tr, atom.Td, atom.Th, atom.Tbody, atom.Thead, atom.Tfoot,
		atom.Section, atom.Article, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Blockquote, atom.Pre, atom.Figcaption, atom.Header, atom.Footer, atom.Nav:
		return true
	}
	return false
}

// plainText returns the collapsed text of n without footnotes and floats.
func plainText(n *html.Node) string {
	var w textWriter
	w.node(n)
	return w.String()
}

// collapse collapses whitespace in s and trims it.
func collapse(s string) string {
	var w textWriter
	w.text(s)
	return w.String()
}
