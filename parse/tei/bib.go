package tei

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// Patterns of identifiers in untyped idno elements, pointers and raw
// reference strings. They are compiled once and never modified.
var (
	// "arXiv:2403.09054", "ArXiv, abs/2211.13308", "CoRR, abs/1602.04938",
	// "arxiv.org/abs/hep-th/9901001", "10.48550/arXiv.2312.07559".
	reArxivText = regexp.MustCompile(`(?i)(?:arxiv[:\s,]*(?:abs/)?|arxiv\.org/(?:abs|pdf)/|\babs/|10\.48550/arxiv\.)(\d{4}\.\d{4,5}|[a-z]+(?:-[a-z]+)?(?:\.[a-z]{2})?/\d{7})(v\d+)?`)
	reDOIText   = regexp.MustCompile(`\b10\.\d{4,9}/[^\s"<>]+`)
	reYearText  = regexp.MustCompile(`\b(1[6-9]\d\d|20\d\d)\b`)
)

// reference converts one biblStruct; i is its position, for a key when
// GROBID gave it no xml:id.
func reference(b *node, i int) record.Reference {
	r := record.Reference{Key: b.attr("id")}
	if r.Key == "" {
		r.Key = "b" + strconv.Itoa(i)
	}
	analytic := b.child("analytic")
	monogrs := b.all("monogr")

	title, venue := "", ""
	if analytic != nil {
		title = mainTitle(analytic.all("title"), nil)
	}
	var monoTitles []*node
	for _, m := range monogrs {
		monoTitles = append(monoTitles, m.all("title")...)
	}
	if title == "" {
		// A book, thesis or preprint: its monograph title is the title; a
		// journal's name never is.
		title = mainTitle(monoTitles, map[string]bool{"j": true, "s": true})
	} else {
		venue = mainTitle(monoTitles, nil)
	}
	r.Title = cleanTitle(title)

	var ids []*node
	ids = append(ids, idnos(b)...)
	var ptrs []string
	for _, pt := range b.descendants("ptr") {
		if t := pt.attr("target"); t != "" {
			ptrs = append(ptrs, t)
		}
	}
	raw := ""
	var notes []string
	for _, n := range b.descendants("note") {
		if n.attr("type") == "raw_reference" {
			raw = plain(n)
		} else if t := plain(n); t != "" {
			notes = append(notes, t)
		}
	}

	for _, id := range ids {
		switch strings.ToLower(id.attr("type")) {
		case "doi":
			if r.DOI == "" {
				r.DOI = cleanDOI(plain(id))
			}
		case "arxiv":
			if r.ArxivID == "" {
				if a, err := arxiv.Parse(trimArxivIdno(plain(id))); err == nil {
					r.ArxivID = a.Canonical()
				}
			}
		}
	}
	var loose []string // where an id may hide: untyped idnos, pointers, notes, the raw string
	for _, id := range ids {
		if t := strings.ToLower(id.attr("type")); t == "" || t == "arxiv" {
			loose = append(loose, plain(id))
		}
	}
	loose = append(loose, ptrs...)
	loose = append(loose, notes...)
	loose = append(loose, raw)
	all := strings.Join(loose, " ")
	if r.DOI == "" {
		if m := reDOIText.FindString(all); m != "" {
			r.DOI = cleanDOI(m)
		}
	}
	if r.ArxivID == "" {
		r.ArxivID = findArxivID(all + " " + r.DOI)
	}

	r.Year = year(b)
	if r.Year == 0 && raw != "" {
		r.Year = lastYear(raw)
	}

	if raw != "" {
		r.Text = raw
	} else {
		r.Text = composeText(b, analytic, monogrs, r, venue)
	}
	return r
}

// idnos returns the identifiers of an entry: on the entry, its analytic,
// monographs and series.
func idnos(b *node) []*node {
	out := b.all("idno")
	for _, part := range []string{"analytic", "monogr", "series"} {
		for _, x := range b.all(part) {
			out = append(out, x.all("idno")...)
		}
	}
	return out
}

// mainTitle returns the first title of type main, else the first title,
// skipping levels in skip.
func mainTitle(titles []*node, skip map[string]bool) string {
	for _, main := range []bool{true, false} {
		for _, t := range titles {
			if skip[t.attr("level")] || main && t.attr("type") != "main" {
				continue
			}
			if s := plain(t); s != "" {
				return s
			}
		}
	}
	return ""
}

func cleanTitle(t string) string {
	t = strings.TrimSpace(t)
	t = strings.TrimRight(t, " .,;:")
	return strings.TrimSpace(t)
}

// cleanDOI strips a DOI of its "doi:" or resolver prefix and of trailing
// punctuation; "" when what remains is no DOI.
func cleanDOI(s string) string {
	s = strings.TrimSpace(s)
	low := strings.ToLower(s)
	for _, p := range []string{"https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi.org/", "doi:", "doi "} {
		if strings.HasPrefix(low, p) {
			s = strings.TrimSpace(s[len(p):])
			break
		}
	}
	s = strings.TrimRight(s, ".,;:)]}>'\u201d")
	if !strings.HasPrefix(s, "10.") || !strings.Contains(s, "/") || strings.ContainsAny(s, " \t\n") {
		return ""
	}
	return s
}

// trimArxivIdno turns GROBID's arXiv idno ("arXiv:2405.10637v1[cs.CL]",
// "arXiv:2403.09054", "abs/1612.00796") into a bare id.
func trimArxivIdno(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '['); i > 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if len(s) > 6 && strings.EqualFold(s[:6], "arxiv:") {
		s = strings.TrimSpace(s[6:])
	}
	s = strings.TrimPrefix(s, "abs/")
	return strings.TrimRight(s, ".,;")
}

func findArxivID(s string) string {
	for _, m := range reArxivText.FindAllStringSubmatch(s, -1) {
		if id, err := arxiv.Parse(m[1]); err == nil {
			return id.Canonical()
		}
	}
	return ""
}

// year reads the publication year: a date of type "published" first,
// else any date of the entry.
func year(b *node) int {
	dates := b.descendants("date")
	for _, published := range []bool{true, false} {
		for _, d := range dates {
			if published && d.attr("type") != "published" {
				continue
			}
			if y := dateYear(d); y != 0 {
				return y
			}
		}
	}
	return 0
}

// dateYear reads a year from a date's when attribute ("2024-05-17") or
// its text.
func dateYear(d *node) int {
	if w := d.attr("when"); len(w) >= 4 {
		if y, err := strconv.Atoi(w[:4]); err == nil && plausibleYear(y) {
			return y
		}
	}
	return lastYear(plain(d))
}

func lastYear(s string) int {
	m := reYearText.FindAllString(s, -1)
	for i := len(m) - 1; i >= 0; i-- {
		if y, _ := strconv.Atoi(m[i]); plausibleYear(y) {
			return y
		}
	}
	return 0
}

func plausibleYear(y int) bool { return y >= 1600 && y <= time.Now().Year()+1 }

// composeText writes a readable entry from the fields, for a TEI without
// raw reference strings: "Authors. Year. Title. Venue, volume, pages.
// Publisher. doi:…".
func composeText(b, analytic *node, monogrs []*node, r record.Reference, venue string) string {
	var authors []*node
	if analytic != nil {
		authors = analytic.all("author")
	}
	for _, m := range monogrs {
		if len(authors) == 0 {
			authors = m.all("author")
		}
	}
	var parts []string
	add := func(s string) {
		if s = strings.TrimRight(strings.TrimSpace(s), " .,;"); s != "" {
			parts = append(parts, s)
		}
	}
	names := authorNames(authors)
	switch {
	case len(names) > 2:
		add(strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1])
	default:
		add(strings.Join(names, " and "))
	}
	if r.Year != 0 {
		add(strconv.Itoa(r.Year))
	}
	add(r.Title)
	var where []string
	if venue != "" {
		where = append(where, venue)
	} else {
		for _, m := range monogrs {
			if mt := plain(m.child("meeting")); mt != "" {
				where = append(where, mt)
				break
			}
		}
	}
	publisher := ""
	for _, m := range monogrs {
		im := m.child("imprint")
		if im == nil {
			continue
		}
		for _, sc := range im.all("biblScope") {
			where = append(where, scope(sc))
		}
		if publisher == "" {
			publisher = plain(im.child("publisher"))
		}
	}
	add(strings.Join(nonEmpty(where), ", "))
	add(publisher)
	if r.DOI != "" {
		add("doi:" + r.DOI)
	}
	if r.ArxivID != "" {
		add("arXiv:" + r.ArxivID)
	}
	if len(parts) == 0 {
		return plain(b)
	}
	return strings.Join(parts, ". ") + "."
}

// scope writes a biblScope: "vol. 34", "no. 2", "pp. 7432-7439".
func scope(sc *node) string {
	v := plain(sc)
	if v == "" {
		from, to := sc.attr("from"), sc.attr("to")
		switch {
		case from != "" && to != "":
			v = from + "-" + to
		default:
			v = from + to
		}
	}
	if v == "" {
		return ""
	}
	switch sc.attr("unit") {
	case "volume":
		return "vol. " + v
	case "issue":
		return "no. " + v
	case "page":
		return "pp. " + v
	}
	return v
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
