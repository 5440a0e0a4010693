package s2_test

// Tests against real recorded Semantic Scholar responses (see
// shared/fixtures/s2/MANIFEST.tsv). Expected values are read from the
// fixtures with a generic JSON decoder, independently of this package's
// types, and cross-checked with the counts the manifest records.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/internal/testutil"
	"github.com/groundwork/curate/parse/arxiv"
)

// fixture returns a recorded response body, skipping the test when the
// shared fixtures are not beside the repository.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.Dir(t, "s2"), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// generic decodes JSON into maps and slices, numbers kept exact.
func generic(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

type obj = map[string]any

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(t *testing.T, v any) int64 {
	t.Helper()
	n, err := v.(json.Number).Int64()
	if err != nil {
		t.Fatalf("%v is not an integer: %v", v, err)
	}
	return n
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

const (
	refsPage1    = "references_CorpusId1033682_offset0_limit100_allfields.json"
	refsLastPage = "references_CorpusId1033682_offset100_limit100_lastpage.json"
	refsSSRN     = "references_DOI-ssrn2250500_fields-title_offset0_limit50.json"
)

// TestReferencesRecorded replays the two recorded pages of CorpusID:1033682
// (offset 0 with next=100, then the last page without next).
func TestReferencesRecorded(t *testing.T) {
	pages := map[int][]byte{0: fixture(t, refsPage1), 100: fixture(t, refsLastPage)}
	srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
		if h.Path != "/graph/v1/paper/CorpusID:1033682/references" {
			s2Error(w, 404, "Paper with id "+strings.TrimPrefix(h.Path, "/graph/v1/paper/")+" not found")
			return
		}
		if refuse(w, h) {
			return
		}
		offset, _ := offsetLimit(t, h)
		body, ok := pages[offset]
		if !ok {
			t.Errorf("request at offset %d, which no recording covers", offset)
			s2Error(w, 400, "no recording")
			return
		}
		testutil.WriteJSON(w, 200, body)
	})
	// The recordings were made with limit=100; ask the same.
	c, _ := newClient(t, srv.URL, setup{opts: s2.Options{PageLimit: 100}})
	got, err := c.References(context.Background(), "CorpusID:1033682")
	if err != nil {
		t.Fatal(err)
	}

	// The requests: two pages, at the offsets the server announced.
	hits := srv.Requests()
	if len(hits) != 2 || got.Pages != 2 {
		t.Fatalf("%d requests, Pages %d; want 2", len(hits), got.Pages)
	}
	for i, want := range []int{0, 100} {
		if o, l := offsetLimit(t, hits[i]); o != want || l != 100 {
			t.Errorf("request %d: offset %d limit %d, want offset %d limit 100", i, o, l, want)
		}
	}
	fields := strings.Split(hits[0].Query.Get("fields"), ",")
	for _, f := range strings.Split("contexts,intents,contextsWithIntent,isInfluential,paperId,externalIds,title,abstract,year,venue,publicationDate,openAccessPdf,authors", ",") {
		if !slices.Contains(fields, f) {
			t.Errorf("fields %v lack %q", fields, f)
		}
	}

	// The recorded edges, read generically.
	var want []any
	for _, o := range []int{0, 100} {
		want = append(want, list(generic(t, pages[o]).(obj)["data"])...)
	}
	if len(got.Edges) != len(want) {
		t.Fatalf("%d edges, want %d (both pages)", len(got.Edges), len(want))
	}
	if len(want) != 156 { // MANIFEST: 100 + 56 edges
		t.Errorf("fixtures hold %d edges, the manifest says 156", len(want))
	}
	if !got.Complete() || got.Elided || got.Capped || got.EmptyPage {
		t.Errorf("list flags: Complete %v Elided %v Capped %v EmptyPage %v; want a complete list", got.Complete(), got.Elided, got.Capped, got.EmptyPage)
	}

	var unresolved, influential, withCorpusID, intentsEmptyWithContexts, dateNullYearSet, oapNull int
	var wantUnresolved, wantInfluential, wantIntentsEmptyWithContexts, wantDateNullYearSet, wantOAPNull int
	for i, raw := range want {
		we := raw.(obj)
		wp := we["citedPaper"].(obj)
		e := got.Edges[i]
		p := e.CitedPaper

		if p.PaperID != str(wp["paperId"]) {
			t.Errorf("edge %d: paperId %q, want %q", i, p.PaperID, str(wp["paperId"]))
		}
		if p.Title != str(wp["title"]) {
			t.Errorf("edge %d: title %q, want %q", i, p.Title, str(wp["title"]))
		}
		if wp["paperId"] == nil {
			wantUnresolved++
			if p.Resolved() || p.ExternalIDs != nil || p.CorpusID != nil || p.Title == "" {
				t.Errorf("unresolved edge %d decoded as %+v, want no ids and the raw bib title", i, p)
			}
		}
		if !p.Resolved() {
			unresolved++
		}

		if we["isInfluential"] == true {
			wantInfluential++
		}
		if e.IsInfluential != (we["isInfluential"] == true) {
			t.Errorf("edge %d: isInfluential %v, want %v", i, e.IsInfluential, we["isInfluential"])
		}
		if e.IsInfluential {
			influential++
		}

		if len(list(we["intents"])) == 0 && len(list(we["contextsWithIntent"])) > 0 {
			wantIntentsEmptyWithContexts++
		}
		if len(e.Intents) == 0 && len(e.ContextsWithIntent) > 0 {
			intentsEmptyWithContexts++
			for j, cw := range e.ContextsWithIntent {
				if wcw := list(we["contextsWithIntent"])[j].(obj); cw.Context != str(wcw["context"]) {
					t.Errorf("edge %d context %d = %q, want %q", i, j, cw.Context, str(wcw["context"]))
				}
			}
		}
		if len(e.Contexts) != len(list(we["contexts"])) || len(e.Intents) != len(list(we["intents"])) {
			t.Errorf("edge %d: %d contexts %d intents, want %d and %d", i, len(e.Contexts), len(e.Intents), len(list(we["contexts"])), len(list(we["intents"])))
		}

		if wp["publicationDate"] == nil && wp["year"] != nil {
			wantDateNullYearSet++
		}
		if p.PublicationDate == nil && p.Year != nil {
			dateNullYearSet++
			if int64(*p.Year) != num(t, wp["year"]) {
				t.Errorf("edge %d: year %d, want %v", i, *p.Year, wp["year"])
			}
		}
		if p.PublicationDate != nil && *p.PublicationDate != str(wp["publicationDate"]) {
			t.Errorf("edge %d: publicationDate %q, want %q", i, *p.PublicationDate, str(wp["publicationDate"]))
		}

		if wp["openAccessPdf"] == nil {
			wantOAPNull++
		}
		if p.OpenAccessPDF == nil {
			oapNull++
		} else if p.PDFURL() != str(wp["openAccessPdf"].(obj)["url"]) {
			t.Errorf("edge %d: pdf url %q, want %q", i, p.PDFURL(), str(wp["openAccessPdf"].(obj)["url"]))
		}

		// externalIds: CorpusId an integer, the rest strings.
		if wx, ok := wp["externalIds"].(obj); ok {
			if p.ExternalIDs == nil {
				t.Errorf("edge %d: externalIds not decoded", i)
				continue
			}
			x := p.ExternalIDs
			if x.CorpusID == nil || *x.CorpusID != num(t, wx["CorpusId"]) {
				t.Errorf("edge %d: CorpusId %v, want %v", i, x.CorpusID, wx["CorpusId"])
			} else {
				withCorpusID++
				if p.CorpusID == nil || *p.CorpusID != *x.CorpusID {
					t.Errorf("edge %d: corpusId %v disagrees with externalIds.CorpusId %d", i, p.CorpusID, *x.CorpusID)
				}
			}
			if x.ArXiv != str(wx["ArXiv"]) || x.DOI != str(wx["DOI"]) || x.DBLP != str(wx["DBLP"]) || x.MAG != str(wx["MAG"]) {
				t.Errorf("edge %d: externalIds %+v, want %v", i, x, wx)
			}
			if p.ArxivID() != arxiv.Normalize(str(wx["ArXiv"])) {
				t.Errorf("edge %d: ArxivID %q, want %q", i, p.ArxivID(), str(wx["ArXiv"]))
			}
		}
		if len(p.Authors) != len(list(wp["authors"])) {
			t.Errorf("edge %d: %d authors, want %d", i, len(p.Authors), len(list(wp["authors"])))
		}
	}

	for _, c := range []struct {
		what           string
		got, want, man int // man: the manifest's count, -1 if it gives none
	}{
		{"unresolved (paperId null) edges", unresolved, wantUnresolved, 9},
		{"influential edges", influential, wantInfluential, 1},
		{"edges with intents [] but contextsWithIntent", intentsEmptyWithContexts, wantIntentsEmptyWithContexts, -1},
		{"cited papers with publicationDate null and year set", dateNullYearSet, wantDateNullYearSet, -1},
		{"cited papers with openAccessPdf null", oapNull, wantOAPNull, -1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
		if c.man >= 0 && c.want != c.man {
			t.Errorf("%s: fixtures hold %d, the manifest says %d", c.what, c.want, c.man)
		}
		if c.want == 0 {
			t.Errorf("%s: none in the fixtures, so this check proves nothing", c.what)
		}
	}
	if withCorpusID == 0 {
		t.Error("no CorpusId was checked")
	}
	// The one influential edge is the first of the last page.
	if !got.Edges[len(list(generic(t, pages[0]).(obj)["data"]))].IsInfluential {
		t.Error("the first edge of the last page should be the influential one")
	}
}

// TestReferencesRecordedMinimal replays the fields=title recording of a
// paper addressed by a bare DOI, followed by a hand-written last page (the
// recording stops at next=50).
func TestReferencesRecordedMinimal(t *testing.T) {
	page1 := fixture(t, refsSSRN)
	page2 := readTestdata(t, "references_ssrn_lastpage.json")
	srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
		if uri, _, _ := strings.Cut(h.URI, "?"); uri != "/graph/v1/paper/10.2139/ssrn.2250500/references" {
			s2Error(w, 404, "Paper with id "+uri+" not found")
			return
		}
		if refuse(w, h) {
			return
		}
		switch offset, _ := offsetLimit(t, h); {
		case offset == 0:
			testutil.WriteJSON(w, 200, page1)
		case offset == 50:
			testutil.WriteJSON(w, 200, page2)
		default:
			t.Errorf("request at offset %d", offset)
			s2Error(w, 400, "no recording")
		}
	})
	c, _ := newClient(t, srv.URL, setup{opts: s2.Options{PageLimit: 50}})
	got, err := c.References(context.Background(), "10.2139/ssrn.2250500")
	if err != nil {
		t.Fatal(err)
	}
	var want []any
	for _, b := range [][]byte{page1, page2} {
		want = append(want, list(generic(t, b).(obj)["data"])...)
	}
	if len(got.Edges) != len(want) || got.Pages != 2 || !got.Complete() {
		t.Fatalf("%d edges over %d pages (complete %v), want %d over 2", len(got.Edges), got.Pages, got.Complete(), len(want))
	}
	nulls := 0
	for i, raw := range want {
		wp := raw.(obj)["citedPaper"].(obj)
		p := got.Edges[i].CitedPaper
		if p.PaperID != str(wp["paperId"]) || p.Title != str(wp["title"]) {
			t.Errorf("edge %d = %q %q, want %v", i, p.PaperID, p.Title, wp)
		}
		if wp["paperId"] == nil {
			nulls++
			if p.Resolved() {
				t.Errorf("edge %d resolved, want unresolved", i)
			}
		}
		// Fields not asked for stay unset.
		if p.ExternalIDs != nil || p.Year != nil || p.Abstract != nil || got.Edges[i].Contexts != nil {
			t.Errorf("edge %d has fields the response did not carry: %+v", i, got.Edges[i])
		}
	}
	if nulls < 2 {
		t.Errorf("only %d unresolved edges in the data; the check proves little", nulls)
	}
}

// TestPaperRecorded replays the 2025 /paper recording of an arXiv paper
// addressed by its arXiv DOI: openAccessPdf is {url: "", status: null,
// license: null}, not null.
func TestPaperRecorded(t *testing.T) {
	body := fixture(t, "paper_DOI-arxiv2312.07559.json")
	const id = "DOI:10.48550/arxiv.2312.07559"
	// The fields of the recorded request.
	fields := strings.Split("authors,citationCount,citationStyles,externalIds,influentialCitationCount,isOpenAccess,journal,openAccessPdf,publicationDate,publicationTypes,title,url,venue,year", ",")
	srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
		if uri, _, _ := strings.Cut(h.URI, "?"); uri != "/graph/v1/paper/"+id {
			s2Error(w, 404, "Paper with id "+uri+" not found")
			return
		}
		if refuse(w, h) {
			return
		}
		testutil.WriteJSON(w, 200, body)
	})
	c, _ := newClient(t, srv.URL, setup{})
	p, err := c.Paper(context.Background(), id, fields...)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Query.Get("fields"); got != strings.Join(fields, ",") {
		t.Errorf("fields %q, want the requested ones", got)
	}
	w := generic(t, body).(obj)
	wx := w["externalIds"].(obj)
	woa := w["openAccessPdf"].(obj)

	if p.PaperID != str(w["paperId"]) || p.Title != str(w["title"]) || p.Venue != str(w["venue"]) {
		t.Errorf("paper %q %q %q, want %v %v %v", p.PaperID, p.Title, p.Venue, w["paperId"], w["title"], w["venue"])
	}
	if p.Year == nil || int64(*p.Year) != num(t, w["year"]) || p.PublicationDate == nil || *p.PublicationDate != str(w["publicationDate"]) {
		t.Errorf("year %v date %v, want %v %v", p.Year, p.PublicationDate, w["year"], w["publicationDate"])
	}
	if p.ExternalIDs == nil || p.ExternalIDs.CorpusID == nil || *p.ExternalIDs.CorpusID != num(t, wx["CorpusId"]) {
		t.Errorf("externalIds %+v, want CorpusId %v", p.ExternalIDs, wx["CorpusId"])
	}
	if p.ArxivID() != str(wx["ArXiv"]) || p.DOI() != str(wx["DOI"]) || p.ExternalIDs.DBLP != str(wx["DBLP"]) {
		t.Errorf("arXiv %q DOI %q DBLP %q, want %v", p.ArxivID(), p.DOI(), p.ExternalIDs.DBLP, wx)
	}
	if p.OpenAccessPDF == nil {
		t.Fatal("openAccessPdf {url: \"\"} decoded as null")
	}
	if p.PDFURL() != "" || str(woa["url"]) != "" || p.OpenAccessPDF.Status != str(woa["status"]) || p.OpenAccessPDF.License != str(woa["license"]) {
		t.Errorf("openAccessPdf %+v, want %v with no PDF", p.OpenAccessPDF, woa)
	}
	if p.IsOpenAccess == nil || *p.IsOpenAccess != w["isOpenAccess"] {
		t.Errorf("isOpenAccess %v, want %v", p.IsOpenAccess, w["isOpenAccess"])
	}
	if p.CitationCount == nil || int64(*p.CitationCount) != num(t, w["citationCount"]) {
		t.Errorf("citationCount %v, want %v", p.CitationCount, w["citationCount"])
	}
	if p.Journal == nil || p.Journal.Volume != str(w["journal"].(obj)["volume"]) {
		t.Errorf("journal %+v, want %v", p.Journal, w["journal"])
	}
	var names []string
	for _, a := range list(w["authors"]) {
		names = append(names, str(a.(obj)["name"]))
	}
	var gotNames []string
	for _, a := range p.Authors {
		gotNames = append(gotNames, a.Name)
	}
	if !slices.Equal(gotNames, names) || len(names) == 0 {
		t.Errorf("authors %v, want %v", gotNames, names)
	}
}

// TestBatchRecorded replays the batch recording whose first id is unknown.
func TestBatchRecorded(t *testing.T) {
	body := fixture(t, "batch_allfields_first-id-not-found-null.json")
	// The ids of the recorded request (MANIFEST.tsv).
	ids := []string{"CorpusId:211530585", "CorpusId:470667", "10.2139/ssrn.2250500", "0f40b1f08821e22e859c6050916cec3667778613"}
	srv := newFake(t, func(w http.ResponseWriter, h hit, _ int) {
		var req struct{ IDs []string }
		if h.Method != http.MethodPost || h.Path != "/graph/v1/paper/batch" || json.Unmarshal(h.Body, &req) != nil || !slices.Equal(req.IDs, ids) {
			t.Errorf("unexpected request %s %s %s", h.Method, h.URI, h.Body)
			s2Error(w, 400, "no recording")
			return
		}
		if refuse(w, h) {
			return
		}
		testutil.WriteJSON(w, 200, body)
	})
	c, _ := newClient(t, srv.URL, setup{})
	papers, err := c.Batch(context.Background(), ids, strings.Split(s2.PaperFields, ",")...)
	if err != nil {
		t.Fatal(err)
	}
	want := list(generic(t, body))
	if len(papers) != len(ids) || len(want) != len(ids) {
		t.Fatalf("%d results, fixture %d, ids %d", len(papers), len(want), len(ids))
	}
	if want[0] != nil || papers[0] != nil {
		t.Errorf("first result %+v, want nil as recorded", papers[0])
	}
	for i := 1; i < len(ids); i++ {
		w := want[i].(obj)
		p := papers[i]
		if p == nil {
			t.Errorf("result %d is nil, want %v", i, w["paperId"])
			continue
		}
		if p.PaperID != str(w["paperId"]) || p.Title != str(w["title"]) {
			t.Errorf("result %d = %q %q, want %v %v", i, p.PaperID, p.Title, w["paperId"], w["title"])
		}
		if p.CorpusID == nil || *p.CorpusID != num(t, w["corpusId"]) || *p.ExternalIDs.CorpusID != num(t, w["externalIds"].(obj)["CorpusId"]) {
			t.Errorf("result %d: corpus id %v, want %v", i, p.CorpusID, w["corpusId"])
		}
		if (p.Abstract == nil) != (w["abstract"] == nil) || p.Abstract != nil && *p.Abstract != str(w["abstract"]) {
			t.Errorf("result %d: abstract differs from the recording", i)
		}
		if p.DOI() != str(w["externalIds"].(obj)["DOI"]) {
			t.Errorf("result %d: DOI %q, want %v", i, p.DOI(), w["externalIds"].(obj)["DOI"])
		}
	}
	// Element 2 answers the bare DOI of the request.
	if papers[2].DOI() != ids[2] {
		t.Errorf("result 2 DOI %q, want %q: results not aligned with ids", papers[2].DOI(), ids[2])
	}
}

// TestErrorsRecorded serves the recorded 404 and 400 bodies.
func TestErrorsRecorded(t *testing.T) {
	tests := []struct {
		file   string
		status int
		is     error
	}{
		{"error_404_paper_not_found_DOI.json", http.StatusNotFound, s2.ErrNotFound},
		{"error_400_unrecognized_fields.json", http.StatusBadRequest, s2.ErrBadRequest},
	}
	for _, tt := range tests {
		body := fixture(t, tt.file)
		msg := str(generic(t, body).(obj)["error"])
		if msg == "" {
			t.Fatalf("%s has no error message", tt.file)
		}
		const id = "DOI:10.1101/2024.04.01.587366"
		calls := map[string]func(c *s2.Client) error{
			"references": func(c *s2.Client) error { _, err := c.References(context.Background(), id); return err },
			"paper":      func(c *s2.Client) error { _, err := c.Paper(context.Background(), id); return err },
		}
		for op, call := range calls {
			t.Run(strconv.Itoa(tt.status)+"/"+op, func(t *testing.T) {
				srv := newFake(t, func(w http.ResponseWriter, _ hit, _ int) { testutil.WriteJSON(w, tt.status, body) })
				c, _ := newClient(t, srv.URL, setup{})
				err := call(c)
				if !errors.Is(err, tt.is) {
					t.Fatalf("err = %v, want errors.Is %v", err, tt.is)
				}
				for _, other := range []error{s2.ErrNotFound, s2.ErrBadRequest, s2.ErrForbidden} {
					if other != tt.is && errors.Is(err, other) {
						t.Errorf("err %v also matches %v", err, other)
					}
				}
				var e *s2.Error
				if !errors.As(err, &e) || e.Status != tt.status || e.Op != op || e.ID != id || e.Message != msg {
					t.Errorf("err = %#v, want status %d op %q id %q message %q", e, tt.status, op, id, msg)
				}
				if !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), id) {
					t.Errorf("error %q lacks S2's message or the paper id", err)
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("%d requests, want 1: a %d is final", n, tt.status)
				}
			})
		}
	}
}
