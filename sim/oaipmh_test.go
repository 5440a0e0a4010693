package sim_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/conformance"
	"github.com/groundwork/curate/sim/simtest"
)

// TestOAIHarvestWorld harvests a world with the pipeline's OAI-PMH client
// in both of arXiv's own formats: every paper on arXiv once, as the world
// has it, in pages of the size asked.
func TestOAIHarvestWorld(t *testing.T) {
	w := newWorld(t, sim.WorldConfig{Seed: 4, Targets: 15})
	srv := simtest.ServeOptions(t, sim.OAIPMH, w, sim.Options{OAIPageSize: 10})
	hc, err := httpx.New(httpx.Config{UserAgent: "sim-test"}, oaipmh.ServiceConfig(srv.URL+sim.OAIPath, time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := hc.Service(oaipmh.ServiceName)
	c, err := oaipmh.New(svc, oaipmh.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]sim.Paper{}
	for i := range w.NumTargets() {
		p := w.Target(i)
		want[p.ArxivID] = p
	}
	for j := range w.Config().Papers {
		if p := w.Background(j); p.ArxivID != "" {
			want[p.ArxivID] = p
		}
	}
	for _, prefix := range []string{"arXiv", "arXivRaw"} {
		got := map[string]bool{}
		h, err := c.ListRecords(context.Background(), oaipmh.Query{MetadataPrefix: prefix}, func(r oaipmh.Record) error {
			p, ok := want[r.ID]
			m := r.Meta
			switch {
			case !ok || got[r.ID]:
				t.Errorf("%s: record %s unknown or twice", prefix, r.ID)
			case m == nil || m.Title != p.Title || !slices.Equal(m.Authors, p.Authors) || !slices.Equal(m.Categories, p.Categories) || m.Primary != p.Primary:
				t.Errorf("%s: record %s: %+v, want %q by %v in %v", prefix, r.ID, m, p.Title, p.Authors, p.Categories)
			case m.Created.Format(time.DateOnly) != p.Published.Format(time.DateOnly) || !r.Datestamp.Equal(p.Updated.UTC().Truncate(24*time.Hour)):
				t.Errorf("%s: record %s created %s datestamp %s, want %s and %s", prefix, r.ID, m.Created, r.Datestamp, p.Published, p.Updated)
			}
			got[r.ID] = true
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || h.Records != len(want) || h.Pages != (len(want)+9)/10 {
			t.Errorf("%s: %d records in %d pages, want %d in pages of 10", prefix, h.Records, h.Pages, len(want))
		}
	}
	// A set: the cs papers.
	n := 0
	if _, err := c.ListRecords(context.Background(), oaipmh.Query{Set: "cs"}, func(r oaipmh.Record) error {
		n++
		if !slices.ContainsFunc(r.Meta.Categories, func(c string) bool { return len(c) > 3 && c[:3] == "cs." }) {
			t.Errorf("set cs: %s in %v", r.ID, r.Meta.Categories)
		}
		return nil
	}); err != nil || n == 0 {
		t.Errorf("set cs: %d records, %v", n, err)
	}
}

// TestConformanceOAICorpus runs the OAI-PMH part of the conformance suite
// on a corpus of records with a deleted one, an old-style id and papers
// of several licences, one naming none.
func TestConformanceOAICorpus(t *testing.T) {
	c := sim.NewCorpus()
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for i, m := range []sim.OAIMeta{
		{ID: "2603.00001", License: "http://creativecommons.org/licenses/by/4.0/"},
		{ID: "2603.00002", License: "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"},
		{ID: "hep-th/9901001", Categories: []string{"hep-th"}},
		{ID: "2603.00003", Deleted: true},
		{ID: "2603.00004", License: "http://creativecommons.org/licenses/by-nc-sa/4.0/"},
		{ID: "2603.00005", VersionDates: []time.Time{day.Add(9 * time.Hour), day.AddDate(0, 1, 0), day.AddDate(0, 2, 3)}},
	} {
		m.Datestamp, m.Created = day.AddDate(0, 0, i), day
		if n := len(m.VersionDates); n > 0 {
			m.Datestamp = m.VersionDates[n-1]
		}
		m.Title, m.Abstract, m.Authors = "Paper "+m.ID, "An abstract.", []string{"J. Doe"}
		if m.Categories == nil {
			m.Categories = []string{"cs.CL"}
		}
		for _, prefix := range sim.OAIFormats {
			c.AddOAIRecord(prefix, m.Record(prefix))
			if m.Deleted {
				break // a deleted record is listed in every format once
			}
		}
	}
	var srv *simtest.Server
	s := &conformance.Suite{
		Start: func(t *testing.T) map[string]string {
			srv = simtest.ServeOptions(t, sim.OAIPMH, c, sim.Options{OAIPageSize: 2})
			return map[string]string{sim.OAIPMH: srv.URL}
		},
		Service: func(string) *sim.Service { return srv.Service },
	}
	s.RunTests(t)
}

// TestOAIFlowControlHarvest harvests a world from a repository that
// throttles: its 503s with Retry-After pause the pipeline's client, which
// then gets every page; no 429 is sent.
func TestOAIFlowControlHarvest(t *testing.T) {
	w := newWorld(t, sim.WorldConfig{Seed: 4, Targets: 15})
	// One request in four seconds: the second page is asked at once and
	// throttled however slow the machine.
	srv := simtest.ServeOptions(t, sim.OAIPMH, w, sim.Options{OAIPageSize: 40,
		Limits: map[string]sim.Limits{sim.OAIPMH: {Rate: 0.25, Burst: 1, RetryAfter: time.Second}}})
	hc, err := httpx.New(httpx.Config{UserAgent: "sim-test", RetryMax: 10}, oaipmh.ServiceConfig(srv.URL+sim.OAIPath, time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := hc.Service(oaipmh.ServiceName)
	c, err := oaipmh.New(svc, oaipmh.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.ListRecords(context.Background(), oaipmh.Query{MetadataPrefix: "arXivRaw"}, func(oaipmh.Record) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range w.OAIRecords("arXivRaw") {
		n++
	}
	if h.Records != n {
		t.Errorf("%d records harvested of %d", h.Records, n)
	}
	st := srv.Stats()
	if st.Throttled == 0 {
		t.Error("the repository never throttled: the test proves nothing")
	}
	for _, call := range srv.Calls() {
		if call.Outcome == sim.OutcomeThrottled && call.Status != 503 {
			t.Errorf("throttled with status %d, want 503", call.Status)
		}
	}
}
