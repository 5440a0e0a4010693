package latexml

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/groundwork/curate/arxiv"
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
	var blocks []string
	var hrefs []string
	var title string
	hasBlocks := false
	for c := it.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case ref.Label == "" && (hasClass(c, "ltx_tag_bibitem") || hasClass(c, "ltx_tag")):
			ref.Label = plainText(c)
		case hasClass(c, "ltx_bibblock"):
			hasBlocks = true
			if t := plainText(c); t != "" {
				blocks = append(blocks, t)
			}
		}
	}
	if !hasBlocks {
		// An entry without \newblock structure: its text is everything but
		// the label.
		w := textWriter{skipTags: true}
		w.node(it)
		if t := w.String(); t != "" {
			blocks = append(blocks, t)
		}
	}
	// Structured entries (LaTeXML's own BibTeX processing) mark their fields.
	walk(it, func(x *html.Node) bool {
		if x.Type != html.ElementNode {
			return true
		}
		if title == "" && hasClass(x, "ltx_bib_title") {
			title = plainText(x)
		}
		if h := attr(x, "href"); h != "" && x.Data == "a" {
			hrefs = append(hrefs, h)
		}
		return true
	})
	ref.Text = strings.Join(blocks, " ")
	all := ref.Text + " " + strings.Join(hrefs, " ")
	ref.ArxivID = findArxivID(all)
	ref.DOI = findDOI(all)
	if title == "" {
		title = guessTitle(blocks)
	}
	ref.Title = cleanTitle(title)
	ref.Year = findYear(ref.Label)
	if ref.Year == 0 {
		ref.Year = findYear(reIDLike.ReplaceAllString(reURL.ReplaceAllString(reDOI.ReplaceAllString(ref.Text, " "), " "), " "))
	}
	return ref
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

// guessTitle picks the title out of an entry's blocks: the second block of
// a \newblock-structured entry, a quoted title, the second period-separated
// segment after an author list, or the first long comma-separated segment
// of a comma-style entry.
func guessTitle(blocks []string) string {
	if len(blocks) == 0 {
		return ""
	}
	if len(blocks) >= 2 {
		if q := quotedTitle(blocks[1], true); q != "" {
			return q
		}
		if looksLikeTitle(blocks[1]) {
			return blocks[1]
		}
	}
	text := strings.Join(blocks, " ")
	if q := quotedTitle(text, false); q != "" {
		return q
	}
	segs := sentenceBounds(text, nil)
	if len(segs) >= 2 {
		first := text[segs[0][0]:segs[0][1]]
		second := cleanTitle(text[segs[1][0]:segs[1][1]])
		// "Smith, J. (2020). Title." puts the year after the authors, but
		// "Smith, J. 1989, ApJ, 374." has no title at all.
		if looksLikeAuthors(first) && !textAfterYear(first) && looksLikeTitle(second) && len(strings.Fields(second)) >= 2 {
			return second
		}
	}
	for _, piece := range strings.Split(text, ", ") {
		if looksLikeTitle(piece) && strings.Count(piece, " ") >= 3 && hasLowerWord(piece) && !nameList(piece) {
			return piece
		}
	}
	return ""
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
		if strings.HasPrefix(low, p) {
			return false
		}
	}
	if strings.Contains(low, "doi:") || strings.Contains(low, "doi.org/") {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(s); unicode.IsDigit(r) {
		return false // "136 (1) (1999), 71-86": a volume, not a title
	}
	if findYear(s) != 0 && len(strings.Fields(s)) <= 2 {
		return false
	}
	return true
}

// looksLikeAuthors reports whether s reads like an author list: names with
// initials, commas, "and", "&" or "et al.".
func looksLikeAuthors(s string) bool {
	if strings.Contains(s, " et al") || strings.Contains(s, " and ") || strings.Contains(s, "&") {
		return true
	}
	if strings.Count(s, ",") >= 1 && len(strings.Fields(s)) <= 12 {
		return true
	}
	words := strings.Fields(s)
	if len(words) <= 4 {
		for _, w := range words {
			if len(w) > 0 && w[0] >= 'a' && w[0] <= 'z' {
				return false
			}
		}
		return true
	}
	return false
}

// textAfterYear reports whether words follow the last year in s.
func textAfterYear(s string) bool {
	m := reYear.FindAllStringSubmatchIndex(s, -1)
	if m == nil {
		return false
	}
	rest := s[m[len(m)-1][3]:]
	return strings.IndexFunc(rest, unicode.IsLetter) >= 0
}

// nameList reports whether every word of s is capitalised, an initial or a
// conjunction, as in "P. and Moll" or "J. M. Smith".
func nameList(s string) bool {
	for _, w := range strings.Fields(s) {
		switch w {
		case "and", "&", "et", "al.", "al":
			continue
		}
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

func hasLowerWord(s string) bool {
	for _, w := range strings.Fields(s) {
		if len(w) > 2 && w[0] >= 'a' && w[0] <= 'z' {
			return true
		}
	}
	return false
}

func cleanTitle(t string) string {
	t = strings.TrimSpace(reURL.ReplaceAllString(t, ""))
	t = reTrailingYear.ReplaceAllString(t, "")
	t = reTrailingVolume.ReplaceAllString(t, "")
	t = reTrailingPublisher.ReplaceAllString(t, "")
	t = strings.Trim(t, "“”\"")
	t = strings.TrimRight(t, " .,;:")
	t = strings.Trim(t, "“”\"")
	return strings.TrimSpace(t)
}
