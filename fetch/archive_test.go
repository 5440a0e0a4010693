package fetch_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/archive"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/membudget"
	"github.com/groundwork/curate/internal/robots"
	"github.com/groundwork/curate/internal/testutil"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// simFetcher is a Fetcher over simulated arXiv and ar5iv sites.
type simFetcher struct {
	f     *fetch.Fetcher
	st    *store.Store
	srv   *sim.Servers
	world *sim.World
	arxiv *httpx.Service
	ar5iv *httpx.Service
	grant *grantLog
}

func newSimFetcher(t *testing.T, opt sim.Options) *simFetcher {
	t.Helper()
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 7, Targets: 30})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.Start(w, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	gl := &grantLog{at: map[string][]time.Time{}}
	hc, err := httpx.New(httpx.Config{UserAgent: httpx.UserAgent("test", ""), RetryMax: 2, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond, OnGrant: gl.record},
		httpx.ServiceConfig{Name: "arxiv", BaseURL: srv.URL(sim.Arxiv), MaxInFlight: 1},
		httpx.ServiceConfig{Name: "ar5iv", BaseURL: srv.URL(sim.Ar5iv), MaxInFlight: 1},
	)
	if err != nil {
		t.Fatal(err)
	}
	ax, _ := hc.Service("arxiv")
	a5, _ := hc.Service("ar5iv")
	return &simFetcher{f: &fetch.Fetcher{Arxiv: ax, Ar5iv: a5, Store: st}, st: st, srv: srv, world: w, arxiv: ax, ar5iv: a5, grant: gl}
}

// requested lists the paths asked of the simulated arXiv and ar5iv.
func (s *simFetcher) requested() []string {
	var out []string
	for _, name := range []string{sim.Arxiv, sim.Ar5iv} {
		for _, c := range s.srv.Service(name).Calls() {
			out = append(out, name+" "+c.Key)
		}
	}
	return out
}

// targetsBySite returns the indices of targets that arXiv serves and one
// that only ar5iv serves.
func targetsBySite(t *testing.T, w *sim.World) (arxivOnes []int, ar5ivOne int) {
	ar5ivOne = -1
	for i := range w.NumTargets() {
		switch w.Target(i).HTML {
		case sim.HTMLArxiv:
			arxivOnes = append(arxivOnes, i)
		case sim.HTMLAr5iv:
			if ar5ivOne < 0 {
				ar5ivOne = i
			}
		}
	}
	if len(arxivOnes) < 3 || ar5ivOne < 0 {
		t.Fatalf("world lacks pages of both sites: %v %d", arxivOnes, ar5ivOne)
	}
	return arxivOnes, ar5ivOne
}

// TestFetchFromArchive: papers held in a directory of saved pages or an
// ar5iv-style zip are parsed from there, make no request, and say which
// archive and entry served them; the rest are fetched.
func TestFetchFromArchive(t *testing.T) {
	s := newSimFetcher(t, sim.Options{})
	w := s.world
	onArxiv, onAr5iv := targetsBySite(t, w)
	dirPaper, zipPaper, netPaper := w.Target(onArxiv[0]), w.Target(onAr5iv), w.Target(onArxiv[1])

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, dirPaper.ArxivID+".html"), w.Page(&dirPaper, sim.HTMLArxiv), 0o644); err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(t.TempDir(), "ar5iv-04-2024-no-problem.zip")
	testutil.WriteZip(t, zipPath, map[string][]byte{"no-problem/" + zipPaper.ArxivID + ".html": w.Page(&zipPaper, sim.HTMLAr5iv)})
	idx, err := archive.Open(archive.Options{}, dir, zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	s.f.Archive = idx

	for _, c := range []struct {
		p            sim.Paper
		archive      string
		entry, sever string
	}{
		{dirPaper, dir, dirPaper.ArxivID + ".html", ""},
		{zipPaper, zipPath, "no-problem/" + zipPaper.ArxivID + ".html", archive.SeverityNoProblem},
	} {
		r := s.f.Fetch(context.Background(), c.p.ArxivID)
		if r.Outcome != fetch.Archived || r.Err != nil || r.Doc == nil {
			t.Fatalf("%s: outcome %s, err %v", c.p.ArxivID, r.Outcome, r.Err)
		}
		doc, _, err := record.Documents.Get(context.Background(), s.st, c.p.ArxivID)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Source != record.SourceArchive || doc.Archive != c.archive || doc.ArchiveEntry != c.entry || doc.Title == nil || *doc.Title != c.p.Title {
			t.Errorf("%s: stored document source %q archive %q entry %q title %v", c.p.ArxivID, doc.Source, doc.Archive, doc.ArchiveEntry, doc.Title)
		}
		_, raw, err := record.RawPages.Get(context.Background(), s.st, c.p.ArxivID)
		if err != nil {
			t.Fatal(err)
		}
		if raw.Meta["source"] != record.SourceArchive || raw.Meta["archive"] != c.archive || raw.Meta["entry"] != c.entry || raw.Meta["severity"] != c.sever {
			t.Errorf("%s: raw meta %v", c.p.ArxivID, raw.Meta)
		}
	}
	if got := s.requested(); len(got) != 0 {
		t.Errorf("papers in an archive made requests: %v", got)
	}
	// A paper no archive holds is fetched as usual.
	if r := s.f.Fetch(context.Background(), netPaper.ArxivID); r.Outcome != fetch.Fetched || r.Source != record.SourceArxiv {
		t.Errorf("%s: outcome %s source %s err %v", netPaper.ArxivID, r.Outcome, r.Source, r.Err)
	}
	if got := s.requested(); len(got) != 1 || !strings.Contains(got[0], netPaper.ArxivID) {
		t.Errorf("requests %v, want one for %s", got, netPaper.ArxivID)
	}
	// Stored now: asked of nothing, the archive included.
	s.f.Archive = failingArchive{t}
	if r := s.f.Fetch(context.Background(), dirPaper.ArxivID); r.Outcome != fetch.Stored || r.Source != record.SourceArchive {
		t.Errorf("second fetch: outcome %s source %s", r.Outcome, r.Source)
	}
}

// TestFetchArchiveWrongPage: an archived page that is not the one asked
// for (another version, or no LaTeXML at all) is passed over, and the
// paper is fetched.
func TestFetchArchiveWrongPage(t *testing.T) {
	s := newSimFetcher(t, sim.Options{})
	w := s.world
	onArxiv, _ := targetsBySite(t, w)
	p, q := w.Target(onArxiv[0]), w.Target(onArxiv[1])
	dir := t.TempDir()
	// p's entry names no version but holds p's page of version p.Version;
	// asking for another version must not take it.
	if err := os.WriteFile(filepath.Join(dir, p.ArxivID+".html"), w.Page(&p, sim.HTMLArxiv), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, q.ArxivID+".html"), []byte("<html><body>not a paper</body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	idx, err := archive.Open(archive.Options{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	s.f.Archive = idx
	other := p.ArxivID + "v" + string(rune('0'+p.Version+1))
	if r := s.f.Fetch(context.Background(), other); r.Outcome == fetch.Archived {
		t.Errorf("%s taken from an archive entry holding version %d", other, p.Version)
	}
	if r := s.f.Fetch(context.Background(), q.ArxivID); r.Outcome != fetch.Fetched {
		t.Errorf("%s: outcome %s err %v, want fetched past the archive's non-page", q.ArxivID, r.Outcome, r.Err)
	}
}

// TestFetchRobotsDisallow: a path arXiv's robots.txt disallows is never
// sent; the paper is asked of ar5iv instead, and a paper neither may
// serve fails without being remembered as having no HTML. The interval
// is the crawl delay, as the limiter's own schedule shows.
func TestFetchRobotsDisallow(t *testing.T) {
	w0, _ := sim.NewWorld(sim.WorldConfig{Seed: 7, Targets: 30})
	onArxiv, onAr5iv := targetsBySite(t, w0)
	blockedArxiv, blockedAr5iv := w0.Target(onArxiv[0]).ArxivID, w0.Target(onAr5iv).ArxivID
	const delay = 30 * time.Millisecond
	s := newSimFetcher(t, sim.Options{Robots: map[string]string{
		sim.Arxiv: "User-agent: *\nCrawl-delay: 0.03\nDisallow: /html/" + blockedArxiv + "\nDisallow: /html/" + blockedAr5iv + "\n",
		sim.Ar5iv: sim.Ar5ivRobots,
	}})
	chk, err := robots.New(robots.Config{UserAgent: httpx.UserAgent("test", "")})
	if err != nil {
		t.Fatal(err)
	}
	pace, err := chk.Apply(context.Background(), s.arxiv, 0, false)
	if err != nil || pace.Interval != delay+httpx.Margin(delay) || pace.Source != robots.SourceCrawlDelay {
		t.Fatalf("pace %+v, err %v", pace, err)
	}
	if _, err := chk.Apply(context.Background(), s.ar5iv, 0, false); err != nil {
		t.Fatal(err)
	}

	// Disallowed on arXiv, and ar5iv lacks it (sim's ar5iv answers 307).
	r := s.f.Fetch(context.Background(), blockedArxiv)
	if r.Outcome != fetch.Failed || !errors.Is(r.Err, robots.ErrDisallowed) || errors.Is(r.Err, fetch.ErrNoHTML) {
		t.Fatalf("%s: outcome %s err %v, want a failure by robots.txt", blockedArxiv, r.Outcome, r.Err)
	}
	if _, ok, _ := record.NoHTMLs.Lookup(context.Background(), s.st, blockedArxiv); ok {
		t.Error("a paper robots.txt kept from arXiv was recorded as having no HTML")
	}
	// Disallowed on arXiv, served by ar5iv.
	if r := s.f.Fetch(context.Background(), blockedAr5iv); r.Outcome != fetch.Fetched || r.Source != record.SourceAr5iv {
		t.Errorf("%s: outcome %s source %s err %v, want ar5iv's page", blockedAr5iv, r.Outcome, r.Source, r.Err)
	}
	for _, i := range onArxiv[1:4] {
		if r := s.f.Fetch(context.Background(), w0.Target(i).ArxivID); r.Outcome != fetch.Fetched {
			t.Errorf("%s: %s %v", w0.Target(i).ArxivID, r.Outcome, r.Err)
		}
	}
	for _, c := range s.requested() {
		if strings.HasPrefix(c, sim.Arxiv+" ") && (strings.Contains(c, blockedArxiv) || strings.Contains(c, blockedAr5iv)) {
			t.Errorf("disallowed path sent: %s", c)
		}
	}
	granted := s.grant.times("arxiv")
	if len(granted) < 4 {
		t.Fatalf("%d arXiv grants", len(granted))
	}
	for i := 1; i < len(granted); i++ {
		if gap := granted[i].Sub(granted[i-1]); gap < delay {
			t.Errorf("arXiv grants %d and %d %s apart, under the crawl delay %s", i-1, i, gap, delay)
		}
	}
}

// failingArchive fails the test if it is asked.
type failingArchive struct{ t *testing.T }

func (a failingArchive) Lookup(id string) (*archive.Page, error) {
	a.t.Errorf("archive asked for %s", id)
	return nil, archive.ErrNotFound
}

// TestFetchParseBudget checks that the fetcher's parses ask the parse
// budget for their page's weight: fetched at once, archived pages never
// hold more than the budget in flight, and all of them get through.
func TestFetchParseBudget(t *testing.T) {
	s := newSimFetcher(t, sim.Options{})
	w := s.world
	onArxiv, _ := targetsBySite(t, w)
	dir := t.TempDir()
	var ids []string
	var largest, smallest int64
	for _, i := range onArxiv[:3] {
		p := w.Target(i)
		page := w.Page(&p, sim.HTMLArxiv)
		if err := os.WriteFile(filepath.Join(dir, p.ArxivID+".html"), page, 0o644); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ArxivID)
		c := latexml.Cost(page)
		largest = max(largest, c)
		if smallest == 0 || c < smallest {
			smallest = c
		}
	}
	idx, err := archive.Open(archive.Options{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	s.f.Archive = idx
	s.f.ParseBudget = membudget.New(largest) // one parse at a time, at most
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := s.f.Fetch(context.Background(), id); r.Outcome != fetch.Archived {
				t.Errorf("%s: %s %v", id, r.Outcome, r.Err)
			}
		}()
	}
	wg.Wait()
	now, peak := s.f.ParseBudget.InFlight()
	if now != 0 || peak > largest || peak < smallest {
		t.Errorf("budget of %d: %d in flight after, peak %d; want a peak within it, of a page's weight (%d to %d)", largest, now, peak, smallest, largest)
	}
}
