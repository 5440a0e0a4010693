package tei

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// cite is a citation marker's place in extracted text.
type cite struct {
	start, end int
	keys       []string // reference keys the marker targets, in order
	targets    int      // how many targets it names (resolvable or not)
}

// writer extracts the readable text of a block (a paragraph, a heading, a
// caption, a cell): whitespace collapsed, footnote marks and formula labels
// dropped, citation markers recorded with their offsets, GROBID's own
// sentences (<s>) recorded with theirs, and the footnotes, floats and
// float references met set aside for the caller.
type writer struct {
	buf    []byte
	cites  []cite
	sents  [][2]int
	refs   []string // targets of figure, table and footnote references
	notes  []*node  // notes met inside the text
	floats []*node  // figures met inside the text
	inCite bool
}

func (w *writer) reset() {
	w.buf = w.buf[:0]
	w.cites = w.cites[:0]
	w.sents = w.sents[:0]
	w.refs = w.refs[:0]
	w.notes = w.notes[:0]
	w.floats = w.floats[:0]
	w.inCite = false
}

// String returns the text written so far (it never starts or ends with a
// space: see space and finish).
func (w *writer) String() string { return string(w.buf) }

// space writes one separating space unless the text is empty or already
// ends with one.
func (w *writer) space() {
	if n := len(w.buf); n > 0 && w.buf[n-1] != ' ' {
		w.buf = append(w.buf, ' ')
	}
}

// finish drops a trailing space and keeps every recorded span inside the
// text.
func (w *writer) finish() {
	for n := len(w.buf); n > 0 && w.buf[n-1] == ' '; n = len(w.buf) {
		w.buf = w.buf[:n-1]
	}
	n := len(w.buf)
	for i := range w.cites {
		w.cites[i].start, w.cites[i].end = min(w.cites[i].start, n), min(w.cites[i].end, n)
	}
	for i := range w.sents {
		w.sents[i][0], w.sents[i][1] = min(w.sents[i][0], n), min(w.sents[i][1], n)
	}
}

// text writes s with every run of whitespace (Unicode spaces included)
// collapsed to one space and invisible characters dropped.
func (w *writer) text(s string) {
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
		case r == utf8.RuneError && size == 1:
			// not UTF-8 (encoding/xml lets none through): dropped
		case r == '\u200b' || r == '\u2062' || r == '\u2061' || r == '\u2063' || r == '\ufeff' || r == '\u00ad':
			// zero-width characters and soft hyphens carry no text
		case r >= '\ue000' && r <= '\uf8ff':
			// Private-use code points are glyphs of symbol fonts that the
			// PDF did not map to characters: unreadable, dropped.
		case unicode.IsSpace(r):
			w.space()
		default:
			w.buf = append(w.buf, s[i:i+size]...)
		}
		i += size
	}
}

// node writes the text of n and its subtree.
func (w *writer) node(n *node) {
	if n.name == "" {
		w.text(n.text)
		return
	}
	switch n.name {
	case "ref":
		w.ref(n)
		return
	case "note":
		// A note inside running text is a footnote: handled on its own.
		w.notes = append(w.notes, n)
		return
	case "figure":
		w.floats = append(w.floats, n)
		return
	case "label":
		// Formula numbers "(3)" would open the next sentence.
		return
	case "graphic", "ptr", "pb", "cb", "fw", "facsimile":
		return
	case "lb", "cell":
		w.space()
		w.children(n)
		w.space()
		return
	case "s":
		w.space()
		start := len(w.buf)
		w.children(n)
		w.sents = append(w.sents, [2]int{start, len(w.buf)})
		w.space()
		return
	case "p", "div", "head", "item", "formula", "quote", "row", "figDesc", "table", "list":
		w.space()
		w.children(n)
		w.space()
		return
	}
	w.children(n)
}

func (w *writer) children(n *node) {
	for _, c := range n.children {
		w.node(c)
	}
}

// ref writes a reference: a bibliographic citation marker is recorded as
// a cite; a footnote mark is dropped (its digit would stick to the word
// before it); figure, table and footnote targets are noted so that their
// floats can be placed in the section that first refers to them.
func (w *writer) ref(n *node) {
	typ := n.attr("type")
	targets := targetIDs(n.attr("target"))
	switch typ {
	case "foot":
		w.refs = append(w.refs, targets...)
		return
	case "figure", "table":
		w.refs = append(w.refs, targets...)
	case "bibr":
		if !w.inCite {
			if n := len(w.buf); n > 0 && (w.buf[n-1] == ';' || w.buf[n-1] == ',') {
				// GROBID drops the space between the markers of one
				// citation: "(Tillet et al., 2019;Kwon et al., 2023)".
				w.buf = append(w.buf, ' ')
			}
			w.cites = append(w.cites, cite{start: len(w.buf), keys: targets, targets: len(targets)})
			w.inCite = true
			w.children(n)
			w.inCite = false
			c := &w.cites[len(w.cites)-1]
			c.end = len(w.buf)
			if c.end > c.start && w.buf[c.end-1] == ' ' {
				c.end--
			}
			if c.start < len(w.buf) && w.buf[c.start] == ' ' {
				c.start++
			}
			c.end = max(c.end, c.start)
			return
		}
		// A marker inside a marker is part of it.
		c := &w.cites[len(w.cites)-1]
		c.keys = append(c.keys, targets...)
		c.targets += len(targets)
	}
	w.children(n)
}

// targetIDs splits a target attribute ("#b12", "#b1 #b2") into ids.
func targetIDs(t string) []string {
	var out []string
	for _, f := range strings.Fields(t) {
		if id := strings.TrimPrefix(f, "#"); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// content writes the text of a block: n itself when it is text, else
// its children, so that a note or a figure passed as the block is read
// rather than set aside.
func (w *writer) content(n *node) {
	if n.name == "" {
		w.text(n.text)
		return
	}
	w.children(n)
}

// plain returns the collapsed text of n, footnotes and floats inside it
// left out.
func plain(n *node) string {
	if n == nil {
		return ""
	}
	var w writer
	w.content(n)
	w.finish()
	return strings.TrimSpace(w.String())
}

// collapse collapses the whitespace of s and trims it.
func collapse(s string) string {
	var w writer
	w.text(s)
	w.finish()
	return strings.TrimSpace(w.String())
}
