package sim

import (
	"encoding/json"
	"fmt"
	"html"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/parse/arxiv"
)

// What the services know of a World: it is a Literature, generated when
// asked for.

// HTML returns the page site serves for id: arXiv the latest version of a
// paper it has HTML for (or that version when asked for it), ar5iv the
// page of a paper only ar5iv has.
//
// In a world of version histories (WorldConfig.Revisions, RevisedSource,
// LateSource, NoV1HTML) arXiv serves every version's page (html/IDvN),
// each as the paper stood then, but v1 of a NoV1HTML target; otherwise
// the latest version's only.
func (w *World) HTML(site string, id arxiv.ID) ([]byte, bool) {
	p, ok := w.ByArxiv(id.String())
	switch {
	case !ok || p.HTML != site:
		return nil, false
	case site == HTMLArxiv && id.Version != 0 && id.Version != p.Version:
		if !w.cfg.versioned() || p.IsTarget() && w.noV1HTML[p.Index] && id.Version == 1 {
			return nil, false
		}
		if p, ok = p.AsOf(id.Version); !ok {
			return nil, false
		}
	}
	return w.Page(&p, site), true
}

// s2Record returns what S2 knows of p.
func (w *World) s2Record(p *Paper, withAbstract bool) S2Paper {
	id := w.S2ID(p)
	r := w.rng("s2", p.Kind, p.Index)
	corpus := w.CorpusID(p)
	ext := &S2ExternalIDs{CorpusID: corpus}
	oa := &S2OpenAccessPDF{URL: "", Status: ptr("CLOSED")}
	if p.ArxivID != "" {
		ext.ArXiv = p.ArxivID
		ext.DOI = "10.48550/arXiv." + p.ArxivID
		oa = &S2OpenAccessPDF{URL: "https://arxiv.org/pdf/" + p.ArxivID, Status: ptr("GREEN")}
	} else {
		ext.DOI = p.DOI
	}
	open := p.ArxivID != ""
	if o, ok := w.openAccessPDF(p, ext); ok {
		oa, open = o, true
	}
	rec := S2Paper{
		PaperID: &id, ExternalIDs: ext, CorpusID: &corpus,
		URL:   ptr("https://www.semanticscholar.org/paper/" + id),
		Title: p.Title, Venue: p.Venue, Year: ptr(p.Year()),
		ReferenceCount: ptr(len(w.References(p))), CitationCount: ptr(r.IntN(200)), InfluentialCitationCount: ptr(r.IntN(10)),
		IsOpenAccess: ptr(open), OpenAccessPDF: oa,
		FieldsOfStudy: []string{"Computer Science"}, PublicationTypes: []string{"JournalArticle"},
		PublicationDate: ptr(p.Published.Format("2006-01-02")),
		Journal:         &S2Journal{Name: p.Venue},
	}
	if withAbstract {
		rec.Abstract = ptr(p.Abstract)
	}
	for k, a := range p.Authors {
		rec.Authors = append(rec.Authors, S2Author{AuthorID: ptr(strconv.FormatInt(w.CorpusID(p)*10+int64(k), 10)), Name: a})
	}
	return rec
}

// S2Paper returns the record of the paper id names.
func (w *World) S2Paper(id string) (json.RawMessage, bool) {
	p, ok := w.ByS2(id)
	if !ok {
		return nil, false
	}
	return mustJSON(w.s2Record(&p, true)), true
}

// S2References returns the reference list of the paper id names, the
// citing sentences of its page as contexts; a target's list is withheld
// when WorldConfig.Withheld says so.
func (w *World) S2References(id string) (S2List, bool) {
	p, ok := w.ByS2(id)
	if !ok {
		return S2List{}, false
	}
	if p.IsTarget() && w.withheld[p.Index] {
		return S2List{Withheld: &S2OpenAccessPDF{Disclaimer: "Notice: This paper's references have been elided by the publisher."}}, true
	}
	refs := w.References(&p)
	ctxs := w.Contexts(&p, refs)
	edges := make([]json.RawMessage, 0, len(refs))
	for i, ref := range refs {
		e := S2Edge{
			Contexts: ctxs[i], Intents: []string{},
			CitedPaper: w.s2Record(&ref.Paper, !ref.NoEdgeAbstract),
		}
		for _, c := range ctxs[i] {
			e.ContextsWithIntent = append(e.ContextsWithIntent, S2Context{Context: c, Intents: []string{}})
		}
		if ref.Role == RoleSource {
			e.Intents = []string{"methodology"}
			e.IsInfluential = true
		}
		edges = append(edges, mustJSON(e))
	}
	return S2List{Edges: edges}, true
}

// S2Citing returns the citations of the paper id names: every paper of
// the world whose (latest) reference list cites it, newest first, each
// edge as that list has it (a source's citation influential, with the
// citing sentences as contexts).
func (w *World) S2Citing(id string) ([]json.RawMessage, bool) {
	p, ok := w.ByS2(id)
	if !ok {
		return nil, false
	}
	w.citedOnce.Do(w.indexCitations)
	var out []json.RawMessage
	for _, c := range w.citedBy[[2]int{p.Kind, p.Index}] {
		q, _ := w.byKind(c[0], c[1])
		refs := w.References(&q)
		ctxs := w.Contexts(&q, refs)
		ref := refs[c[2]]
		e := S2CitingEdge{Contexts: ctxs[c[2]], Intents: []string{}, CitingPaper: w.s2Record(&q, true)}
		for _, x := range ctxs[c[2]] {
			e.ContextsWithIntent = append(e.ContextsWithIntent, S2Context{Context: x, Intents: []string{}})
		}
		if ref.Role == RoleSource {
			e.Intents, e.IsInfluential = []string{"methodology"}, true
		}
		out = append(out, mustJSON(e))
	}
	return out, true
}

// indexCitations finds, once, which papers cite each paper: kind, index
// and the reference's position, the newest citing paper first.
func (w *World) indexCitations() {
	w.citedBy = map[[2]int][][3]int{}
	var all []Paper
	for i := range w.cfg.Targets {
		all = append(all, w.Target(i))
	}
	for j := range w.cfg.Papers {
		all = append(all, w.Background(j))
	}
	slices.SortStableFunc(all, func(a, b Paper) int { return b.Published.Compare(a.Published) })
	for _, q := range all {
		for k, ref := range w.References(&q) {
			key := [2]int{ref.Paper.Kind, ref.Paper.Index}
			w.citedBy[key] = append(w.citedBy[key], [3]int{q.Kind, q.Index, k})
		}
	}
}

// ArxivEntry returns the arXiv API entry of the paper with the versionless
// id.
func (w *World) ArxivEntry(id string) (Entry, bool) {
	p, ok := w.ByArxiv(id)
	if !ok || p.ArxivID == "" {
		return Entry{}, false
	}
	return w.entry(&p), true
}

// ArxivEntries returns the entries of the targets, then of the cited
// papers on arXiv, in index order.
func (w *World) ArxivEntries() iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		for i := range w.cfg.Targets {
			p := w.Target(i)
			if !yield(w.entry(&p)) {
				return
			}
		}
		for j := range w.cfg.Papers {
			if p := w.Background(j); p.ArxivID != "" && !yield(w.entry(&p)) {
				return
			}
		}
	}
}

func (w *World) entry(p *Paper) Entry {
	return Entry{
		ID: p.ArxivID, Version: p.Version, Published: p.Published, Updated: p.Updated,
		Categories: p.Categories, XML: atomEntryXML(p),
	}
}

// atomEntryXML is the content of p's <entry>.
func atomEntryXML(p *Paper) string {
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	f("\n    <id>http://arxiv.org/abs/%s</id>\n", p.IDv())
	f("    <updated>%s</updated>\n    <published>%s</published>\n", ts(p.Updated), ts(p.Published))
	f("    <title>%s</title>\n    <summary>  %s\n</summary>\n", html.EscapeString(p.Title), html.EscapeString(p.Abstract))
	for _, a := range p.Authors {
		f("    <author>\n      <name>%s</name>\n    </author>\n", html.EscapeString(a))
	}
	f("    <link href=\"http://arxiv.org/abs/%s\" rel=\"alternate\" type=\"text/html\"/>\n", p.IDv())
	f("    <arxiv:primary_category term=\"%s\" scheme=\"http://arxiv.org/schemas/atom\"/>\n", p.Primary)
	for _, c := range p.Categories {
		f("    <category term=\"%s\" scheme=\"http://arxiv.org/schemas/atom\"/>\n", c)
	}
	f("  ")
	return b.String()
}

// OAIRecords returns the records of every paper on arXiv in format
// prefix, in datestamp order (the date of the latest version).
func (w *World) OAIRecords(prefix string) iter.Seq[OAIRecord] {
	return func(yield func(OAIRecord) bool) {
		var recs []OAIRecord
		add := func(p *Paper) {
			m := OAIMeta{
				ID: p.ArxivID, Datestamp: p.Updated, VersionDates: p.Versions,
				Authors: p.Authors, Title: p.Title, Abstract: p.Abstract, Categories: p.Categories,
				License: "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
			}
			recs = append(recs, m.Record(prefix))
		}
		for j := range w.cfg.Papers {
			if p := w.Background(j); p.ArxivID != "" {
				add(&p)
			}
		}
		for i := range w.cfg.Targets {
			p := w.Target(i)
			add(&p)
		}
		slices.SortStableFunc(recs, func(a, b OAIRecord) int { return a.Datestamp.Compare(b.Datestamp) })
		for _, r := range recs {
			if !yield(r) {
				return
			}
		}
	}
}
