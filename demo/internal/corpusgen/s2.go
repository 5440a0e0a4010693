package corpusgen

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"
)

// The Semantic Scholar shapes, with fields in the order the API writes
// them. Pointers and nil slices are the API's nulls.

type s2ExternalIDs struct {
	DBLP     string `json:"DBLP,omitempty"`
	ArXiv    string `json:"ArXiv,omitempty"`
	DOI      string `json:"DOI,omitempty"`
	CorpusID int    `json:"CorpusId"`
}

type s2Venue struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

type s2OpenAccess struct {
	URL        string  `json:"url"`
	Status     *string `json:"status"`
	License    *string `json:"license"`
	Disclaimer string  `json:"disclaimer,omitempty"`
}

type s2FieldOfStudy struct {
	Category string `json:"category"`
	Source   string `json:"source"`
}

type s2Journal struct {
	Name   string `json:"name,omitempty"`
	Volume string `json:"volume,omitempty"`
	Pages  string `json:"pages,omitempty"`
}

type s2Author struct {
	AuthorID *string `json:"authorId"`
	Name     string  `json:"name"`
}

type s2Paper struct {
	PaperID                  *string           `json:"paperId"`
	ExternalIDs              *s2ExternalIDs    `json:"externalIds"`
	CorpusID                 *int              `json:"corpusId"`
	PublicationVenue         *s2Venue          `json:"publicationVenue"`
	URL                      *string           `json:"url"`
	Title                    string            `json:"title"`
	Abstract                 *string           `json:"abstract"`
	Venue                    string            `json:"venue"`
	Year                     *int              `json:"year"`
	ReferenceCount           *int              `json:"referenceCount"`
	CitationCount            *int              `json:"citationCount"`
	InfluentialCitationCount *int              `json:"influentialCitationCount"`
	IsOpenAccess             *bool             `json:"isOpenAccess"`
	OpenAccessPdf            *s2OpenAccess     `json:"openAccessPdf"`
	FieldsOfStudy            []string          `json:"fieldsOfStudy"`
	S2FieldsOfStudy          []s2FieldOfStudy  `json:"s2FieldsOfStudy"`
	PublicationTypes         []string          `json:"publicationTypes"`
	PublicationDate          *string           `json:"publicationDate"`
	Journal                  *s2Journal        `json:"journal"`
	CitationStyles           map[string]string `json:"citationStyles"`
	Authors                  []s2Author        `json:"authors"`
}

type s2Context struct {
	Context string   `json:"context"`
	Intents []string `json:"intents"`
}

type s2Edge struct {
	Contexts           []string    `json:"contexts"`
	Intents            []string    `json:"intents"`
	ContextsWithIntent []s2Context `json:"contextsWithIntent"`
	IsInfluential      bool        `json:"isInfluential"`
	CitedPaper         s2Paper     `json:"citedPaper"`
}

// paperID is a paper's invented 40-hex S2 id.
func paperID(key string) string {
	h := sha1.Sum([]byte("groundwork-demo/paper/" + key))
	return hex.EncodeToString(h[:])
}

// corpusID is a paper's invented S2 corpus id.
func corpusID(key string) int {
	return 270000000 + int(crc32.ChecksumIEEE([]byte("corpus/"+key))%20000000)
}

func authorID(name string) string {
	return strconv.Itoa(1000000 + int(crc32.ChecksumIEEE([]byte("author/"+name))%2000000000))
}

func venueID(name string) string {
	h := sha1.Sum([]byte("groundwork-demo/venue/" + name))
	x := hex.EncodeToString(h[:16])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

func ptr[T any](v T) *T { return &v }

// s2Record is the full /paper record of p; refCount is the length of its
// reference list.
func s2Record(p *Paper, refCount int) s2Paper {
	id := paperID(p.Key)
	ext := &s2ExternalIDs{ArXiv: p.Arxiv, DOI: p.DOI, CorpusID: corpusID(p.Key)}
	if p.Arxiv != "" && p.DOI == "" {
		ext.DOI = "10.48550/arXiv." + p.Arxiv
	}
	if p.Arxiv != "" && strings.HasPrefix(p.Primary, "cs.") {
		ext.DBLP = "journals/corr/abs-" + strings.ReplaceAll(p.Arxiv, ".", "-")
	} else if p.Key == "reject" {
		ext.DBLP = "journals/jmlr/HolmN19"
	}
	r := s2Paper{
		PaperID:                  ptr(id),
		ExternalIDs:              ext,
		CorpusID:                 ptr(ext.CorpusID),
		URL:                      ptr("https://www.semanticscholar.org/paper/" + id),
		Title:                    p.Title,
		Venue:                    p.Venue,
		Year:                     ptr(p.Year),
		ReferenceCount:           ptr(refCount),
		CitationCount:            ptr(p.Citations),
		InfluentialCitationCount: ptr(p.Citations / 9),
		IsOpenAccess:             ptr(p.Arxiv != ""),
		FieldsOfStudy:            p.Fields,
		PublicationTypes:         p.PubTypes,
		Authors:                  []s2Author{},
		CitationStyles:           map[string]string{"bibtex": bibtex(p)},
	}
	if p.S2Title != "" {
		r.Title = p.S2Title
	}
	if !p.NoAbstract {
		r.Abstract = ptr(p.Abstract)
	}
	if p.Venue == "" && p.Arxiv != "" {
		r.Venue = "arXiv.org"
	}
	if p.VenueType != "" {
		r.PublicationVenue = &s2Venue{ID: venueID(p.Venue), Name: p.Venue, Type: p.VenueType}
	}
	switch {
	case p.Arxiv != "":
		r.OpenAccessPdf = &s2OpenAccess{URL: "https://arxiv.org/pdf/" + p.Arxiv, Status: ptr("GREEN")}
	case p.NoAbstract:
		r.OpenAccessPdf = &s2OpenAccess{Status: ptr("CLOSED"), Disclaimer: "Notice: The following paper fields have been elided by the publisher: {'abstract'}. " +
			"Paper or abstract available at https://api.unpaywall.org/v2/" + p.DOI + "?email=<INSERT_YOUR_EMAIL> or https://doi.org/" + p.DOI +
			", which is subject to the license by the author or copyright owner provided with this content. Please go to the source to verify the license and copyright information for your use."}
	default:
		r.OpenAccessPdf = &s2OpenAccess{}
	}
	for _, f := range p.Fields {
		r.S2FieldsOfStudy = append(r.S2FieldsOfStudy, s2FieldOfStudy{f, "external"})
	}
	if len(p.Fields) > 0 {
		r.S2FieldsOfStudy = append(r.S2FieldsOfStudy, s2FieldOfStudy{p.Fields[0], "s2-fos-model"})
	}
	if p.PubDate != "" {
		r.PublicationDate = ptr(p.PubDate)
	}
	switch {
	case p.Journal != "":
		r.Journal = &s2Journal{Name: p.Journal, Volume: p.Volume, Pages: p.Pages}
	case p.Venue != "":
		r.Journal = &s2Journal{Name: p.Venue}
	case p.Arxiv != "":
		r.Journal = &s2Journal{Name: "ArXiv", Volume: "abs/" + p.Arxiv}
	}
	for _, a := range p.Authors {
		r.Authors = append(r.Authors, s2Author{AuthorID: ptr(authorID(a)), Name: a})
	}
	return r
}

func bibtex(p *Paper) string {
	last := strings.Fields(p.Authors[0])
	first := strings.Fields(p.Title)
	key := fmt.Sprintf("%s%d%s", last[len(last)-1], p.Year, strings.Trim(first[0], ":,?"))
	kind, where := "Article", ""
	switch {
	case p.Publisher != "":
		kind, where = "Book", fmt.Sprintf(" publisher = {%s},\n", p.Publisher)
	case p.Journal != "":
		where = fmt.Sprintf(" journal = {%s},\n", p.Journal)
	case p.Venue != "":
		kind, where = "Conference", fmt.Sprintf(" booktitle = {%s},\n", p.Venue)
	case p.Arxiv != "":
		where = fmt.Sprintf(" journal = {ArXiv},\n volume = {abs/%s},\n", p.Arxiv)
	}
	return fmt.Sprintf("@%s{%s,\n author = {%s},\n%s title = {%s},\n year = {%d}\n}\n",
		kind, key, strings.Join(p.Authors, " and "), where, p.Title, p.Year)
}

// s2References builds the S2 reference list of a page's paper, imperfect
// as its quirks say.
func s2References(p *Paper, q S2Quirks, records map[string]s2Paper) []s2Edge {
	contexts := map[string][]string{}
	num := map[string]int{}
	for i, it := range p.Page.Bib {
		num[it.Key] = i + 1
	}
	forEachSentence(p.Page, func(s string) {
		for _, k := range uniq(citedKeys(s)) {
			contexts[k] = append(contexts[k], plainSentence(s, num))
		}
	})
	edge := func(key string) s2Edge {
		e := s2Edge{
			Contexts:           []string{},
			Intents:            []string{},
			ContextsWithIntent: []s2Context{},
			IsInfluential:      slices.Contains(q.Influential, key),
		}
		if in := q.Intents[key]; in != nil {
			e.Intents = in
		}
		if !slices.Contains(q.NoContexts, key) {
			for _, c := range contexts[key] {
				e.Contexts = append(e.Contexts, c)
				e.ContextsWithIntent = append(e.ContextsWithIntent, s2Context{Context: c, Intents: e.Intents})
			}
		}
		if u, ok := q.Unresolved[key]; ok {
			e.CitedPaper = s2Paper{Title: u.Title, Venue: u.Venue, Year: ptr(u.Year), Authors: []s2Author{}}
			return e
		}
		e.CitedPaper = records[key]
		if slices.Contains(q.NullAbstract, key) {
			e.CitedPaper.Abstract = nil
		}
		return e
	}
	var out []s2Edge
	for i, it := range p.Page.Bib {
		if i == 3 {
			for _, k := range q.Extra {
				out = append(out, edge(k))
			}
		}
		if slices.Contains(q.Missing, it.Key) {
			continue
		}
		if it.Raw != nil {
			if _, ok := q.Unresolved[it.Key]; !ok {
				continue // S2 drops what it cannot parse at all
			}
		}
		out = append(out, edge(it.Key))
	}
	return out
}

// forEachSentence calls fn for every sentence of the page's sections and
// table captions, in document order.
func forEachSentence(pg *Page, fn func(string)) {
	var walk func(s Section)
	walk = func(s Section) {
		for _, b := range s.Blocks {
			if b.Table != nil {
				fn(b.Table.Caption)
				continue
			}
			for _, x := range b.Sentences {
				fn(x)
			}
			for _, x := range b.After {
				fn(x)
			}
		}
		for _, sub := range s.Subs {
			walk(sub)
		}
	}
	for _, s := range pg.Sections {
		walk(s)
	}
}

func uniq(keys []string) []string {
	var out []string
	for _, k := range keys {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
