package demo_test

import (
	"fmt"
	"io/fs"
	"testing"

	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/conformance"
	"github.com/groundwork/curate/sim/demo"
)

// TestConformance runs the conformance suite on the demo corpus as the
// demo serves it.
func TestConformance(t *testing.T) {
	m := manifest(t)
	s := &conformance.Suite{
		Start: func(t *testing.T) map[string]string {
			srv := servers(t)
			urls := map[string]string{}
			for _, name := range []string{sim.Arxiv, sim.Ar5iv, sim.S2, sim.ArxivAPI, sim.OAIPMH} {
				urls[name] = srv.URL(name)
			}
			return urls
		},
		S2Unknown: []string{"ARXIV:2512.99999", "DOI:10.1101/2024.04.01.587366"},
		Unlisted:  []string{"2512.99999"},
	}
	for _, p := range m.Papers {
		s.S2Papers = append(s.S2Papers, p.S2PaperID)
		if p.DOI != "" {
			s.S2Papers = append(s.S2Papers, "DOI:"+p.DOI)
		}
		if p.ArxivID == "" {
			continue
		}
		s.S2Papers = append(s.S2Papers, "ARXIV:"+p.ArxivID, fmt.Sprintf("CorpusId:%d", p.CorpusID))
		s.Entries = append(s.Entries, p.ArxivID)
		switch p.HTML {
		case sim.HTMLArxiv:
			s.ArxivPages = append(s.ArxivPages, fmt.Sprintf("%sv%d", p.ArxivID, p.Version))
			for v := 1; v < p.Version; v++ {
				// Some revised papers' pages are served at every version,
				// others' at the latest only.
				id := fmt.Sprintf("%sv%d", p.ArxivID, v)
				if _, err := fs.Stat(demo.FS(), "arxiv/html/"+id+".html"); err != nil {
					s.ArxivNoHTML = append(s.ArxivNoHTML, id)
				} else {
					s.ArxivOlder = append(s.ArxivOlder, id)
				}
			}
			s.Ar5ivLacks = append(s.Ar5ivLacks, p.ArxivID)
			s.S2Lists = append(s.S2Lists, "ARXIV:"+p.ArxivID)
		case sim.HTMLAr5iv:
			s.Ar5ivPages = append(s.Ar5ivPages, p.ArxivID)
			s.ArxivNoHTML = append(s.ArxivNoHTML, p.ArxivID)
			s.S2Lists = append(s.S2Lists, "ARXIV:"+p.ArxivID)
		default:
			s.ArxivNoHTML = append(s.ArxivNoHTML, p.ArxivID)
			s.Ar5ivLacks = append(s.Ar5ivLacks, p.ArxivID)
		}
	}
	s.RunTests(t)
}
