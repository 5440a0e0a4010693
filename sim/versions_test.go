package sim_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/groundwork/curate/client/oaipmh"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/conformance"
)

// versionsConfig is a world of version histories: cited papers revised,
// target 5's source revised after it, target 6 citing (in its last
// version) a paper that came after it, target 7 without HTML for v1.
func versionsConfig() sim.WorldConfig {
	return sim.WorldConfig{Seed: 25, Targets: 30, Revisions: true, RevisedSource: []int{5}, LateSource: []int{6}, NoV1HTML: []int{7}}
}

// TestWorldVersions checks the version histories a world gives: the
// papers are those of the same world without them, but for their
// versions; a source revised after its target cites it from then on; a
// target's last version cites a paper first published after its v1; a
// target without HTML for v1.
func TestWorldVersions(t *testing.T) {
	plain := newWorld(t, sim.WorldConfig{Seed: 25, Targets: 30})
	w := newWorld(t, versionsConfig())
	several := 0
	for j := range w.Config().Papers {
		a, b := plain.Background(j), w.Background(j)
		if a.Title != b.Title || a.ArxivID != b.ArxivID || !a.Published.Equal(b.Published) || a.HTML != b.HTML {
			t.Fatalf("background %d differs beyond its versions: %+v / %+v", j, a, b)
		}
		if b.ArxivID == "" {
			continue
		}
		if len(b.Versions) != b.Version || !b.Versions[0].Equal(b.Published) || !b.Versions[b.Version-1].Equal(b.Updated) {
			t.Errorf("background %d: versions %v, version %d, published %s, updated %s", j, b.Versions, b.Version, b.Published, b.Updated)
		}
		for k := 1; k < len(b.Versions); k++ {
			if !b.Versions[k].After(b.Versions[k-1]) {
				t.Errorf("background %d: v%d not after v%d", j, k+1, k)
			}
		}
		if b.Version > 1 {
			several++
		}
	}
	if several == 0 {
		t.Error("no cited paper has several versions")
	}

	// Target 5's first source on arXiv is revised after it and cites it then.
	t5 := w.Target(5)
	var src sim.Paper
	for _, r := range w.References(&t5) {
		if r.Role == sim.RoleSource && r.Paper.ArxivID != "" && !r.Paper.IsTarget() {
			src = w.Background(r.Paper.Index)
			break
		}
	}
	if src.Version < 2 || !src.Updated.After(t5.Published) {
		t.Fatalf("revised source %s: versions %v, target v1 %s", src.ArxivID, src.Versions, t5.Published)
	}
	citesT5 := func(p sim.Paper) bool {
		return slices.ContainsFunc(w.References(&p), func(r sim.Ref) bool { return r.Paper.IsTarget() && r.Paper.Index == 5 })
	}
	v1, _ := src.AsOf(1)
	if !citesT5(src) || citesT5(v1) {
		t.Errorf("revised source: its latest version cites target 5 %v, its v1 %v", citesT5(src), citesT5(v1))
	}

	// Target 6's last version cites, as a source, a paper newer than its v1.
	t6 := w.Target(6)
	late := func(p sim.Paper) []sim.Ref {
		var out []sim.Ref
		for _, r := range w.References(&p) {
			if r.Paper.Published.After(t6.Published) {
				out = append(out, r)
			}
		}
		return out
	}
	first, _ := t6.AsOf(1)
	if l := late(t6); len(l) != 1 || l[0].Role != sim.RoleSource || !t6.Updated.After(l[0].Paper.Published) || len(late(first)) != 0 {
		t.Errorf("late source: %+v in the last version (dated %s), %d in v1", l, t6.Updated, len(late(first)))
	}

	// Target 7 has a v2 and HTML for it only; other versions are served
	// as they stood.
	t7 := w.Target(7)
	if t7.Version < 2 || t7.HTML != sim.HTMLArxiv {
		t.Fatalf("target 7: version %d, HTML %q", t7.Version, t7.HTML)
	}
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{t7.ArxivID, true}, {t7.ArxivID + "v1", false}, {t7.ArxivID + "v2", true}, {t7.ArxivID + "v" + strconv.Itoa(t7.Version+1), false},
		{t6.ArxivID + "v1", t6.HTML == sim.HTMLArxiv}, {src.ArxivID + "v1", src.HTML == sim.HTMLArxiv},
	} {
		id, _ := arxiv.Parse(tc.id)
		if _, ok := w.HTML(sim.HTMLArxiv, id); ok != tc.ok {
			t.Errorf("arXiv HTML of %s: %v, want %v", tc.id, ok, tc.ok)
		}
	}
	// A world without histories serves the latest version only.
	for i := range plain.NumTargets() {
		if p := plain.Target(i); p.Version > 1 && p.HTML == sim.HTMLArxiv {
			id, _ := arxiv.Parse(p.ArxivID + "v1")
			if _, ok := plain.HTML(sim.HTMLArxiv, id); ok {
				t.Errorf("a world without histories serves %sv1", p.ArxivID)
			}
			break
		}
	}
}

// TestWorldVersionsServed reads the histories as curate will: arXivRaw
// over OAI-PMH gives every paper's versions and dates as the world has
// them; arXiv's HTML of an older version is that version's page.
func TestWorldVersionsServed(t *testing.T) {
	w := newWorld(t, versionsConfig())
	srv := start(t, w, sim.Options{Services: []string{sim.Arxiv, sim.OAIPMH}, OAIPageSize: 25})
	hc, err := httpx.New(httpx.Config{UserAgent: "sim-test"}, oaipmh.ServiceConfig(srv.URL(sim.OAIPMH)+sim.OAIPath, time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := hc.Service(oaipmh.ServiceName)
	c, _ := oaipmh.New(svc, oaipmh.Options{})
	n := 0
	_, err = c.ListRecords(context.Background(), oaipmh.Query{MetadataPrefix: "arXivRaw"}, func(r oaipmh.Record) error {
		p, ok := w.ByArxiv(r.ID)
		if !ok {
			t.Errorf("record %s of no paper", r.ID)
			return nil
		}
		var got []time.Time
		for _, v := range r.Meta.Versions {
			got = append(got, v.Date)
		}
		want := make([]time.Time, len(p.Versions))
		for i, d := range p.Versions {
			want[i] = d.Truncate(time.Second)
		}
		if !slices.EqualFunc(got, want, time.Time.Equal) {
			t.Errorf("%s: versions %v, the world has %v", r.ID, got, want)
		}
		n++
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("%d records: %v", n, err)
	}
	t6 := w.Target(6)
	if t6.HTML != sim.HTMLArxiv {
		t.Fatal("target 6 is not on arXiv's HTML in this world: pick another seed")
	}
	get := func(path string) int {
		resp, err := http.Get(srv.URL(sim.Arxiv) + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if get("/html/"+t6.ArxivID+"v1") != 200 || get("/html/"+w.Target(7).ArxivID+"v1") != 404 {
		t.Error("versioned pages")
	}
}

// TestConformanceWorldVersions runs the conformance suite on a world of
// version histories, its versioned pages among the probes.
func TestConformanceWorldVersions(t *testing.T) {
	w := newWorld(t, versionsConfig())
	var srv *sim.Servers
	s := &conformance.Suite{
		Service: func(name string) *sim.Service { return srv.Service(name) },
		Start: func(t *testing.T) map[string]string {
			// The arXiv API too: its entries must agree with the
			// histories (TestAtomVersions).
			names := []string{sim.Arxiv, sim.OAIPMH, sim.ArxivAPI}
			srv = start(t, w, sim.Options{Services: names, OAIPageSize: 9})
			return map[string]string{sim.Arxiv: srv.URL(sim.Arxiv), sim.OAIPMH: srv.URL(sim.OAIPMH), sim.ArxivAPI: srv.URL(sim.ArxivAPI)}
		},
	}
	for i := range w.NumTargets() {
		p := w.Target(i)
		if p.HTML != sim.HTMLArxiv {
			continue
		}
		s.ArxivPages = append(s.ArxivPages, p.IDv())
		for v := 1; v < p.Version; v++ {
			if i == 7 && v == 1 {
				s.ArxivNoHTML = append(s.ArxivNoHTML, p.ArxivID+"v1")
				continue
			}
			s.ArxivOlder = append(s.ArxivOlder, p.ArxivID+"v"+strconv.Itoa(v))
		}
	}
	s.RunTests(t)
}
