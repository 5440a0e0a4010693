package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/conformance"
	"github.com/groundwork/curate/sim/simtest"
)

// s2Client returns an s2 Client on a real httpx stack with tiny waits.
func s2Client(t *testing.T, base, key string, opts s2.Options) *s2.Client {
	t.Helper()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	hc, err := httpx.New(httpx.Config{
		UserAgent:    httpx.UserAgent("sim-test", "test@example.org"),
		RetryMax:     3,
		RetryWaitMin: time.Millisecond,
		RetryWaitMax: 5 * time.Millisecond,
		Logger:       log,
	}, s2.ServiceConfig(base, key, time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := hc.Service(s2.ServiceName)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s2.New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// s2Get sends a raw request: path is sent as written (not re-escaped).
func s2Get(t *testing.T, srv *simtest.Server, method, path string, q url.Values, body string, header ...string) response {
	t.Helper()
	u := srv.URL + path
	if len(q) > 0 {
		u += "?" + strings.ReplaceAll(q.Encode(), "%2C", ",")
	}
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, b}
}

func offset(c sim.Call) int { o, _ := simtest.OffsetLimit(c); return o }
func limit(c sim.Call) int  { _, l := simtest.OffsetLimit(c); return l }

// generic decodes JSON with numbers kept exact.
func generic(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %.200s: %v", b, err)
	}
	return v
}

func sameJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if g, w := generic(t, got), generic(t, want); !reflect.DeepEqual(g, w) {
		t.Errorf("%s differs from the recording:\n got %.300s\nwant %.300s", what, got, want)
	}
}

// TestRecordedPagesReplayed: the two recorded pages come back when asked
// as they were recorded, and the client pages through them.
func TestRecordedPagesReplayed(t *testing.T) {
	t.Parallel()
	c := sim.NewCorpus()
	srv := simtest.Serve(t, sim.S2, c)
	edges := simtest.LoadRecordedReferences(t, c)
	if len(edges) != 156 {
		t.Fatalf("%d recorded edges, the manifest says 156", len(edges))
	}
	// The recording asked for CorpusID: with a capital D.
	path := sim.S2ReferencesPath("CorpusID:1033682")
	for _, p := range []struct {
		offset string
		file   string
	}{{"0", simtest.FileReferencesPage1}, {"100", simtest.FileReferencesLastPage}} {
		r := s2Get(t, srv, "GET", path, url.Values{"fields": {simtest.RecordedFields}, "offset": {p.offset}, "limit": {"100"}}, "")
		if r.status != 200 {
			t.Fatalf("offset %s: status %d %s", p.offset, r.status, r.body)
		}
		sameJSON(t, "page at offset "+p.offset, r.body, simtest.S2Fixture(t, p.file))
	}

	cl := s2Client(t, srv.URL, "", s2.Options{PageLimit: 100})
	srv.Reset()
	list, err := cl.References(context.Background(), simtest.RecordedReferencesID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Edges) != 156 || list.Pages != 2 || !list.Complete() {
		t.Errorf("%d edges over %d pages (complete %v), want 156 over 2", len(list.Edges), list.Pages, list.Complete())
	}
	unresolved := 0
	for _, e := range list.Edges {
		if !e.CitedPaper.Resolved() {
			unresolved++
		}
	}
	if unresolved != 9 {
		t.Errorf("%d unresolved edges, want the 9 recorded", unresolved)
	}
	var offsets []int
	for _, r := range srv.Calls() {
		offsets = append(offsets, offset(r))
	}
	if !slices.Equal(offsets, []int{0, 100}) {
		t.Errorf("offsets asked %v, want [0 100]", offsets)
	}
}

// TestRecordedPaperAndBatch: /paper and /paper/batch answer the recorded
// requests with the recorded bodies.
func TestRecordedPaperAndBatch(t *testing.T) {
	t.Parallel()
	c := sim.NewCorpus()
	srv := simtest.Serve(t, sim.S2, c)
	simtest.LoadS2Fixtures(t, c)

	r := s2Get(t, srv, "GET", sim.S2PaperPath(simtest.RecordedPaperID), url.Values{"fields": {simtest.RecordedPaperFields}}, "")
	if r.status != 200 {
		t.Fatalf("paper: status %d %s", r.status, r.body)
	}
	sameJSON(t, "paper", r.body, simtest.S2Fixture(t, simtest.FilePaper))

	ids, _ := json.Marshal(map[string][]string{"ids": simtest.RecordedBatchIDs})
	r = s2Get(t, srv, "POST", sim.S2BatchPath, url.Values{"fields": {simtest.RecordedBatchFields}}, string(ids))
	if r.status != 200 {
		t.Fatalf("batch: status %d %s", r.status, r.body)
	}
	sameJSON(t, "batch", r.body, simtest.S2Fixture(t, simtest.FileBatch))
	if got := srv.CallsTo(sim.S2BatchPath); len(got) != 1 || !slices.Equal(got[0].IDs, simtest.RecordedBatchIDs) {
		t.Errorf("batch request log %+v", got)
	}

	// Through the client: aligned, nil for the unknown id.
	cl := s2Client(t, srv.URL, "", s2.Options{})
	papers, err := cl.Batch(context.Background(), simtest.RecordedBatchIDs)
	if err != nil {
		t.Fatal(err)
	}
	if papers[0] != nil || papers[2] == nil || papers[2].DOI() != "10.2139/ssrn.2250500" || papers[3].PaperID != simtest.RecordedBatchIDs[3] {
		t.Errorf("batch results not aligned with the ids: %v", papers)
	}
}

// TestRecordedErrorBodies: the 404 and 400 bodies are byte for byte the
// recorded ones.
func TestRecordedErrorBodies(t *testing.T) {
	t.Parallel()
	srv := simtest.Serve(t, sim.S2, sim.NewCorpus())
	r := s2Get(t, srv, "GET", sim.S2PaperPath("DOI:10.1101/2024.04.01.587366"), url.Values{"fields": {"authors,title"}}, "")
	if want := simtest.S2Fixture(t, simtest.File404); r.status != 404 || !bytes.Equal(r.body, want) {
		t.Errorf("404: status %d body %q, want %q", r.status, r.body, want)
	}
	r = s2Get(t, srv, "GET", sim.S2PaperPath("10.1093/mind/lix.236.433"), url.Values{"fields": {"unknown"}}, "")
	if want := simtest.S2Fixture(t, simtest.File400); r.status != 400 || !bytes.Equal(r.body, want) {
		t.Errorf("400: status %d body %q, want %q", r.status, r.body, want)
	}
}

func TestFieldValidation(t *testing.T) {
	t.Parallel()
	c := sim.NewCorpus()
	srv := simtest.Serve(t, sim.S2, c)
	simtest.LoadRecordedReferences(t, c)
	refs := sim.S2ReferencesPath(simtest.RecordedReferencesID)
	paper := sim.S2PaperPath(simtest.RecordedReferencesID)
	tests := []struct {
		path, fields string
		status       int
		msg          string
	}{
		{refs, "contexts,title,isInfluential", 200, ""},
		{refs, "tldr", 400, "Unrecognized or unsupported fields: [tldr]"},
		{refs, "title,foo,citedPaper.title", 400, "Unrecognized or unsupported fields: [foo, citedPaper.title]"},
		{refs, s2.ReferenceFields, 200, ""},
		{paper, "contexts", 400, "Unrecognized or unsupported fields: [contexts]"},
		{paper, "title,tldr,authors.name,citations.title,embedding.specter_v2", 200, ""},
		{paper, "authors.nope", 400, "Unrecognized or unsupported fields: [authors.nope]"},
		{paper, s2.PaperFields, 200, ""},
	}
	for _, tt := range tests {
		r := s2Get(t, srv, "GET", tt.path, url.Values{"fields": {tt.fields}}, "")
		if r.status != tt.status {
			t.Errorf("%s?fields=%s: status %d (%s), want %d", tt.path, tt.fields, r.status, r.body, tt.status)
			continue
		}
		if tt.msg != "" {
			var e struct{ Error string }
			if json.Unmarshal(r.body, &e); e.Error != tt.msg {
				t.Errorf("fields=%s: error %q, want %q", tt.fields, e.Error, tt.msg)
			}
		}
	}

	// Responses carry paperId and the fields asked for, or paperId and
	// title when none are (the recorded fields=title shape).
	for _, fields := range []string{"", "title"} {
		r := s2Get(t, srv, "GET", refs, url.Values{"fields": {fields}, "limit": {"3"}}, "")
		var page struct {
			Next int
			Data []map[string]map[string]any
		}
		if err := json.Unmarshal(r.body, &page); err != nil || len(page.Data) != 3 || page.Next != 3 {
			t.Fatalf("fields=%q: %s (%v)", fields, r.body, err)
		}
		for _, e := range page.Data {
			if len(e) != 1 || len(e["citedPaper"]) != 2 || e["citedPaper"]["title"] == nil {
				t.Errorf("fields=%q: edge %v, want only citedPaper{paperId,title}", fields, e)
			}
		}
	}
	r := s2Get(t, srv, "GET", refs, url.Values{"fields": {"isInfluential,year"}, "limit": {"1"}}, "")
	var page struct{ Data []map[string]json.RawMessage }
	json.Unmarshal(r.body, &page)
	var cited map[string]any
	json.Unmarshal(page.Data[0]["citedPaper"], &cited)
	if len(page.Data[0]) != 2 || page.Data[0]["isInfluential"] == nil || len(cited) != 2 || cited["year"] == nil {
		t.Errorf("fields=isInfluential,year: %s", r.body)
	}
}

// TestPaging pages a synthetic list of 1,234 edges and checks the limits
// of offset paging.
func TestPaging(t *testing.T) {
	t.Parallel()
	c := sim.NewCorpus()
	srv := simtest.Serve(t, sim.S2, c)
	const id = "ARXIV:2401.00001"
	simtest.AddSyntheticReferences(t, c, id, 1234, simtest.Synth{Unresolved: 10, NullAbstract: 4})
	cl := s2Client(t, srv.URL, "", s2.Options{PageLimit: 500})
	list, err := cl.References(context.Background(), "arXiv:2401.00001v2")
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Edges) != 1234 || list.Pages != 3 || !list.Complete() {
		t.Fatalf("%d edges over %d pages, want 1234 over 3", len(list.Edges), list.Pages)
	}
	var offsets, limits []int
	for _, r := range srv.Calls() {
		offsets, limits = append(offsets, offset(r)), append(limits, limit(r))
	}
	if !slices.Equal(offsets, []int{0, 500, 1000}) || !slices.Equal(limits, []int{500, 500, 500}) {
		t.Errorf("offsets %v limits %v", offsets, limits)
	}
	seen := map[string]bool{}
	var unresolved, nullAbstract, arxivIDs, dois, contexts int
	for _, e := range list.Edges {
		p := e.CitedPaper
		if !p.Resolved() {
			unresolved++
			if p.ExternalIDs != nil || p.CorpusID != nil || p.Title == "" {
				t.Errorf("unresolved edge %+v", p)
			}
			continue
		}
		if seen[p.PaperID] {
			t.Errorf("paper %s twice", p.PaperID)
		}
		seen[p.PaperID] = true
		if p.Abstract == nil {
			nullAbstract++
		}
		if p.ArxivID() != "" {
			arxivIDs++
		}
		if p.DOI() != "" && p.ArxivID() == "" {
			dois++
		}
		if len(e.Contexts) > 0 {
			contexts++
		}
		if p.ExternalIDs.CorpusID == nil || *p.ExternalIDs.CorpusID != *p.CorpusID {
			t.Errorf("edge %s: corpus ids %v %v", p.PaperID, p.ExternalIDs.CorpusID, p.CorpusID)
		}
	}
	if unresolved != 123 || nullAbstract == 0 || arxivIDs == 0 || dois == 0 || contexts == 0 {
		t.Errorf("unresolved %d (want 123), null abstracts %d, arXiv %d, DOI %d, contexts %d", unresolved, nullAbstract, arxivIDs, dois, contexts)
	}

	// The cited papers are known to /paper/batch, with their abstracts.
	var ids []string
	for _, e := range list.Edges {
		if e.CitedPaper.Resolved() && e.CitedPaper.Abstract == nil {
			ids = append(ids, e.CitedPaper.PaperID)
		}
	}
	papers, err := cl.Batch(context.Background(), append(ids, "CorpusId:1"), "abstract")
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range papers[:len(ids)] {
		if p == nil || p.PaperID != ids[i] || p.Abstract == nil {
			t.Fatalf("batch result %d = %+v for %s", i, p, ids[i])
		}
	}
	if papers[len(ids)] != nil {
		t.Error("unknown id answered")
	}
	// The window's rules, the last page and a page past the end are the
	// conformance suite's (sim/conformance, TestS2Window, TestS2References).
}

// TestWindowCap: a list longer than the window is cut by the client, and
// the server never refuses it.
func TestWindowCap(t *testing.T) {
	t.Parallel()
	c := sim.NewCorpus()
	srv := simtest.Serve(t, sim.S2, c)
	edges := make([]json.RawMessage, 10_100)
	for i := range edges {
		edges[i] = fmt.Appendf(nil, `{"citedPaper":{"paperId":null,"title":"Entry %d"}}`, i)
	}
	if err := c.SetS2References("CorpusId:42", edges); err != nil {
		t.Fatal(err)
	}
	cl := s2Client(t, srv.URL, "", s2.Options{PageLimit: 1000})
	list, err := cl.References(context.Background(), "CorpusId:42")
	if err != nil {
		t.Fatal(err)
	}
	if !list.Capped || len(list.Edges) != 9999 {
		t.Errorf("capped %v with %d edges, want 9999", list.Capped, len(list.Edges))
	}
	for _, r := range srv.Calls() {
		if r.Status != 200 {
			t.Errorf("offset %d limit %d answered %d", offset(r), limit(r), r.Status)
		}
	}
}

func TestBatchRules(t *testing.T) {
	t.Parallel()
	c := sim.NewCorpus()
	srv := simtest.Serve(t, sim.S2, c)
	simtest.LoadRecordedBatch(t, c)
	many := make([]string, 501)
	for i := range many {
		many[i] = fmt.Sprintf("CorpusId:%d", i)
	}
	body, _ := json.Marshal(map[string][]string{"ids": many})
	if r := s2Get(t, srv, "POST", sim.S2BatchPath, nil, string(body)); r.status != 400 {
		t.Errorf("501 ids: status %d", r.status)
	}
	if r := s2Get(t, srv, "POST", sim.S2BatchPath, nil, "ids=1"); r.status != 400 {
		t.Errorf("malformed body: status %d", r.status)
	}
	// GET /paper/batch asks for a paper whose id is "batch".
	r := s2Get(t, srv, "GET", sim.S2BatchPath, nil, "")
	if r.status != 404 || !strings.Contains(string(r.body), "Paper with id batch not found") {
		t.Errorf("GET batch: %d %s", r.status, r.body)
	}
	// No fields: paperId and title.
	r = s2Get(t, srv, "POST", sim.S2BatchPath, nil, `{"ids":["CorpusId:470667","nope"]}`)
	var got []map[string]any
	if err := json.Unmarshal(r.body, &got); err != nil || len(got) != 2 || got[1] != nil || len(got[0]) != 2 || got[0]["title"] == nil {
		t.Errorf("default fields: %s", r.body)
	}
}

func TestAPIKey(t *testing.T) {
	t.Parallel()
	const key = "s2-secret-key-0123456789"
	c := sim.NewCorpus()
	srv := simtest.ServeOptions(t, sim.S2, c, sim.Options{S2Key: key})
	simtest.LoadRecordedPaper(t, c)
	ctx := context.Background()

	_, err := s2Client(t, srv.URL, "wrong-key-98765", s2.Options{}).Paper(ctx, simtest.RecordedPaperID)
	if !errors.Is(err, s2.ErrForbidden) {
		t.Fatalf("wrong key: err %v, want ErrForbidden", err)
	}
	if strings.Contains(err.Error(), "wrong-key") {
		t.Errorf("error %q repeats the key", err)
	}
	if _, err := s2Client(t, srv.URL, key, s2.Options{}).Paper(ctx, simtest.RecordedPaperID); err != nil {
		t.Errorf("right key: %v", err)
	}
	if _, err := s2Client(t, srv.URL, "", s2.Options{}).Paper(ctx, simtest.RecordedPaperID); err != nil {
		t.Errorf("no key: %v", err)
	}
	var got []string
	for _, r := range srv.Calls() {
		got = append(got, fmt.Sprintf("%d/%v", r.Status, r.Keyed))
	}
	if !slices.Equal(got, []string{"403/true", "200/true", "200/false"}) {
		t.Errorf("requests %v", got)
	}
}

func TestWithheld(t *testing.T) {
	t.Parallel()
	c := sim.NewCorpus()
	srv := simtest.Serve(t, sim.S2, c)
	simtest.Withhold(c, "DOI:10.1073/pnas.0611396104", "")
	cl := s2Client(t, srv.URL, "", s2.Options{})
	list, err := cl.References(context.Background(), "DOI:10.1073/PNAS.0611396104")
	if err != nil {
		t.Fatal(err)
	}
	if !list.Elided || list.Disclaimer != simtest.DefaultDisclaimer || len(list.Edges) != 0 || list.Complete() {
		t.Errorf("list %+v, want elided with the disclaimer", list)
	}
	r := s2Get(t, srv, "GET", sim.S2ReferencesPath("DOI:10.1073/pnas.0611396104"), url.Values{"offset": {"100"}}, "")
	var page map[string]json.RawMessage
	json.Unmarshal(r.body, &page)
	if string(page["data"]) != "null" || !strings.Contains(string(page["citingPaperInfo"]), "{'references'}") {
		t.Errorf("withheld page: %s", r.body)
	}
	// The paper itself is known.
	if _, err := cl.Paper(context.Background(), "DOI:10.1073/pnas.0611396104"); err != nil {
		t.Error(err)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	c := sim.NewCorpus()
	srv := simtest.Serve(t, sim.S2, c)
	simtest.AddSyntheticReferences(t, c, "ARXIV:2401.00002", 5, simtest.Synth{})
	path := sim.S2ReferencesPath("ARXIV:2401.00002")
	cl := s2Client(t, srv.URL, "", s2.Options{})
	ctx := context.Background()

	// Three 429s, then the list.
	srv.Script(path, sim.TooManyRequests, 3)
	if list, err := cl.References(ctx, "ARXIV:2401.00002"); err != nil || len(list.Edges) != 5 {
		t.Fatalf("after three 429s: %v", err)
	}
	var statuses []int
	for _, r := range srv.CallsTo(path) {
		statuses = append(statuses, r.Status)
	}
	if !slices.Equal(statuses, []int{429, 429, 429, 200}) {
		t.Errorf("statuses %v", statuses)
	}

	// The 429 as S2 sends it, with and without Retry-After.
	srv.Script(path, sim.TooManyRequests, 1)
	srv.Script(path, sim.TooManyRequests.WithRetryAfter("0"), 1)
	srv.Script(path, sim.Unavailable, 1)
	r := s2Get(t, srv, "GET", path, nil, "")
	if r.status != 429 || r.header.Get("Retry-After") != "" || string(r.body) != sim.S2TooManyBody || r.header.Get("x-amzn-errortype") == "" {
		t.Errorf("429: %d %v %s", r.status, r.header, r.body)
	}
	if r = s2Get(t, srv, "GET", path, nil, ""); r.status != 429 || r.header.Get("Retry-After") != "0" {
		t.Errorf("429 with Retry-After: %d %v", r.status, r.header)
	}
	if r = s2Get(t, srv, "GET", path, nil, ""); r.status != 503 {
		t.Errorf("503: %d", r.status)
	}
	if r = s2Get(t, srv, "GET", path, nil, ""); r.status != 200 {
		t.Errorf("after the script: %d", r.status)
	}

	// Forever: the client gives up with the status; Unscript ends it.
	srv.Script(path, sim.TooManyRequests, sim.Forever)
	_, err := cl.References(ctx, "ARXIV:2401.00002")
	var se *httpx.StatusError
	if !errors.As(err, &se) || se.Status != 429 {
		t.Fatalf("forever 429: err %v", err)
	}
	srv.Unscript(path)
	if _, err := cl.References(ctx, "ARXIV:2401.00002"); err != nil {
		t.Errorf("after Unscript: %v", err)
	}
	// Other paths are unaffected by a script.
	srv.Script(path, sim.InternalError, sim.Forever)
	if _, err := cl.Paper(ctx, "ARXIV:2401.00002"); err != nil {
		t.Errorf("paper while its references fail: %v", err)
	}
}

func TestIDForms(t *testing.T) {
	t.Parallel()
	c := sim.NewCorpus()
	srv := simtest.Serve(t, sim.S2, c)
	pid := simtest.LoadRecordedPaper(t, c)
	for _, id := range []string{
		pid, strings.ToUpper(pid), "CorpusId:266191420", "corpusid:266191420", "ARXIV:2312.07559",
		"arXiv:2312.07559v3", "DOI:10.48550/arXiv.2312.07559", "10.48550/ARXIV.2312.07559",
		"URL:https://arxiv.org/abs/2312.07559v1", "URL:https://www.semanticscholar.org/paper/" + pid,
	} {
		r := s2Get(t, srv, "GET", sim.S2PaperPath(id), url.Values{"fields": {"title"}}, "")
		var p struct{ PaperID string }
		json.Unmarshal(r.body, &p)
		if r.status != 200 || p.PaperID != pid {
			t.Errorf("%s: %d %s", id, r.status, r.body)
		}
	}
	r := s2Get(t, srv, "GET", sim.S2PaperPath("ARXIV:2312.07558"), nil, "")
	if r.status != 404 || string(r.body) != `{"error":"Paper with id ARXIV:2312.07558 not found"}`+"\n" {
		t.Errorf("unknown: %d %s", r.status, r.body)
	}

	// A list set before its paper is registered stays with the paper.
	if err := c.SetS2References("ARXIV:2501.00003", nil); err != nil {
		t.Fatal(err)
	}
	simtest.AddSyntheticReferences(t, c, "ARXIV:2501.00003", 2, simtest.Synth{})
	full := `{"paperId":"` + strings.Repeat("ab", 20) + `","title":"Real Title","externalIds":{"ArXiv":"2501.00003","CorpusId":7}}`
	if _, err := c.AddS2Paper(json.RawMessage(full)); err != nil {
		t.Fatal(err)
	}
	cl := s2Client(t, srv.URL, "", s2.Options{})
	p, err := cl.Paper(context.Background(), "CorpusId:7", "title", "referenceCount")
	if err != nil || p.Title != "Real Title" || p.ReferenceCount == nil || *p.ReferenceCount != 2 {
		t.Errorf("paper %+v, %v", p, err)
	}
	if list, err := cl.References(context.Background(), "ARXIV:2501.00003"); err != nil || len(list.Edges) != 2 {
		t.Errorf("references after AddPaper: %v", err)
	}
}

// TestUnresolvedFromReference: an record.ScholarReference with an empty paperId is
// served as S2 serves an unresolved reference, with paperId null.
func TestUnresolvedFromReference(t *testing.T) {
	t.Parallel()
	c := sim.NewCorpus()
	srv := simtest.Serve(t, sim.S2, c)
	b := json.RawMessage(`{"contexts":null,"intents":null,"isInfluential":false,"citedPaper":{"paperId":"","externalIds":null,"title":"D Scieur"}}`)
	if err := c.SetS2References("CorpusId:5", []json.RawMessage{b}); err != nil {
		t.Fatal(err)
	}
	r := s2Get(t, srv, "GET", sim.S2ReferencesPath("CorpusId:5"), url.Values{"fields": {"title,externalIds"}}, "")
	if !strings.Contains(string(r.body), `"citedPaper":{"paperId":null,"externalIds":null,"title":"D Scieur"}`) {
		t.Errorf("unresolved edge served as %s", r.body)
	}
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	srv := simtest.Serve(t, sim.S2, sim.NewCorpus())
	start := time.Now()
	s2Get(t, srv, "GET", sim.S2PaperPath("CorpusId:1"), url.Values{"fields": {"title"}}, "")
	s2Get(t, srv, "POST", sim.S2BatchPath, url.Values{"fields": {"title"}}, `{"ids":["a","b"]}`)
	log := srv.Calls()
	if len(log) != 2 {
		t.Fatalf("%d requests logged", len(log))
	}
	if l := log[0]; l.Method != "GET" || l.Path != "/graph/v1/paper/CorpusId:1" || l.Query().Get("fields") != "title" || l.Status != 404 || l.Start.Before(start) {
		t.Errorf("first request %+v", l)
	}
	if l := log[1]; l.Method != "POST" || !slices.Equal(l.IDs, []string{"a", "b"}) || l.Status != 200 || l.Start.Before(log[0].Start) {
		t.Errorf("second request %+v", l)
	}
	srv.Reset()
	if len(srv.Calls()) != 0 {
		t.Error("log not reset")
	}
}

// TestS2CitationsCorpus serves a corpus paper's citations from the
// reference lists that cite it: each citing paper once, with its edge's
// fields (contexts, influence) and its own record as citingPaper; a known
// paper nobody cites has an empty list, an unknown one is 404.
func TestS2CitationsCorpus(t *testing.T) {
	c := sim.NewCorpus()
	cited := "0000000000000000000000000000000000000001"
	if _, err := c.AddS2Paper(map[string]any{"paperId": cited, "title": "Cited", "publicationDate": "2020-01-01"}, cited); err != nil {
		t.Fatal(err)
	}
	for i, infl := range []bool{true, false} {
		id := fmt.Sprintf("00000000000000000000000000000000000000a%d", i)
		if _, err := c.AddS2Paper(map[string]any{"paperId": id, "title": fmt.Sprintf("Citing %d", i), "publicationDate": fmt.Sprintf("202%d-05-01", i+1)}, id); err != nil {
			t.Fatal(err)
		}
		e, _ := json.Marshal(sim.S2Edge{Contexts: []string{fmt.Sprintf("As [%d] shows.", i)}, Intents: []string{}, IsInfluential: infl,
			CitedPaper: sim.S2Paper{PaperID: &cited, Title: "Cited"}})
		if err := c.SetS2References(id, []json.RawMessage{e}); err != nil {
			t.Fatal(err)
		}
	}
	srv := simtest.Serve(t, sim.S2, c)
	r := s2Get(t, srv, "GET", sim.S2CitationsPath(cited), url.Values{"fields": {"contexts,isInfluential,title,publicationDate"}}, "")
	cites, next, err := conformance.CheckS2CitationsPage("contexts,isInfluential,title,publicationDate", 0, 0, r.status, r.body)
	if err != nil || len(cites) != 2 || next != -1 {
		t.Fatalf("citations: %d, next %d, %v: %s", len(cites), next, err, r.body)
	}
	var got []sim.S2CitingEdge
	for _, x := range cites {
		var e sim.S2CitingEdge
		json.Unmarshal(x, &e)
		got = append(got, e)
	}
	if got[0].CitingPaper.Title != "Citing 0" || !got[0].IsInfluential || got[0].Contexts[0] != "As [0] shows." ||
		got[1].CitingPaper.Title != "Citing 1" || got[1].IsInfluential || *got[1].CitingPaper.PublicationDate != "2022-05-01" {
		t.Errorf("citations %+v", got)
	}
	r = s2Get(t, srv, "GET", sim.S2CitationsPath("00000000000000000000000000000000000000a0"), nil, "")
	if cites, _, err := conformance.CheckS2CitationsPage("", 0, 0, r.status, r.body); err != nil || len(cites) != 0 {
		t.Errorf("an uncited paper: %d citations, %v", len(cites), err)
	}
	if r = s2Get(t, srv, "GET", sim.S2CitationsPath("CorpusId:99"), nil, ""); r.status != 404 {
		t.Errorf("an unknown paper: status %d", r.status)
	}
}
