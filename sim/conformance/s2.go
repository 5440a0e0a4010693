package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/sim"
)

// The Semantic Scholar invariants, as the recorded responses show them:
//
//   - a references page echoes its offset; "next" is offset plus the
//     edges on the page, and absent on the last page; a withheld list is
//     "data": null with the publisher's disclaimer and no next;
//   - an answer carries paperId and exactly the fields asked for (paperId
//     and title when none are), in S2's key order; an edge its edge fields
//     and then citedPaper; an unresolved citedPaper has a null paperId
//     and null external ids;
//   - a batch answer is an array aligned with the ids asked, null for an
//     unknown id, each paper answering to its id;
//   - errors are {"error": "..."} and a newline, with the recorded texts
//     for an unknown paper and an unknown field.

// edgeFields and paperFields are what the suite asks for.
var (
	askEdge  = []string{"contexts", "intents", "contextsWithIntent", "isInfluential"}
	askPaper = []string{"paperId", "externalIds", "corpusId", "title", "abstract", "year", "publicationDate", "authors"}
)

// CheckS2ReferencesPage checks one answer of GET
// /graph/v1/paper/{id}/references asked with fields, offset and limit
// (limit 0: the API's default). It returns the page's edges and next (-1
// on the last page, or for a withheld list).
func CheckS2ReferencesPage(fields string, offset, limit, status int, body []byte) (edges []json.RawMessage, next int, err error) {
	return checkS2ListPage("citedPaper", fields, offset, limit, status, body)
}

// CheckS2CitationsPage checks one answer of GET
// /graph/v1/paper/{id}/citations, paged as references are: each element
// the edge fields asked for and then citingPaper. It returns the page's
// citations and next (-1 on the last page).
func CheckS2CitationsPage(fields string, offset, limit, status int, body []byte) (cites []json.RawMessage, next int, err error) {
	return checkS2ListPage("citingPaper", fields, offset, limit, status, body)
}

// checkS2ListPage checks a page of references (nested citedPaper) or of
// citations (nested citingPaper).
func checkS2ListPage(nested, fields string, offset, limit, status int, body []byte) (edges []json.RawMessage, next int, err error) {
	if status != 200 {
		return nil, -1, fmt.Errorf("status %d, want 200: %s", status, truncate(body))
	}
	keys, obj, err := objectKeys(body)
	if err != nil {
		return nil, -1, fmt.Errorf("page: %w", err)
	}
	var errs []error
	var page struct {
		Offset          *int `json:"offset"`
		Next            *int `json:"next"`
		CitingPaperInfo *struct {
			OpenAccessPdf *struct {
				Disclaimer string `json:"disclaimer"`
			} `json:"openAccessPdf"`
		} `json:"citingPaperInfo"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, -1, fmt.Errorf("page: %w", err)
	}
	if page.Offset == nil || *page.Offset != offset {
		errs = append(errs, fmt.Errorf("offset %v, want the %d asked", ptrString(page.Offset), offset))
	}
	if want := orderOf(keys, []string{"offset", "next", "data", "citingPaperInfo"}); want != nil {
		errs = append(errs, fmt.Errorf("keys %v: %w", keys, want))
	}
	data, ok := obj["data"]
	if !ok {
		return nil, -1, errors.Join(append(errs, fmt.Errorf("no data key: %s", truncate(body)))...)
	}
	if string(data) == "null" && nested == "citingPaper" {
		return nil, -1, errors.Join(append(errs, errors.New("a citations page with data null"))...)
	}
	if string(data) == "null" {
		// Withheld by the publisher.
		if page.Next != nil {
			errs = append(errs, fmt.Errorf("a withheld list (data null) has next %d", *page.Next))
		}
		if page.CitingPaperInfo == nil || page.CitingPaperInfo.OpenAccessPdf == nil || page.CitingPaperInfo.OpenAccessPdf.Disclaimer == "" {
			errs = append(errs, fmt.Errorf("data null without citingPaperInfo.openAccessPdf.disclaimer: %s", truncate(body)))
		}
		return nil, -1, errors.Join(errs...)
	}
	if obj["citingPaperInfo"] != nil {
		errs = append(errs, errors.New("citingPaperInfo on a list that is not withheld"))
	}
	if err := json.Unmarshal(data, &edges); err != nil {
		return nil, -1, errors.Join(append(errs, fmt.Errorf("data: %w", err))...)
	}
	if limit == 0 {
		limit = sim.S2DefaultLimit
	}
	if len(edges) > limit {
		errs = append(errs, fmt.Errorf("%d edges on a page of limit %d", len(edges), limit))
	}
	next = -1
	if page.Next != nil {
		next = *page.Next
		if len(edges) == 0 || next != offset+len(edges) {
			errs = append(errs, fmt.Errorf("next %d after %d edges from offset %d, want %d", next, len(edges), offset, offset+len(edges)))
		}
	}
	edgeKeys, paperKeys := s2Projection(fields, true)
	for i, e := range edges {
		if err := checkEdge(e, nested, edgeKeys, paperKeys); err != nil {
			errs = append(errs, fmt.Errorf("edge %d (offset %d): %w", i, offset+i, err))
		}
	}
	return edges, next, errors.Join(errs...)
}

// checkEdge checks one data element of a references or citations page.
func checkEdge(e json.RawMessage, nested string, edgeKeys, paperKeys []string) error {
	keys, obj, err := objectKeys(e)
	if err != nil {
		return err
	}
	if want := append(slices.Clone(edgeKeys), nested); !slices.Equal(keys, want) {
		return fmt.Errorf("keys %v, want %v", keys, want)
	}
	if string(obj[nested]) == "null" {
		if nested == "citingPaper" {
			return errors.New("a citation with a null citingPaper")
		}
		return nil
	}
	return checkPaper(obj[nested], paperKeys, "")
}

// checkPaper checks a paper record: exactly keys, in order, and answering
// to id ("" to skip).
func checkPaper(p json.RawMessage, keys []string, id string) error {
	got, obj, err := objectKeys(p)
	if err != nil {
		return err
	}
	var errs []error
	if !slices.Equal(got, keys) {
		errs = append(errs, fmt.Errorf("keys %v, want %v", got, keys))
	}
	var pid *string
	if err := json.Unmarshal(obj["paperId"], &pid); err != nil {
		errs = append(errs, fmt.Errorf("paperId %s: %w", obj["paperId"], err))
	}
	switch {
	case pid == nil:
		// Unresolved: S2 has matched no paper, so no id of one either.
		for _, k := range []string{"externalIds", "corpusId", "url"} {
			if v, ok := obj[k]; ok && string(v) != "null" {
				errs = append(errs, fmt.Errorf("unresolved (paperId null) with %s %s", k, v))
			}
		}
	case !isHex40(*pid):
		errs = append(errs, fmt.Errorf("paperId %q is not 40 hex digits", *pid))
	}
	if id != "" {
		if err := answers(obj, id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// answers checks that a paper is the one id names, by what the paper
// carries of the id's system.
func answers(obj map[string]json.RawMessage, id string) error {
	var ext map[string]json.RawMessage
	json.Unmarshal(obj["externalIds"], &ext)
	str := func(raw json.RawMessage) string {
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			return n.String()
		}
		var s string
		json.Unmarshal(raw, &s)
		return s
	}
	id = strings.TrimSpace(id)
	prefix, rest, _ := strings.Cut(id, ":")
	switch {
	case isHex40(id):
		if got := str(obj["paperId"]); !strings.EqualFold(got, id) {
			return fmt.Errorf("asked for %s, answered paperId %s", id, got)
		}
	case strings.EqualFold(prefix, "CorpusId"):
		got := str(obj["corpusId"])
		if got == "" && ext != nil {
			got = str(ext["CorpusId"])
		}
		if got != "" && got != rest {
			return fmt.Errorf("asked for %s, answered corpus id %s", id, got)
		}
	case strings.EqualFold(prefix, "DOI") || strings.HasPrefix(id, "10."):
		doi := id
		if strings.EqualFold(prefix, "DOI") {
			doi = rest
		}
		if got := str(ext["DOI"]); ext != nil && got != "" && !strings.EqualFold(got, doi) {
			// An arXiv paper asked for by its arXiv DOI carries it too.
			if a := str(ext["ArXiv"]); !strings.EqualFold(doi, "10.48550/arXiv."+a) {
				return fmt.Errorf("asked for %s, answered DOI %s", id, got)
			}
		}
	case strings.EqualFold(prefix, "ARXIV"):
		if got := str(ext["ArXiv"]); ext != nil && got != "" && arxiv.Normalize(got) != arxiv.Normalize(rest) {
			return fmt.Errorf("asked for %s, answered arXiv id %s", id, got)
		}
	}
	return nil
}

// CheckS2Paper checks an answer of GET /graph/v1/paper/{id} asked with
// fields.
func CheckS2Paper(id, fields string, status int, body []byte) error {
	if status != 200 {
		return fmt.Errorf("status %d, want 200: %s", status, truncate(body))
	}
	_, paperKeys := s2Projection(fields, false)
	return checkPaper(body, paperKeys, id)
}

// CheckS2Batch checks an answer of POST /graph/v1/paper/batch for ids
// asked with fields. known, when not nil, says which ids the backend
// knows: their elements must be papers, the others null.
func CheckS2Batch(ids []string, known []bool, fields string, status int, body []byte) error {
	if status != 200 {
		return fmt.Errorf("status %d, want 200: %s", status, truncate(body))
	}
	var papers []json.RawMessage
	if err := json.Unmarshal(body, &papers); err != nil {
		return fmt.Errorf("batch: %w", err)
	}
	if len(papers) != len(ids) {
		return fmt.Errorf("%d elements for %d ids", len(papers), len(ids))
	}
	_, paperKeys := s2Projection(fields, false)
	var errs []error
	for i, p := range papers {
		isNull := string(p) == "null"
		switch {
		case known != nil && known[i] && isNull:
			errs = append(errs, fmt.Errorf("element %d (%s): null for a paper the backend knows", i, ids[i]))
		case known != nil && !known[i] && !isNull:
			errs = append(errs, fmt.Errorf("element %d (%s): a paper for an unknown id", i, ids[i]))
		case !isNull:
			if err := checkPaper(p, paperKeys, ids[i]); err != nil {
				errs = append(errs, fmt.Errorf("element %d (%s): %w", i, ids[i], err))
			}
		}
	}
	return errors.Join(errs...)
}

// CheckS2Error checks an S2 error answer: the status, and a body that is
// {"error": msg} and a newline, msg containing want.
func CheckS2Error(wantStatus int, want string, status int, body []byte) error {
	if status != wantStatus {
		return fmt.Errorf("status %d, want %d: %s", status, wantStatus, truncate(body))
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return fmt.Errorf("error body %q: %w", body, err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]string{"error": e.Error})
	if !bytes.Equal(body, b.Bytes()) {
		return fmt.Errorf("error body %q, want the compact %q", body, b.Bytes())
	}
	if !strings.Contains(e.Error, want) {
		return fmt.Errorf("error %q, want one with %q", e.Error, want)
	}
	return nil
}

// S2NotFound is the message of S2's 404 for id.
func S2NotFound(id string) string { return "Paper with id " + id + " not found" }

// S2UnknownFields is the message of S2's 400 for unknown field names.
func S2UnknownFields(names ...string) string {
	return "Unrecognized or unsupported fields: [" + strings.Join(names, ", ") + "]"
}

// s2Projection returns the keys an answer to fields carries: of an edge
// (references only) and of a paper, in S2's order.
func s2Projection(fields string, references bool) (edge, paper []string) {
	var top []string
	for f := range strings.SplitSeq(fields, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		head, _, _ := strings.Cut(f, ".")
		if !slices.Contains(top, head) {
			top = append(top, head)
		}
	}
	if len(top) == 0 {
		top = []string{"title"}
	}
	paper = []string{"paperId"}
	for _, k := range slices.Concat(sim.S2EdgeFields, sim.S2PaperFields, sim.S2FullPaperFields) {
		switch {
		case k == "paperId" || !slices.Contains(top, k):
		case references && slices.Contains(sim.S2EdgeFields, k):
			edge = append(edge, k)
		default:
			paper = append(paper, k)
		}
	}
	return edge, paper
}

// objectKeys decodes a JSON object, returning its keys in order.
func objectKeys(b []byte) ([]string, map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("not a JSON object: %s", truncate(b))
	}
	var keys []string
	obj := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, t.(string))
		obj[t.(string)] = v
	}
	return keys, obj, nil
}

// orderOf checks that keys appear in the order of order (keys not in it
// fail).
func orderOf(keys, order []string) error {
	last := -1
	for _, k := range keys {
		i := slices.Index(order, k)
		if i < 0 {
			return fmt.Errorf("unexpected key %q", k)
		}
		if i < last {
			return fmt.Errorf("key %q out of order (want %v)", k, order)
		}
		last = i
	}
	return nil
}

func isHex40(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func ptrString(p *int) string {
	if p == nil {
		return "none"
	}
	return strconv.Itoa(*p)
}

// s2URL is the URL of path with a query.
func s2URL(base, path string, q url.Values) string {
	u := base + path
	if len(q) > 0 {
		u += "?" + strings.ReplaceAll(q.Encode(), "%2C", ",")
	}
	return u
}

// walk pages through the reference list of id with limit, checking every
// page; it returns the edges.
func walk(t *testing.T, base, id, fields string, limit int) []json.RawMessage {
	t.Helper()
	var all []json.RawMessage
	offset := 0
	for pages := 0; ; pages++ {
		if pages > 2000 {
			t.Fatalf("%s: more than 2000 pages of limit %d", id, limit)
		}
		q := url.Values{"offset": {strconv.Itoa(offset)}}
		if fields != "" {
			q.Set("fields", fields)
		}
		if limit > 0 {
			q.Set("limit", strconv.Itoa(limit))
		}
		r := get(t, s2URL(base, sim.S2ReferencesPath(id), q))
		edges, next, err := CheckS2ReferencesPage(fields, offset, limit, r.status, r.body)
		if err != nil {
			t.Fatalf("%s offset %d limit %d: %v", id, offset, limit, err)
		}
		all = append(all, edges...)
		if next < 0 {
			return all
		}
		offset = next
	}
}

// TestS2References pages through each reference list with several page
// sizes: every page checked, the lists equal whatever the page size, the
// last page without next, a page past the end empty.
func (s *Suite) TestS2References(t *testing.T) {
	base := s.url(t, sim.S2)
	need(t, "S2 reference lists (S2Lists)", s.S2Lists)
	fields := strings.Join(slices.Concat(askEdge, askPaper), ",")
	for _, id := range s.S2Lists {
		whole := walk(t, base, id, fields, sim.S2MaxLimit)
		for _, limit := range []int{1, 3, 100} {
			got := walk(t, base, id, fields, limit)
			if len(got) != len(whole) {
				t.Errorf("%s: %d edges in pages of %d, %d in pages of %d", id, len(got), limit, len(whole), sim.S2MaxLimit)
				continue
			}
			for i := range got {
				if !bytes.Equal(got[i], whole[i]) {
					t.Errorf("%s: edge %d differs between page sizes %d and %d", id, i, limit, sim.S2MaxLimit)
					break
				}
			}
		}
		// Without fields: the edge is citedPaper{paperId, title}.
		walk(t, base, id, "", 0)
		past := len(whole) + 5
		r := get(t, s2URL(base, sim.S2ReferencesPath(id), url.Values{"offset": {strconv.Itoa(past)}, "limit": {"10"}}))
		if edges, next, err := CheckS2ReferencesPage("", past, 10, r.status, r.body); err != nil || len(edges) != 0 || next != -1 {
			t.Errorf("%s past the end (offset %d): %d edges, next %d, %v", id, past, len(edges), next, err)
		}
	}
}

// TestS2Window checks the limits of offset paging: limit at most 1000,
// offset+limit below 10,000, both non-negative.
func (s *Suite) TestS2Window(t *testing.T) {
	base := s.url(t, sim.S2)
	need(t, "S2 reference lists (S2Lists)", s.S2Lists)
	path := sim.S2ReferencesPath(s.S2Lists[0])
	for _, tc := range []struct {
		offset, limit string
		status        int
		has           string
	}{
		{"0", "1001", 400, "1000"},
		{"9001", "999", 400, "The sum of offset and limit must be < 10000"},
		{"9500", "500", 400, "The sum of offset and limit must be < 10000"},
		{"-1", "10", 400, "ffset"},
		{"0", "0", 400, "imit"},
		{"9000", "999", 200, ""},
	} {
		r := get(t, s2URL(base, path, url.Values{"offset": {tc.offset}, "limit": {tc.limit}}))
		if tc.status == 200 {
			off, _ := strconv.Atoi(tc.offset)
			lim, _ := strconv.Atoi(tc.limit)
			if _, _, err := CheckS2ReferencesPage("", off, lim, r.status, r.body); err != nil {
				t.Errorf("offset %s limit %s: %v", tc.offset, tc.limit, err)
			}
			continue
		}
		if err := CheckS2Error(tc.status, tc.has, r.status, r.body); err != nil {
			t.Errorf("offset %s limit %s: %v", tc.offset, tc.limit, err)
		}
	}
}

// TestS2Withheld checks withheld lists: every page "data": null with the
// disclaimer, no next.
func (s *Suite) TestS2Withheld(t *testing.T) {
	base := s.url(t, sim.S2)
	need(t, "withheld S2 reference lists (S2Withheld)", s.S2Withheld)
	for _, id := range s.S2Withheld {
		for _, offset := range []int{0, 100} {
			r := get(t, s2URL(base, sim.S2ReferencesPath(id), url.Values{"offset": {strconv.Itoa(offset)}, "limit": {"100"}}))
			edges, next, err := CheckS2ReferencesPage("", offset, 100, r.status, r.body)
			if err == nil && (edges != nil || next != -1 || !bytes.Contains(r.body, []byte(`"data":null`))) {
				err = fmt.Errorf("not withheld: %s", truncate(r.body))
			}
			if err != nil {
				t.Errorf("%s offset %d: %v", id, offset, err)
			}
		}
	}
}

// TestS2Papers asks for each paper with fields, without, and with an
// unknown field.
func (s *Suite) TestS2Papers(t *testing.T) {
	base := s.url(t, sim.S2)
	need(t, "S2 papers (S2Papers)", s.S2Papers)
	fields := strings.Join(askPaper[1:], ",") // paperId comes unasked
	for _, id := range s.S2Papers {
		for _, f := range []string{fields, "", "title,year", "authors.name,externalIds"} {
			q := url.Values{}
			if f != "" {
				q.Set("fields", f)
			}
			r := get(t, s2URL(base, sim.S2PaperPath(id), q))
			if err := CheckS2Paper(id, f, r.status, r.body); err != nil {
				t.Errorf("%s fields %q: %v", id, f, err)
			}
		}
		r := get(t, s2URL(base, sim.S2PaperPath(id), url.Values{"fields": {"title,unknown"}}))
		if err := CheckS2Error(400, S2UnknownFields("unknown"), r.status, r.body); err != nil {
			t.Errorf("%s fields title,unknown: %v", id, err)
		}
		r = get(t, s2URL(base, sim.S2PaperPath(id), url.Values{"fields": {"contexts"}}))
		if err := CheckS2Error(400, S2UnknownFields("contexts"), r.status, r.body); err != nil {
			t.Errorf("%s fields contexts (an edge field) on /paper: %v", id, err)
		}
	}
	if len(s.S2Lists) > 0 {
		r := get(t, s2URL(base, sim.S2ReferencesPath(s.S2Lists[0]), url.Values{"fields": {"tldr"}}))
		if err := CheckS2Error(400, S2UnknownFields("tldr"), r.status, r.body); err != nil {
			t.Errorf("fields tldr (FullPaper only) on /references: %v", err)
		}
	}
}

// TestS2NotFound asks for papers S2 does not know.
func (s *Suite) TestS2NotFound(t *testing.T) {
	base := s.url(t, sim.S2)
	need(t, "ids S2 does not know (S2Unknown)", s.S2Unknown)
	for _, id := range s.S2Unknown {
		for _, path := range []string{sim.S2PaperPath(id), sim.S2ReferencesPath(id)} {
			r := get(t, base+path)
			if err := CheckS2Error(404, S2NotFound(id), r.status, r.body); err != nil {
				t.Errorf("%s: %v", path, err)
			}
		}
	}
}

// TestS2Batch asks the batch endpoint for known and unknown ids: aligned,
// null for the unknown, and its limits.
func (s *Suite) TestS2Batch(t *testing.T) {
	base := s.url(t, sim.S2)
	need(t, "S2 papers (S2Papers)", s.S2Papers)
	ids := []string{"CorpusId:1"}
	known := []bool{false}
	for _, id := range s.S2Papers {
		ids, known = append(ids, id), append(known, true)
	}
	for _, id := range s.S2Unknown {
		ids, known = append(ids, id), append(known, false)
	}
	body, _ := json.Marshal(map[string][]string{"ids": ids})
	for _, f := range []string{"title,externalIds,corpusId,abstract", ""} {
		q := url.Values{}
		if f != "" {
			q.Set("fields", f)
		}
		r := do(t, "POST", s2URL(base, sim.S2BatchPath, q), string(body))
		if err := CheckS2Batch(ids, known, f, r.status, r.body); err != nil {
			t.Errorf("batch fields %q: %v", f, err)
		}
	}
	many := make([]string, sim.S2MaxBatch+1)
	for i := range many {
		many[i] = fmt.Sprintf("CorpusId:%d", i+1)
	}
	body, _ = json.Marshal(map[string][]string{"ids": many})
	if r := do(t, "POST", base+sim.S2BatchPath, string(body)); r.status != 400 {
		t.Errorf("%d ids: status %d, want 400", len(many), r.status)
	}
	if r := do(t, "POST", base+sim.S2BatchPath, `{"ids":`); r.status != 400 {
		t.Errorf("a broken body: status %d, want 400", r.status)
	}
	r := do(t, "POST", s2URL(base, sim.S2BatchPath, url.Values{"fields": {"nope"}}), `{"ids":[]}`)
	if err := CheckS2Error(400, S2UnknownFields("nope"), r.status, r.body); err != nil {
		t.Errorf("batch with an unknown field: %v", err)
	}
}

// walkCitations pages through the citations of id with limit, checking
// every page; it returns the citations.
func walkCitations(t *testing.T, base, id, fields string, limit int) []json.RawMessage {
	t.Helper()
	var all []json.RawMessage
	offset := 0
	for pages := 0; ; pages++ {
		if pages > 2000 {
			t.Fatalf("%s: more than 2000 pages of limit %d", id, limit)
		}
		q := url.Values{"offset": {strconv.Itoa(offset)}, "limit": {strconv.Itoa(limit)}}
		if fields != "" {
			q.Set("fields", fields)
		}
		r := get(t, s2URL(base, sim.S2CitationsPath(id), q))
		cites, next, err := CheckS2CitationsPage(fields, offset, limit, r.status, r.body)
		if err != nil {
			t.Fatalf("%s citations offset %d limit %d: %v", id, offset, limit, err)
		}
		all = append(all, cites...)
		if next < 0 {
			return all
		}
		offset = next
	}
}

// TestS2Citations pages through the citations of each paper with several
// page sizes: every page checked, the lists equal whatever the page size,
// each citing paper once; the window and field rules are the references'.
func (s *Suite) TestS2Citations(t *testing.T) {
	base := s.url(t, sim.S2)
	need(t, "cited S2 papers (S2Cited)", s.S2Cited)
	fields := strings.Join(slices.Concat(askEdge, askPaper), ",")
	for _, id := range s.S2Cited {
		whole := walkCitations(t, base, id, fields, sim.S2MaxLimit)
		if len(whole) == 0 {
			t.Errorf("%s: no citations; S2Cited names cited papers", id)
		}
		seen := map[string]bool{}
		for _, c := range whole {
			var e struct {
				CitingPaper struct {
					PaperID string `json:"paperId"`
				} `json:"citingPaper"`
			}
			json.Unmarshal(c, &e)
			if seen[e.CitingPaper.PaperID] || !isHex40(e.CitingPaper.PaperID) {
				t.Errorf("%s: citing paper %q twice or not an S2 id", id, e.CitingPaper.PaperID)
			}
			seen[e.CitingPaper.PaperID] = true
		}
		for _, limit := range []int{1, 2} {
			got := walkCitations(t, base, id, fields, limit)
			if len(got) != len(whole) {
				t.Errorf("%s: %d citations in pages of %d, %d in pages of %d", id, len(got), limit, len(whole), sim.S2MaxLimit)
				continue
			}
			for i := range got {
				if !bytes.Equal(got[i], whole[i]) {
					t.Errorf("%s: citation %d differs between page sizes", id, i)
					break
				}
			}
		}
		walkCitations(t, base, id, "", 10) // no fields: citingPaper{paperId, title}
		path := sim.S2CitationsPath(id)
		for _, tc := range []struct {
			q   url.Values
			has string
		}{
			{url.Values{"limit": {"1001"}}, "1000"},
			{url.Values{"offset": {"9500"}, "limit": {"500"}}, "The sum of offset and limit must be < 10000"},
			{url.Values{"fields": {"title,nonsense"}}, S2UnknownFields("nonsense")},
		} {
			r := get(t, s2URL(base, path, tc.q))
			if err := CheckS2Error(400, tc.has, r.status, r.body); err != nil {
				t.Errorf("%s citations %s: %v", id, tc.q.Encode(), err)
			}
		}
	}
	for _, id := range s.S2Unknown {
		r := get(t, s2URL(base, sim.S2CitationsPath(id), nil))
		if err := CheckS2Error(404, S2NotFound(id), r.status, r.body); err != nil {
			t.Errorf("citations of unknown %s: %v", id, err)
		}
	}
}

// TestS2Throttled holds the service to S2's throttling: over its limits a
// references or citations page answers the gateway's 429 (its body and
// headers), with Retry-After when the service sets one, and is served
// again once the limits allow.
func (s *Suite) TestS2Throttled(t *testing.T) {
	base := s.url(t, sim.S2)
	svc := s.service(t, sim.S2)
	var paths []string
	for _, id := range s.S2Lists {
		paths = append(paths, sim.S2ReferencesPath(id))
		break
	}
	for _, id := range s.S2Cited {
		paths = append(paths, sim.S2CitationsPath(id))
		break
	}
	if len(paths) == 0 {
		t.Skip("the backend names no S2 lists (S2Lists, S2Cited)")
	}
	restore := svc.Limits()
	defer svc.SetLimits(restore)
	for _, path := range paths {
		svc.SetLimits(sim.Limits{Rate: 1e-6, Burst: 1, RetryAfter: 3 * time.Second})
		u := s2URL(base, path, nil)
		if r := get(t, u); r.status != 200 {
			t.Fatalf("%s: status %d", path, r.status)
		}
		r := get(t, u)
		if r.status != 429 || string(r.body) != sim.S2TooManyBody || r.header.Get("x-amzn-errortype") != "TooManyRequestsException" {
			t.Errorf("%s over the limit: %d %v %s, want S2's 429", path, r.status, r.header, r.body)
		}
		if v := r.header.Get("Retry-After"); v != "3" {
			t.Errorf("%s over the limit: Retry-After %q, want the service's 3", path, v)
		}
		svc.SetLimits(restore)
		if r := get(t, u); r.status != 200 {
			t.Errorf("%s after the wait: status %d", path, r.status)
		}
	}
}
