package latexml

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// Patterns for identifiers inside bibliography entries. They are compiled
// once and never modified.
var (
	// arXiv IDs as written in references: "arXiv:1706.03762v2",
	// "arXiv preprint arXiv:2504.07055", "arxiv.org/abs/hep-th/9901001",
	// "CoRR, abs/1409.0473", "10.48550/arXiv.2312.07559".
	reArxivNew     = regexp.MustCompile(`(?i)(?:arxiv[:\s.]*|arxiv\.org/(?:abs|pdf|html)/|\babs/|arxiv\.)(\d{4}\.\d{4,5})(v\d+)?`)
	reArxivOld     = regexp.MustCompile(`(?i)(?:arxiv[:\s]*|arxiv\.org/(?:abs|pdf)/|\babs/|arxiv\.)([a-z]+(?:-[a-z]+)?(?:\.[a-z]{2})?/\d{7})(v\d+)?`)
	reDOI          = regexp.MustCompile(`\b10\.\d{4,9}/[^\s"<>]+`)
	reYear         = regexp.MustCompile(`(?:^|[^\d./:-])((?:1[6-9]|20)\d\d)[a-z]?(?:[^\d/]|$)`)
	reURL          = regexp.MustCompile(`(?i)\b(?:https?://|www\.)\S+`)
	reTrailingYear = regexp.MustCompile(`[,.]\s*(?:1[6-9]|20)\d\d[a-z]?\.?$`)
	reIDLike       = regexp.MustCompile(`\d{4}\.\d{4,5}|/\d{7}`)
	// ", volume 13" and "(Springer)" after a book's title.
	reTrailingVolume    = regexp.MustCompile(`(?i)[,.]?\s*(?:volume|vol\.)\s*\d+\.?$`)
	reTrailingPublisher = regexp.MustCompile(`\s*\((?:[A-Z][\w&.-]*\s?)+\)\.?$`)
	// "(Oxford University Press, 1992)", "(Prentice-Hall, Englewood Cliffs,
	// NJ)", "(2018)" after a title.
	reTrailingParen = regexp.MustCompile(`\s*\([^()]*(?:(?:1[6-9]|20)\d\d|[Pp]ress|[Pp]ublish|, [A-Z]{2}|\bed\.|[Ee]dition)[^()]*\)\.?$`)
)

// bibliography appends the entries of one bibliography section.
func (p *parser) bibliography(n *html.Node) {
	items := findAll(nil, n, func(x *html.Node) bool { return hasClass(x, "ltx_bibitem") })
	for _, it := range items {
		p.doc.References = append(p.doc.References, p.reference(it))
	}
}

func (p *parser) reference(it *html.Node) record.Reference {
	ref := record.Reference{Key: attr(it, "id")}
	var blocks []refBlock
	var hrefs []string
	var title string
	w := textWriter{skipTags: true, marks: true}
	add := func(n *html.Node) {
		w.reset()
		w.node(n)
		t := w.String()
		if t == "" {
			return
		}
		lead := w.lead()
		b := refBlock{text: t}
		clip := func(r [2]int) ([2]int, bool) {
			r = [2]int{max(r[0]-lead, 0), min(r[1]-lead, len(t))}
			return r, r[1] > r[0]
		}
		for _, r := range w.italic {
			if r, ok := clip(r); ok {
				b.italic = append(b.italic, r)
			}
		}
		for _, r := range w.bold {
			if r, ok := clip(r); ok {
				b.bold = append(b.bold, r)
			}
		}
		if title == "" {
			title = fieldText(w, "title", lead, t)
		}
		blocks = append(blocks, b)
	}
	hasBlocks := false
	for c := it.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case ref.Label == "" && (hasClass(c, "ltx_tag_bibitem") || hasClass(c, "ltx_tag")):
			ref.Label = plainText(c)
		case hasClass(c, "ltx_bibblock"):
			hasBlocks = true
			add(c)
		}
	}
	if !hasBlocks {
		// An entry without \newblock structure: its text is everything but
		// the label.
		add(it)
	}
	// Structured entries (LaTeXML's own BibTeX processing) mark their fields.
	walk(it, func(x *html.Node) bool {
		if x.Type != html.ElementNode {
			return true
		}
		if hasClass(x, "ltx_bib_title") {
			title = plainText(x)
		}
		if h := attr(x, "href"); h != "" && x.DataAtom == atom.A {
			hrefs = append(hrefs, h)
		}
		return true
	})
	texts := make([]string, len(blocks))
	for i, b := range blocks {
		texts[i] = b.text
	}
	ref.Text = strings.Join(texts, " ")
	links := strings.Join(hrefs, " ")
	ref.ArxivID = findArxivID(ref.Text + " " + links)
	// A link holds the DOI as it is; the text may have it typeset
	// ("10.1162/rest˙a˙01125" for rest_a_01125).
	if ref.DOI = findDOI(links); ref.DOI == "" {
		ref.DOI = findDOI(ref.Text)
	}
	if title != "" {
		ref.Title = cleanTitle(title)
	} else {
		ref.Title = refTitle(blocks) // cleaned already
	}
	ref.Year = findYear(ref.Label)
	if ref.Year == 0 {
		ref.Year = findYear(reIDLike.ReplaceAllString(reURL.ReplaceAllString(reDOI.ReplaceAllString(ref.Text, " "), " "), " "))
	}
	return ref
}

// fieldText returns the text of the named \bibinfo field the writer met,
// or "".
func fieldText(w textWriter, name string, lead int, text string) string {
	for i, f := range w.fields {
		if f.name != name {
			continue
		}
		end := len(w.buf)
		if i+1 < len(w.fields) {
			end = w.fields[i+1].start
		}
		s, e := max(f.start-lead, 0), min(end-lead, len(text))
		if e > s {
			return strings.Trim(text[s:e], " ,.;")
		}
	}
	return ""
}

// walk calls fn for n and its descendants in document order; fn returning
// false skips the node's children.
func walk(n *html.Node, fn func(*html.Node) bool) {
	if !fn(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func findArxivID(s string) string {
	low := strings.ToLower(s)
	if !strings.Contains(low, "arxiv") && !strings.Contains(low, "abs/") {
		return "" // the patterns need one of these; skip the regular expressions
	}
	for _, re := range []*regexp.Regexp{reArxivNew, reArxivOld} {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			if id, err := arxiv.Parse(m[1]); err == nil {
				return id.Canonical()
			}
		}
	}
	return ""
}

func findDOI(s string) string {
	m := reDOI.FindString(s)
	if m == "" {
		return ""
	}
	m = strings.TrimRight(m, ".,;:)]}>'\u201d")
	// A DOI written with its closing parenthesis stripped keeps an
	// unbalanced "(": add nothing, but drop a dangling one.
	if strings.Count(m, "(") > strings.Count(m, ")") && strings.HasSuffix(m, "(") {
		m = strings.TrimSuffix(m, "(")
	}
	return m
}

// findYear returns the publication year in s: one in parentheses first
// ("(2019)", "84(2012)"), else the last plausible one.
func findYear(s string) int {
	maxYear := time.Now().Year() + 1
	best, paren := 0, false
	for _, m := range reYear.FindAllStringSubmatchIndex(s, -1) {
		y, _ := strconv.Atoi(s[m[2]:m[3]])
		if y < 1600 || y > maxYear {
			continue
		}
		inParen := m[2] > 0 && (s[m[2]-1] == '(' || s[m[2]-1] == '[')
		switch {
		case inParen && !paren:
			best, paren = y, true
		case !paren:
			best = y
		}
	}
	return best
}

// quotedTitle returns a title written in quotes: the span from the first
// opening quote to its balanced closing one, so inner quotes survive
// ("The “task approach” to labor markets"). In a block that is only the
// title (atStart), the quote must open it; a quoted phrase inside other
// text is not a title.
func quotedTitle(s string, atStart bool) string {
	open := strings.IndexAny(s, "“\"")
	if open < 0 || atStart && open > 2 {
		return ""
	}
	depth, end := 0, -1
	for i, r := range s[open:] {
		switch r {
		case '“':
			depth++
		case '”':
			depth--
		case '"':
			if depth > 0 && i > 0 {
				depth--
			} else {
				depth++
			}
		}
		if depth == 0 {
			end = open + i
			break
		}
	}
	if end < 0 {
		return ""
	}
	q := strings.TrimSpace(s[open:end])
	q = strings.TrimLeft(q, "“\"")
	if utf8.RuneCountInString(q) < 8 {
		return ""
	}
	return q
}

func looksLikeTitle(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) < 8 {
		return false
	}
	low := strings.ToLower(s)
	for _, p := range []string{"in ", "in:", "proceedings", "arxiv", "http", "doi", "journal of", "vol.", "pp.", "accessed", "ed.", "eds.", "—", "–"} {
		if strings.HasPrefix(low, p) && !(p == "in " && inTitle(s)) {
			return false
		}
	}
	if strings.Contains(low, "doi:") || strings.Contains(low, "doi.org/") {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(s); unicode.IsDigit(r) && (isVolumePiece(firstPieceText(s)) || !strings.ContainsFunc(strings.Fields(s)[0], unicode.IsLetter)) {
		return false // "136 (1) (1999), 71-86": a volume, not a title ("3D printing" is one)
	}
	if findYear(s) != 0 && len(strings.Fields(s)) <= 2 {
		return false
	}
	return true
}

func cleanTitle(t string) string {
	// Each pattern runs only where it can match: entries are many.
	if strings.Contains(t, "http") || strings.Contains(t, "www.") {
		t = reURL.ReplaceAllString(t, "")
	}
	t = strings.TrimSpace(t)
	if n := len(t); n > 0 && (isDigit(t[n-1]) || t[n-1] == '.' || t[n-1] >= 'a' && t[n-1] <= 'z') {
		t = reTrailingYear.ReplaceAllString(t, "")
	}
	if strings.Contains(strings.ToLower(t), "vol") {
		t = reTrailingVolume.ReplaceAllString(t, "")
	}
	if strings.HasSuffix(strings.TrimRight(t, ". "), ")") {
		t = reTrailingPublisher.ReplaceAllString(t, "")
		t = reTrailingParen.ReplaceAllString(t, "")
	}
	t = strings.Trim(t, "“”\"")
	t = strings.TrimRight(t, " .,;:")
	t = strings.Trim(t, "“”\"")
	return strings.TrimSpace(t)
}
