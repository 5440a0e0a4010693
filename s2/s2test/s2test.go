// Package s2test runs an in-process Semantic Scholar Academic Graph API
// server for tests. It speaks the real protocol of the endpoints the s2
// package uses, as recorded responses show it:
//
//   - GET /graph/v1/paper/{id}: the paper, or 404 {"error":"Paper with id
//     {id} not found"};
//   - GET /graph/v1/paper/{id}/references?fields&offset&limit: real offset
//     paging, "next" absent on the last page, limit at most 1000 and
//     offset+limit below 10,000 or 400; a withheld list answers "data": null
//     with the publisher's disclaimer in citingPaperInfo.openAccessPdf;
//   - POST /graph/v1/paper/batch?fields with {"ids": [...]}: at most 500
//     ids, an array aligned with them, null for an unknown id.
//
// Other paths (citations, search, authors) answer 404. Field names are
// validated against the documented ones (400 {"error":
// "Unrecognized or unsupported fields: [x]"}) and responses carry paperId
// and the fields asked for, or paperId and title when none are. Papers are
// addressed by the id forms S2 accepts: the 40-hex paperId, CorpusId:,
// ARXIV: (versions dropped), DOI: or a bare DOI, MAG:, ACL:, PMID:, PMCID:,
// and URL: of an arXiv abstract page; prefixes are case-insensitive.
//
// A configured API key makes a request carrying another x-api-key fail with
// 403; a request without one is served, as S2 serves its keyless pool.
// Faults (429 with or without Retry-After, 5xx) can be scripted per path,
// a number of times or forever, and every request is logged.
//
// The 404 and unknown-field bodies are byte for byte the recorded ones;
// the window message is the one users report (allenai/s2-folks#12); the
// wording of the other 400s (limit, batch size, malformed body) is this
// package's, as no recording of them exists.
//
// Helpers load the recorded responses of ../shared/fixtures/s2 and
// generate synthetic reference lists of any size in the real shape.
package s2test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Limits the server enforces, as the real API does.
const (
	// MaxLimit is the largest limit the references endpoint accepts.
	MaxLimit = 1000
	// Window bounds offset paging: offset+limit must stay below it.
	Window = 10000
	// MaxBatch is the most ids one batch request may carry.
	MaxBatch = 500
	// MaxResponse is S2's response size cap in bytes.
	MaxResponse = 10 << 20
)

// PathPrefix starts the path of every paper endpoint.
const PathPrefix = "/graph/v1/paper/"

// BatchPath is the path of the batch endpoint.
const BatchPath = PathPrefix + "batch"

// PaperPath returns the path of paper id as the server sees it (decoded).
func PaperPath(id string) string { return PathPrefix + id }

// ReferencesPath returns the path of the reference list of paper id.
func ReferencesPath(id string) string { return PathPrefix + id + "/references" }

// Request is one request the server received.
type Request struct {
	At     time.Time
	Method string
	Path   string // decoded, e.g. "/graph/v1/paper/ARXIV:2401.00001/references"
	Query  url.Values
	// IDs are the ids of a batch request, in order.
	IDs []string
	// Keyed reports whether the request carried an x-api-key header.
	Keyed bool
	// Status is the status the server answered.
	Status int
}

// Offset returns the offset asked for, or the API's default 0.
func (r Request) Offset() int { return intParam(r.Query, "offset", 0) }

// Limit returns the limit asked for, or the API's default 100.
func (r Request) Limit() int { return intParam(r.Query, "limit", 100) }

func intParam(q url.Values, name string, def int) int {
	v := q.Get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return n
}

// Fault is a scripted answer served instead of the real one.
type Fault struct {
	Status int
	// RetryAfter is the Retry-After header sent with it; "" sends none, as
	// S2's gateway does.
	RetryAfter string
}

// Faults as S2 and its gateway answer them.
var (
	TooManyRequests = Fault{Status: http.StatusTooManyRequests}
	Unavailable     = Fault{Status: http.StatusServiceUnavailable}
	GatewayTimeout  = Fault{Status: http.StatusGatewayTimeout}
	InternalError   = Fault{Status: http.StatusInternalServerError}
)

// WithRetryAfter returns f sending Retry-After: v ("0", "1", an HTTP date).
func (f Fault) WithRetryAfter(v string) Fault {
	f.RetryAfter = v
	return f
}

// Forever, as the count of Script, repeats a fault on every request.
const Forever = -1

// TooManyBody is the body of S2's 429, seen verbatim in public reports.
const TooManyBody = `{"message": "Too Many Requests. Please wait and try again or apply for a key for higher rate limits. https://www.semanticscholar.org/product/api#api-key-form", "code": "429"}`

type step struct {
	fault Fault
	left  int // Forever or > 0
}

// entry is one registered paper, shared by all its ids.
type entry struct {
	id     string // paperId
	record map[string]json.RawMessage
	edges  []edge
	// withheld is set when the publisher elided the reference list.
	withheld   bool
	disclaimer string
	// stub is set for a paper registered only through its reference list.
	stub bool
}

// edge is one registered reference edge: its own fields and its cited
// paper (nil for a null citedPaper).
type edge struct {
	fields map[string]json.RawMessage
	cited  map[string]json.RawMessage
}

// Server is a fake Semantic Scholar Graph API. Its methods are safe for
// concurrent use; registering data while requests are served is allowed.
type Server struct {
	*httptest.Server
	tb testing.TB

	mu     sync.Mutex
	key    string
	papers map[string]*entry // canonical id form -> paper
	faults map[string][]step // path -> script
	log    []Request
}

// NewServer starts a server with no papers; it is closed when the test
// ends.
func NewServer(tb testing.TB) *Server {
	s := &Server{tb: tb, papers: map[string]*entry{}, faults: map[string][]step{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// SetAPIKey makes the server refuse with 403 any request whose x-api-key
// is not key; "" accepts every key.
func (s *Server) SetAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// Script makes the next n requests to path (see PaperPath, ReferencesPath,
// BatchPath) answer with f; n = Forever repeats it until Unscript. Scripts
// of one path queue up in the order given.
func (s *Server) Script(path string, f Fault, n int) {
	if n == 0 {
		return
	}
	if n < 0 {
		n = Forever
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[path] = append(s.faults[path], step{fault: f, left: n})
}

// Unscript drops the faults still scripted for path.
func (s *Server) Unscript(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.faults, path)
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// RequestsTo returns the requests received for path.
func (s *Server) RequestsTo(path string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// ResetRequests empties the request log.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
}

// AddPaper registers paper, anything that marshals to a JSON object in
// S2's shape (a recorded body, an s2.Paper, a map), and returns its
// paperId. The paper answers to its paperId, corpusId and externalIds
// (ArXiv, DOI, CorpusId, MAG, ACL, PubMed, PubMedCentral) and to ids. A
// paper without paperId gets one derived from ids[0]. Registering a paper
// whose paperId or one of ids is known, or that a reference list was set
// for, replaces that paper's record and keeps its reference list; an
// external id moves to the latest paper registered with it.
func (s *Server) AddPaper(paper any, ids ...string) string {
	s.tb.Helper()
	rec := s.object(paper)
	if pid := stringValue(rec["paperId"]); pid != "" {
		if !isHex40(pid) {
			s.tb.Fatalf("s2test: paperId %q is not 40 hex digits", pid)
		}
	} else {
		if len(ids) == 0 {
			s.tb.Fatal("s2test: AddPaper: the paper has no paperId and no id was given")
		}
		rec["paperId"] = mustJSON(derivedPaperID(ids[0]))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addLocked(rec, ids).id
}

// addLocked registers rec under its own ids and ids. The paper known by
// rec's paperId or one of ids is updated; an external id another paper
// had moves to this one.
func (s *Server) addLocked(rec map[string]json.RawMessage, ids []string) *entry {
	pid := stringValue(rec["paperId"])
	var e *entry
	for _, id := range append([]string{pid}, ids...) {
		if old := s.papers[canonicalID(id)]; old != nil {
			e = old
			break
		}
	}
	if e == nil {
		// A stub that SetReferences or Withhold made for one of the
		// paper's ids becomes this paper.
		for _, id := range recordIDs(rec) {
			if old := s.papers[canonicalID(id)]; old != nil && old.stub {
				e = old
				break
			}
		}
	}
	if e == nil {
		e = &entry{}
	}
	e.record, e.id, e.stub = rec, pid, false
	for _, id := range append(recordIDs(rec), ids...) {
		s.papers[canonicalID(id)] = e
	}
	return e
}

// lookupOrStub returns the paper of id, registering a stub (a paperId
// derived from id, a title, and the external id id names) when id is
// unknown.
func (s *Server) lookupOrStub(id string) *entry {
	if e := s.papers[canonicalID(id)]; e != nil {
		return e
	}
	pid := derivedPaperID(id)
	rec := map[string]json.RawMessage{
		"paperId": mustJSON(pid),
		"title":   mustJSON("Paper " + id),
		"url":     mustJSON("https://www.semanticscholar.org/paper/" + pid),
	}
	if x := externalIDsOf(id); x != nil {
		rec["externalIds"] = mustJSON(x)
		if c, ok := x["CorpusId"]; ok {
			rec["corpusId"] = mustJSON(c)
		}
	}
	e := s.addLocked(rec, []string{id})
	e.stub = true
	return e
}

// Alias makes aliases address the paper of id (registering a stub for id
// when it is unknown).
func (s *Server) Alias(id string, aliases ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.lookupOrStub(id)
	for _, a := range aliases {
		s.papers[canonicalID(a)] = e
	}
}

// SetReferences makes edges, each a JSON object in the shape of a data
// element of the references endpoint, the reference list of paper id,
// served in that order. An unknown id gets a stub paper. A citedPaper
// whose paperId is "" is served with a null paperId, as S2 sends
// unresolved references, so s2.Reference values can be used.
func (s *Server) SetReferences(id string, edges []json.RawMessage) {
	s.tb.Helper()
	objs := make([]edge, len(edges))
	for i, raw := range edges {
		o := s.object(raw)
		var c map[string]json.RawMessage
		if cp, ok := o["citedPaper"]; ok && string(cp) != "null" {
			c = s.object(cp)
			if stringValue(c["paperId"]) == "" {
				c["paperId"] = json.RawMessage("null")
			}
		}
		delete(o, "citedPaper")
		objs[i] = edge{fields: o, cited: c}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.lookupOrStub(id)
	e.edges, e.withheld, e.disclaimer = objs, false, ""
}

// DefaultDisclaimer is the disclaimer Withhold sends when given none, in
// the wording S2 uses for a publisher-elided reference list.
const DefaultDisclaimer = "Notice: The following paper fields have been elided by the publisher: {'references'}. " +
	"Paper or abstract available at https://api.unpaywall.org/v2/{DOI}?email=<INSERT_YOUR_EMAIL> or https://doi.org/{DOI}."

// Withhold makes the reference list of paper id withheld by its
// publisher: every page answers "data": null with disclaimer
// (DefaultDisclaimer when empty). An unknown id gets a stub paper.
func (s *Server) Withhold(id, disclaimer string) {
	if disclaimer == "" {
		disclaimer = DefaultDisclaimer
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.lookupOrStub(id)
	e.edges, e.withheld, e.disclaimer = nil, true, disclaimer
}

// object marshals v and decodes it as a JSON object.
func (s *Server) object(v any) map[string]json.RawMessage {
	s.tb.Helper()
	var b []byte
	switch x := v.(type) {
	case json.RawMessage:
		b = x
	case []byte:
		b = x
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			s.tb.Fatalf("s2test: marshal %T: %v", v, err)
		}
	}
	var o map[string]json.RawMessage
	if err := json.Unmarshal(b, &o); err != nil || o == nil {
		s.tb.Fatalf("s2test: want a JSON object, got %.80s (%v)", b, err)
	}
	return o
}

// serve answers one request.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{
		At:     time.Now(),
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.Query(),
		Keyed:  r.Header.Get("x-api-key") != "",
	}
	a := s.answer(r, &req, body)
	s.mu.Lock()
	req.Status = a.status
	s.log = append(s.log, req)
	s.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(a.status)
	w.Write(a.body)
}

// answer is a response before it is written.
type answer struct {
	status int
	header map[string]string
	body   []byte
}

func jsonAnswer(status int, body []byte) answer { return answer{status: status, body: body} }

// errorAnswer is S2's own error body: compact, with a trailing newline
// (as the recorded 400 and 404 bodies are).
func errorAnswer(status int, msg string) answer {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return answer{status: status, body: append(b, '\n')}
}

// gatewayAnswer is the body of S2's gateway: {"message": ...}.
func gatewayAnswer(status int, msg string) answer {
	b, _ := json.Marshal(map[string]string{"message": msg})
	return answer{status: status, body: b}
}

func (s *Server) answer(r *http.Request, req *Request, body []byte) answer {
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	if got := r.Header.Get("x-api-key"); key != "" && got != "" && got != key {
		return gatewayAnswer(http.StatusForbidden, "Forbidden")
	}
	if f, ok := s.nextFault(req.Path); ok {
		return faultAnswer(f)
	}

	rest, ok := strings.CutPrefix(req.Path, PathPrefix)
	if !ok || rest == "" {
		return errorAnswer(http.StatusNotFound, "Not found")
	}
	if rest == "batch" && r.Method == http.MethodPost {
		return s.batch(req, body)
	}
	if r.Method != http.MethodGet {
		return gatewayAnswer(http.StatusMethodNotAllowed, "Method Not Allowed")
	}
	if id, ok := strings.CutSuffix(rest, "/references"); ok {
		return s.references(id, req.Query)
	}
	return s.paper(rest, req.Query)
}

func (s *Server) nextFault(path string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.faults[path]
	if len(q) == 0 {
		return Fault{}, false
	}
	f := q[0].fault
	if q[0].left != Forever {
		q[0].left--
		if q[0].left == 0 {
			q = q[1:]
		}
		if len(q) == 0 {
			delete(s.faults, path)
		} else {
			s.faults[path] = q
		}
	}
	return f, true
}

func faultAnswer(f Fault) answer {
	var a answer
	switch f.Status {
	case http.StatusTooManyRequests:
		// The recorded 429 came from the gateway, with these headers.
		a = answer{status: f.Status, body: []byte(TooManyBody), header: map[string]string{
			"x-amzn-errortype": "TooManyRequestsException",
			"x-cache":          "Error from cloudfront",
		}}
	case http.StatusGatewayTimeout:
		a = gatewayAnswer(f.Status, "Endpoint request timed out")
	case http.StatusInternalServerError:
		a = gatewayAnswer(f.Status, "Internal server error")
	default:
		a = gatewayAnswer(f.Status, http.StatusText(f.Status))
	}
	if f.RetryAfter != "" {
		if a.header == nil {
			a.header = map[string]string{}
		}
		a.header["Retry-After"] = f.RetryAfter
	}
	return a
}

func (s *Server) paper(id string, q url.Values) answer {
	fields, bad := parseFields(q, paperEndpoint)
	if bad != nil {
		return badFields(bad)
	}
	s.mu.Lock()
	e := s.papers[canonicalID(id)]
	var out []byte
	if e != nil {
		out = projectPaper(e, fields)
	}
	s.mu.Unlock()
	if e == nil {
		return notFound(id)
	}
	return sized(out)
}

func notFound(id string) answer {
	return errorAnswer(http.StatusNotFound, "Paper with id "+id+" not found")
}

// sized refuses a body over S2's size cap as S2 does.
func sized(body []byte) answer {
	if len(body) > MaxResponse {
		return errorAnswer(http.StatusBadRequest, "Response would exceed maximum size. Please reduce the number of fields or the limit.")
	}
	return jsonAnswer(http.StatusOK, body)
}

func (s *Server) references(id string, q url.Values) answer {
	fields, bad := parseFields(q, referencesEndpoint)
	if bad != nil {
		return badFields(bad)
	}
	offset, err1 := strconv.Atoi(cmpOr(q.Get("offset"), "0"))
	limit, err2 := strconv.Atoi(cmpOr(q.Get("limit"), "100"))
	switch {
	case err1 != nil || offset < 0:
		return errorAnswer(http.StatusBadRequest, "Offset must be a non-negative integer")
	case err2 != nil || limit < 1:
		return errorAnswer(http.StatusBadRequest, "Limit must be a positive integer")
	case limit > MaxLimit:
		return errorAnswer(http.StatusBadRequest, fmt.Sprintf("Limit must be <= %d", MaxLimit))
	case offset+limit >= Window:
		return errorAnswer(http.StatusBadRequest, fmt.Sprintf("The sum of offset and limit must be < %d", Window))
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.papers[canonicalID(id)]
	if e == nil {
		return notFound(id)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"offset":%d`, offset)
	if e.withheld {
		info, _ := json.Marshal(map[string]any{"openAccessPdf": map[string]any{
			"url": "", "status": "CLOSED", "license": nil, "disclaimer": e.disclaimer,
		}})
		fmt.Fprintf(&b, `,"data":null,"citingPaperInfo":%s}`, info)
		return sized(b.Bytes())
	}
	end := min(offset+limit, len(e.edges))
	if end < len(e.edges) {
		fmt.Fprintf(&b, `,"next":%d`, end)
	}
	b.WriteString(`,"data":[`)
	for i := offset; i < end; i++ {
		if i > offset {
			b.WriteByte(',')
		}
		b.Write(projectEdge(e.edges[i], fields))
	}
	b.WriteString("]}")
	return sized(b.Bytes())
}

func (s *Server) batch(req *Request, body []byte) answer {
	fields, bad := parseFields(req.Query, paperEndpoint)
	if bad != nil {
		return badFields(bad)
	}
	var in struct {
		IDs []string `json:"ids"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.IDs == nil {
		return errorAnswer(http.StatusBadRequest, `Body must be a JSON object {"ids": [...]}`)
	}
	req.IDs = in.IDs
	if len(in.IDs) > MaxBatch {
		return errorAnswer(http.StatusBadRequest, fmt.Sprintf("Cannot process more than %d ids", MaxBatch))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var b bytes.Buffer
	b.WriteByte('[')
	for i, id := range in.IDs {
		if i > 0 {
			b.WriteByte(',')
		}
		if e := s.papers[canonicalID(id)]; e != nil {
			b.Write(projectPaper(e, fields))
		} else {
			b.WriteString("null")
		}
	}
	b.WriteByte(']')
	return sized(b.Bytes())
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
