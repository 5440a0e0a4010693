package sim

import (
	"fmt"
	"html"
	"strings"
	"time"
)

// A page is built as sections of paragraphs of sentences, each sentence a
// run of text and citations, then rendered as LaTeXML HTML (the page) or
// as plain text (what Semantic Scholar gives as citation contexts).

type segment struct {
	text string
	cite int // 1-based bibliography number; 0 for text
}

type sentence []segment

type section struct {
	title string
	paras [][]sentence
}

// s builds a sentence from text and citation numbers (ints).
func s(parts ...any) sentence {
	var out sentence
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, segment{text: v})
		case int:
			out = append(out, segment{cite: v})
		}
	}
	return out
}

// plain renders a sentence the way the page reads: "[3]" for a citation.
func (st sentence) plain() string {
	var b strings.Builder
	for _, g := range st {
		if g.cite > 0 {
			fmt.Fprintf(&b, "[%d]", g.cite)
		} else {
			b.WriteString(g.text)
		}
	}
	return b.String()
}

func (st sentence) cites() []int {
	var out []int
	for _, g := range st {
		if g.cite > 0 {
			out = append(out, g.cite)
		}
	}
	return out
}

// Cue phrases: the sentence citing a source says why it matters, in words
// the simulated LLM recognises (see classifyAnswer). Other references are
// cited without them.
var cueTemplates = map[string]string{
	"motivates":   "The question we study was first raised by %s %s in work on %s.",
	"exposes_gap": "As %s %s showed, %s breaks down when %s.",
	"foundation":  "Our method builds directly on the %s of %s %s.",
	"extends":     "We extend the %s of %s %s to %s.",
}

var cuePhrases = map[string]string{
	"motivates":   "first raised by",
	"exposes_gap": "breaks down when",
	"foundation":  "builds directly on",
	"extends":     "We extend the",
}

var otherTemplates = []string{
	"Related work on %s includes %s %s.",
	"We follow the evaluation protocol for %s of %s %s without changes.",
	"A broader view of %s appears in %s %s.",
	"Baselines for %s come from %s %s.",
}

// body returns the sections of p's page.
func (w *World) body(p *Paper, refs []Ref) []section {
	r := w.rng("body", p.Kind, p.Index)
	aspect, cond := pick(r, aspects), pick(r, conditions)
	intro := []sentence{s(fmt.Sprintf("Methods for %s lose %s when %s.", lower(p.topic), aspect, cond))}
	var method []sentence
	method = append(method,
		s(fmt.Sprintf("%s applies %s %s in three steps.", p.Name, lower(p.method), lower(p.obj))),
		s("Each step is trained with the same objective and the same budget."))
	for i, ref := range refs {
		k, q := i+1, ref.Paper
		const mark = "\x00"
		var text string
		switch {
		case ref.Role == RoleSource:
			switch ref.Label {
			case "motivates":
				text = fmt.Sprintf(cueTemplates[ref.Label], q.Name, mark, lower(q.topic))
			case "exposes_gap":
				text = fmt.Sprintf(cueTemplates[ref.Label], q.Name, mark, lower(q.method+" "+q.obj), pick(r, conditions))
			case "foundation":
				text = fmt.Sprintf(cueTemplates[ref.Label], lower(q.obj), q.Name, mark)
			default:
				text = fmt.Sprintf(cueTemplates["extends"], lower(q.obj), q.Name, mark, lower(p.topic))
			}
			method = append(method, s(fmt.Sprintf("Our notation for %s follows %s ", lower(q.obj), q.Name), k, "."))
		case p.Kind == kindBackground:
			text = fmt.Sprintf("This work relates to %s %s.", q.Name, mark)
		default:
			text = fmt.Sprintf(pick(r, otherTemplates), lower(q.topic), q.Name, mark)
		}
		before, after, _ := strings.Cut(text, mark)
		intro = append(intro, s(before, k, after))
	}
	var paras [][]sentence
	for len(intro) > 0 {
		n := min(len(intro), 4)
		paras = append(paras, intro[:n])
		intro = intro[n:]
	}
	conclusion := [][]sentence{{
		s(fmt.Sprintf("%s keeps %s intact at no extra cost.", p.Name, aspect)),
	}}
	if pl, ok := w.planted[p.Index]; ok && p.Kind == kindTarget {
		conclusion = append(conclusion, []sentence{s(plantedSentence(pl, len(refs)))})
	}
	secs := []section{
		{"Introduction", paras},
		{"Method", [][]sentence{method}},
		{"Results", [][]sentence{{
			s(fmt.Sprintf("On %d benchmarks %s improves %s by %d.%d points.", 3+r.IntN(5), p.Name, pick(r, metrics), 1+r.IntN(9), r.IntN(10))),
			s(fmt.Sprintf("The gain is largest when %s.", cond)),
		}}},
	}
	if w.cfg.PaperTokens > 0 {
		secs = append(secs, section{"Experiments", w.experiments(p, secs)})
	}
	return append(secs, section{"Conclusion", conclusion})
}

// experimentTemplates are the sentences that lengthen a page to
// WorldConfig.PaperTokens: they cite nothing, and hold none of the words
// that make a sentence read as one addressing a model (package
// injection) or the cue phrases of a source.
var experimentTemplates = []string{
	"Table %[1]d lists %[2]s for %[3]s on %[1]d splits, and the spread across seeds stays below %[4]d.%[5]d points.",
	"Removing the %[6]s step lowers %[2]s by %[4]d.%[5]d points, most of it when %[7]s.",
	"With half the training data, %[3]s keeps %[8]s within %[4]d.%[5]d points of the full run.",
	"Figure %[1]d plots %[2]s against the number of steps for each of the %[4]d configurations of %[3]s.",
	"We tune the step size on a held-out split of %[1]d00 examples and keep it fixed for every run of %[3]s.",
	"Runs that start from a smaller %[6]s converge more slowly but end at the same %[2]s.",
	"The gap to the strongest baseline narrows when %[7]s and widens again at larger scale.",
	"Each configuration of %[3]s is trained %[1]d times, and the means are reported with their standard deviations.",
}

// experiments returns the paragraphs that bring p's page, whose sections
// so far are secs, to about WorldConfig.PaperTokens tokens.
func (w *World) experiments(p *Paper, secs []section) [][]sentence {
	size := len(p.Title) + len(p.Abstract)
	for _, sec := range secs {
		for _, para := range sec.paras {
			for _, st := range para {
				size += len(st.plain()) + 1
			}
		}
	}
	r := w.rng("experiments", p.Kind, p.Index)
	var paras [][]sentence
	var para []sentence
	for size < 4*w.cfg.PaperTokens {
		text := fmt.Sprintf(pick(r, experimentTemplates), 2+r.IntN(7), pick(r, metrics), p.Name, 1+r.IntN(9), r.IntN(10),
			lower(pick(r, objectWords)), pick(r, conditions), pick(r, aspects))
		para = append(para, s(text))
		size += len(text) + 1
		if len(para) == 5 {
			paras, para = append(paras, para), nil
		}
	}
	if len(para) > 0 {
		paras = append(paras, para)
	}
	return paras
}

// Contexts returns, per reference of p (in bibliography order), the
// sentences of its page that cite it, as plain text.
func (w *World) Contexts(p *Paper, refs []Ref) [][]string {
	out := make([][]string, len(refs))
	for _, sec := range w.body(p, refs) {
		for _, para := range sec.paras {
			for _, st := range para {
				for _, k := range st.cites() {
					out[k-1] = append(out[k-1], st.plain())
				}
			}
		}
	}
	return out
}

// Page returns p's HTML as site (HTMLArxiv or HTMLAr5iv) serves it.
func (w *World) Page(p *Paper, site string) []byte {
	refs := w.References(p)
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	title := html.EscapeString(p.Title)
	generated := p.Updated.Add(36 * time.Hour).Format("Mon Jan _2 15:04:05 2006")
	if site == HTMLAr5iv {
		f("<!DOCTYPE html><html lang=\"en\">\n<head>\n<meta http-equiv=\"content-type\" content=\"text/html; charset=UTF-8\">\n")
		f("<title>[%s] %s</title>\n<meta property=\"og:title\" content=\"%s\">\n<meta property=\"og:site_name\" content=\"ar5iv\">\n", p.ArxivID, title, title)
		f("<meta property=\"og:url\" content=\"https://ar5iv.labs.arxiv.org/html/%s\">\n", p.ArxivID)
		f("<link rel=\"canonical\" target=\"_blank\" href=\"https://ar5iv.labs.arxiv.org/html/%s\">\n", p.ArxivID)
		f("<!--Generated on %s by LaTeXML (version 0.8.8) http://dlmf.nist.gov/LaTeXML/.-->\n</head>\n<body>\n", generated)
	} else {
		f("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta content=\"text/html; charset=utf-8\" http-equiv=\"content-type\"/>\n")
		f("<title>%s</title>\n<!--Generated on %s by LaTeXML (version 0.8.8) http://dlmf.nist.gov/LaTeXML/.-->\n", title, generated)
		f("<link href=\"/static/browse/0.3.4/css/arxiv-html-papers-20250916.css\" rel=\"stylesheet\" type=\"text/css\"/>\n")
		f("<base href=\"/html/%s/\"/></head>\n<body>\n<nav class=\"ltx_page_navbar\">\n</nav>\n", p.IDv())
	}
	f("<div class=\"ltx_page_main\">\n<div class=\"ltx_page_content\">\n<article class=\"ltx_document ltx_authors_1line\">\n")
	f("<h1 class=\"ltx_title ltx_title_document\">%s</h1>\n<div class=\"ltx_authors\">\n", title)
	for i, a := range p.Authors {
		if i > 0 {
			f("<span class=\"ltx_author_before\">  </span>")
		}
		f("<span class=\"ltx_creator ltx_role_author\">\n<span class=\"ltx_personname\">%s\n</span></span>\n", html.EscapeString(a))
	}
	f("</div>\n<div class=\"ltx_abstract\">\n<h6 class=\"ltx_title ltx_title_abstract\">Abstract</h6>\n<p class=\"ltx_p\">%s</p>\n</div>\n",
		html.EscapeString(strings.ReplaceAll(p.Abstract, ". ", ".\n")))
	for i, sec := range w.body(p, refs) {
		n := i + 1
		f("<section class=\"ltx_section\" id=\"S%d\">\n", n)
		f("<h2 class=\"ltx_title ltx_title_section\"><span class=\"ltx_tag ltx_tag_section\">%d </span>%s</h2>\n", n, sec.title)
		for j, para := range sec.paras {
			id := fmt.Sprintf("S%d.p%d", n, j+1)
			f("<div class=\"ltx_para\" id=\"%s\">\n<p class=\"ltx_p\" id=\"%s.1\">", id, id)
			for k, st := range para {
				if k > 0 {
					b.WriteByte('\n')
				}
				for _, g := range st {
					if g.cite > 0 {
						f(`<cite class="ltx_cite ltx_citemacro_cite">[<a class="ltx_ref" href="#bib.bib%d" title="">%d</a>]</cite>`, g.cite, g.cite)
					} else {
						b.WriteString(html.EscapeString(g.text))
					}
				}
			}
			f("</p>\n</div>\n")
		}
		f("</section>\n")
	}
	if len(refs) > 0 {
		f("<section class=\"ltx_bibliography\" id=\"bib\">\n<h2 class=\"ltx_title ltx_title_bibliography\">References</h2>\n\n<ul class=\"ltx_biblist\">\n")
		for i, ref := range refs {
			q := ref.Paper
			f("<li class=\"ltx_bibitem\" id=\"bib.bib%d\">\n<span class=\"ltx_tag ltx_role_refnum ltx_tag_bibitem\">[%d]</span>\n", i+1, i+1)
			f("<span class=\"ltx_bibblock\">%s.\n</span>\n", html.EscapeString(joinAuthors(q.Authors)))
			f("<span class=\"ltx_bibblock\">%s.\n</span>\n", html.EscapeString(q.Title))
			if q.ArxivID != "" {
				f("<span class=\"ltx_bibblock\"><em class=\"ltx_emph ltx_font_italic\">arXiv preprint arXiv:%s</em>, %d.\n</span>\n", q.ArxivID, q.Year())
			} else {
				f("<span class=\"ltx_bibblock\"><em class=\"ltx_emph ltx_font_italic\">%s</em>, %d. doi: %s.\n</span>\n", html.EscapeString(q.Venue), q.Year(), q.DOI)
			}
			f("</li>\n")
		}
		f("</ul>\n</section>\n")
	}
	f("</article>\n</div>\n")
	if site == HTMLAr5iv {
		f("<div class=\"ar5iv-footer\"><a href=\"/log/%s\" class=\"ar5iv-text-button ar5iv-severity-ok\">Conversion<br>report</a>\n", p.ArxivID)
		f("<a href=\"https://arxiv.org/abs/%s\" class=\"ar5iv-text-button arxiv-ui-theme\">View&nbsp;original<br>on&nbsp;arXiv</a></div>\n", p.ArxivID)
	}
	f("<footer class=\"ltx_page_footer\">\n<div class=\"ltx_page_logo\">Generated on %s by LaTeXML</div></footer>\n", generated)
	f("</div>\n</body>\n</html>\n")
	return []byte(b.String())
}

func joinAuthors(as []string) string {
	switch len(as) {
	case 0:
		return "Anonymous"
	case 1:
		return as[0]
	case 2:
		return as[0] + " and " + as[1]
	}
	return strings.Join(as[:len(as)-1], ", ") + ", and " + as[len(as)-1]
}
