package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The Semantic Scholar Graph API (api.semanticscholar.org/graph/v1), the
// parts curate uses, answering from an S2Source:
//
//   - GET /graph/v1/paper/{id}?fields: the paper, or 404 {"error":"Paper
//     with id {id} not found"};
//   - GET /graph/v1/paper/{id}/references?fields&offset&limit: offset
//     paging, "next" absent on the last page, limit at most 1000 and
//     offset+limit below 10,000 or 400; a withheld list answers "data":
//     null with the publisher's disclaimer in citingPaperInfo.openAccessPdf;
//   - GET /graph/v1/paper/{id}/citations?fields&offset&limit: the papers
//     citing it, paged as references are (the same limits and window),
//     each element the edge's fields and citingPaper; a paper nobody
//     cites answers an empty list;
//   - POST /graph/v1/paper/batch?fields with {"ids": [...]}: at most 500
//     ids, an array aligned with them, null for an unknown id.
//
// Field names are checked against the documented ones (400
// {"error":"Unrecognized or unsupported fields: [x]"}) and an answer
// carries paperId and the fields asked for, in S2's order (null when the
// record lacks one), or paperId and title when none are asked for. The 404
// and unknown-field bodies are the recorded ones byte for byte (compact,
// with a trailing newline); the window message is the one users report
// (allenai/s2-folks#12); the wording of the other 400s is this package's,
// as no recording of them exists.

// Limits of the Graph API, as documented.
const (
	S2MaxLimit     = 1000     // the largest limit of a references page
	S2DefaultLimit = 100      // a references page's limit when none is asked
	S2Window       = 10000    // offset+limit must stay below it
	S2MaxBatch     = 500      // ids in one batch request
	S2MaxResponse  = 10 << 20 // bytes of an answer
)

// Paths of the Graph API, as the service sees them (decoded).
const (
	S2PathPrefix = "/graph/v1/paper/"
	S2BatchPath  = S2PathPrefix + "batch"
)

// S2PaperPath returns the path of paper id.
func S2PaperPath(id string) string { return S2PathPrefix + id }

// S2ReferencesPath returns the path of the reference list of paper id.
func S2ReferencesPath(id string) string { return S2PathPrefix + id + "/references" }

// S2CitationsPath returns the path of the papers citing paper id.
func S2CitationsPath(id string) string { return S2PathPrefix + id + "/citations" }

// Field names of the Graph API, from its swagger.
var (
	// S2EdgeFields are the fields of a reference edge itself.
	S2EdgeFields = []string{"contexts", "intents", "contextsWithIntent", "isInfluential"}
	// S2PaperFields are the fields of a BasePaper, in the order S2 writes
	// them: of a cited paper, and of /paper and /paper/batch.
	S2PaperFields = []string{
		"paperId", "externalIds", "corpusId", "publicationVenue", "url", "title", "abstract", "venue",
		"year", "referenceCount", "citationCount", "influentialCitationCount", "isOpenAccess",
		"openAccessPdf", "fieldsOfStudy", "s2FieldsOfStudy", "publicationTypes", "publicationDate",
		"journal", "citationStyles", "authors",
	}
	// S2FullPaperFields are valid on /paper and /paper/batch only.
	S2FullPaperFields = []string{"tldr", "embedding", "citations", "references"}
	// S2AuthorFields may follow "authors.".
	S2AuthorFields = []string{
		"authorId", "externalIds", "url", "name", "affiliations", "homepage",
		"paperCount", "citationCount", "hIndex",
	}
)

// S2TooManyBody is the body of S2's 429, from its gateway, seen verbatim
// in public reports; the recorded 429 carried no Retry-After.
const S2TooManyBody = `{"message": "Too Many Requests. Please wait and try again or apply for a key for higher rate limits. https://www.semanticscholar.org/product/api#api-key-form", "code": "429"}`

// S2Source is what the Semantic Scholar service knows.
type S2Source interface {
	// S2Paper returns the record of the paper id names (in any form the
	// API takes: a 40-hex paperId, CorpusId:, ARXIV:, DOI: or a bare DOI,
	// ...): a JSON object in S2's shape.
	S2Paper(id string) (json.RawMessage, bool)
	// S2References returns the reference list of the paper id names.
	S2References(id string) (S2List, bool)
}

// S2Citations is what an S2Source may also know: the papers citing one,
// for the nested citations field of /paper. A source without it answers
// that field with an empty list.
type S2Citations interface {
	S2CitedBy(id string) []json.RawMessage
}

// S2CitingSource is what an S2Source may also know: the citations of a
// paper as the citations endpoint lists them. A source without it answers
// every known paper's citations with an empty list.
type S2CitingSource interface {
	// S2Citing returns the citations of the paper id names: each the
	// edge's fields (contexts, intents, contextsWithIntent,
	// isInfluential) and citingPaper, in S2's shape (S2CitingEdge).
	S2Citing(id string) ([]json.RawMessage, bool)
}

// S2List is a paper's reference list.
type S2List struct {
	// Edges are the data elements in order: the edge fields and
	// citedPaper (null, or a record whose paperId is null when S2 could
	// not resolve the entry).
	Edges []json.RawMessage
	// Withheld, when set, says the publisher withheld the list: every
	// page answers "data": null with this as citingPaperInfo.openAccessPdf.
	Withheld *S2OpenAccessPDF
	// PageCap, when positive, is the most edges a page holds, whatever
	// limit is asked: a list S2 pages in small steps.
	PageCap int
}

// s2API serves the Graph API over src.
type s2API struct {
	src S2Source
	key string // the only x-api-key accepted ("" accepts any)
}

func (a *s2API) serve(rw http.ResponseWriter, r *http.Request, body []byte, _ bool) {
	if got := r.Header.Get("x-api-key"); a.key != "" && got != "" && got != a.key {
		s2Gateway(rw, http.StatusForbidden, "Forbidden")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, S2PathPrefix)
	if !ok || rest == "" {
		s2Error(rw, http.StatusNotFound, "Not found: "+r.URL.Path)
		return
	}
	batch := rest == "batch" && r.Method == http.MethodPost
	if !batch && r.Method != http.MethodGet && r.Method != http.MethodHead {
		rw.Header().Set("Allow", "GET, HEAD")
		s2Error(rw, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	if _, sub, ok := strings.Cut(rest, "/"); ok && sub == "authors" {
		s2Error(rw, http.StatusNotFound, "the simulated API does not serve /"+sub)
		return
	}
	q := r.URL.Query()
	if S2Refuse(rw, r.Method, r.URL.Path, q, body) {
		return
	}
	id, refs := strings.CutSuffix(rest, "/references")
	citedID, cites := strings.CutSuffix(rest, "/citations")
	switch {
	case batch:
		ids, _ := s2BatchIDs(body)
		a.batch(rw, parseS2Fields(q, false), ids)
	case refs:
		offset, limit, _ := s2Window(q)
		a.references(rw, parseS2Fields(q, true), id, offset, limit)
	case cites:
		offset, limit, _ := s2Window(q)
		a.citations(rw, parseS2Fields(q, true), citedID, offset, limit)
	default:
		a.paper(rw, parseS2Fields(q, false), rest)
	}
}

// S2Refuse answers, as S2 does, a request it refuses before looking a
// paper up — an unknown field name, a references page with a bad offset
// or limit or outside the 10,000 window, a malformed batch or one of more
// than 500 ids — and reports whether it did. The s2 service runs it on
// every request; a test that replays recorded answers runs it to hold a
// client to the same rules.
func S2Refuse(rw http.ResponseWriter, method, path string, q url.Values, body []byte) bool {
	rest, _ := strings.CutPrefix(path, S2PathPrefix)
	_, refs := strings.CutSuffix(rest, "/references")
	_, cites := strings.CutSuffix(rest, "/citations")
	refs = refs || cites // the same fields, limits and window
	batch := rest == "batch" && method == http.MethodPost
	if bad := badS2Fields(q, refs); bad != nil {
		s2Error(rw, http.StatusBadRequest, "Unrecognized or unsupported fields: ["+strings.Join(bad, ", ")+"]")
		return true
	}
	switch {
	case refs:
		if _, _, msg := s2Window(q); msg != "" {
			s2Error(rw, http.StatusBadRequest, msg)
			return true
		}
	case batch:
		ids, ok := s2BatchIDs(body)
		if !ok {
			s2Error(rw, http.StatusBadRequest, `Body must be a JSON object with an "ids" array`)
			return true
		}
		if len(ids) > S2MaxBatch {
			s2Error(rw, http.StatusBadRequest, fmt.Sprintf("Cannot process more than %d ids", S2MaxBatch))
			return true
		}
	}
	return false
}

// s2Window reads the offset and limit of a references page, or the
// message of S2's refusal.
func s2Window(q url.Values) (offset, limit int, refusal string) {
	offset, err1 := strconv.Atoi(cmpOr(q.Get("offset"), "0"))
	limit, err2 := strconv.Atoi(cmpOr(q.Get("limit"), strconv.Itoa(S2DefaultLimit)))
	switch {
	case err1 != nil || offset < 0:
		return 0, 0, "Offset must be a non-negative integer"
	case err2 != nil || limit < 1:
		return 0, 0, "Limit must be a positive integer"
	case limit > S2MaxLimit:
		return 0, 0, fmt.Sprintf("Limit must be <= %d", S2MaxLimit)
	case offset+limit >= S2Window:
		return 0, 0, fmt.Sprintf("The sum of offset and limit must be < %d", S2Window)
	}
	return offset, limit, ""
}

func (a *s2API) paper(rw http.ResponseWriter, fs s2Fields, id string) {
	rec, found := a.src.S2Paper(id)
	if !found {
		s2NotFound(rw, id)
		return
	}
	out, err := a.projectPaper(rec, fs)
	if err != nil {
		s2Error(rw, http.StatusInternalServerError, err.Error())
		return
	}
	s2Sized(rw, out)
}

func (a *s2API) references(rw http.ResponseWriter, fs s2Fields, id string, offset, limit int) {
	list, found := a.src.S2References(id)
	if !found {
		s2NotFound(rw, id)
		return
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"offset":%d`, offset)
	if list.Withheld != nil {
		info, _ := json.Marshal(map[string]any{"openAccessPdf": list.Withheld})
		fmt.Fprintf(&b, `,"data":null,"citingPaperInfo":%s}`, info)
		s2Sized(rw, b.Bytes())
		return
	}
	if list.PageCap > 0 {
		limit = min(limit, list.PageCap)
	}
	start := min(offset, len(list.Edges))
	end := min(start+limit, len(list.Edges))
	if end < len(list.Edges) {
		fmt.Fprintf(&b, `,"next":%d`, end)
	}
	b.WriteString(`,"data":[`)
	for i, e := range list.Edges[start:end] {
		if i > 0 {
			b.WriteByte(',')
		}
		out, err := projectEdge(e, fs)
		if err != nil {
			s2Error(rw, http.StatusInternalServerError, err.Error())
			return
		}
		b.Write(out)
	}
	b.WriteString("]}")
	s2Sized(rw, b.Bytes())
}

// citations answers a page of the papers citing id.
func (a *s2API) citations(rw http.ResponseWriter, fs s2Fields, id string, offset, limit int) {
	if _, found := a.src.S2Paper(id); !found {
		s2NotFound(rw, id)
		return
	}
	var edges []json.RawMessage
	if c, ok := a.src.(S2CitingSource); ok {
		edges, _ = c.S2Citing(id)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"offset":%d`, offset)
	start := min(offset, len(edges))
	end := min(start+limit, len(edges))
	if end < len(edges) {
		fmt.Fprintf(&b, `,"next":%d`, end)
	}
	b.WriteString(`,"data":[`)
	for i, e := range edges[start:end] {
		if i > 0 {
			b.WriteByte(',')
		}
		out, err := projectNested(e, fs, "citingPaper")
		if err != nil {
			s2Error(rw, http.StatusInternalServerError, err.Error())
			return
		}
		b.Write(out)
	}
	b.WriteString("]}")
	s2Sized(rw, b.Bytes())
}

func (a *s2API) batch(rw http.ResponseWriter, fs s2Fields, ids []string) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		rec, found := a.src.S2Paper(id)
		if !found {
			b.WriteString("null")
			continue
		}
		out, err := a.projectPaper(rec, fs)
		if err != nil {
			s2Error(rw, http.StatusInternalServerError, err.Error())
			return
		}
		b.Write(out)
	}
	b.WriteByte(']')
	s2Sized(rw, b.Bytes())
}

// s2BatchIDs reads the ids of a batch request's body.
func s2BatchIDs(body []byte) ([]string, bool) {
	var req struct {
		IDs []string `json:"ids"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.IDs == nil {
		return nil, false
	}
	return req.IDs, true
}

// s2Fields is a parsed fields parameter: the top-level names asked for,
// in S2's order, and the subfields asked of nested lists.
type s2Fields struct {
	edge  []string            // edge fields (references only)
	paper []string            // paper fields, paperId first
	sub   map[string][]string // "citations" -> ["title", "year"]
}

// fieldNames returns the names of a fields parameter, trimmed, empty
// ones dropped.
func fieldNames(q url.Values) []string {
	var out []string
	for f := range strings.SplitSeq(q.Get("fields"), ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// validS2Field reports whether an endpoint (references, or /paper and
// batch) knows field f.
func validS2Field(f string, references bool) bool {
	head, sub, dotted := strings.Cut(f, ".")
	switch {
	case !dotted:
		return slices.Contains(S2PaperFields, f) || references && slices.Contains(S2EdgeFields, f) ||
			!references && slices.Contains(S2FullPaperFields, f)
	case head == "authors":
		return slices.Contains(S2AuthorFields, sub)
	case head == "embedding":
		return !references && (sub == "specter_v1" || sub == "specter_v2")
	case head == "citations" || head == "references":
		author, isAuthor := strings.CutPrefix(sub, "authors.")
		return !references && (slices.Contains(S2PaperFields, sub) || isAuthor && slices.Contains(S2AuthorFields, author))
	}
	return false
}

// badS2Fields returns the field names the endpoint does not know, in the
// order asked.
func badS2Fields(q url.Values, references bool) []string {
	var bad []string
	for _, f := range fieldNames(q) {
		if !validS2Field(f, references) {
			bad = append(bad, f)
		}
	}
	return bad
}

// parseS2Fields reads a checked fields parameter (see badS2Fields).
// Without fields a paper is its paperId and title.
func parseS2Fields(q url.Values, references bool) s2Fields {
	fs := s2Fields{sub: map[string][]string{}}
	var top []string
	for _, f := range fieldNames(q) {
		head, sub, dotted := strings.Cut(f, ".")
		if !slices.Contains(top, head) {
			top = append(top, head)
		}
		if dotted {
			fs.sub[head] = append(fs.sub[head], sub)
		}
	}
	if len(top) == 0 {
		top = []string{"title"}
	}
	fs.paper = []string{"paperId"}
	for _, k := range s2KeyOrder {
		switch {
		case k == "paperId":
		case slices.Contains(S2EdgeFields, k):
			if references && slices.Contains(top, k) {
				fs.edge = append(fs.edge, k)
			}
		case slices.Contains(top, k):
			fs.paper = append(fs.paper, k)
		}
	}
	return fs
}

// s2KeyOrder is the order S2 writes keys in: the edge's, then the paper's,
// then FullPaper's.
var s2KeyOrder = slices.Concat(S2EdgeFields, S2PaperFields, S2FullPaperFields)

// project writes the keys of o asked for, in order; a key the record
// lacks is null.
func project(o object, keys []string, extra map[string]json.RawMessage) []byte {
	out := make(object, 0, len(keys))
	for _, k := range keys {
		v := o.get(k)
		if x, ok := extra[k]; ok {
			v = x
		}
		if v == nil {
			v = jsonNull
		}
		out = append(out, field{k, v})
	}
	return out.encode()
}

// projectPaper writes a /paper or batch answer: the paper fields asked for
// and the FullPaper ones, whose nested lists are made from the source.
func (a *s2API) projectPaper(rec json.RawMessage, fs s2Fields) ([]byte, error) {
	o, err := parseObject(rec)
	if err != nil {
		return nil, fmt.Errorf("sim: a stored S2 record is no JSON object: %w", err)
	}
	extra := map[string]json.RawMessage{}
	id := o.stringOf("paperId")
	if slices.Contains(fs.paper, "references") {
		var cited []json.RawMessage
		if list, ok := a.src.S2References(id); ok && list.Withheld == nil {
			for _, e := range list.Edges {
				eo, err := parseObject(e)
				if err != nil {
					return nil, err
				}
				cp := eo.get("citedPaper")
				if string(cp) == "null" || cp == nil {
					continue
				}
				if co, err := parseObject(cp); err == nil {
					if own, ok := a.src.S2Paper(co.stringOf("paperId")); ok && co.stringOf("paperId") != "" {
						cp = own
					}
				}
				cited = append(cited, cp)
			}
		}
		extra["references"] = nestedList(cited, fs.sub["references"])
	}
	if slices.Contains(fs.paper, "citations") {
		var citing []json.RawMessage
		if c, ok := a.src.(S2Citations); ok {
			citing = c.S2CitedBy(id)
		}
		extra["citations"] = nestedList(citing, fs.sub["citations"])
	}
	return project(o, fs.paper, extra), nil
}

// nestedList writes papers as a nested list: paperId, title and the
// subfields asked for.
func nestedList(papers []json.RawMessage, subs []string) json.RawMessage {
	keys := []string{"paperId", "title"}
	for _, k := range S2PaperFields {
		if !slices.Contains(keys, k) && slices.ContainsFunc(subs, func(s string) bool { return s == k || strings.HasPrefix(s, k+".") }) {
			keys = append(keys, k)
		}
	}
	var b bytes.Buffer
	b.WriteByte('[')
	n := 0
	for _, p := range papers {
		o, err := parseObject(p)
		if err != nil {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.Write(project(o, keys, nil))
	}
	b.WriteByte(']')
	return b.Bytes()
}

// projectEdge writes one data element of a references page.
func projectEdge(e json.RawMessage, fs s2Fields) ([]byte, error) {
	return projectNested(e, fs, "citedPaper")
}

// projectNested writes one data element of a references page (nested
// citedPaper) or of a citations page (citingPaper): the edge fields asked
// for, then the paper.
func projectNested(e json.RawMessage, fs s2Fields, nested string) ([]byte, error) {
	o, err := parseObject(e)
	if err != nil {
		return nil, fmt.Errorf("sim: a stored S2 edge is no JSON object: %w", err)
	}
	paper := jsonNull
	if cp := o.get(nested); cp != nil && string(cp) != "null" {
		co, err := parseObject(cp)
		if err != nil {
			return nil, fmt.Errorf("sim: a stored S2 %s is no JSON object: %w", nested, err)
		}
		paper = project(co, fs.paper, nil)
	}
	return project(o, append(slices.Clip(fs.edge), nested), map[string]json.RawMessage{nested: paper}), nil
}

// s2Sized refuses an answer over S2's size cap as S2 does.
func s2Sized(rw http.ResponseWriter, body []byte) {
	if len(body) > S2MaxResponse {
		s2Error(rw, http.StatusBadRequest, "Response would exceed maximum size. Please reduce the number of fields or the limit.")
		return
	}
	writeBody(rw, "application/json", body)
}

// s2Error is S2's own error body: compact, with a trailing newline, as
// the recorded 400 and 404 bodies are.
func s2Error(rw http.ResponseWriter, status int, msg string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // ends the body with a newline
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]string{"error": msg})
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	rw.Write(b.Bytes())
}

func s2NotFound(rw http.ResponseWriter, id string) {
	s2Error(rw, http.StatusNotFound, "Paper with id "+id+" not found")
}

// s2Gateway is the body of S2's gateway: {"message": ...}.
func s2Gateway(rw http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(map[string]string{"message": msg})
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	rw.Write(body)
}

// s2Fault answers a fault as S2's gateway does: the recorded 429 with its
// headers, {"message": ...} for the others.
func s2Fault(rw http.ResponseWriter, status int) {
	switch status {
	case http.StatusTooManyRequests:
		rw.Header().Set("x-amzn-errortype", "TooManyRequestsException")
		rw.Header().Set("x-cache", "Error from cloudfront")
		rw.Header().Set("Content-Type", "application/json")
		rw.Header().Set("Content-Length", strconv.Itoa(len(S2TooManyBody)))
		rw.WriteHeader(status)
		rw.Write([]byte(S2TooManyBody))
	case http.StatusGatewayTimeout:
		s2Gateway(rw, status, "Endpoint request timed out")
	case http.StatusInternalServerError:
		s2Gateway(rw, status, "Internal server error")
	default:
		s2Gateway(rw, status, http.StatusText(status))
	}
}
