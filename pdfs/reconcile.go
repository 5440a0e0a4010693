package pdfs

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
)

// reconcile corrects the metadata GROBID read from a source's PDF with the
// source's Semantic Scholar record, which citegraph stored: GROBID takes a
// repository's banner or a journal's name on the first page for the title
// ("Munich Personal RePEc Archive", "Mathematical Foundations of
// Computing"), repeats an author in a spelling cut short, and misses the
// abstract. Semantic Scholar's title is kept when the TEI's is a known
// banner or shares hardly a word with it (or is missing); its authors and
// abstract fill what the TEI lacks; an author that is a shorter spelling
// of another, which Semantic Scholar lists alone, is dropped. Each
// correction is said in Conversion.Notes; the full text follows.
func reconcile(doc *record.Document, p *record.ScholarPaper) {
	if p == nil {
		return
	}
	changed := false
	note := func(format string, args ...any) {
		doc.Conversion.Notes = append(doc.Conversion.Notes, "metadata: "+fmt.Sprintf(format, args...))
		changed = true
	}
	if s2Title := strings.TrimSpace(p.Title); s2Title != "" {
		switch {
		case doc.Title == nil || strings.TrimSpace(*doc.Title) == "":
			note("title from Semantic Scholar's record %q (the tei has none)", s2Title)
			doc.Title = &s2Title
		case isBanner(*doc.Title) && words(*doc.Title) != words(s2Title):
			note("title %q is a repository's or journal's banner, not the paper's: Semantic Scholar's %q kept", *doc.Title, s2Title)
			doc.Title = &s2Title
		case !titlesMatch(*doc.Title, s2Title):
			note("title %q shares hardly a word with Semantic Scholar's %q (GROBID took another line of the first page): Semantic Scholar's kept", *doc.Title, s2Title)
			doc.Title = &s2Title
		}
	}
	var s2Names []string
	for _, a := range p.Authors {
		if n := strings.TrimSpace(a.Name); n != "" {
			s2Names = append(s2Names, n)
		}
	}
	switch {
	case len(doc.Authors) == 0 && len(s2Names) > 0:
		doc.Authors = s2Names
		note("authors from Semantic Scholar's record (the tei names none)")
	case len(s2Names) > 0:
		listed := map[string]bool{}
		for _, n := range s2Names {
			listed[strings.ToLower(n)] = true
		}
		kept := doc.Authors[:0:0]
		for i, a := range doc.Authors {
			if b, ok := longerSpelling(a, doc.Authors, i); ok && listed[strings.ToLower(b)] && !listed[strings.ToLower(a)] {
				note("author %q dropped: a shorter spelling of %q, whom Semantic Scholar lists alone", a, b)
				continue
			}
			kept = append(kept, a)
		}
		doc.Authors = kept
	}
	if doc.Abstract == "" && p.Abstract != nil && strings.TrimSpace(*p.Abstract) != "" {
		doc.Abstract = strings.TrimSpace(*p.Abstract)
		note("abstract from Semantic Scholar's record (GROBID found none in the PDF)")
	}
	if changed {
		doc.FullText = latexml.FullText(doc)
	}
}

// longerSpelling returns another name of names that a (the i-th) begins,
// ending within its last word ("Guy Par" of "Guy Paré").
func longerSpelling(a string, names []string, i int) (string, bool) {
	la := strings.ToLower(a)
	for j, b := range names {
		lb := strings.ToLower(b)
		if j != i && len(lb) > len(la) && strings.HasPrefix(lb, la) && !strings.ContainsAny(lb[len(la):], " -") {
			return b, true
		}
	}
	return "", false
}

// banners are the lines GROBID takes for a title that are a repository's,
// a publisher's or a journal's, not a paper's (lower case, words only).
var banners = []string{
	"munich personal repec archive", "mpra paper", "hal open science", "hal id", "electronic copy available at",
	"ssrn electronic journal", "author manuscript", "accepted manuscript", "journal pre proof", "biorxiv preprint",
	"medrxiv preprint", "preprint", "research article", "original article", "review article", "original research",
	"open access", "contents lists available at sciencedirect", "this is a preprint", "downloaded from",
}

// isBanner reports whether title is a known banner, perhaps with a
// number or a few words after it ("MPRA Paper No. 12345").
func isBanner(title string) bool {
	w := words(title)
	for _, b := range banners {
		if w == b || strings.HasPrefix(w, b+" ") && len(strings.Fields(w[len(b):])) <= 3 {
			return true
		}
	}
	return false
}

// words returns s in lower case, its words separated by single spaces and
// everything but letters and digits dropped.
func words(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}

// titlesMatch reports whether two titles share at least half the content
// words of the shorter: a title cut short, or written with other
// punctuation or case, matches; one line of the first page for another
// does not.
func titlesMatch(a, b string) bool {
	wa, wb := contentWords(a), contentWords(b)
	if len(wa) == 0 || len(wb) == 0 {
		return len(wa) == len(wb)
	}
	shared := 0
	for w := range wa {
		if wb[w] {
			shared++
		}
	}
	return 2*shared >= min(len(wa), len(wb))
}

func contentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(words(s)) {
		if len(w) > 2 && !stopWords[w] {
			out[w] = true
		}
	}
	return out
}

var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "from": true, "into": true, "via": true, "its": true,
	"our": true, "are": true, "how": true, "what": true, "why": true, "when": true, "does": true, "can": true,
}
