package app

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/groundwork/curate/dataset"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
)

const (
	ccBy    = "http://creativecommons.org/licenses/by/4.0/"
	arxivNE = "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
)

// oaiRepository serves records of papers created on the given days, each
// with its licence ("" names none).
func oaiRepository(t *testing.T, papers map[string][2]string) *simtest.Server {
	t.Helper()
	c := sim.NewCorpus()
	for id, p := range papers {
		created, err := time.Parse(time.DateOnly, p[0])
		if err != nil {
			t.Fatal(err)
		}
		m := sim.OAIMeta{ID: id, Datestamp: time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC), Created: created,
			Title: "T", Abstract: "A.", Categories: []string{"cs.CL"}, License: p[1]}
		c.AddOAIRecord("arXiv", m.Record("arXiv"))
	}
	return simtest.Serve(t, sim.OAIPMH, c)
}

// openApp opens an App on a new store with the OAI-PMH repository at oai
// ("" for none), paced interval apart.
func openApp(t *testing.T, oai string, drain <-chan struct{}) *App {
	t.Helper()
	cfg := Config{
		Version: "test", Store: t.TempDir(), Lock: true, Drain: drain,
		Net: Net{ArxivBase: "http://127.0.0.1:9", Ar5ivBase: "http://127.0.0.1:9", ArxivInterval: time.Millisecond, Timeout: 5 * time.Second, Retries: 0},
		S2:  S2{Base: "http://127.0.0.1:9", ArxivAPIBase: "http://127.0.0.1:9", PageLimit: 100},
		LLM: LLM{Heuristic: true},
	}
	if oai != "" {
		cfg.OAIBase = oai + sim.OAIPath
	}
	a, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func storedLicense(t *testing.T, a *App, id string) (*record.PaperLicense, bool) {
	t.Helper()
	l, ok, err := record.PaperLicenses.Lookup(context.Background(), a.Store, id)
	if err != nil {
		t.Fatal(err)
	}
	return l, ok
}

// TestHarvestStoresLicences: a harvest records the licence of each new
// target and of each older paper the store holds, and of no other; a
// second harvest of the same records rewrites none.
func TestHarvestStoresLicences(t *testing.T) {
	srv := oaiRepository(t, map[string][2]string{
		"2606.00001": {"2026-06-29", ccBy},
		"2606.00002": {"2026-06-29", ""},      // new, names no licence
		"2301.00003": {"2023-01-02", arxivNE}, // old, and the store holds its page
		"2301.00004": {"2023-01-02", ccBy},    // old, unknown to the store
	})
	a := openApp(t, srv.URL, nil)
	ctx := context.Background()
	title := "Old"
	if _, err := record.Documents.Put(ctx, a.Store, "2301.00003", &record.Document{ID: "2301.00003", Title: &title}, nil); err != nil {
		t.Fatal(err)
	}
	opt := OAIOptions{Sets: []string{"cs"}, Since: time.Date(2026, 6, 29, 0, 0, 0, 0, time.UTC)}
	found, sets, err := a.Discover(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 || len(sets) != 1 || sets[0].Licenses != 3 {
		t.Errorf("found %v, sets %+v; want the two new papers and three licences recorded", found, sets)
	}
	for id, want := range map[string]string{"2606.00001": ccBy, "2606.00002": "", "2301.00003": arxivNE} {
		l, ok := storedLicense(t, a, id)
		if !ok || !l.Found || l.License != want || l.Source != record.LicenseFromOAIPMH {
			t.Errorf("%s: stored %+v (%v), want licence %q from oai-pmh", id, l, ok, want)
		}
	}
	if _, ok := storedLicense(t, a, "2301.00004"); ok {
		t.Error("the licence of a paper neither new nor held was stored")
	}
	// The next night's harvest starts from the repository's date and
	// lists the same records again: nothing is rewritten.
	if err := a.Store.SetValue(ctx, oaiFromKey("cs"), []byte("2026-06-30T00:00:00Z")); err != nil {
		t.Fatal(err)
	}
	if _, sets, err = a.Discover(ctx, opt); err != nil || sets[0].Records != 4 || sets[0].Licenses != 0 {
		t.Errorf("second harvest: %+v, %v; want the 4 records read again and no licence rewritten", sets, err)
	}
}

// TestLookupLicenses: the lookup asks about the targets without a record,
// once; its failures and its interruption are typed as a run's are.
func TestLookupLicenses(t *testing.T) {
	srv := oaiRepository(t, map[string][2]string{"2606.00001": {"2026-06-29", ccBy}, "2606.00002": {"2026-06-29", ""}})
	ctx := context.Background()
	if _, err := openApp(t, "", nil).LookupLicenses(ctx, []string{"2606.00001"}, LicenseOptions{}); !errors.Is(err, ErrUsage) {
		t.Errorf("without an OAI base: %v, want ErrUsage", err)
	}

	a := openApp(t, srv.URL, nil)
	keys := []string{"2606.00001", "2606.00002", "2606.00009"}
	sum, err := a.LookupLicenses(ctx, keys, LicenseOptions{})
	if err != nil || sum.Requests != 3 || sum.Recorded != 2 || sum.Missing != 1 {
		t.Fatalf("lookup: %+v, %v", sum, err)
	}
	srv.Reset()
	if sum, err := a.LookupLicenses(ctx, keys, LicenseOptions{}); err != nil || sum.Requests != 0 || len(srv.Calls()) != 0 {
		t.Errorf("second lookup: %+v, %v, %d requests; want none", sum, err, len(srv.Calls()))
	}

	// A failing paper: ErrIncomplete, and asked about again.
	srv.Intercept(func(w http.ResponseWriter, r *http.Request, c sim.Call) bool {
		w.Header().Set("Content-Type", "text/xml")
		w.Write([]byte(`<?xml version="1.0"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2026-07-01T00:00:00Z</responseDate>` +
			`<request>https://oaipmh.arxiv.org/oai</request><error code="cannotDisseminateFormat">No.</error></OAI-PMH>`))
		return true
	})
	if sum, err := a.LookupLicenses(ctx, []string{"2606.00003"}, LicenseOptions{}); !errors.Is(err, ErrIncomplete) || sum.Failed != 1 {
		t.Errorf("a failing paper: %+v, %v; want ErrIncomplete", sum, err)
	}
	if _, ok := storedLicense(t, a, "2606.00003"); ok {
		t.Error("a failed lookup stored a licence")
	}

	// Asked to stop: ErrInterrupted before the next request.
	drain := make(chan struct{})
	close(drain)
	b := openApp(t, srv.URL, drain)
	srv.Reset()
	if _, err := b.LookupLicenses(ctx, keys, LicenseOptions{}); !errors.Is(err, ErrInterrupted) || len(srv.Calls()) != 0 {
		t.Errorf("drained: %v, %d requests; want ErrInterrupted and none", err, len(srv.Calls()))
	}
}

// TestLicensesOfInstances: the dataset gets the recorded licences of its
// targets, "" for a record naming none; not found and deleted ones are
// not recorded.
func TestLicensesOfInstances(t *testing.T) {
	a := openApp(t, "", nil)
	ctx := context.Background()
	for id, l := range map[string]record.PaperLicense{
		"2606.00001": {Found: true, License: ccBy},
		"2606.00002": {Found: true},
		"2606.00003": {},
		"2606.00004": {Found: true, Deleted: true},
	} {
		if _, err := record.PaperLicenses.Put(ctx, a.Store, id, &l, nil); err != nil {
			t.Fatal(err)
		}
	}
	var ins []record.Instance
	for _, id := range []string{"2606.00001", "2606.00002", "2606.00003", "2606.00004", "2606.00005"} {
		ins = append(ins, record.Instance{Target: record.InstanceTarget{ArxivID: id}})
	}
	got, err := Licenses(ctx, a.Store, &dataset.Result{Instances: ins})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["2606.00001"] != ccBy {
		t.Errorf("licences %v, want 2606.00001 CC BY and 2606.00002 none named", got)
	}
	if l, ok := got["2606.00002"]; !ok || l != "" {
		t.Errorf("2606.00002: %q, %v; want recorded as naming none", l, ok)
	}
}
