package corpusgen

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"

	"github.com/groundwork/curate/sim"
)

// The Semantic Scholar shapes are sim's (sim.S2Paper and the rest): one
// declaration of the wire format for the demo, the synthetic world and the
// tests.

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
func s2Record(p *Paper, refCount int) sim.S2Paper {
	id := paperID(p.Key)
	ext := &sim.S2ExternalIDs{ArXiv: p.Arxiv, DOI: p.DOI, CorpusID: int64(corpusID(p.Key))}
	if p.Arxiv != "" && p.DOI == "" {
		ext.DOI = "10.48550/arXiv." + p.Arxiv
	}
	if p.Arxiv != "" && strings.HasPrefix(p.Primary, "cs.") {
		ext.DBLP = "journals/corr/abs-" + strings.ReplaceAll(p.Arxiv, ".", "-")
	} else if p.Key == "reject" {
		ext.DBLP = "journals/jmlr/HolmN19"
	}
	r := sim.S2Paper{
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
		Authors:                  []sim.S2Author{},
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
		r.PublicationVenue = &sim.S2Venue{ID: venueID(p.Venue), Name: p.Venue, Type: p.VenueType}
	}
	switch {
	case p.Arxiv != "":
		r.OpenAccessPDF = &sim.S2OpenAccessPDF{URL: "https://arxiv.org/pdf/" + p.Arxiv, Status: ptr("GREEN")}
	case p.NoAbstract:
		r.OpenAccessPDF = &sim.S2OpenAccessPDF{Status: ptr("CLOSED"), Disclaimer: "Notice: The following paper fields have been elided by the publisher: {'abstract'}. " +
			"Paper or abstract available at https://api.unpaywall.org/v2/" + p.DOI + "?email=<INSERT_YOUR_EMAIL> or https://doi.org/" + p.DOI +
			", which is subject to the license by the author or copyright owner provided with this content. Please go to the source to verify the license and copyright information for your use."}
	default:
		r.OpenAccessPDF = &sim.S2OpenAccessPDF{}
	}
	for _, f := range p.Fields {
		r.S2FieldsOfStudy = append(r.S2FieldsOfStudy, sim.S2FieldOfStudy{Category: f, Source: "external"})
	}
	if len(p.Fields) > 0 {
		r.S2FieldsOfStudy = append(r.S2FieldsOfStudy, sim.S2FieldOfStudy{Category: p.Fields[0], Source: "s2-fos-model"})
	}
	if p.PubDate != "" {
		r.PublicationDate = ptr(p.PubDate)
	}
	switch {
	case p.Journal != "":
		r.Journal = &sim.S2Journal{Name: p.Journal, Volume: p.Volume, Pages: p.Pages}
	case p.Venue != "":
		r.Journal = &sim.S2Journal{Name: p.Venue}
	case p.Arxiv != "":
		r.Journal = &sim.S2Journal{Name: "ArXiv", Volume: "abs/" + p.Arxiv}
	}
	for _, a := range p.Authors {
		r.Authors = append(r.Authors, sim.S2Author{AuthorID: ptr(authorID(a)), Name: a})
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
func s2References(p *Paper, q S2Quirks, records map[string]sim.S2Paper) []sim.S2Edge {
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
	edge := func(key string) sim.S2Edge {
		e := sim.S2Edge{
			Contexts:           []string{},
			Intents:            []string{},
			ContextsWithIntent: []sim.S2Context{},
			IsInfluential:      slices.Contains(q.Influential, key),
		}
		if in := q.Intents[key]; in != nil {
			e.Intents = in
		}
		if !slices.Contains(q.NoContexts, key) {
			for _, c := range contexts[key] {
				e.Contexts = append(e.Contexts, c)
				e.ContextsWithIntent = append(e.ContextsWithIntent, sim.S2Context{Context: c, Intents: e.Intents})
			}
		}
		if u, ok := q.Unresolved[key]; ok {
			e.CitedPaper = sim.S2Paper{Title: u.Title, Venue: u.Venue, Year: ptr(u.Year), Authors: []sim.S2Author{}}
			return e
		}
		e.CitedPaper = records[key]
		if slices.Contains(q.NullAbstract, key) {
			e.CitedPaper.Abstract = nil
		}
		return e
	}
	var out []sim.S2Edge
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
