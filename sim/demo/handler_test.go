package demo_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/demo"
)

// servers starts the four services for one test.
func servers(t *testing.T) *sim.Servers {
	t.Helper()
	s, err := demo.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// noRedirect is a client that reports redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func get(t *testing.T, u string) (int, http.Header, string) {
	t.Helper()
	resp, err := noRedirect.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

func post(t *testing.T, u, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestArxivAndAr5iv(t *testing.T) {
	s := servers(t)
	ax, a5 := s.URL(sim.Arxiv), s.URL(sim.Ar5iv)
	tests := []struct {
		url      string
		status   int
		has      string // in the body, or the Location of a redirect
		location bool
	}{
		{ax + "/html/2503.07215", 200, `<base href="/html/2503.07215v1/"/>`, false},
		{ax + "/html/2503.07215v1", 200, "Span-Level Abstention", false},
		{ax + "/html/2503.07215v1/", 200, "Span-Level Abstention", false},
		{ax + "/html/2511.04862", 200, `<base href="/html/2511.04862v2/"/>`, false},
		{ax + "/html/2511.04862v1", 404, "No HTML for '2511.04862v1'", false},
		{ax + "/html/2503.07215v2", 404, "No HTML for", false},
		{ax + "/html/2507.02291", 404, "No HTML for '2507.02291'", false}, // ar5iv only
		{ax + "/html/2104.07730", 404, "No HTML for", false},              // background, no page
		{ax + "/html/not-an-id", 404, "No HTML for", false},
		{a5 + "/html/2507.02291", 200, "ar5iv-severity-warning", false},
		{a5 + "/html/2211.09930", 200, "View&nbsp;original", false},
		{a5 + "/html/2503.07215", 307, "https://arxiv.org/abs/2503.07215", true},
		{a5 + "/html/2104.07730", 307, "https://arxiv.org/abs/2104.07730", true},
		{a5 + "/html/hep-th/9901001", 307, "https://arxiv.org/abs/hep-th/9901001", true},
		{a5 + "/abs/2507.02291", 301, "/html/2507.02291", true},
	}
	for _, tc := range tests {
		status, h, body := get(t, tc.url)
		got := body
		if tc.location {
			got = h.Get("Location")
		}
		if status != tc.status || !strings.Contains(got, tc.has) {
			t.Errorf("GET %s: %d %q, want %d with %q", tc.url, status, truncate(got), tc.status, tc.has)
		}
	}
}

func truncate(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

type refPage struct {
	Offset int               `json:"offset"`
	Next   *int              `json:"next"`
	Data   []json.RawMessage `json:"data"`
}

// walk pages through a reference list with the given limit.
func walk(t *testing.T, base, id string, limit int) (edges []json.RawMessage, pages int) {
	t.Helper()
	offset := 0
	for {
		u := fmt.Sprintf("%s/graph/v1/paper/%s/references?fields=%s&offset=%d&limit=%d", base, id,
			url.QueryEscape("contexts,intents,contextsWithIntent,isInfluential,paperId,title,abstract,externalIds,year"), offset, limit)
		status, _, body := get(t, u)
		if status != 200 {
			t.Fatalf("GET %s: %d %s", u, status, body)
		}
		var p refPage
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatal(err)
		}
		pages++
		if p.Offset != offset {
			t.Fatalf("page at %d says offset %d", offset, p.Offset)
		}
		edges = append(edges, p.Data...)
		if p.Next == nil {
			if strings.Contains(body, `"next"`) {
				t.Fatalf("last page has a next key: %s", body)
			}
			return edges, pages
		}
		if *p.Next != offset+len(p.Data) || len(p.Data) == 0 {
			t.Fatalf("page at %d: %d edges, next %d", offset, len(p.Data), *p.Next)
		}
		offset = *p.Next
	}
}

func TestS2References(t *testing.T) {
	s := servers(t)
	base := s.URL(sim.S2)
	m := manifest(t)
	for _, tg := range m.Targets {
		all, _ := walk(t, base, "ARXIV:"+tg.ArxivID, 1000)
		if len(all) != tg.S2Edges {
			t.Errorf("%s: %d edges, want %d", tg.ArxivID, len(all), tg.S2Edges)
		}
		byTwo, pages := walk(t, base, "ARXIV:"+tg.ArxivID, 2)
		if len(byTwo) != len(all) || pages != (len(all)+1)/2 {
			t.Errorf("%s: limit=2 walk gave %d edges in %d pages, want %d", tg.ArxivID, len(byTwo), pages, len(all))
		}
		seen := map[string]bool{}
		for i := range all {
			if string(all[i]) != string(byTwo[i]) {
				t.Errorf("%s: edge %d differs between page sizes", tg.ArxivID, i)
			}
			if seen[string(all[i])] {
				t.Errorf("%s: edge %d twice", tg.ArxivID, i)
			}
			seen[string(all[i])] = true
		}
		_, pages = walk(t, base, "ARXIV:"+tg.ArxivID, 100)
		if want := 1; tg.S2PageCap > 0 && pages < 2 || tg.S2PageCap == 0 && pages != want {
			t.Errorf("%s: %d pages at limit 100 (page cap %d)", tg.ArxivID, pages, tg.S2PageCap)
		}
	}

	// Id forms, versions and edge fields.
	tg := m.Targets[0]
	first, _ := walk(t, base, "ARXIV:"+tg.ArxivID, 1000)
	for _, id := range []string{"arXiv:" + tg.ArxivID + "v1", tg.S2PaperID, "DOI:10.48550/arXiv." + tg.ArxivID, "URL:https://arxiv.org/abs/" + tg.ArxivID + "v1"} {
		got, _ := walk(t, base, id, 1000)
		if len(got) != len(first) {
			t.Errorf("%s: %d edges, want %d", id, len(got), len(first))
		}
	}
	var e struct {
		Contexts   []string       `json:"contexts"`
		CitedPaper map[string]any `json:"citedPaper"`
	}
	json.Unmarshal(first[0], &e)
	if len(e.Contexts) == 0 || e.CitedPaper["paperId"] == nil || e.CitedPaper["externalIds"] == nil || e.CitedPaper["venue"] != nil {
		t.Errorf("edge with fields: %s", first[0])
	}
	// Without fields: citedPaper paperId and title only.
	_, _, body := get(t, base+"/graph/v1/paper/ARXIV:"+tg.ArxivID+"/references?limit=1")
	if want := `{"offset":0,"next":1,"data":[{"citedPaper":{"paperId":"`; !strings.HasPrefix(body, want) || strings.Count(body, `":`) != 6 {
		t.Errorf("default fields: %s", body)
	}
	// Past the end: empty data, no next.
	_, _, body = get(t, base+"/graph/v1/paper/ARXIV:"+tg.ArxivID+"/references?offset=500&limit=10")
	if body != `{"offset":500,"data":[]}` {
		t.Errorf("past the end: %s", body)
	}
}

func TestS2PaperAndBatch(t *testing.T) {
	s := servers(t)
	base := s.URL(sim.S2)
	m := manifest(t)
	tg := m.Targets[0]

	// One paper by each id form, with fields.
	var want map[string]any
	for i, id := range []string{"ARXIV:" + tg.ArxivID, tg.S2PaperID, "CorpusId:" + fmt.Sprint(paperOf(m, tg.S2PaperID).CorpusID), "DOI:10.48550/ARXIV." + tg.ArxivID} {
		status, _, body := get(t, base+"/graph/v1/paper/"+id+"?fields=title,year,publicationDate,externalIds,venue,citationCount,fieldsOfStudy")
		var got map[string]any
		if status != 200 || json.Unmarshal([]byte(body), &got) != nil {
			t.Fatalf("GET paper %s: %d %s", id, status, body)
		}
		if i == 0 {
			want = got
			if got["publicationDate"] != tg.Published || got["paperId"] != tg.S2PaperID || len(got) != 8 {
				t.Errorf("paper %s: %s", id, body)
			}
		} else if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("paper %s: %v, want %v", id, got, want)
		}
	}
	// Without fields: paperId and title.
	if _, _, body := get(t, base+"/graph/v1/paper/ARXIV:"+tg.ArxivID); body != fmt.Sprintf(`{"paperId":%q,"title":%q}`, tg.S2PaperID, tg.Title) {
		t.Errorf("paper without fields: %s", body)
	}

	// Batch: aligned with the ids, null for unknown ones, and it fills the
	// abstracts the reference lists lack.
	var nullAbstract []string
	for _, q := range m.Quirks {
		if q.Kind == "null_abstract" {
			nullAbstract = append(nullAbstract, refOf(m, q.Target, q.RefKey).S2PaperID)
		}
	}
	ids := append([]string{"ARXIV:2512.99999", "not an id"}, nullAbstract...)
	ids = append(ids, "CorpusId:1")
	b, _ := json.Marshal(map[string]any{"ids": ids})
	status, body := post(t, base+"/graph/v1/paper/batch?fields=title,abstract,externalIds", string(b))
	var got []*struct {
		Title    string  `json:"title"`
		Abstract *string `json:"abstract"`
	}
	if status != 200 || json.Unmarshal([]byte(body), &got) != nil || len(got) != len(ids) {
		t.Fatalf("batch: %d %s", status, body)
	}
	for i, p := range got {
		unknown := i < 2 || i == len(ids)-1
		switch {
		case unknown && p != nil:
			t.Errorf("batch %s: %+v, want null", ids[i], p)
		case !unknown && (p == nil || p.Abstract == nil || *p.Abstract == ""):
			t.Errorf("batch %s: no abstract: %+v", ids[i], p)
		}
	}
	if status, _ := post(t, base+"/graph/v1/paper/batch?fields=nope", `{"ids":[]}`); status != 400 {
		t.Errorf("batch with a bogus field: %d", status)
	}
	if status, _ := post(t, base+"/graph/v1/paper/batch", `{"ids":`); status != 400 {
		t.Errorf("batch with a broken body: %d", status)
	}
	// An API key is accepted.
	req, _ := http.NewRequest(http.MethodGet, base+"/graph/v1/paper/ARXIV:"+tg.ArxivID, nil)
	req.Header.Set("x-api-key", "anything")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("with x-api-key: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}

func refOf(m *demo.Manifest, target, key string) demo.Reference {
	for _, tg := range m.Targets {
		for _, r := range tg.References {
			if tg.ArxivID == target && r.RefKey == key {
				return r
			}
		}
	}
	return demo.Reference{}
}

func paperOf(m *demo.Manifest, s2ID string) demo.Paper {
	for _, p := range m.Papers {
		if p.S2PaperID == s2ID {
			return p
		}
	}
	return demo.Paper{}
}

func TestArxivAPI(t *testing.T) {
	s := servers(t)
	base := s.URL(sim.ArxivAPI) + "/api/query?"
	m := manifest(t)

	// id_list: in date order, not the order given; unknown ids have no
	// entry but count in the total, as on the real API.
	status, h, body := get(t, base+"id_list=2605.08841,2512.99999,2503.07215v1&max_results=10")
	f := decodeFeed(t, []byte(body))
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/atom+xml") || f.TotalResults != 3 || len(f.Entries) != 2 ||
		f.Entries[0].ID != "http://arxiv.org/abs/2503.07215v1" || f.Entries[1].ID != "http://arxiv.org/abs/2605.08841v1" {
		t.Errorf("id_list: %d %+v", status, f)
	}
	e := f.Entries[0]
	if e.Published != "2025-03-10T16:41:09Z" || e.Primary.Term != "cs.CL" || len(e.Categories) != 2 || len(e.Authors) != 3 || !strings.Contains(e.Title, "Span-Level") {
		t.Errorf("entry: %+v", e)
	}
	// The v2 paper: id names the latest version, published is v1.
	_, _, body = get(t, base+"id_list=2511.04862")
	if e := decodeFeed(t, []byte(body)).Entries[0]; e.ID != "http://arxiv.org/abs/2511.04862v2" || !strings.HasPrefix(e.Published, "2025-11-07") || !strings.HasPrefix(e.Updated, "2026-02-16") {
		t.Errorf("v2 entry: %+v", e)
	}

	// Search: the test targets by date, and a category with paging.
	q := url.Values{"search_query": {"submittedDate:[202601010000 TO 202612312359]"}, "max_results": {"50"}}
	_, _, body = get(t, base+q.Encode())
	f = decodeFeed(t, []byte(body))
	var got []string
	for _, e := range f.Entries {
		got = append(got, strings.TrimPrefix(e.ID, "http://arxiv.org/abs/"))
	}
	if strings.Join(got, " ") != "2605.08841v1 2603.11207v1 2601.03318v1" {
		t.Errorf("2026 submissions: %v", got)
	}
	q = url.Values{"search_query": {"cat:cs.CL AND submittedDate:[202501010000 TO 202512312359]"}}
	_, _, body = get(t, base+q.Encode())
	// cat: matches cross-lists too (2507.02291 is cs.LG with cs.CL).
	if f := decodeFeed(t, []byte(body)); f.TotalResults != 2 || f.Entries[0].ID != "http://arxiv.org/abs/2507.02291v1" || f.Entries[1].ID != "http://arxiv.org/abs/2503.07215v1" {
		t.Errorf("cs.CL in 2025: %+v", f)
	}
	q = url.Values{"search_query": {"cat:physics.soc-ph"}, "start": {"0"}, "max_results": {"2"}}
	_, _, body = get(t, base+q.Encode())
	f = decodeFeed(t, []byte(body))
	total := f.TotalResults
	var all []string
	for start := 0; start < total; start += 2 {
		q.Set("start", fmt.Sprint(start))
		_, _, body = get(t, base+q.Encode())
		f = decodeFeed(t, []byte(body))
		if f.StartIndex != start || f.TotalResults != total || len(f.Entries) == 0 || len(f.Entries) > 2 {
			t.Fatalf("page at %d: %+v", start, f)
		}
		for _, e := range f.Entries {
			all = append(all, e.ID)
		}
	}
	physics := 0
	for _, p := range m.Papers {
		if p.ArxivID != "" && strings.Contains(entryCats(t, base, p.ArxivID), "physics.soc-ph") {
			physics++
		}
	}
	if total < 5 || len(all) != total || physics != total {
		t.Errorf("cat:physics.soc-ph: total %d, paged %d, papers in that category %d", total, len(all), physics)
	}

	// Errors answer 400 with an error entry.
	for _, qs := range []string{"id_list=2503.07215v", "search_query=all:electron", "id_list=2503.07215&max_results=x"} {
		status, _, body := get(t, base+qs)
		if f := decodeFeed(t, []byte(body)); status != 400 || len(f.Entries) != 1 || f.Entries[0].Title != "Error" {
			t.Errorf("%s: %d %s", qs, status, body)
		}
	}
}

func entryCats(t *testing.T, base, id string) string {
	_, _, body := get(t, base+"id_list="+id)
	var cats []string
	for _, c := range decodeFeed(t, []byte(body)).Entries[0].Categories {
		cats = append(cats, c.Term)
	}
	return strings.Join(cats, " ")
}

// TestHandler checks the single handler's routing by path prefix and by
// Host.
func TestHandler(t *testing.T) {
	srv := httptest.NewServer(demo.Handler())
	defer srv.Close()
	for _, tc := range []struct {
		path, host string
		status     int
	}{
		{"/arxiv/html/2503.07215", "", 200},
		{"/ar5iv/html/2503.07215", "", 307},
		{"/s2/graph/v1/paper/ARXIV:2503.07215", "", 200},
		{"/arxiv-api/api/query?id_list=2503.07215", "", 200},
		{"/html/2503.07215", "arxiv.org", 200},
		{"/html/2503.07215", "ar5iv.labs.arxiv.org", 307},
		{"/graph/v1/paper/ARXIV:2503.07215", "api.semanticscholar.org", 200},
		{"/api/query?id_list=2503.07215", "export.arxiv.org", 200},
		{"/html/2503.07215", "", 404},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s (host %q): %d, want %d", tc.path, tc.host, resp.StatusCode, tc.status)
		}
	}
	if _, err := demo.ServiceHandler("nope"); err == nil {
		t.Error("ServiceHandler of an unknown service")
	}
}
