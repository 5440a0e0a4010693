package sim

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The handlers below answer as the real services do, for the paths curate
// uses. They see only requests the Service wrapper let through.

// arxivHandler serves arxiv.org/html/ID: the page of a paper arXiv has
// HTML for (the latest version, or that version when asked), else 404.
func (w *World) arxivHandler(rw http.ResponseWriter, r *http.Request, _ []byte, _ bool) {
	if id, ok := strings.CutPrefix(r.URL.Path, "/pdf/"); ok {
		w.arxivPDF(rw, id)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/html/")
	if !ok {
		http.NotFound(rw, r)
		return
	}
	rest = strings.TrimSuffix(rest, "/")
	if p, ok := w.ByArxiv(rest); ok && p.HTML == HTMLArxiv && (!strings.Contains(rest, "v") || strings.HasSuffix(rest, "v"+strconv.Itoa(p.Version))) {
		writeBody(rw, "text/html; charset=utf-8", w.Page(&p, HTMLArxiv))
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.WriteHeader(http.StatusNotFound)
	rw.Write(noHTMLPage(rest))
}

// ar5ivHandler serves ar5iv.labs.arxiv.org/html/ID: the page of a paper
// only ar5iv has, else a 307 to arxiv.org/abs/ID as ar5iv answers for
// papers it lacks.
func (w *World) ar5ivHandler(rw http.ResponseWriter, r *http.Request, _ []byte, _ bool) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/html/")
	if !ok {
		http.NotFound(rw, r)
		return
	}
	rest = strings.TrimSuffix(rest, "/")
	if p, ok := w.ByArxiv(rest); ok && p.HTML == HTMLAr5iv {
		writeBody(rw, "text/html; charset=utf-8", w.Page(&p, HTMLAr5iv))
		return
	}
	rw.Header().Set("Location", "https://arxiv.org/abs/"+rest)
	rw.WriteHeader(http.StatusTemporaryRedirect)
}

func writeBody(rw http.ResponseWriter, ctype string, body []byte) {
	rw.Header().Set("Content-Type", ctype)
	rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
	rw.Write(body)
}

// Semantic Scholar's JSON shapes, every field the pipeline may ask for.

type s2Paper struct {
	PaperID                  string         `json:"paperId"`
	ExternalIDs              map[string]any `json:"externalIds"`
	CorpusID                 int64          `json:"corpusId"`
	URL                      string         `json:"url"`
	Title                    string         `json:"title"`
	Abstract                 *string        `json:"abstract"`
	Venue                    string         `json:"venue"`
	Year                     int            `json:"year"`
	ReferenceCount           int            `json:"referenceCount"`
	CitationCount            int            `json:"citationCount"`
	InfluentialCitationCount int            `json:"influentialCitationCount"`
	IsOpenAccess             bool           `json:"isOpenAccess"`
	OpenAccessPDF            map[string]any `json:"openAccessPdf"`
	FieldsOfStudy            []string       `json:"fieldsOfStudy"`
	PublicationTypes         []string       `json:"publicationTypes"`
	PublicationDate          string         `json:"publicationDate"`
	Journal                  map[string]any `json:"journal"`
	Authors                  []s2Author     `json:"authors"`
}

type s2Author struct {
	AuthorID string `json:"authorId"`
	Name     string `json:"name"`
}

type s2Edge struct {
	Contexts           []string      `json:"contexts"`
	Intents            []string      `json:"intents"`
	ContextsWithIntent []s2CtxIntent `json:"contextsWithIntent"`
	IsInfluential      bool          `json:"isInfluential"`
	CitedPaper         s2Paper       `json:"citedPaper"`
}

type s2CtxIntent struct {
	Context string   `json:"context"`
	Intents []string `json:"intents"`
}

// s2Record returns what S2 knows of p.
func (w *World) s2Record(p *Paper, withAbstract bool) s2Paper {
	id := w.S2ID(p)
	r := w.rng("s2", p.Kind, p.Index)
	ext := map[string]any{"CorpusId": w.CorpusID(p)}
	oa := map[string]any{"url": "", "status": "CLOSED", "license": nil}
	if p.ArxivID != "" {
		ext["ArXiv"] = p.ArxivID
		ext["DOI"] = "10.48550/arXiv." + p.ArxivID
		oa = map[string]any{"url": "https://arxiv.org/pdf/" + p.ArxivID, "status": "GREEN", "license": nil}
	} else {
		ext["DOI"] = p.DOI
	}
	open := p.ArxivID != ""
	if o, ok := w.openAccessPDF(p, ext); ok {
		oa, open = o, true
	}
	rec := s2Paper{
		PaperID: id, ExternalIDs: ext, CorpusID: w.CorpusID(p),
		URL:   "https://www.semanticscholar.org/paper/" + id,
		Title: p.Title, Venue: p.Venue, Year: p.Year(),
		ReferenceCount: len(w.References(p)), CitationCount: r.IntN(200), InfluentialCitationCount: r.IntN(10),
		IsOpenAccess: open, OpenAccessPDF: oa,
		FieldsOfStudy: []string{"Computer Science"}, PublicationTypes: []string{"JournalArticle"},
		PublicationDate: p.Published.Format("2006-01-02"),
		Journal:         map[string]any{"name": p.Venue},
	}
	if withAbstract {
		a := p.Abstract
		rec.Abstract = &a
	}
	for k, a := range p.Authors {
		rec.Authors = append(rec.Authors, s2Author{AuthorID: strconv.FormatInt(w.CorpusID(p)*10+int64(k), 10), Name: a})
	}
	return rec
}

// s2Handler serves the Graph API paths the pipeline uses:
// GET /graph/v1/paper/{id}, GET /graph/v1/paper/{id}/references and
// POST /graph/v1/paper/batch. Fields are not filtered: every field is
// sent, which a client decoding the ones it asked for cannot tell.
func (w *World) s2Handler(rw http.ResponseWriter, r *http.Request, body []byte, _ bool) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/graph/v1/paper/")
	if !ok || rest == "" {
		s2Error(rw, http.StatusNotFound, "Not found: "+r.URL.Path)
		return
	}
	if rest == "batch" && r.Method == http.MethodPost {
		var req struct {
			IDs []string `json:"ids"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.IDs == nil {
			s2Error(rw, http.StatusBadRequest, `Body must be a JSON object with an "ids" array`)
			return
		}
		if len(req.IDs) > 500 {
			s2Error(rw, http.StatusBadRequest, "Cannot process more than 500 ids")
			return
		}
		out := make([]*s2Paper, len(req.IDs))
		for i, id := range req.IDs {
			if p, ok := w.ByS2(id); ok {
				rec := w.s2Record(&p, true)
				out[i] = &rec
			}
		}
		writeJSON(rw, out)
		return
	}
	if id, ok := strings.CutSuffix(rest, "/references"); ok {
		w.s2References(rw, r, id)
		return
	}
	p, ok := w.ByS2(rest)
	if !ok {
		s2Error(rw, http.StatusNotFound, "Paper with id "+rest+" not found")
		return
	}
	writeJSON(rw, w.s2Record(&p, true))
}

func (w *World) s2References(rw http.ResponseWriter, r *http.Request, id string) {
	p, ok := w.ByS2(id)
	if !ok {
		s2Error(rw, http.StatusNotFound, "Paper with id "+id+" not found")
		return
	}
	q := r.URL.Query()
	offset, err1 := strconv.Atoi(cmpOr(q.Get("offset"), "0"))
	limit, err2 := strconv.Atoi(cmpOr(q.Get("limit"), "100"))
	switch {
	case err1 != nil || err2 != nil || offset < 0 || limit < 1 || limit > 1000:
		s2Error(rw, http.StatusBadRequest, "Limit must be between 1 and 1000")
		return
	case offset+limit >= 10000:
		s2Error(rw, http.StatusBadRequest, "The sum of offset and limit must be < 10000")
		return
	}
	if p.IsTarget() && w.withheld[p.Index] {
		writeJSON(rw, map[string]any{
			"offset": offset, "data": nil,
			"citingPaperInfo": map[string]any{"openAccessPdf": map[string]any{
				"url": "", "status": nil, "license": nil,
				"disclaimer": "Notice: This paper's references have been elided by the publisher.",
			}},
		})
		return
	}
	refs := w.References(&p)
	ctxs := w.Contexts(&p, refs)
	edges := []s2Edge{}
	for i, ref := range refs {
		e := s2Edge{
			Contexts: ctxs[i], Intents: []string{},
			CitedPaper: w.s2Record(&ref.Paper, !ref.NoEdgeAbstract),
		}
		for _, c := range ctxs[i] {
			e.ContextsWithIntent = append(e.ContextsWithIntent, s2CtxIntent{Context: c, Intents: []string{}})
		}
		if ref.Role == RoleSource {
			e.Intents = []string{"methodology"}
			e.IsInfluential = true
		}
		edges = append(edges, e)
	}
	start := min(offset, len(edges))
	end := min(start+limit, len(edges))
	page := map[string]any{"offset": offset, "data": edges[start:end]}
	if end < len(edges) {
		page["next"] = end
	}
	writeJSON(rw, page)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func writeJSON(rw http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	writeBody(rw, "application/json", body)
}

func s2Error(rw http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(map[string]string{"error": msg})
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	rw.Write(append(body, '\n'))
}

// atomHandler serves export.arxiv.org/api/query for id_list lookups: an
// Atom feed with an entry per known paper, in the order asked.
func (w *World) atomHandler(rw http.ResponseWriter, r *http.Request, body []byte, _ bool) {
	if r.URL.Path != "/api/query" {
		http.NotFound(rw, r)
		return
	}
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		if form, err := url.ParseQuery(string(body)); err == nil {
			for k, v := range form {
				q[k] = v
			}
		}
	}
	if q.Get("search_query") != "" {
		rw.Header().Set("Content-Type", "application/atom+xml")
		rw.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(rw, atomErrorFeed("unsupported_query", "the simulated API answers id_list lookups only"))
		return
	}
	var entries []string
	for _, s := range strings.Split(q.Get("id_list"), ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, ok := w.ByArxiv(s); ok && p.ArxivID != "" {
			entries = append(entries, atomEntry(&p))
		}
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">` + "\n")
	fmt.Fprintf(&b, "  <title type=\"html\">ArXiv Query: id_list=%s</title>\n", html.EscapeString(q.Get("id_list")))
	b.WriteString("  <id>http://arxiv.org/api/sim</id>\n  <updated>2026-07-01T00:00:00-04:00</updated>\n")
	fmt.Fprintf(&b, "  <opensearch:totalResults>%d</opensearch:totalResults>\n", len(entries))
	fmt.Fprintf(&b, "  <opensearch:startIndex>0</opensearch:startIndex>\n  <opensearch:itemsPerPage>%d</opensearch:itemsPerPage>\n", len(entries))
	for _, e := range entries {
		b.WriteString(e)
	}
	b.WriteString("</feed>\n")
	writeBody(rw, "application/atom+xml; charset=utf-8", []byte(b.String()))
}

func atomEntry(p *Paper) string {
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	f("  <entry>\n    <id>http://arxiv.org/abs/%s</id>\n", p.IDv())
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
	f("  </entry>\n")
	return b.String()
}

func atomErrorFeed(id, msg string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/api/errors#` + id + `</id>` +
		`<title>Error</title><summary>` + html.EscapeString(msg) + `</summary></entry></feed>` + "\n"
}
