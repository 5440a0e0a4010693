package sim_test

import (
	"strconv"
	"testing"

	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/conformance"
)

// TestConformanceWorld runs the conformance suite on a synthetic world
// with papers missing HTML and a withheld reference list.
func TestConformanceWorld(t *testing.T) {
	w := newWorld(t, sim.WorldConfig{Seed: 21, Targets: 30, NoHTML: []int{3, 4}, Withheld: []int{5}})
	var srv *sim.Servers
	s := &conformance.Suite{
		Service: func(name string) *sim.Service { return srv.Service(name) },
		Start: func(t *testing.T) map[string]string {
			names := []string{sim.Arxiv, sim.Ar5iv, sim.S2, sim.ArxivAPI, sim.OAIPMH}
			srv = start(t, w, sim.Options{Services: names, OAIPageSize: 7})
			urls := map[string]string{}
			for _, name := range names {
				urls[name] = srv.URL(name)
			}
			return urls
		},
		S2Unknown: []string{"ARXIV:2401.49999", "CorpusId:1"},
		Unlisted:  []string{"2401.49999"},
	}
	for i := range w.NumTargets() {
		p := w.Target(i)
		switch p.HTML {
		case sim.HTMLArxiv:
			s.ArxivPages = append(s.ArxivPages, p.IDv())
			s.Ar5ivLacks = append(s.Ar5ivLacks, p.ArxivID)
		case sim.HTMLAr5iv:
			s.Ar5ivPages = append(s.Ar5ivPages, p.ArxivID)
			s.ArxivNoHTML = append(s.ArxivNoHTML, p.ArxivID)
		default:
			s.ArxivNoHTML = append(s.ArxivNoHTML, p.ArxivID)
			s.Ar5ivLacks = append(s.Ar5ivLacks, p.ArxivID)
		}
		if i%4 == 0 {
			s.S2Papers = append(s.S2Papers, "ARXIV:"+p.ArxivID, w.S2ID(&p), "CorpusId:"+strconv.FormatInt(w.CorpusID(&p), 10))
		}
		if i == 5 {
			s.S2Withheld = append(s.S2Withheld, "ARXIV:"+p.ArxivID)
		} else if i < 12 {
			s.S2Lists = append(s.S2Lists, "ARXIV:"+p.ArxivID)
		}
		s.Entries = append(s.Entries, p.ArxivID)
		if c, _ := w.S2Citing("ARXIV:" + p.ArxivID); len(c) > 0 && len(s.S2Cited) < 3 {
			s.S2Cited = append(s.S2Cited, "ARXIV:"+p.ArxivID)
		}
	}
	for j := range 10 {
		if p := w.Background(j); p.DOI != "" {
			s.S2Papers = append(s.S2Papers, "DOI:"+p.DOI)
		}
	}
	s.RunTests(t)
}
