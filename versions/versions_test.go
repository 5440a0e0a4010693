package versions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/groundwork/curate/internal/testutil"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/parse/arxivmeta"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
	"github.com/groundwork/curate/store"
	"github.com/groundwork/curate/versions"
)

// world is a simulated literature with version histories: cited papers
// revised, a source revised after its target, a target citing in its last
// version a paper newer than it, a target without HTML for v1.
func world(t *testing.T) *sim.World {
	t.Helper()
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 25, Targets: 20, Revisions: true, RevisedSource: []int{3}, LateSource: []int{4}, NoV1HTML: []int{5}})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// papers returns every paper of w on arXiv.
func papers(w *sim.World) []sim.Paper {
	var out []sim.Paper
	for i := range w.NumTargets() {
		out = append(out, w.Target(i))
	}
	for j := range w.Config().Papers {
		if p := w.Background(j); p.ArxivID != "" {
			out = append(out, p)
		}
	}
	return out
}

// want is p's history as the world has it (to the second, as arXiv
// writes dates).
func want(p sim.Paper) []record.PaperVersion {
	var out []record.PaperVersion
	for i, d := range p.Versions {
		out = append(out, record.PaperVersion{Version: i + 1, Date: d.Truncate(time.Second).UTC()})
	}
	return out
}

type env struct {
	w    *sim.World
	oai  *simtest.Server
	repo *oaipmh.Client
	// api is the simulated arXiv API over the world, and apic its client.
	api  *simtest.Server
	apic *arxivapi.Client
	st   *store.Store
	log  *bytes.Buffer
}

func newEnv(t *testing.T, pageSize int) *env {
	t.Helper()
	w := world(t)
	srv := simtest.ServeOptions(t, sim.OAIPMH, w, sim.Options{OAIPageSize: pageSize})
	api := simtest.Serve(t, sim.ArxivAPI, w)
	hc, err := httpx.New(httpx.Config{UserAgent: "versions-test", RetryMax: 2, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond},
		oaipmh.ServiceConfig(srv.URL+sim.OAIPath, time.Microsecond), arxivapi.ServiceConfig(api.URL, time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := hc.Service(oaipmh.ServiceName)
	c, err := oaipmh.New(svc, oaipmh.Options{})
	if err != nil {
		t.Fatal(err)
	}
	asvc, _ := hc.Service(arxivapi.ServiceName)
	ac, err := arxivapi.New(asvc, arxivapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &env{w: w, oai: srv, repo: c, api: api, apic: ac, st: st, log: &bytes.Buffer{}}
}

func (e *env) resolver(t *testing.T, snap versions.Snapshot, oai versions.Repository) *versions.Resolver {
	t.Helper()
	cfg := versions.Config{Snapshot: snap, Store: e.st, Logger: slog.New(slog.NewTextHandler(e.log, nil))}
	if oai != nil {
		cfg.OAI = oai
	}
	r, err := versions.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// snapshot writes a metadata snapshot of ps (and extra lines) and opens it.
func snapshot(t *testing.T, ps []sim.Paper, extra ...string) (*arxivmeta.Snapshot, string) {
	t.Helper()
	var b strings.Builder
	for _, p := range ps {
		var vs []map[string]string
		for i, d := range p.Versions {
			vs = append(vs, map[string]string{"version": fmt.Sprintf("v%d", i+1), "created": d.UTC().Format("Mon, 2 Jan 2006 15:04:05") + " GMT"})
		}
		line, _ := json.Marshal(map[string]any{"id": p.ArxivID, "title": p.Title, "versions": vs, "update_date": p.Updated.Format(time.DateOnly)})
		b.Write(line)
		b.WriteByte('\n')
	}
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "arxiv-metadata-oai-snapshot.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := arxivmeta.Open(context.Background(), path, arxivmeta.Options{IndexDir: filepath.Join(dir, "index")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// TestSnapshotFirst: what the snapshot holds is read from it without a
// request; a paper it lacks falls back to OAI-PMH once, says so, and is
// stored, so a second lookup asks nothing.
func TestSnapshotFirst(t *testing.T) {
	e := newEnv(t, 50)
	all := papers(e.w)
	missing := all[len(all)-1]
	snap, _ := snapshot(t, all[:len(all)-1])
	r := e.resolver(t, snap, e.repo)
	ctx := context.Background()
	for _, p := range all[:len(all)-1] {
		l, err := r.Versions(ctx, p.IDv())
		if err != nil {
			t.Fatal(err)
		}
		if l.Fallback != "" || l.Asked || l.Versions.From != record.VersionsFromSnapshot || !slices.Equal(l.Versions.Versions, want(p)) {
			t.Errorf("%s: %+v, want %v from the snapshot", p.ArxivID, l, want(p))
		}
	}
	if n := e.oai.Stats().Requests; n != 0 {
		t.Errorf("%d requests for papers the snapshot holds", n)
	}
	l, err := r.Versions(ctx, missing.ArxivID)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Asked || l.Fallback != "not in the arXiv metadata snapshot" || l.Versions.From != record.VersionsFromGetRecord || !slices.Equal(l.Versions.Versions, want(missing)) {
		t.Errorf("missing paper: %+v", l)
	}
	if !strings.Contains(e.log.String(), "not in the arXiv metadata snapshot; looking in the store, then asking arXiv") || !strings.Contains(e.log.String(), missing.ArxivID) {
		t.Errorf("the fallback is not logged: %s", e.log)
	}
	if calls := e.oai.Calls(); len(calls) != 1 || calls[0].Query().Get("verb") != "GetRecord" || calls[0].Query().Get("metadataPrefix") != "arXivRaw" {
		t.Errorf("requests %v, want one GetRecord in arXivRaw", calls)
	}
	if l, err := r.Versions(ctx, missing.ArxivID); err != nil || l.Asked || !slices.Equal(l.Versions.Versions, want(missing)) {
		t.Errorf("second lookup: %+v %v, want the stored history", l, err)
	}
	if n := e.oai.Stats().Requests; n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestUnusableHistories: a snapshot line without v1 falls back to
// OAI-PMH (saying why); without OAI-PMH it is an error naming the file's
// line and wrapping record.ErrNoV1. A paper arXiv has no record of, and
// one no source may give, are errors saying so.
func TestUnusableHistories(t *testing.T) {
	e := newEnv(t, 50)
	t0 := e.w.Target(0)
	noV1 := fmt.Sprintf(`{"id":%q,"versions":[{"version":"v2","created":"Mon, 1 Jan 2024 10:00:00 GMT"}]}`, t0.ArxivID)
	snap, path := snapshot(t, nil, noV1)
	ctx := context.Background()

	l, err := e.resolver(t, snap, e.repo).Versions(ctx, t0.ArxivID)
	if err != nil || !l.Asked || !strings.Contains(l.Fallback, "no v1") || !slices.Equal(l.Versions.Versions, want(t0)) {
		t.Errorf("no v1 in the snapshot, OAI-PMH asked: %+v %v", l, err)
	}
	// Offline, in a store without the fallback's answer.
	e2 := newEnv(t, 50)
	_, err = e2.resolver(t, snap, nil).Versions(ctx, t0.ArxivID)
	if !errors.Is(err, record.ErrNoV1) || !strings.Contains(err.Error(), path+" line 1") {
		t.Errorf("no v1 offline: %v, want ErrNoV1 naming %s line 1", err, path)
	}
	if _, err := e2.resolver(t, nil, e2.repo).Versions(ctx, "2401.49999"); !errors.Is(err, versions.ErrUnknownPaper) || !strings.Contains(err.Error(), "2401.49999") {
		t.Errorf("unknown paper: %v", err)
	}
	if _, err := e2.resolver(t, nil, nil).Versions(ctx, t0.ArxivID); !errors.Is(err, versions.ErrNoSource) {
		t.Errorf("offline, nothing stored: %v", err)
	}
	if _, err := e2.resolver(t, nil, nil).Versions(ctx, "not an id"); err == nil || !strings.Contains(err.Error(), `"not an id"`) {
		t.Errorf("not an id: %v", err)
	}
}

// TestGetRecordNoV1: an OAI-PMH record without v1 is an error wrapping
// record.ErrNoV1; nothing is stored.
func TestGetRecordNoV1(t *testing.T) {
	c := sim.NewCorpus()
	c.AddOAIRecord("arXivRaw", sim.OAIRecord{ID: "2603.00002", Datestamp: time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC), XML: `<record>
      <header><identifier>oai:arXiv.org:2603.00002</identifier><datestamp>2026-03-04</datestamp></header>
      <metadata><arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/"><id>2603.00002</id>
        <version version="v2"><date>Wed, 4 Mar 2026 09:30:00 GMT</date></version><title>T</title></arXivRaw></metadata></record>`})
	srv := simtest.Serve(t, sim.OAIPMH, c)
	hc, _ := httpx.New(httpx.Config{UserAgent: "versions-test"}, oaipmh.ServiceConfig(srv.URL+sim.OAIPath, time.Microsecond))
	svc, _ := hc.Service(oaipmh.ServiceName)
	repo, _ := oaipmh.New(svc, oaipmh.Options{})
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, _ := versions.New(versions.Config{OAI: repo, Store: st})
	if _, err := r.Versions(context.Background(), "2603.00002"); !errors.Is(err, record.ErrNoV1) || !strings.Contains(err.Error(), "2603.00002") {
		t.Errorf("no v1: %v", err)
	}
	if has, err := record.PaperVersionSets.Has(context.Background(), st, "2603.00002"); has || err != nil {
		t.Error("a history without v1 was stored")
	}
}

// TestHarvest harvests the world in arXivRaw, a page at a time: every
// history stored as the world has it, the progress after each page; a
// complete harvest is not asked again, and lookups then ask nothing.
func TestHarvest(t *testing.T) {
	e := newEnv(t, 7)
	r := e.resolver(t, nil, e.repo)
	ctx := context.Background()
	h, err := r.Harvest(ctx, oaipmh.Query{Set: "cs"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cs []sim.Paper
	for _, p := range papers(e.w) {
		if slices.ContainsFunc(p.Categories, func(c string) bool { return strings.HasPrefix(c, "cs.") }) {
			cs = append(cs, p)
		}
	}
	pages := (len(cs) + 6) / 7
	if !h.Complete || h.Records != len(cs) || h.Stored != len(cs) || h.Pages != pages || h.Token != "" || h.ResponseDate.IsZero() {
		t.Errorf("harvest %+v, want %d records on %d pages", h, len(cs), pages)
	}
	if n := e.oai.Stats().Requests; n != pages {
		t.Errorf("%d requests, want %d", n, pages)
	}
	for _, p := range cs {
		v, ok, err := record.PaperVersionSets.Lookup(ctx, e.st, p.ArxivID)
		if err != nil || !ok || v.From != record.VersionsFromHarvest || !slices.Equal(v.Versions, want(p)) {
			t.Errorf("%s: stored %+v %v %v, want %v", p.ArxivID, v, ok, err, want(p))
		}
	}
	again, err := r.Harvest(ctx, oaipmh.Query{Set: "cs"}, nil)
	if err != nil || again != h {
		t.Errorf("second harvest %+v %v, want the stored one", again, err)
	}
	for _, p := range cs {
		if l, err := r.Versions(ctx, p.ArxivID); err != nil || l.Asked {
			t.Errorf("%s after the harvest: %+v %v", p.ArxivID, l, err)
		}
	}
	if n := e.oai.Stats().Requests; n != pages {
		t.Errorf("%d requests after the harvest, want still %d", n, pages)
	}
}

// failAfter is a repository whose ListPage fails once n pages were read.
type failAfter struct {
	versions.Repository
	n, pages int
}

func (f *failAfter) ListPage(ctx context.Context, q oaipmh.Query, token string) (*oaipmh.Page, error) {
	if f.pages >= f.n {
		return nil, errors.New("the connection dropped")
	}
	f.pages++
	return f.Repository.ListPage(ctx, q, token)
}

// TestHarvestResume: a harvest cut after two pages goes on from the
// third; one whose stored token the repository refuses starts again
// from the first page.
func TestHarvestResume(t *testing.T) {
	e := newEnv(t, 7)
	ctx := context.Background()
	q := oaipmh.Query{Set: "cs"}
	h, err := e.resolver(t, nil, &failAfter{Repository: e.repo, n: 2}).Harvest(ctx, q, nil)
	if err == nil || !strings.Contains(err.Error(), "the connection dropped") || h.Pages != 2 || h.Token == "" || h.Complete {
		t.Fatalf("cut harvest: %+v %v", h, err)
	}
	stored, _, _ := record.OAIHarvests.Lookup(ctx, e.st, "oai-harvest:"+oaipmh.Query{Set: "cs", MetadataPrefix: "arXivRaw"}.String())
	if stored == nil || stored.Token != h.Token || stored.Pages != 2 {
		t.Fatalf("stored progress %+v, want two pages and the token", stored)
	}
	before := e.oai.Stats().Requests
	done, err := e.resolver(t, nil, e.repo).Harvest(ctx, q, nil)
	if err != nil || !done.Complete {
		t.Fatal(err)
	}
	first := e.oai.CallsTo(sim.OAIPath)[before]
	if first.Query().Get("resumptionToken") != h.Token {
		t.Errorf("the resumed harvest asked %v first, want the stored token", first.Query())
	}
	fresh := newEnv(t, 7)
	whole, err := fresh.resolver(t, nil, fresh.repo).Harvest(ctx, q, nil)
	if err != nil || done.Records != whole.Records || done.Pages != whole.Pages || done.Stored != whole.Stored {
		t.Errorf("resumed %+v, whole %+v %v", done, whole, err)
	}
	if n := e.oai.Stats().Requests - before; n != whole.Pages-2 {
		t.Errorf("the resumed harvest sent %d requests, want %d", n, whole.Pages-2)
	}

	// An expired token: the harvest starts again.
	e3 := newEnv(t, 7)
	stale := record.OAIHarvest{Query: oaipmh.Query{Set: "cs", MetadataPrefix: "arXivRaw"}.String(), Token: "expired", Pages: 3, Started: time.Now()}
	if _, err := record.OAIHarvests.Put(ctx, e3.st, "oai-harvest:"+stale.Query, &stale, nil); err != nil {
		t.Fatal(err)
	}
	redone, err := e3.resolver(t, nil, e3.repo).Harvest(ctx, q, nil)
	if err != nil || !redone.Complete || redone.Records != whole.Records || redone.Pages != whole.Pages {
		t.Errorf("after a refused token: %+v %v, want %+v", redone, err, whole)
	}
	if calls := e3.oai.Calls(); len(calls) != whole.Pages+1 || calls[0].Query().Get("resumptionToken") != "expired" || calls[1].Query().Get("set") != "cs" {
		t.Errorf("requests %d, want the refused token then %d pages", len(calls), whole.Pages)
	}
}

// queries are the lookups of ids as targets (no cutoff to settle).
func queries(ids ...string) []versions.Query {
	var out []versions.Query
	for _, id := range ids {
		out = append(out, versions.Query{ID: id})
	}
	return out
}

// TestHarvestCovers: a harvest limited to the papers wanted stores those
// only; a paper it did not cover (outside its dates) is asked with
// GetRecord, one request each, and Plan counts them before any request.
func TestHarvestCovers(t *testing.T) {
	e := newEnv(t, 7)
	ctx := context.Background()
	r := e.resolver(t, nil, e.repo)
	all := papers(e.w)
	var ids []string
	for _, p := range all {
		ids = append(ids, p.ArxivID)
	}
	// Records changed from 2024 on: the targets and the revised papers.
	from := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	wanted := map[string]bool{}
	for _, id := range ids[:len(ids)/2] {
		wanted[id] = true
	}
	h, err := r.Harvest(ctx, oaipmh.Query{From: from}, func(id string) bool { return wanted[id] })
	if err != nil {
		t.Fatal(err)
	}
	var covered, uncovered []string
	for _, p := range all {
		switch {
		case !wanted[p.ArxivID]:
		case !p.Updated.Before(from):
			covered = append(covered, p.ArxivID)
		default:
			uncovered = append(uncovered, p.ArxivID)
		}
	}
	if len(covered) == 0 || len(uncovered) == 0 {
		t.Fatalf("%d covered, %d not: the test proves nothing", len(covered), len(uncovered))
	}
	if h.Stored != len(covered) || h.Records <= h.Stored {
		t.Errorf("harvest %+v: stored %d, want the %d wanted papers it lists", h, h.Stored, len(covered))
	}
	plan, err := r.Plan(ctx, queries(append(slices.Clone(ids[:len(ids)/2]), "bad id", ids[0])...))
	if err != nil || plan.Local != len(covered) || len(plan.GetRecord) != len(uncovered) || len(plan.API) != 0 || !slices.Equal(plan.Invalid, []string{"bad id"}) {
		t.Errorf("plan %+v %v, want %d stored, %d to ask", plan, err, len(covered), len(uncovered))
	}
	before := e.oai.Stats().Requests
	for _, id := range ids[:len(ids)/2] {
		if _, err := r.Versions(ctx, id); err != nil {
			t.Error(err)
		}
	}
	getRecords := 0
	for _, c := range e.oai.Calls()[before:] {
		if c.Query().Get("verb") == "GetRecord" {
			getRecords++
		}
	}
	if getRecords != len(uncovered) || e.oai.Stats().Requests-before != len(uncovered) {
		t.Errorf("%d GetRecords (%d requests), want one for each of the %d papers the harvest did not cover", getRecords, e.oai.Stats().Requests-before, len(uncovered))
	}
}

// clock is a settable clock for a Resolver.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time         { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time)        { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (e *env) requests() (api, oai int) { return e.api.Stats().Requests, e.oai.Stats().Requests }

// TestRefresh: a history stored as of T is exact for any cutoff on or
// before T (a version submitted later is dated later), so it is asked
// for again only when a cutoff after T needs it: a new target, later
// than the one it was read for, citing the same paper. Read again, it
// is stored as of the new reading, and a cutoff after the clock (a
// target dated ahead of it) does not make this run ask twice.
func TestRefresh(t *testing.T) {
	e := newEnv(t, 50)
	ctx := context.Background()
	var p sim.Paper
	for _, q := range papers(e.w) {
		if q.Version == 2 && q.Versions[1].Sub(q.Versions[0]) > 60*24*time.Hour {
			p = q
			break
		}
	}
	if p.Version == 0 {
		t.Fatal("the world has no paper revised once, months later")
	}
	v1, v2 := p.Versions[0].Truncate(time.Second), p.Versions[1].Truncate(time.Second)
	// Read a month after v1, before v2 existed: v1 alone.
	readAt := v1.AddDate(0, 1, 0)
	old := record.PaperVersions{ID: p.ArxivID, Versions: want(p)[:1], From: record.VersionsFromGetRecord, AsOf: readAt}
	if _, err := record.PaperVersionSets.Put(ctx, e.st, p.ArxivID, &old, nil); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: v2.AddDate(1, 0, 0)}
	r, err := versions.New(versions.Config{API: e.apic, OAI: e.repo, Store: e.st, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	pin := func(cutoff time.Time) (int, versions.Lookup) {
		t.Helper()
		l := r.Resolve(ctx, []versions.Query{{ID: p.ArxivID, Cutoff: cutoff}})[0]
		if l.Err != nil {
			t.Fatalf("cutoff %s: %v", cutoff, l.Err)
		}
		pn, err := knowledgecut.PinAt(l.Versions, cutoff)
		if err != nil {
			t.Fatalf("cutoff %s: %v", cutoff, err)
		}
		return pn.Version, l
	}
	for _, tt := range []struct {
		name     string
		cutoff   time.Time
		version  int
		asked    bool
		api, oai int // requests so far
	}{
		{"a cutoff before the reading", readAt.Add(-time.Hour), 1, false, 0, 0},
		{"at the reading exactly", readAt, 1, false, 0, 0},
		{"a cutoff after the reading, before v2", readAt.Add(24 * time.Hour), 1, true, 1, 0},
		{"now stored as of the clock: a later cutoff", v2.Add(time.Hour), 2, false, 1, 0},
		{"a cutoff after the clock: read in this run already", c.Now().AddDate(0, 1, 0), 2, false, 1, 0},
	} {
		v, l := pin(tt.cutoff)
		api, oai := e.requests()
		if v != tt.version || l.Asked != tt.asked || api != tt.api || oai != tt.oai {
			t.Errorf("%s: v%d asked %v, %d API and %d OAI-PMH requests; want v%d asked %v, %d and %d", tt.name, v, l.Asked, api, oai, tt.version, tt.asked, tt.api, tt.oai)
		}
	}
	stored, _, _ := record.PaperVersionSets.Get(ctx, e.st, p.ArxivID)
	if !slices.Equal(stored.Versions, want(p)) || stored.Partial || !stored.AsOf.Equal(c.Now()) || stored.From != record.VersionsFromArxivAPI {
		t.Errorf("stored after the refresh: %+v, want %v as of %s from the arXiv API", stored, want(p), c.Now())
	}
	// A later run, its clock a year on: the cutoff after the last reading
	// asks again.
	later := c.Now().AddDate(0, 6, 0)
	c.Set(later.AddDate(0, 6, 0))
	r, _ = versions.New(versions.Config{API: e.apic, OAI: e.repo, Store: e.st, Now: c.Now})
	if v, l := pin(later); v != 2 || !l.Asked {
		t.Errorf("a later run, a cutoff after the last reading: v%d asked %v, want v2 asked again", v, l.Asked)
	}
	if api, _ := e.requests(); api != 2 {
		t.Errorf("%d API requests, want 2", api)
	}
}

// TestArxivAPIFirst: with nothing held, the arXiv API is asked first,
// for many papers at once (a hundred a request): an entry settles a
// paper with one or two versions at any cutoff, and one of three or more
// whenever the cutoff is before its v1 or on or after its latest
// version's date, with no OAI-PMH request; the history of v3 or later
// read from it is stored partial (v1 and the latest). Only a cutoff
// strictly between v1's and the latest's dates of such a paper asks
// OAI-PMH (one GetRecord each), whose whole history is then stored.
// Without OAI-PMH those are ErrUnsettled, keeping what the entry gave.
func TestArxivAPIFirst(t *testing.T) {
	ctx := context.Background()
	var few, many []sim.Paper // one or two versions; three or more
	for _, p := range papers(world(t)) {
		if p.Version >= 3 {
			many = append(many, p)
		} else {
			few = append(few, p)
		}
	}
	if len(many) == 0 || len(few) < 20 {
		t.Fatalf("%d papers of three versions or more, %d of fewer: the test proves nothing", len(many), len(few))
	}
	at := func(ps []sim.Paper, cutoff func(sim.Paper) time.Time) []versions.Query {
		var qs []versions.Query
		for _, p := range ps {
			qs = append(qs, versions.Query{ID: p.ArxivID, Cutoff: cutoff(p)})
		}
		return qs
	}
	v1 := func(p sim.Paper) time.Time { return p.Versions[0].Truncate(time.Second) }
	latest := func(p sim.Paper) time.Time { return p.Versions[len(p.Versions)-1].Truncate(time.Second) }
	between := func(p sim.Paper) time.Time { return v1(p).Add(latest(p).Sub(v1(p)) / 2) }
	all := append(slices.Clone(few), many...)

	e := newEnv(t, 50)
	r, _ := versions.New(versions.Config{API: e.apic, OAI: e.repo, Store: e.st})
	for _, tt := range []struct {
		name     string
		qs       []versions.Query
		api, oai int // requests this step
	}{
		{"every paper at a cutoff between its v1 and latest dates, one or two versions", at(few, between), (len(few) + 99) / 100, 0},
		{"three or more, at their latest's date", at(many, latest), 1, 0},
		{"three or more, before their v1", at(many, func(p sim.Paper) time.Time { return v1(p).Add(-time.Hour) }), 0, 0},
		{"three or more, between: OAI-PMH", at(many, between), 0, len(many)},
		{"everything again, held", at(all, between), 0, 0},
	} {
		api0, oai0 := e.requests()
		for i, l := range r.Resolve(ctx, tt.qs) {
			p, _ := e.w.ByArxiv(tt.qs[i].ID)
			if l.Err != nil {
				t.Errorf("%s: %s: %v", tt.name, p.ArxivID, l.Err)
				continue
			}
			wantV := want(p)
			if p.Version >= 3 && tt.oai == 0 && !strings.HasPrefix(tt.name, "everything") {
				wantV = []record.PaperVersion{wantV[0], wantV[len(wantV)-1]}
			}
			if !slices.Equal(l.Versions.Versions, wantV) || l.Versions.Partial != (len(wantV) < p.Version) {
				t.Errorf("%s: %s: %v partial %v, want %v", tt.name, p.ArxivID, l.Versions.Versions, l.Versions.Partial, wantV)
			}
			pin, err := knowledgecut.PinAt(l.Versions, tt.qs[i].Cutoff)
			full, _ := knowledgecut.PinAt(record.PaperVersions{ID: p.ArxivID, Versions: want(p)}, tt.qs[i].Cutoff)
			if err != nil || pin != full {
				t.Errorf("%s: %s: pin %+v %v, want %+v", tt.name, p.ArxivID, pin, err, full)
			}
		}
		api, oai := e.requests()
		if api-api0 != tt.api || oai-oai0 != tt.oai {
			t.Errorf("%s: %d arXiv API and %d OAI-PMH requests, want %d and %d", tt.name, api-api0, oai-oai0, tt.api, tt.oai)
		}
	}
	for _, c := range e.oai.Calls() {
		id := strings.TrimPrefix(c.Query().Get("identifier"), "oai:arXiv.org:")
		if p, _ := e.w.ByArxiv(id); c.Query().Get("verb") != "GetRecord" || p.Version < 3 {
			t.Errorf("OAI-PMH asked %s for %s (%d versions)", c.Query().Get("verb"), id, p.Version)
		}
	}

	// Without OAI-PMH: unsettled, the entry's history kept.
	e2 := newEnv(t, 50)
	r, _ = versions.New(versions.Config{API: e2.apic, Store: e2.st})
	for i, l := range r.Resolve(ctx, at(many, between)) {
		p := many[i]
		if !errors.Is(l.Err, versions.ErrUnsettled) || !errors.Is(l.Err, knowledgecut.ErrUnknownGap) || !strings.Contains(l.Err.Error(), p.ArxivID) ||
			!l.Versions.Partial || len(l.Versions.Versions) != 2 || !l.Asked {
			t.Errorf("%s without OAI-PMH: %+v", p.ArxivID, l)
		}
	}
	if _, oai := e2.requests(); oai != 0 {
		t.Errorf("%d OAI-PMH requests without OAI-PMH", oai)
	}

	// A target's entry stored by the citegraph feed: no request.
	e3 := newEnv(t, 50)
	tgt := e3.w.Target(1)
	entry := record.ArxivEntry{ID: tgt.ArxivID, Version: tgt.Version, Published: tgt.Published.Truncate(time.Second), Updated: tgt.Updated.Truncate(time.Second)}
	if _, err := record.ArxivMetas.Put(ctx, e3.st, tgt.ArxivID, &record.ArxivMeta{Found: true, CheckedAt: time.Now().UTC().Format(time.RFC3339), Entry: &entry}, nil); err != nil {
		t.Fatal(err)
	}
	r, _ = versions.New(versions.Config{API: e3.apic, OAI: e3.repo, Store: e3.st})
	if l, err := r.Versions(ctx, tgt.ArxivID); err != nil || l.Asked || l.Versions.From != record.VersionsFromArxivAPI || l.Versions.Versions[0] != want(tgt)[0] {
		t.Errorf("a target's stored entry: %+v %v", l, err)
	}
	if api, oai := e3.requests(); api+oai != 0 {
		t.Errorf("%d requests for a target whose entry is stored", api+oai)
	}
}

// TestRepositoryRefusals: an empty harvest (noRecordsMatch) is complete
// with nothing stored; a repository that refuses arXivRaw
// (cannotDisseminateFormat) is an error naming the code, and nothing is
// stored.
func TestRepositoryRefusals(t *testing.T) {
	e := newEnv(t, 7)
	ctx := context.Background()
	r := e.resolver(t, nil, e.repo)
	h, err := r.Harvest(ctx, oaipmh.Query{From: time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)}, nil)
	if err != nil || !h.Complete || h.Records != 0 || h.Pages != 1 {
		t.Errorf("empty harvest: %+v %v", h, err)
	}
	e.oai.Intercept(func(w http.ResponseWriter, req *http.Request, _ sim.Call) bool {
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2026-07-01T00:00:00Z</responseDate>`+
			`<request>https://oaipmh.arxiv.org/oai</request><error code="cannotDisseminateFormat">No arXivRaw today.</error></OAI-PMH>`)
		return true
	})
	p := e.w.Target(1)
	if _, err := r.Versions(ctx, p.ArxivID); err == nil || !strings.Contains(err.Error(), "cannotDisseminateFormat") || !strings.Contains(err.Error(), p.ArxivID) {
		t.Errorf("refused format: %v", err)
	}
	if testutil.Has(t)(record.PaperVersionSets.Has(ctx, e.st, p.ArxivID)) {
		t.Error("a history was stored from a refusal")
	}
	if _, err := r.Harvest(ctx, oaipmh.Query{Set: "math"}, nil); err == nil || !strings.Contains(err.Error(), "cannotDisseminateFormat") {
		t.Errorf("refused harvest: %v", err)
	}
}

// TestConcurrentLookups: targets worked on at once often share a paper
// (one is another's source, or both cite it); lookups of its history at
// the same time ask OAI-PMH once, the others reading what it stored.
// (Found by TestKnowledgeCutBadInputs under -count=3 on a loaded machine:
// two GetRecord requests for one paper.)
func TestConcurrentLookups(t *testing.T) {
	e := newEnv(t, 50)
	p := papers(e.w)[0]
	r := e.resolver(t, nil, e.repo)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := r.Versions(ctx, p.ArxivID)
			if err == nil && !slices.Equal(l.Versions.Versions, want(p)) {
				err = fmt.Errorf("history %v, want %v", l.Versions.Versions, want(p))
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := e.oai.Stats().Requests; n != 1 {
		t.Errorf("%d requests for one paper looked up 8 times at once, want 1", n)
	}
}

// TestArxivAPIDown: once the arXiv API fails past its retries, the
// papers it was asked for are asked of OAI-PMH instead (the next source),
// and the rest of the run does not ask the API again; without OAI-PMH
// they fail (a request that failed: the next run asks again), each
// later lookup at once.
func TestArxivAPIDown(t *testing.T) {
	ctx := context.Background()
	for _, withOAI := range []bool{true, false} {
		e := newEnv(t, 50)
		e.api.SetFaults(sim.Faults{P5xx: 1})
		cfg := versions.Config{API: e.apic, Store: e.st}
		if withOAI {
			cfg.OAI = e.repo
		}
		r, _ := versions.New(cfg)
		ps := papers(e.w)
		for round, batch := range [][]sim.Paper{ps[:3], ps[3:5]} {
			var qs []versions.Query
			for _, p := range batch {
				qs = append(qs, versions.Query{ID: p.ArxivID, Cutoff: p.Versions[0].Add(time.Hour)})
			}
			for i, l := range r.Resolve(ctx, qs) {
				p := batch[i]
				switch {
				case withOAI && (l.Err != nil || !slices.Equal(l.Versions.Versions, want(p)) || l.Versions.From != record.VersionsFromGetRecord):
					t.Errorf("round %d, API down, OAI-PMH up: %s: %+v", round, p.ArxivID, l)
				case !withOAI && (l.Err == nil || !strings.Contains(l.Err.Error(), "arXiv API")):
					t.Errorf("round %d, API down, no OAI-PMH: %s: %v, want the API's failure", round, p.ArxivID, l.Err)
				}
			}
		}
		api, oai := e.requests()
		if wantOAI := map[bool]int{true: 5, false: 0}[withOAI]; api != 3 || oai != wantOAI {
			// One lookup, tried three times (RetryMax 2); then not again.
			t.Errorf("OAI-PMH %v: %d API and %d OAI-PMH requests, want 3 (one lookup and its retries) and %d", withOAI, api, oai, wantOAI)
		}
	}
}
