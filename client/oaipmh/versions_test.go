package oaipmh_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
)

// TestListPage walks csQuery a page at a time, as a harvester that stores
// its progress does: the first page with the query, the next with the
// token alone, the last without one; a page the harvest asks again with
// a stored token is the same page.
func TestListPage(t *testing.T) {
	srv := newFake(t)
	c := newClient(t, srv, 0)
	ctx := context.Background()
	p1, err := c.ListPage(ctx, csQuery, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p1.Records) != 3 || p1.Token != token2 || !p1.ResponseDate.Equal(instant(sim.OAIResponseDate)) || p1.Cursor != 0 || p1.CompleteListSize != 6 {
		t.Errorf("page 1: %d records, token %q, response date %s, cursor %d of %d", len(p1.Records), p1.Token, p1.ResponseDate, p1.Cursor, p1.CompleteListSize)
	}
	p2, err := c.ListPage(ctx, csQuery, p1.Token)
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Records) != 3 || p2.Token != "" || p2.Cursor != 3 {
		t.Errorf("page 2: %d records, token %q, cursor %d", len(p2.Records), p2.Token, p2.Cursor)
	}
	again, err := c.ListPage(ctx, csQuery, p1.Token)
	if err != nil || !reflect.DeepEqual(again.Records, p2.Records) {
		t.Errorf("page 2 asked again: %v", err)
	}
	want := []url.Values{
		{"verb": {"ListRecords"}, "metadataPrefix": {"arXiv"}, "from": {"2026-03-03"}, "set": {"cs"}},
		{"verb": {"ListRecords"}, "resumptionToken": {token2}},
		{"verb": {"ListRecords"}, "resumptionToken": {token2}},
	}
	for i, h := range srv.recorded() {
		if !reflect.DeepEqual(h.Query(), want[i]) {
			t.Errorf("request %d: %v, want %v", i+1, h.Query(), want[i])
		}
	}

	// A token the repository refuses; an empty harvest; a bad query.
	if _, err := c.ListPage(ctx, csQuery, "expired"); !errors.Is(err, oaipmh.ErrBadResumptionToken) || !strings.Contains(err.Error(), `"expired"`) {
		t.Errorf("refused token: %v", err)
	}
	p, err := c.ListPage(ctx, oaipmh.Query{From: day("2999-01-01")}, "")
	if err != nil || len(p.Records) != 0 || p.Token != "" {
		t.Errorf("noRecordsMatch: %+v %v, want an empty last page", p, err)
	}
	n := len(srv.recorded())
	if _, err := c.ListPage(ctx, oaipmh.Query{From: day("2026-03-02"), Until: day("2026-03-01")}, ""); err == nil {
		t.Error("until before from: no error")
	}
	if len(srv.recorded()) != n {
		t.Error("a bad query was sent")
	}
}

// rawRepository holds records in arXivRaw written as arXiv writes them:
// one of three versions, one whose history lacks v1, one whose versions
// are listed out of order.
func rawRepository(t *testing.T) *simtest.Server {
	t.Helper()
	c := sim.NewCorpus()
	d := func(s string) time.Time { return instant(s) }
	m := sim.OAIMeta{
		ID: "2603.01234", Datestamp: day("2026-05-04"), Title: "Three versions", Authors: []string{"Dana Example"}, Categories: []string{"cs.CL"},
		VersionDates: []time.Time{d("2026-03-02T18:00:01Z"), d("2026-04-01T09:00:00Z"), d("2026-05-04T10:30:00Z")},
	}
	c.AddOAIRecord("arXivRaw", m.Record("arXivRaw"))
	c.AddOAIRecord("arXiv", m.Record("arXiv"))
	c.AddOAIRecord("arXivRaw", sim.OAIRecord{ID: "2603.00002", Datestamp: day("2026-03-04"), Sets: []string{"cs"}, XML: `<record>
      <header><identifier>oai:arXiv.org:2603.00002</identifier><datestamp>2026-03-04</datestamp><setSpec>cs</setSpec></header>
      <metadata><arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/"><id>2603.00002</id>
        <version version="v2"><date>Wed, 4 Mar 2026 09:30:00 GMT</date><size>1kb</size></version>
        <title>Lost its first version</title><authors>Eli Sample</authors><categories>cs.CL</categories><abstract>x</abstract>
      </arXivRaw></metadata></record>`})
	c.AddOAIRecord("arXivRaw", sim.OAIRecord{ID: "2603.00003", Datestamp: day("2026-03-04"), Sets: []string{"cs"}, XML: `<record>
      <header><identifier>oai:arXiv.org:2603.00003</identifier><datestamp>2026-03-04</datestamp><setSpec>cs</setSpec></header>
      <metadata><arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/"><id>2603.00003</id>
        <version version="v2"><date>Wed, 4 Mar 2026 09:30:00 GMT</date></version>
        <version version="v1"><date>Mon, 2 Mar 2026 09:30:00 GMT</date></version>
        <title>Out of order</title><authors>Eli Sample</authors><categories>cs.CL</categories><abstract>x</abstract>
      </arXivRaw></metadata></record>`})
	return simtest.ServeOptions(t, sim.OAIPMH, c, sim.Options{OAIPageSize: 2})
}

// TestGetRecordVersions reads version histories with GetRecord in
// arXivRaw: every version with its date, in number order whatever the
// order listed; a history without v1 is ErrNoV1; a format other than
// arXiv's two is refused before any request.
func TestGetRecordVersions(t *testing.T) {
	srv := &fakeOAI{Server: rawRepository(t)}
	c := newClient(t, srv, 0)
	ctx := context.Background()
	rec, err := c.GetRecordFormat(ctx, "2603.01234v2", "arXivRaw")
	if err != nil {
		t.Fatal(err)
	}
	want := []oaipmh.Version{{1, instant("2026-03-02T18:00:01Z")}, {2, instant("2026-04-01T09:00:00Z")}, {3, instant("2026-05-04T10:30:00Z")}}
	if m := rec.Meta; m == nil || !slices.Equal(m.Versions, want) || !m.Created.Equal(want[0].Date) || !m.Updated.Equal(want[2].Date) {
		t.Errorf("meta %+v, want versions %v", rec.Meta, want)
	}
	if q := srv.recorded()[0].Query(); q.Get("metadataPrefix") != "arXivRaw" || q.Get("identifier") != "oai:arXiv.org:2603.01234" {
		t.Errorf("request %v", q)
	}
	rec, err = c.GetRecordFormat(ctx, "2603.00003", "arXivRaw")
	if err != nil || !slices.Equal(rec.Meta.Versions, []oaipmh.Version{{1, instant("2026-03-02T09:30:00Z")}, {2, instant("2026-03-04T09:30:00Z")}}) {
		t.Errorf("out of order: %+v %v", rec.Meta, err)
	}
	if _, err := c.GetRecordFormat(ctx, "2603.00002", "arXivRaw"); !errors.Is(err, oaipmh.ErrNoV1) || !strings.Contains(err.Error(), "2603.00002") {
		t.Errorf("no v1: %v", err)
	}
	if rec, err := c.GetRecord(ctx, "2603.01234"); err != nil || rec.Meta.Versions != nil || !rec.Meta.Updated.Equal(day("2026-05-04")) {
		t.Errorf("arXiv format: %+v %v, want dates only", rec.Meta, err)
	}
	n := len(srv.recorded())
	if _, err := c.GetRecordFormat(ctx, "2603.01234", "oai_dc"); err == nil || !strings.Contains(err.Error(), "want arXiv or arXivRaw") {
		t.Errorf("oai_dc: %v", err)
	}
	if len(srv.recorded()) != n {
		t.Error("a refused format was asked for")
	}

	// In a harvest the history without v1 is skipped, counted.
	var got []string
	h, err := c.ListRecords(ctx, oaipmh.Query{MetadataPrefix: "arXivRaw"}, func(r oaipmh.Record) error {
		got = append(got, r.ID)
		return nil
	})
	slices.Sort(got)
	if err != nil || h.Skipped != 1 || !slices.Equal(got, []string{"2603.00003", "2603.01234"}) {
		t.Errorf("harvest %+v of %v: %v", h, got, err)
	}
}

// TestFlowControlPage: a page the repository answers 503 with Retry-After
// (OAI-PMH flow control) is asked again after the wait.
func TestFlowControlPage(t *testing.T) {
	srv := newFake(t)
	srv.Script(sim.OAIPath, sim.Fault{Status: http.StatusServiceUnavailable}.WithRetryAfter("1"), 1)
	c := newClient(t, srv, 0)
	p, err := c.ListPage(context.Background(), csQuery, "")
	if err != nil || len(p.Records) != 3 {
		t.Fatalf("page %+v: %v", p, err)
	}
	hits := srv.recorded()
	if len(hits) != 2 || hits[0].Status != http.StatusServiceUnavailable {
		t.Fatalf("requests %+v, want a 503 then the page", hits)
	}
	if gap := hits[1].Start.Sub(hits[0].Start); gap < time.Second {
		t.Errorf("asked again after %s, want >= 1s (Retry-After)", gap)
	}
}
