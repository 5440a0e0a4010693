package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/groundwork/curate/arxiv"
)

// S2 Graph API limits the server enforces, as documented.
const (
	s2MaxLimit    = 1000  // limit of a references page
	s2Window      = 10000 // offset+limit must stay below
	s2MaxBatch    = 500   // ids per batch request
	s2DefaultPage = 100
)

// The field names the Graph API accepts (swagger definitions BasePaper,
// FullPaper and Reference).
var (
	s2BaseFields = set("paperId", "corpusId", "externalIds", "url", "title", "abstract", "venue",
		"publicationVenue", "year", "referenceCount", "citationCount", "influentialCitationCount",
		"isOpenAccess", "openAccessPdf", "fieldsOfStudy", "s2FieldsOfStudy", "publicationTypes",
		"publicationDate", "journal", "citationStyles", "authors")
	s2FullOnly   = set("tldr", "embedding", "citations", "references")
	s2EdgeFields = set("contexts", "intents", "contextsWithIntent", "isInfluential")
	s2AuthorSub  = set("authorId", "externalIds", "url", "name", "affiliations", "homepage",
		"paperCount", "citationCount", "hIndex")
	s2Embeddings = set("specter_v1", "specter_v2")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// s2Handler serves the parts of api.semanticscholar.org/graph/v1 the
// pipeline uses:
//
//	GET  /graph/v1/paper/{id}/references?fields=&offset=&limit=
//	GET  /graph/v1/paper/{id}?fields=
//	POST /graph/v1/paper/batch?fields=   body {"ids": [...]}
//
// Ids take the API's forms: a 40-hex paperId, CorpusId:N, DOI:..., a bare
// DOI, ARXIV:ID (version ignored) and URL:https://arxiv.org/abs/ID. Fields
// are validated by name and filtered; without fields a paper is paperId and
// title. An x-api-key header is accepted whatever its value.
type s2Handler struct{ s *store }

func (h s2Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/graph/v1/paper/")
	if !ok || rest == "" {
		s2Error(w, http.StatusNotFound, "Not found: "+r.URL.Path)
		return
	}
	if rest == "batch" && r.Method == http.MethodPost {
		h.batch(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s2Error(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	if id, ok := strings.CutSuffix(rest, "/references"); ok {
		h.references(w, r, id)
		return
	}
	if _, sub, ok := strings.Cut(rest, "/"); ok && (sub == "citations" || sub == "authors") {
		s2Error(w, http.StatusNotFound, "the demo server does not serve /"+sub)
		return
	}
	h.paper(w, r, rest)
}

func (h s2Handler) paper(w http.ResponseWriter, r *http.Request, id string) {
	fields, ok := parseFields(w, r.URL.Query(), false)
	if !ok {
		return
	}
	i, ok := h.s.lookup(id)
	if !ok {
		s2NotFound(w, id)
		return
	}
	writeJSON(w, h.s.paperJSON(i, fields))
}

func (h s2Handler) references(w http.ResponseWriter, r *http.Request, id string) {
	q := r.URL.Query()
	fields, ok := parseFields(w, q, true)
	if !ok {
		return
	}
	offset, ok1 := intParam(q, "offset", 0)
	limit, ok2 := intParam(q, "limit", s2DefaultPage)
	switch {
	case !ok1 || !ok2:
		s2Error(w, http.StatusBadRequest, "offset and limit must be non-negative integers")
		return
	case limit < 1 || limit > s2MaxLimit:
		s2Error(w, http.StatusBadRequest, fmt.Sprintf("Limit must be between 1 and %d", s2MaxLimit))
		return
	case offset+limit >= s2Window:
		s2Error(w, http.StatusBadRequest, "The sum of offset and limit must be < 10000")
		return
	}
	i, found := h.s.lookup(id)
	if !found {
		s2NotFound(w, id)
		return
	}
	edges := h.s.refs[i]
	if edges == nil {
		edges = []object{} // a paper outside the corpus pages: known, no list
	}
	if c := h.s.pageCap[i]; c > 0 {
		// The one paper whose list S2 pages in small steps, so that the
		// demo shows paging whatever limit the client asks for.
		limit = min(limit, c)
	}
	start := min(offset, len(edges))
	end := min(start+limit, len(edges))
	var b strings.Builder
	fmt.Fprintf(&b, `{"offset":%d,`, offset)
	if end < len(edges) {
		fmt.Fprintf(&b, `"next":%d,`, end)
	}
	b.WriteString(`"data":[`)
	for k, e := range edges[start:end] {
		if k > 0 {
			b.WriteByte(',')
		}
		b.Write(h.s.edgeJSON(e, fields))
	}
	b.WriteString("]}")
	writeJSON(w, []byte(b.String()))
}

func (h s2Handler) batch(w http.ResponseWriter, r *http.Request) {
	fields, ok := parseFields(w, r.URL.Query(), false)
	if !ok {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		s2Error(w, http.StatusBadRequest, "unreadable body")
		return
	}
	var req struct {
		IDs []string `json:"ids"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.IDs == nil {
		s2Error(w, http.StatusBadRequest, `Body must be a JSON object with an "ids" array`)
		return
	}
	if len(req.IDs) > s2MaxBatch {
		s2Error(w, http.StatusBadRequest, fmt.Sprintf("Cannot process more than %d ids", s2MaxBatch))
		return
	}
	var b strings.Builder
	b.WriteByte('[')
	for k, id := range req.IDs {
		if k > 0 {
			b.WriteString(", ")
		}
		if i, ok := h.s.lookup(id); ok {
			b.Write(h.s.paperJSON(i, fields))
		} else {
			b.WriteString("null")
		}
	}
	b.WriteByte(']')
	writeJSON(w, []byte(b.String()))
}

// fieldSet is the parsed fields parameter: top-level names and, for dotted
// names, the subfields asked of a nested list.
type fieldSet struct {
	top map[string]bool
	sub map[string][]string // "citations" -> ["title", "year"]
}

// parseFields validates the fields parameter; edges allows the edge fields
// of the references endpoint. Unknown names get S2's 400 answer and ok
// false.
func parseFields(w http.ResponseWriter, q url.Values, edges bool) (fset fieldSet, ok bool) {
	fset = fieldSet{top: map[string]bool{}, sub: map[string][]string{}}
	var bad []string
	for _, f := range strings.Split(q.Get("fields"), ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		head, sub, dotted := strings.Cut(f, ".")
		ok := false
		switch {
		case !dotted:
			ok = s2BaseFields[f] || edges && s2EdgeFields[f] || !edges && s2FullOnly[f]
		case head == "authors":
			ok = s2AuthorSub[sub]
		case head == "embedding":
			ok = !edges && s2Embeddings[sub]
		case head == "citations" || head == "references":
			ok = !edges && (s2BaseFields[sub] && sub != "citationStyles")
		}
		if !ok {
			bad = append(bad, f)
			continue
		}
		fset.top[head] = true
		if dotted {
			fset.sub[head] = append(fset.sub[head], sub)
		}
	}
	if bad != nil {
		s2Error(w, http.StatusBadRequest, "Unrecognized or unsupported fields: ["+strings.Join(bad, ", ")+"]")
		return fset, false
	}
	return fset, true
}

func (fset fieldSet) keep(key string) bool { return key == "paperId" || fset.top[key] }

func (fset fieldSet) keepOrTitle(key string) bool {
	if len(fset.top) == 0 {
		return key == "paperId" || key == "title"
	}
	return fset.keep(key)
}

// paperJSON encodes record i with the fields asked for. FullPaper fields
// are appended: tldr and embedding as null, citations and references as
// the papers the corpus's reference lists link.
func (s *store) paperJSON(i int, fset fieldSet) []byte {
	var extra []field
	if fset.top["tldr"] {
		extra = append(extra, field{"tldr", json.RawMessage("null")})
	}
	if fset.top["embedding"] {
		extra = append(extra, field{"embedding", json.RawMessage("null")})
	}
	if fset.top["citations"] {
		extra = append(extra, field{"citations", s.paperList(s.citedBy[i], fset.sub["citations"])})
	}
	if fset.top["references"] {
		var cited []int
		for _, e := range s.refs[i] {
			var p struct {
				PaperID *string `json:"paperId"`
			}
			json.Unmarshal(e.get("citedPaper"), &p)
			if p.PaperID != nil {
				if j, ok := s.paperIdx["hex:"+*p.PaperID]; ok {
					cited = append(cited, j)
				}
			}
		}
		extra = append(extra, field{"references", s.paperList(cited, fset.sub["references"])})
	}
	return s.papers[i].pick(fset.keepOrTitle, extra)
}

// paperList encodes papers as a nested list with paperId, title and subs.
func (s *store) paperList(idx []int, subs []string) json.RawMessage {
	keep := func(k string) bool { return k == "paperId" || k == "title" || slices.Contains(subs, k) }
	var b strings.Builder
	b.WriteByte('[')
	for k, i := range idx {
		if k > 0 {
			b.WriteByte(',')
		}
		b.Write(s.papers[i].pick(keep, nil))
	}
	b.WriteByte(']')
	return json.RawMessage(b.String())
}

// edgeJSON encodes one reference edge with the fields asked for.
func (s *store) edgeJSON(e object, fset fieldSet) []byte {
	var cited object
	if err := json.Unmarshal(e.get("citedPaper"), &cited); err != nil {
		panic("demo: corrupt edge: " + err.Error())
	}
	keep := func(k string) bool { return s2EdgeFields[k] && fset.top[k] }
	return e.pick(keep, []field{{"citedPaper", cited.pick(fset.keepOrTitle, nil)}})
}

// lookup resolves an S2 paper id of any accepted form.
func (s *store) lookup(id string) (int, bool) {
	k, ok := normalizeS2ID(id)
	if !ok {
		return 0, false
	}
	i, ok := s.paperIdx[k]
	return i, ok
}

// normalizeS2ID maps an id to the store's index key.
func normalizeS2ID(id string) (string, bool) {
	id = strings.TrimSpace(id)
	if len(id) == 40 && strings.Trim(strings.ToLower(id), "0123456789abcdef") == "" {
		return "hex:" + strings.ToLower(id), true
	}
	if strings.HasPrefix(id, "10.") {
		return "doi:" + strings.ToLower(id), true
	}
	prefix, rest, ok := strings.Cut(id, ":")
	if !ok {
		return "", false
	}
	switch strings.ToUpper(prefix) {
	case "ARXIV":
		a, err := arxiv.Parse(rest)
		if err != nil {
			return "", false
		}
		return "arxiv:" + a.Canonical(), true
	case "CORPUSID":
		if _, err := strconv.ParseInt(rest, 10, 64); err != nil {
			return "", false
		}
		return "corpus:" + rest, true
	case "DOI":
		return "doi:" + strings.ToLower(rest), true
	case "URL":
		u, err := url.Parse(rest)
		if err != nil {
			return "", false
		}
		p := strings.Trim(u.Path, "/")
		switch {
		case strings.HasSuffix(u.Host, "arxiv.org"):
			for _, pre := range []string{"abs/", "pdf/", "html/"} {
				if r, ok := strings.CutPrefix(p, pre); ok {
					return normalizeS2ID("ARXIV:" + r)
				}
			}
		case strings.HasSuffix(u.Host, "semanticscholar.org"):
			return normalizeS2ID(p[strings.LastIndexByte(p, '/')+1:])
		}
	}
	return "", false
}

// intParam reads a non-negative integer parameter, def when absent.
func intParam(q url.Values, name string, def int) (int, bool) {
	v := q.Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= 0
}

func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

func s2Error(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func s2NotFound(w http.ResponseWriter, id string) {
	s2Error(w, http.StatusNotFound, "Paper with id "+id+" not found")
}
