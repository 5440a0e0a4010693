package corpusgen

import (
	"fmt"
	"strings"
)

// renderFeed renders every arXiv paper as an entry of one Atom feed, the
// way export.arxiv.org/api/query answers. The demo server serves subsets of
// these entries.
func renderFeed(papers []*Paper) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">` + "\n")
	b.WriteString(`  <link href="http://arxiv.org/api/query?search_query%3D%26id_list%3D%26start%3D0%26max_results%3D100" rel="self" type="application/atom+xml"/>` + "\n")
	b.WriteString(`  <title type="html">ArXiv Query: search_query=&amp;id_list=&amp;start=0&amp;max_results=100</title>` + "\n")
	b.WriteString("  <id>http://arxiv.org/api/groundwork-demo-corpus</id>\n")
	b.WriteString("  <updated>2026-07-01T00:00:00-04:00</updated>\n")
	n := 0
	for _, p := range papers {
		if p.Arxiv != "" {
			n++
		}
	}
	fmt.Fprintf(&b, "  <opensearch:totalResults>%d</opensearch:totalResults>\n", n)
	b.WriteString("  <opensearch:startIndex>0</opensearch:startIndex>\n")
	fmt.Fprintf(&b, "  <opensearch:itemsPerPage>%d</opensearch:itemsPerPage>\n", n)
	for _, p := range papers {
		if p.Arxiv != "" {
			b.WriteString(renderEntry(p))
		}
	}
	b.WriteString("</feed>\n")
	return b.String()
}

func renderEntry(p *Paper) string {
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	idv := fmt.Sprintf("%sv%d", p.Arxiv, len(p.Versions))
	f("  <entry>\n")
	f("    <id>http://arxiv.org/abs/%s</id>\n", idv)
	f("    <updated>%s</updated>\n", p.Versions[len(p.Versions)-1])
	f("    <published>%s</published>\n", p.Versions[0])
	f("    <title>%s</title>\n", xmlEscape(wrap(p.Title, 70, "\n  ")))
	f("    <summary>  %s\n</summary>\n", xmlEscape(wrap(p.Abstract, 78, "\n")))
	for _, a := range p.Authors {
		f("    <author>\n      <name>%s</name>\n    </author>\n", xmlEscape(a))
	}
	if p.DOI != "" {
		f("    <arxiv:doi>%s</arxiv:doi>\n", p.DOI)
		f("    <link title=\"doi\" href=\"http://dx.doi.org/%s\" rel=\"related\"/>\n", p.DOI)
	}
	if p.Comment != "" {
		f("    <arxiv:comment>%s</arxiv:comment>\n", xmlEscape(p.Comment))
	}
	if p.JournalRef != "" {
		f("    <arxiv:journal_ref>%s</arxiv:journal_ref>\n", xmlEscape(p.JournalRef))
	}
	f("    <link href=\"http://arxiv.org/abs/%s\" rel=\"alternate\" type=\"text/html\"/>\n", idv)
	f("    <link title=\"pdf\" href=\"http://arxiv.org/pdf/%s\" rel=\"related\" type=\"application/pdf\"/>\n", idv)
	f("    <arxiv:primary_category term=\"%s\" scheme=\"http://arxiv.org/schemas/atom\"/>\n", p.Primary)
	for _, c := range p.Cats {
		f("    <category term=\"%s\" scheme=\"http://arxiv.org/schemas/atom\"/>\n", c)
	}
	f("  </entry>\n")
	return b.String()
}

// wrap breaks s into lines of at most width bytes, joined by sep, as the
// API wraps titles and summaries.
func wrap(s string, width int, sep string) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), sep)
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
