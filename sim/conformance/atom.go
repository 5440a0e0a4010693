package conformance

import (
	"encoding/xml"
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

// The arXiv API invariants: an Atom feed with opensearch totalResults,
// startIndex and itemsPerPage; each entry's id is http://arxiv.org/abs/
// IDvN, its published (v1) and updated (this version) RFC 3339 times with
// updated not before published, its primary category one of its
// categories; an id_list answer has the entries in date order, none for
// an unknown id, and counts every id asked in totalResults; errors are 400
// with a feed of one entry whose id is http://arxiv.org/api/errors#...

// Feed is an arXiv API feed as CheckAtomFeed reads it.
type Feed struct {
	Total, Start, PerPage int
	Entries               []FeedEntry
}

// FeedEntry is one entry of a Feed.
type FeedEntry struct {
	ID                 string // versionless canonical
	Version            int
	Published, Updated time.Time
	Primary            string
	Categories         []string
	Title              string
}

type atomFeed struct {
	Total   string      `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
	Start   string      `xml:"http://a9.com/-/spec/opensearch/1.1/ startIndex"`
	PerPage string      `xml:"http://a9.com/-/spec/opensearch/1.1/ itemsPerPage"`
	Entries []atomEntry `xml:"http://www.w3.org/2005/Atom entry"`
}

type atomEntry struct {
	ID        string `xml:"http://www.w3.org/2005/Atom id"`
	Published string `xml:"http://www.w3.org/2005/Atom published"`
	Updated   string `xml:"http://www.w3.org/2005/Atom updated"`
	Title     string `xml:"http://www.w3.org/2005/Atom title"`
	Primary   struct {
		Term string `xml:"term,attr"`
	} `xml:"http://arxiv.org/schemas/atom primary_category"`
	Categories []struct {
		Term string `xml:"term,attr"`
	} `xml:"http://www.w3.org/2005/Atom category"`
}

// CheckAtomFeed checks an arXiv API answer with status 200 and returns
// the feed.
func CheckAtomFeed(status int, contentType string, body []byte) (*Feed, error) {
	if status != 200 {
		return nil, fmt.Errorf("status %d, want 200: %s", status, truncate(body))
	}
	if !strings.HasPrefix(contentType, "application/atom+xml") {
		return nil, fmt.Errorf("Content-Type %q, want application/atom+xml", contentType)
	}
	var af atomFeed
	if err := xml.Unmarshal(body, &af); err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	var errs []error
	num := func(what, s string) int {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			errs = append(errs, fmt.Errorf("opensearch:%s %q is no number", what, s))
		}
		return n
	}
	f := &Feed{Total: num("totalResults", af.Total), Start: num("startIndex", af.Start), PerPage: num("itemsPerPage", af.PerPage)}
	for i, ae := range af.Entries {
		e, err := checkEntry(ae)
		if err != nil {
			errs = append(errs, fmt.Errorf("entry %d: %w", i, err))
			continue
		}
		f.Entries = append(f.Entries, e)
	}
	return f, errors.Join(errs...)
}

func checkEntry(ae atomEntry) (FeedEntry, error) {
	raw := strings.TrimSpace(ae.ID)
	rest, ok := strings.CutPrefix(raw, "http://arxiv.org/abs/")
	if !ok {
		return FeedEntry{}, fmt.Errorf("id %q is no http://arxiv.org/abs/ URL", raw)
	}
	id, err := arxiv.Parse(rest)
	if err != nil || id.Version == 0 {
		return FeedEntry{}, fmt.Errorf("id %q names no versioned arXiv id", raw)
	}
	e := FeedEntry{ID: id.Canonical(), Version: id.Version, Primary: ae.Primary.Term, Title: strings.TrimSpace(ae.Title)}
	var errs []error
	if e.Published, err = time.Parse(time.RFC3339, strings.TrimSpace(ae.Published)); err != nil {
		errs = append(errs, fmt.Errorf("%s: published %q: %w", raw, ae.Published, err))
	}
	if e.Updated, err = time.Parse(time.RFC3339, strings.TrimSpace(ae.Updated)); err != nil {
		errs = append(errs, fmt.Errorf("%s: updated %q: %w", raw, ae.Updated, err))
	}
	if e.Updated.Before(e.Published) {
		errs = append(errs, fmt.Errorf("%s: updated %s before published %s", raw, e.Updated, e.Published))
	}
	if id.Version == 1 && !e.Updated.Equal(e.Published) {
		errs = append(errs, fmt.Errorf("%s: v1 updated %s, published %s: v1's are one date", raw, e.Updated, e.Published))
	}
	for _, c := range ae.Categories {
		e.Categories = append(e.Categories, c.Term)
	}
	if len(e.Categories) == 0 || !slices.Contains(e.Categories, e.Primary) {
		errs = append(errs, fmt.Errorf("%s: primary category %q not among the categories %v", raw, e.Primary, e.Categories))
	}
	if e.Title == "" {
		errs = append(errs, fmt.Errorf("%s: no title", raw))
	}
	return e, errors.Join(errs...)
}

// CheckAtomError checks an arXiv API error answer: 400 and a feed of one
// entry whose id is http://arxiv.org/api/errors#... and whose summary
// holds want.
func CheckAtomError(want string, status int, body []byte) error {
	if status != 400 {
		return fmt.Errorf("status %d, want 400: %s", status, truncate(body))
	}
	var f struct {
		Entries []struct {
			ID      string `xml:"http://www.w3.org/2005/Atom id"`
			Title   string `xml:"http://www.w3.org/2005/Atom title"`
			Summary string `xml:"http://www.w3.org/2005/Atom summary"`
		} `xml:"http://www.w3.org/2005/Atom entry"`
	}
	if err := xml.Unmarshal(body, &f); err != nil {
		return fmt.Errorf("error feed: %w", err)
	}
	if len(f.Entries) != 1 || !strings.HasPrefix(f.Entries[0].ID, "http://arxiv.org/api/errors#") || f.Entries[0].Title != "Error" {
		return fmt.Errorf("not an error feed of one entry: %s", truncate(body))
	}
	if !strings.Contains(f.Entries[0].Summary, want) {
		return fmt.Errorf("error %q, want one with %q", f.Entries[0].Summary, want)
	}
	return nil
}

func (s *Suite) query(t *testing.T, base string, q url.Values) (*Feed, error) {
	t.Helper()
	r := get(t, base+"/api/query?"+q.Encode())
	return CheckAtomFeed(r.status, r.header.Get("Content-Type"), r.body)
}

// TestAtomLookup looks the entries up by id_list, with an unknown id.
func (s *Suite) TestAtomLookup(t *testing.T) {
	base := s.url(t, sim.ArxivAPI)
	need(t, "arXiv API entries (Entries)", s.Entries)
	ids := slices.Clone(s.Entries[:min(len(s.Entries), 50)])
	ids = append(ids, s.Unlisted...)
	f, err := s.query(t, base, url.Values{"id_list": {strings.Join(ids, ",")}, "max_results": {strconv.Itoa(len(ids))}})
	if err != nil {
		t.Fatal(err)
	}
	if f.Total != len(ids) || f.Start != 0 || f.PerPage != len(ids) {
		t.Errorf("totalResults %d startIndex %d itemsPerPage %d for %d ids, want %d 0 %d", f.Total, f.Start, f.PerPage, len(ids), len(ids), len(ids))
	}
	var got []string
	for i, e := range f.Entries {
		got = append(got, e.ID)
		if i > 0 && e.Published.Before(f.Entries[i-1].Published) {
			t.Errorf("entry %s (%s) after %s (%s): want date order", e.ID, e.Published, f.Entries[i-1].ID, f.Entries[i-1].Published)
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(ids[:len(ids)-len(s.Unlisted)]))
	if !slices.Equal(got, want) {
		t.Errorf("entries %v, want one for each known id %v", got, want)
	}
	// A version asked for returns the latest entry.
	if len(f.Entries) > 0 {
		e := f.Entries[0]
		g, err := s.query(t, base, url.Values{"id_list": {e.ID + "v1"}})
		if err != nil || len(g.Entries) != 1 || g.Entries[0].ID != e.ID || g.Entries[0].Version != e.Version {
			t.Errorf("id_list=%sv1: %+v, %v; want the v%d entry", e.ID, g, err, e.Version)
		}
	}
	// Paging: pages of two make the same list.
	var paged []string
	for start := 0; start < len(ids); start += 2 {
		g, err := s.query(t, base, url.Values{"id_list": {strings.Join(ids, ",")}, "start": {strconv.Itoa(start)}, "max_results": {"2"}})
		if err != nil {
			t.Fatal(err)
		}
		if g.Start != start || g.PerPage != 2 || len(g.Entries) > 2 {
			t.Errorf("page at %d: startIndex %d itemsPerPage %d, %d entries", start, g.Start, g.PerPage, len(g.Entries))
		}
		for _, e := range g.Entries {
			paged = append(paged, e.ID)
		}
	}
	slices.Sort(paged)
	if !slices.Equal(paged, want) {
		t.Errorf("paged entries %v, want %v", paged, want)
	}
}

// TestAtomSearch searches by the category of the first entry.
func (s *Suite) TestAtomSearch(t *testing.T) {
	base := s.url(t, sim.ArxivAPI)
	need(t, "arXiv API entries (Entries)", s.Entries)
	f, err := s.query(t, base, url.Values{"id_list": {s.Entries[0]}})
	if err != nil || len(f.Entries) != 1 {
		t.Fatalf("id_list=%s: %+v, %v", s.Entries[0], f, err)
	}
	cat := f.Entries[0].Primary
	g, err := s.query(t, base, url.Values{"search_query": {"cat:" + cat}, "sortBy": {"submittedDate"}, "sortOrder": {"ascending"}, "max_results": {"2000"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Entries) == 0 || g.Total != len(g.Entries) && len(g.Entries) < 2000 {
		t.Errorf("cat:%s: %d entries, totalResults %d", cat, len(g.Entries), g.Total)
	}
	for i, e := range g.Entries {
		if !slices.Contains(e.Categories, cat) {
			t.Errorf("cat:%s found %s of %v", cat, e.ID, e.Categories)
		}
		if i > 0 && e.Published.Before(g.Entries[i-1].Published) {
			t.Errorf("cat:%s ascending by submission: %s before %s", cat, g.Entries[i-1].ID, e.ID)
		}
	}
}

// TestAtomErrors asks what the API refuses.
func (s *Suite) TestAtomErrors(t *testing.T) {
	base := s.url(t, sim.ArxivAPI)
	for _, tc := range []struct{ query, want string }{
		{"id_list=2401.0001x", "incorrect id format for 2401.0001x"},
		{"id_list=2401.00001&max_results=x", "max_results must be an integer"},
		{"id_list=2401.00001&start=x", "start must be an integer"},
		{"search_query=cat:cs.CL&start=29999&max_results=2", "30000"},
	} {
		r := get(t, base+"/api/query?"+tc.query)
		if err := CheckAtomError(tc.want, r.status, r.body); err != nil {
			t.Errorf("%s: %v", tc.query, err)
		}
	}
}

// TestAtomVersions holds the arXiv API's entries to the histories
// OAI-PMH gives in arXivRaw, as arXiv's own agree: an entry's id carries
// the latest version, published is v1's date and updated the latest
// version's (curate reads a paper's history from its entry first, and
// from arXivRaw only what the entry cannot settle).
func (s *Suite) TestAtomVersions(t *testing.T) {
	api, oai := s.url(t, sim.ArxivAPI), s.url(t, sim.OAIPMH)
	raw := map[string][]time.Time{}
	var ids []string
	for _, r := range s.harvest(t, oai, url.Values{"verb": {"ListRecords"}, "metadataPrefix": {"arXivRaw"}}) {
		if !r.Deleted && len(r.VersionDates) > 0 {
			raw[r.ID] = r.VersionDates
			ids = append(ids, r.ID)
		}
	}
	need(t, "arXivRaw records", ids)
	several := 0
	for chunk := range slices.Chunk(ids, 100) {
		f, err := s.query(t, api, url.Values{"id_list": {strings.Join(chunk, ",")}, "max_results": {strconv.Itoa(len(chunk))}})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]FeedEntry{}
		for _, e := range f.Entries {
			got[e.ID] = e
		}
		for _, id := range chunk {
			e, ok := got[id]
			vs := raw[id]
			switch {
			case !ok:
				t.Errorf("%s: in arXivRaw, no arXiv API entry", id)
			case e.Version != len(vs) || !e.Published.Equal(vs[0]) || !e.Updated.Equal(vs[len(vs)-1]):
				t.Errorf("%s: entry v%d published %s updated %s; arXivRaw lists %d versions, v1 %s, the last %s", id, e.Version, e.Published, e.Updated, len(vs), vs[0], vs[len(vs)-1])
			case len(vs) > 1:
				several++
			}
		}
	}
	if several == 0 {
		t.Log("no paper with several versions: only v1 dates compared")
	}
}
