package corpusgen

import (
	"fmt"
	"html"
	"strconv"
	"strings"
)

// seg is a piece of a sentence: text, a citation or inline math.
type seg struct {
	text string   // plain text
	keys []string // a citation
	tex  string   // inline math
}

// segments splits a sentence written with {{key,...}} citations and $TeX$
// math into its pieces.
func segments(s string) []seg {
	var out []seg
	for s != "" {
		ci := strings.Index(s, "{{")
		mi := strings.IndexByte(s, '$')
		switch {
		case ci < 0 && mi < 0:
			out = append(out, seg{text: s})
			s = ""
		case ci >= 0 && (mi < 0 || ci < mi):
			end := strings.Index(s[ci:], "}}")
			if end < 0 {
				panic("unclosed citation in " + s)
			}
			if ci > 0 {
				out = append(out, seg{text: s[:ci]})
			}
			out = append(out, seg{keys: strings.Split(s[ci+2:ci+end], ",")})
			s = s[ci+end+2:]
		default:
			end := strings.IndexByte(s[mi+1:], '$')
			if end < 0 {
				panic("unclosed math in " + s)
			}
			if mi > 0 {
				out = append(out, seg{text: s[:mi]})
			}
			out = append(out, seg{tex: s[mi+1 : mi+1+end]})
			s = s[mi+1+end+1:]
		}
	}
	return out
}

// citedKeys returns the keys a sentence cites, in order.
func citedKeys(s string) []string {
	var keys []string
	for _, g := range segments(s) {
		keys = append(keys, g.keys...)
	}
	return keys
}

// plainSentence renders a sentence as text, citations as "[1, 2]" and math
// as its TeX, the way a PDF extractor would see it.
func plainSentence(s string, num map[string]int) string {
	var b strings.Builder
	for _, g := range segments(s) {
		switch {
		case g.keys != nil:
			b.WriteString("[")
			for i, k := range g.keys {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(strconv.Itoa(num[k]))
			}
			b.WriteString("]")
		case g.tex != "":
			b.WriteString(g.tex)
		default:
			b.WriteString(g.text)
		}
	}
	return b.String()
}

// pageWriter renders one paper's page.
type pageWriter struct {
	b      strings.Builder
	p      *Paper
	pg     *Page
	num    map[string]int // bibliography key -> number
	idv    string         // id with version
	mathN  int
	tableN int
	eqN    int
}

func (w *pageWriter) f(format string, args ...any) { fmt.Fprintf(&w.b, format, args...) }

// attrs writes an element's id and class in the order the site writes
// them: arXiv puts class first, ar5iv id first.
func (w *pageWriter) attrs(id, class string) string {
	switch {
	case id == "":
		return fmt.Sprintf(`class="%s"`, class)
	case w.pg.Ar5ivOnly:
		return fmt.Sprintf(`id="%s" class="%s"`, id, class)
	}
	return fmt.Sprintf(`class="%s" id="%s"`, class, id)
}

// renderPage renders p's page at version v as arXiv or ar5iv serves it.
func renderPage(p *Paper, v int) string {
	w := &pageWriter{p: p, pg: p.Page, num: map[string]int{}}
	w.idv = fmt.Sprintf("%sv%d", p.Arxiv, v)
	for i, it := range p.Page.Bib {
		w.num[it.Key] = i + 1
	}
	if w.pg.Ar5ivOnly {
		w.ar5ivHead()
	} else {
		w.arxivHead()
	}
	w.f("<div class=\"ltx_page_main\">\n<div class=\"ltx_page_content\">\n")
	w.f("<article class=\"ltx_document ltx_authors_1line\">\n")
	w.f("<h1 %s>%s</h1>\n", w.attrs("", "ltx_title ltx_title_document"), html.EscapeString(p.Title))
	w.authors()
	w.abstract()
	for i, s := range w.pg.Sections {
		w.section(s, []int{i + 1})
	}
	w.bibliography()
	w.f("</article>\n</div>\n")
	if w.pg.Ar5ivOnly {
		w.ar5ivFooter()
	} else {
		w.arxivFooter()
	}
	w.f("</div>\n</body>\n</html>\n")
	return w.b.String()
}

func (w *pageWriter) arxivHead() {
	w.f("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n")
	w.f("<meta content=\"text/html; charset=utf-8\" http-equiv=\"content-type\"/>\n")
	w.f("<title>%s</title>\n", html.EscapeString(w.p.Title))
	w.f("<!--Generated on %s by LaTeXML (version 0.8.8) http://dlmf.nist.gov/LaTeXML/.-->\n", w.pg.Generated)
	w.f("<meta content=\"width=device-width, initial-scale=1, shrink-to-fit=no\" name=\"viewport\"/>\n")
	w.f("<link href=\"/static/browse/0.3.4/css/arxiv-html-papers-20250916.css\" rel=\"stylesheet\" type=\"text/css\"/>\n")
	w.f("<script src=\"/static/browse/0.3.4/js/addons_new.js\"></script>\n")
	w.f("<base href=\"/html/%s/\"/></head>\n<body>\n", w.idv)
	w.f("<nav class=\"ltx_page_navbar\">\n</nav>\n")
}

func (w *pageWriter) ar5ivHead() {
	id := w.p.Arxiv
	t := html.EscapeString(w.p.Title)
	w.f("<!DOCTYPE html><html lang=\"en\">\n<head>\n")
	w.f("<meta http-equiv=\"content-type\" content=\"text/html; charset=UTF-8\">\n")
	w.f("<title>[%s] %s</title><meta property=\"og:description\" content=\"%s\">\n", id, t, html.EscapeString(truncate(w.p.Abstract, 200)))
	w.f("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	w.f("<meta property=\"og:title\" content=\"%s\">\n<meta property=\"og:site_name\" content=\"ar5iv\">\n", t)
	w.f("<meta property=\"og:type\" content=\"article\">\n<meta property=\"og:url\" content=\"https://ar5iv.labs.arxiv.org/html/%s\">\n", id)
	w.f("<link rel=\"canonical\" target=\"_blank\" href=\"https://ar5iv.labs.arxiv.org/html/%s\">\n\n", id)
	w.f("<!--Generated on %s by LaTeXML (version 0.8.8) http://dlmf.nist.gov/LaTeXML/.-->\n", w.pg.Generated)
	w.f("<link media=\"all\" rel=\"stylesheet\" href=\"/assets/ar5iv-fonts.0.8.4.css\"><link media=\"all\" rel=\"stylesheet\" href=\"/assets/ar5iv.0.8.4.css\"><link media=\"all\" rel=\"stylesheet\" href=\"/assets/ar5iv-site.0.2.2.css\">\n")
	w.f("</head>\n<body>\n")
}

func (w *pageWriter) arxivFooter() {
	w.f("<footer class=\"ltx_page_footer\">\n<div class=\"ltx_page_logo\">Generated  on %s by <a class=\"ltx_LaTeXML_logo\" href=\"http://dlmf.nist.gov/LaTeXML/\">LaTeXML</a>\n</div></footer>\n", w.pg.Generated)
}

func (w *pageWriter) ar5ivFooter() {
	id := w.p.Arxiv
	w.f("<div class=\"ar5iv-footer\"><a href=\"/html/%s\" class=\"ar5iv-nav-button ar5iv-nav-button-prev\">◄</a>\n", neighbour(id, -1))
	w.f("    <a class=\"ar5iv-home-button\" href=\"/\"><img height=\"40\" alt=\"ar5iv homepage\" src=\"/assets/ar5iv.png\"></a>\n")
	w.f("    <a href=\"/feeling_lucky\" class=\"ar5iv-text-button\">Feeling<br>lucky?</a>\n")
	w.f("    <a href=\"/log/%s\" class=\"ar5iv-text-button ar5iv-severity-warning\">Conversion<br>report</a>\n", id)
	w.f("    <a class=\"ar5iv-text-button\" target=\"_blank\" href=\"https://github.com/dginev/ar5iv/issues/new?template=improve-article--arxiv-id-.md&amp;title=Improve+article+%s\">Report<br>an issue</a>\n", id)
	w.f("    <a href=\"https://arxiv.org/abs/%s\" class=\"ar5iv-text-button arxiv-ui-theme\">View&nbsp;original<br>on&nbsp;arXiv</a><a href=\"/html/%s\" class=\"ar5iv-nav-button ar5iv-nav-button-next\">►</a>\n", id, neighbour(id, 1))
	w.f("</div><footer class=\"ltx_page_footer\">\n")
	w.f("<a class=\"ar5iv-footer-button\" href=\"https://arxiv.org/help/license\" target=\"_blank\">Copyright</a>\n")
	w.f("<a class=\"ar5iv-footer-button\" href=\"https://arxiv.org/help/policies/privacy_policy\" target=\"_blank\">Privacy Policy</a>\n")
	w.f("<div class=\"ltx_page_logo\">Generated  on %s by <a target=\"_blank\" href=\"http://dlmf.nist.gov/LaTeXML/\" class=\"ltx_LaTeXML_logo\">LaTeXML</a>\n</div></footer>\n", w.pg.Generated)
}

// neighbour returns the arXiv id d numbers away (ar5iv's prev/next links).
func neighbour(id string, d int) string {
	dot := strings.IndexByte(id, '.')
	n, _ := strconv.Atoi(id[dot+1:])
	return fmt.Sprintf("%s.%0*d", id[:dot], len(id)-dot-1, n+d)
}

func (w *pageWriter) authors() {
	w.f("<div %s>\n", w.attrs("", "ltx_authors"))
	for i, a := range w.p.Authors {
		if i > 0 {
			w.f("<span class=\"ltx_author_before\">  </span>")
		}
		w.f("<span class=\"ltx_creator ltx_role_author\">\n<span class=\"ltx_personname\">%s\n</span>", html.EscapeString(a))
		if i < len(w.pg.Affiliations) {
			w.f("<span class=\"ltx_author_notes\">%s</span>", html.EscapeString(w.pg.Affiliations[i]))
		}
		w.f("</span>\n")
	}
	w.f("</div>\n")
}

func (w *pageWriter) abstract() {
	sentences := splitAbstract(w.p.Abstract)
	if w.pg.AbstractPara {
		w.f("<div %s>\n<p %s><span class=\"ltx_text ltx_font_bold\">Abstract.</span> %s</p>\n</div>\n",
			w.attrs("p1", "ltx_para"), w.attrs("p1.1", "ltx_p"), html.EscapeString(strings.Join(sentences, "\n")))
		return
	}
	w.f("<div %s>\n<h6 class=\"ltx_title ltx_title_abstract\">Abstract</h6>\n<p class=\"ltx_p\">%s</p>\n</div>\n",
		w.attrs("", "ltx_abstract"), html.EscapeString(strings.Join(sentences, "\n")))
}

// splitAbstract breaks an abstract written as one string into sentences
// (at ". " before a capital), for LaTeXML-like line breaks.
func splitAbstract(a string) []string {
	var out []string
	start := 0
	for i := 0; i+2 < len(a); i++ {
		if a[i] == '.' && a[i+1] == ' ' && a[i+2] >= 'A' && a[i+2] <= 'Z' {
			out = append(out, a[start:i+1])
			start = i + 2
		}
	}
	return append(out, a[start:])
}

// section renders a section at the given number path ([2] is section 2,
// [3 1] subsection 3.1).
func (w *pageWriter) section(s Section, nums []int) {
	id := "S" + strconv.Itoa(nums[0])
	class, hclass, tag, h := "ltx_section", "ltx_title ltx_title_section", "ltx_tag ltx_tag_section", "h2"
	if len(nums) == 2 {
		id += ".SS" + strconv.Itoa(nums[1])
		class, hclass, tag, h = "ltx_subsection", "ltx_title ltx_title_subsection", "ltx_tag ltx_tag_subsection", "h3"
	}
	parts := make([]string, len(nums))
	for i, n := range nums {
		parts[i] = strconv.Itoa(n)
	}
	num := strings.Join(parts, ".")
	w.f("<section %s>\n", w.attrs(id, class))
	w.f("<h%s %s><span class=\"%s\">%s </span>%s</h%s>\n", h[1:], w.attrs("", hclass), tag, num, html.EscapeString(s.Title), h[1:])
	p := 0
	for _, blk := range s.Blocks {
		if blk.Table != nil {
			w.table(blk.Table, "S"+strconv.Itoa(nums[0]))
			continue
		}
		p++
		w.para(blk, fmt.Sprintf("%s.p%d", id, p), "S"+strconv.Itoa(nums[0]))
	}
	for i, sub := range s.Subs {
		w.section(sub, append(append([]int(nil), nums...), i+1))
	}
	w.f("</section>\n")
}

func (w *pageWriter) para(blk Block, id, top string) {
	w.f("<div %s>\n", w.attrs(id, "ltx_para"))
	w.f("<p %s>%s</p>\n", w.attrs(id+".1", "ltx_p"), w.sentences(blk.Sentences))
	if blk.Equation != "" {
		w.eqN++
		eid := fmt.Sprintf("%s.E%d", top, w.eqN)
		w.f("<table %s>\n<tbody><tr class=\"ltx_equation ltx_eqn_row ltx_align_baseline\">\n", w.attrs(eid, "ltx_equation ltx_eqn_table"))
		w.f("<td class=\"ltx_eqn_cell ltx_eqn_center_padleft\"></td>\n<td class=\"ltx_eqn_cell ltx_align_center\">%s</td>\n", w.math(blk.Equation, "block"))
		w.f("<td class=\"ltx_eqn_cell ltx_eqn_center_padright\"></td>\n")
		w.f("<td class=\"ltx_eqn_cell ltx_eqn_eqno ltx_align_middle ltx_align_right\" rowspan=\"1\"><span class=\"ltx_tag ltx_tag_equation ltx_align_right\">(%d)</span></td></tr></tbody>\n</table>\n", w.eqN)
		if len(blk.After) > 0 {
			w.f("<p %s>%s</p>\n", w.attrs(id+".2", "ltx_p"), w.sentences(blk.After))
		}
	}
	w.f("</div>\n")
}

// sentences renders sentences as the inner HTML of a paragraph, one line
// per sentence as LaTeXML keeps the source's line breaks.
func (w *pageWriter) sentences(ss []string) string {
	var b strings.Builder
	for i, s := range ss {
		if i > 0 {
			b.WriteString("\n")
		}
		for _, g := range segments(s) {
			switch {
			case g.keys != nil:
				b.WriteString(w.cite(g.keys))
			case g.tex != "":
				b.WriteString(w.math(g.tex, "inline"))
			default:
				b.WriteString(html.EscapeString(g.text))
			}
		}
	}
	return b.String()
}

func (w *pageWriter) cite(keys []string) string {
	var b strings.Builder
	b.WriteString(`<cite class="ltx_cite ltx_citemacro_cite">[`)
	for i, k := range keys {
		n, ok := w.num[k]
		if !ok {
			panic(fmt.Sprintf("%s cites %q, which is not in its bibliography", w.p.Key, k))
		}
		if i > 0 {
			b.WriteString(", ")
		}
		href := fmt.Sprintf("#bib.bib%d", n)
		if w.pg.FullURLCites {
			href = "https://arxiv.org/html/" + w.idv + href
		}
		fmt.Fprintf(&b, `<a class="ltx_ref" href="%s" title="">%d</a>`, href, n)
	}
	b.WriteString("]</cite>")
	return b.String()
}

// math renders TeX as a LaTeXML math element. Readers use the alttext; the
// MathML inside is a token-level stand-in, not a real conversion.
func (w *pageWriter) math(tex, display string) string {
	w.mathN++
	id := fmt.Sprintf("m%d", w.mathN)
	return fmt.Sprintf(`<math alttext="%s" class="ltx_Math" display="%s" id="%s"><semantics><mrow>%s</mrow><annotation encoding="application/x-tex">%s</annotation></semantics></math>`,
		html.EscapeString(tex), display, id, mathTokens(tex), html.EscapeString(tex))
}

// mathTokens turns TeX into a row of mi/mo elements: letters and commands
// become identifiers, the rest operators. Enough for a browser to show
// something; nothing in the pipeline reads it.
func mathTokens(tex string) string {
	var b strings.Builder
	for i := 0; i < len(tex); {
		c := tex[i]
		switch {
		case c == '\\':
			j := i + 1
			for j < len(tex) && (tex[j] >= 'a' && tex[j] <= 'z' || tex[j] >= 'A' && tex[j] <= 'Z') {
				j++
			}
			if j == i+1 && j < len(tex) {
				j++
			}
			fmt.Fprintf(&b, "<mi>%s</mi>", html.EscapeString(tex[i:j]))
			i = j
		case c == '{' || c == '}' || c == ' ' || c == '_' || c == '^':
			i++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			fmt.Fprintf(&b, "<mi>%c</mi>", c)
			i++
		case c >= '0' && c <= '9':
			fmt.Fprintf(&b, "<mn>%c</mn>", c)
			i++
		default:
			fmt.Fprintf(&b, "<mo>%s</mo>", html.EscapeString(string(c)))
			i++
		}
	}
	return b.String()
}

func (w *pageWriter) table(t *Table, top string) {
	w.tableN++
	id := fmt.Sprintf("%s.T%d", top, w.tableN)
	w.f("<figure %s>\n", w.attrs(id, "ltx_table"))
	w.f("<figcaption class=\"ltx_caption ltx_centering\"><span class=\"ltx_tag ltx_tag_table\">Table %d: </span>%s</figcaption>\n", w.tableN, w.sentences([]string{t.Caption}))
	w.f("<table %s>\n<thead class=\"ltx_thead\">\n<tr class=\"ltx_tr\" id=\"%s.1.1\">\n", w.attrs(id+".1", "ltx_tabular ltx_centering ltx_guessed_headers ltx_align_middle"), id)
	for i, h := range t.Head {
		w.f("<th class=\"ltx_td ltx_align_%s ltx_th ltx_th_column ltx_border_tt\" id=\"%s.1.1.%d\">%s</th>\n", align(i), id, i+1, html.EscapeString(h))
	}
	w.f("</tr>\n</thead>\n<tbody class=\"ltx_tbody\">\n")
	for r, row := range t.Rows {
		w.f("<tr class=\"ltx_tr\" id=\"%s.1.%d\">\n", id, r+2)
		border := ""
		if r == 0 {
			border = " ltx_border_t"
		}
		if r == len(t.Rows)-1 {
			border += " ltx_border_bb"
		}
		for i, c := range row {
			w.f("<td class=\"ltx_td ltx_align_%s%s\" id=\"%s.1.%d.%d\">%s</td>\n", align(i), border, id, r+2, i+1, html.EscapeString(c))
		}
		w.f("</tr>\n")
	}
	w.f("</tbody>\n</table>\n</figure>\n")
}

func align(col int) string {
	if col == 0 {
		return "left"
	}
	return "center"
}

// bibliography renders the page's references.
func (w *pageWriter) bibliography() {
	w.f("<section %s>\n<h2 class=\"ltx_title ltx_title_bibliography\">References</h2>\n\n<ul class=\"ltx_biblist\">\n", w.attrs("bib", "ltx_bibliography"))
	for i, it := range w.pg.Bib {
		w.f("<li %s>\n<span class=\"ltx_tag ltx_role_refnum ltx_tag_bibitem\">[%d]</span>\n", w.attrs(fmt.Sprintf("bib.bib%d", i+1), "ltx_bibitem"), i+1)
		for _, blk := range bibBlocks(it) {
			w.f("<span class=\"ltx_bibblock\">%s\n</span>\n", blk)
		}
		w.f("</li>\n")
	}
	w.f("</ul>\n</section>\n")
}

// bibBlocks renders an entry's \newblock parts as HTML: authors, title,
// and where it appeared with its arXiv id or DOI.
func bibBlocks(it BibItem) []string {
	if it.Raw != nil {
		out := make([]string, len(it.Raw))
		for i, r := range it.Raw {
			out[i] = html.EscapeString(r)
		}
		return out
	}
	p := paperByKey[it.Key]
	title := it.Title
	if title == "" {
		title = p.Title
	}
	authors := html.EscapeString(joinAuthors(p.Authors)) + "."
	blocks := []string{authors, html.EscapeString(strings.TrimRight(title, ".")) + "."}
	year := p.Year
	if p.Arxiv != "" {
		year = yearOf(p.Versions[0])
	}
	doi := ""
	if p.DOI != "" && !it.NoDOI {
		doi = fmt.Sprintf(` doi: <a class="ltx_ref ltx_url ltx_font_typewriter" href="https://doi.org/%s">%s</a>.`, p.DOI, p.DOI)
	}
	em := func(s string) string {
		return `<em class="ltx_emph ltx_font_italic">` + html.EscapeString(s) + `</em>`
	}
	switch {
	case p.Journal != "" && p.Arxiv != "":
		// Published in a journal after the preprint: cite the journal, with
		// the arXiv id as most bibliographies keep it.
		blocks = append(blocks, fmt.Sprintf("%s, %s:%s, %d. arXiv:%s.", em(p.Journal), p.Volume, p.Pages, p.Year, p.Arxiv)+doi)
	case p.Journal != "":
		loc := ""
		if p.Volume != "" {
			loc = ", " + p.Volume
			if p.Pages != "" {
				loc += ":" + p.Pages
			}
		}
		blocks = append(blocks, fmt.Sprintf("%s%s, %d.", em(p.Journal), loc, p.Year)+doi)
	case p.Publisher != "":
		blocks = append(blocks, fmt.Sprintf("%s, %d.", html.EscapeString(p.Publisher), p.Year)+doi)
	case p.Venue != "" && p.Arxiv != "":
		blocks = append(blocks, fmt.Sprintf("In %s, %d. URL <a class=\"ltx_ref ltx_url ltx_font_typewriter\" href=\"https://arxiv.org/abs/%s\">https://arxiv.org/abs/%s</a>.", em("Proceedings of the "+p.Venue), p.Year, p.Arxiv, p.Arxiv))
	case p.Venue != "":
		blocks = append(blocks, fmt.Sprintf("In %s, %d.", em("Proceedings of the "+p.Venue), p.Year)+doi)
	default:
		blocks = append(blocks, fmt.Sprintf("%s, %d.", em("arXiv preprint arXiv:"+p.Arxiv), year))
	}
	return blocks
}

// joinAuthors writes "A, B, and C" (natbib's plainnat style).
func joinAuthors(a []string) string {
	switch len(a) {
	case 1:
		return a[0]
	case 2:
		return a[0] + " and " + a[1]
	}
	return strings.Join(a[:len(a)-1], ", ") + ", and " + a[len(a)-1]
}

func yearOf(rfc3339 string) int {
	y, _ := strconv.Atoi(rfc3339[:4])
	return y
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n], ' ')
	if cut < 0 {
		cut = n
	}
	return s[:cut] + "…"
}
