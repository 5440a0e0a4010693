package postknowledge_test

// Post-knowledge on recorded Semantic Scholar responses (../shared/fixtures/
// s2, read at test time, skipped without): the citation item S2 sent for
// a paper's /citations, and real paper records of a recorded reference
// list served as the papers citing a target.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/postknowledge"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
)

// fileCitation is the recorded citation item: one data[] element of
// /citations, citing paper and all (see the fixtures' MANIFEST.tsv).
const fileCitation = "citation_item_contextsWithIntent_influential.json"

// TestRecordedCitationItem: the citation item exactly as S2 sent it (with
// fields the client does not ask for: intents, contextsWithIntent,
// publicationVenue, journal, authors, a null openAccessPdf), on a page of
// S2's shape, is read by the client's citations code and converted as
// post-knowledge keeps it: S2 paper ID, title, abstract, venue, date,
// influential, counts; kept when dated after the cutoff, not when dated
// before or on its day.
func TestRecordedCitationItem(t *testing.T) {
	item := simtest.S2Fixture(t, fileCitation)
	var want struct {
		IsInfluential bool `json:"isInfluential"`
		CitingPaper   struct {
			PaperID                  string `json:"paperId"`
			Title                    string `json:"title"`
			Abstract                 string `json:"abstract"`
			Venue                    string `json:"venue"`
			Year                     int    `json:"year"`
			PublicationDate          string `json:"publicationDate"`
			CitationCount            int    `json:"citationCount"`
			InfluentialCitationCount int    `json:"influentialCitationCount"`
		} `json:"citingPaper"`
	}
	if err := json.Unmarshal(item, &want); err != nil {
		t.Fatal(err)
	}
	const target = "2301.00001"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != sim.S2CitationsPath("ARXIV:"+target) || r.URL.Query().Get("fields") != s2.CitationFields {
			http.Error(w, `{"error":"unexpected request"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		// The last page: offset, data, and no "next".
		w.Write([]byte(`{"offset":0,"data":[` + string(item) + `]}`))
	}))
	t.Cleanup(srv.Close)

	pub, err := time.Parse(time.DateOnly, want.CitingPaper.PublicationDate)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		cutoff time.Time
		kept   bool
	}{
		{"a day before", pub.Add(-24 * time.Hour), true},
		{"its own day", pub.Add(17 * time.Hour), false},
		{"a year after", pub.AddDate(1, 0, 0), false},
	} {
		pk, err := postknowledge.Collect(context.Background(), client(t, srv.URL), target, tt.cutoff, 3, postknowledge.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if pk.Citations != 1 || !pk.Complete || (len(pk.Papers) == 1) != tt.kept || pk.After+pk.Before != 1 {
			t.Fatalf("%s: %+v", tt.name, pk)
		}
		if !tt.kept {
			continue
		}
		p := pk.Papers[0]
		cp := want.CitingPaper
		if p.PaperID != cp.PaperID || p.Title != cp.Title || p.Abstract != cp.Abstract || p.Venue != cp.Venue || p.Date != cp.PublicationDate ||
			p.Year != cp.Year || p.Influential != want.IsInfluential || !p.Influential || p.CitationCount != cp.CitationCount ||
			p.InfluentialCitationCount != cp.InfluentialCitationCount || p.DateFrom != record.DateFromS2 || p.ArxivID != "" {
			t.Errorf("%s: kept %+v\nwant %+v (influential %v)", tt.name, p, cp, want.IsInfluential)
		}
	}
}

// citingCorpus registers, as papers citing target on a simulated S2, the
// recorded citing paper (its edge fields as recorded) and every resolved
// paper of the recorded reference list of CorpusId:1033682 (each edge's
// own fields: contexts, intents, influence), and returns the edges as
// S2 serves them from its citations endpoint.
func citingCorpus(t *testing.T, target string) (*sim.Corpus, []json.RawMessage) {
	t.Helper()
	c := sim.NewCorpus()
	targetID, err := c.AddS2Paper(map[string]any{"paperId": strings.Repeat("7", 40), "title": "The target",
		"externalIds": map[string]any{"ArXiv": target}}, "ARXIV:"+target)
	if err != nil {
		t.Fatal(err)
	}
	var edges []json.RawMessage
	for _, f := range []string{simtest.FileReferencesPage1, simtest.FileReferencesLastPage} {
		var page struct {
			Data []map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(simtest.S2Fixture(t, f), &page); err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Data {
			paper := e["citedPaper"]
			delete(e, "citedPaper")
			e["citingPaper"] = paper
			b, _ := json.Marshal(e)
			edges = append(edges, b)
		}
	}
	edges = append(edges, simtest.S2Fixture(t, fileCitation))
	seen := map[string]bool{}
	var served []json.RawMessage
	for _, raw := range edges {
		var e map[string]json.RawMessage
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		var id struct {
			PaperID *string `json:"paperId"`
		}
		json.Unmarshal(e["citingPaper"], &id)
		if id.PaperID == nil || seen[*id.PaperID] {
			continue // unresolved: S2 lists no paper that cites
		}
		seen[*id.PaperID] = true
		if _, err := c.AddS2Paper(e["citingPaper"]); err != nil {
			t.Fatal(err)
		}
		ref := map[string]json.RawMessage{}
		for k, v := range e {
			if k != "citingPaper" {
				ref[k] = v
			}
		}
		ref["citedPaper"], _ = json.Marshal(map[string]string{"paperId": targetID})
		b, _ := json.Marshal(ref)
		if err := c.SetS2References(*id.PaperID, []json.RawMessage{b}); err != nil {
			t.Fatal(err)
		}
		served = append(served, raw)
	}
	return c, served
}

// TestRecordedCitations: a target cited by real S2 paper records (the
// recorded citing paper and those of a recorded reference list, dated
// from 1986 to 2023, some by year only), through the simulated S2's
// citations endpoint in pages: every citation counted once, each placed
// against the cutoff as its date (else its year) says, and the papers
// kept exactly those S2 dates after the cutoff, the N most influential,
// S2's influential ones first, in the order Select fixes.
func TestRecordedCitations(t *testing.T) {
	const target = "2301.00001"
	c, edges := citingCorpus(t, target)
	srv := simtest.Serve(t, sim.S2, c)
	cutoff := time.Date(2018, 5, 10, 12, 0, 0, 0, time.UTC)
	const n = 6

	// What the records say, read apart from the code under test.
	type paper struct {
		id           string
		date         string
		year, ic, cc int
		influential  bool
	}
	var after []paper
	before, undated, influentialAfter := 0, 0, 0
	for _, raw := range edges {
		var e struct {
			IsInfluential bool `json:"isInfluential"`
			CitingPaper   struct {
				PaperID                  string  `json:"paperId"`
				PublicationDate          *string `json:"publicationDate"`
				Year                     *int    `json:"year"`
				CitationCount            *int    `json:"citationCount"`
				InfluentialCitationCount *int    `json:"influentialCitationCount"`
			} `json:"citingPaper"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		p := paper{id: e.CitingPaper.PaperID, influential: e.IsInfluential}
		if e.CitingPaper.PublicationDate != nil {
			p.date = *e.CitingPaper.PublicationDate
		}
		if e.CitingPaper.Year != nil {
			p.year = *e.CitingPaper.Year
		}
		if e.CitingPaper.CitationCount != nil {
			p.cc = *e.CitingPaper.CitationCount
		}
		if e.CitingPaper.InfluentialCitationCount != nil {
			p.ic = *e.CitingPaper.InfluentialCitationCount
		}
		switch {
		case p.date > "2018-05-10" || p.date == "" && p.year > 2018:
			after = append(after, p)
			if p.influential {
				influentialAfter++
			}
		case p.date != "" || p.year != 0 && p.year < 2018:
			before++
		default:
			undated++
		}
	}
	if len(after) <= n || before == 0 || undated == 0 || influentialAfter == 0 {
		t.Fatalf("the recordings give %d after (%d influential), %d before, %d undated: the test needs each", len(after), influentialAfter, before, undated)
	}

	t.Logf("%d citations: %d after the cutoff (%d influential), %d before, %d undated", len(edges), len(after), influentialAfter, before, undated)
	cl := client(t, srv.URL) // pages of 3
	pk, err := postknowledge.Collect(context.Background(), cl, target+"v2", cutoff, n, postknowledge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if pk.Target != target || pk.Citations != len(edges) || !pk.Complete || pk.After != len(after) || pk.Before != before || pk.Undated != undated || pk.N != n || len(pk.Papers) != n {
		t.Fatalf("post-knowledge: %d citations, %d after, %d before, %d undated, %d kept (complete %v); want %d, %d, %d, %d, %d",
			pk.Citations, pk.After, pk.Before, pk.Undated, len(pk.Papers), pk.Complete, len(edges), len(after), before, undated, n)
	}
	if got, want := len(srv.CallsTo(sim.S2CitationsPath("ARXIV:"+target))), (len(edges)+2)/3; got != want {
		t.Errorf("%d citations requests, want one per page of 3 (%d)", got, want)
	}
	byID := map[string]paper{}
	for _, p := range after {
		byID[p.id] = p
	}
	for i, p := range pk.Papers {
		w, ok := byID[p.PaperID]
		switch {
		case !ok:
			t.Errorf("kept %s (%s, year %d), not dated after the cutoff", p.PaperID, p.Date, p.Year)
		case p.Influential != w.influential || p.Date != w.date || p.CitationCount != w.cc || p.InfluentialCitationCount != w.ic || p.Title == "":
			t.Errorf("kept %+v, recorded %+v", p, w)
		case i < influentialAfter && !p.Influential:
			t.Errorf("paper %d kept is not influential, though %d influential ones are after the cutoff", i, influentialAfter)
		}
	}
	// The order Select fixes: influential, then influential citations,
	// citations, the earliest, the paper ID.
	slices.SortStableFunc(after, func(a, b paper) int {
		key := func(p paper) string {
			infl := "1"
			if p.influential {
				infl = "0"
			}
			return infl + pad(1e9-p.ic) + pad(1e9-p.cc) + p.date + p.id
		}
		return strings.Compare(key(a), key(b))
	})
	for i, p := range pk.Papers {
		if p.PaperID != after[i].id {
			t.Errorf("paper %d kept: %s, want %s", i, p.PaperID, after[i].id)
		}
	}
}

func pad(n int) string { s := strconv.Itoa(n); return strings.Repeat("0", 12-len(s)) + s }
