package sim_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/conformance"
)

// TestConformanceWorld runs the conformance suite on a synthetic world
// with papers missing HTML, a withheld reference list, open-access PDFs
// (two of them redirected) and robots.txt files on arXiv and ar5iv.
func TestConformanceWorld(t *testing.T) {
	cfg := sim.WorldConfig{Seed: 21, Targets: 30, NoHTML: []int{3, 4}, Withheld: []int{5}}
	plain := newWorld(t, cfg)
	var notArxiv []int
	for j := range plain.Config().Papers {
		if p := plain.Background(j); p.ArxivID == "" && p.HTML == sim.HTMLNone {
			notArxiv = append(notArxiv, j)
		}
	}
	if len(notArxiv) < 2 {
		t.Fatalf("%d cited papers not on arXiv, want 2 for the redirects", len(notArxiv))
	}
	cfg.OpenAccess = &sim.OpenAccess{Hostile: map[int]string{notArxiv[0]: sim.PDFRedirectLoopback, notArxiv[1]: sim.PDFRedirectMetadata}}
	w := newWorld(t, cfg)
	robots := map[string]string{sim.Arxiv: sim.ArxivRobots(15 * time.Second), sim.Ar5iv: sim.Ar5ivRobots}
	var srv *sim.Servers
	s := &conformance.Suite{
		Service: func(name string) *sim.Service { return srv.Service(name) },
		Start: func(t *testing.T) map[string]string {
			names := []string{sim.Arxiv, sim.Ar5iv, sim.S2, sim.ArxivAPI, sim.OAIPMH, sim.LLM, sim.Anthropic, sim.PDFHost, sim.GrobidService, sim.Internal}
			srv = start(t, w, sim.Options{Services: names, OAIPageSize: 7, Robots: robots, Grobid: sim.GrobidConfig{Version: "0.8.2"}})
			urls := map[string]string{}
			for _, name := range names[:len(names)-1] { // the internal service answers anything
				urls[name] = strings.TrimSuffix(srv.URL(name), "/v1")
			}
			return urls
		},
		S2Unknown:     []string{"ARXIV:2401.49999", "CorpusId:1"},
		Unlisted:      []string{"2401.49999"},
		GrobidFails:   [][]byte{[]byte("%PDF-1.4\n% a paper of another world\n%%EOF\n")},
		GrobidVersion: "0.8.2",
		GrobidBusy:    func(n int) { srv.Grobid().SetBusy(n) },
		PDFMissing:    []string{"/pdf/b999999.pdf", "/pdf/2401.00001.pdf"},
		PDFRedirects:  map[string]string{},
		Robots:        robots,
	}
	for j := range w.Config().Papers {
		p := w.Background(j)
		switch c := w.PDFCase(&p); {
		case c == "pdf" && p.ArxivID == "":
			if len(s.PDFs) < 8 {
				s.PDFs = append(s.PDFs, sim.PDFPath(&p))
				s.GrobidTEI = append(s.GrobidTEI, w.PDF(&p))
			}
		case c == "" && p.ArxivID == "" && p.HTML == sim.HTMLNone && len(s.PDFMissing) < 6:
			s.PDFMissing = append(s.PDFMissing, sim.PDFPath(&p)) // a closed paper
		case c == sim.PDFRedirectMetadata:
			s.PDFRedirects[sim.PDFPath(&p)] = "http://169.254.169.254/latest/meta-data/iam/security-credentials/"
		case c == sim.PDFRedirectLoopback:
			s.PDFRedirects[sim.PDFPath(&p)] = "" // set once the internal service listens
		}
	}
	start := s.Start
	s.Start = func(t *testing.T) map[string]string {
		urls := start(t)
		for p, to := range s.PDFRedirects {
			if to == "" {
				s.PDFRedirects[p] = srv.URL(sim.Internal) + "/secret.pdf"
			}
		}
		return urls
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

// TestConformanceGrobid runs the GROBID tests of the suite on a GROBID a
// test configures itself: TEI registered per PDF, a PDF without content,
// a failing one, served as is and behind Wrap.
func TestConformanceGrobid(t *testing.T) {
	tei := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<TEI xml:space="preserve" xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><encodingDesc><appInfo><application version="0.8.0" ident="GROBID" when="2026-01-01T00:00+0000"/></appInfo></encodingDesc></teiHeader>
<text><body><p>As shown by <ref type="bibr" target="#b0">[1]</ref>.</p></body><back><div type="references"><listBibl><biblStruct xml:id="b0"/></listBibl></div></back></text></TEI>`)
	pdf := []byte("%PDF-1.7\n% paper A\n%%EOF\n")
	empty := []byte("%PDF-1.4\n% a scan\n%%EOF\n")
	failing := []byte("%PDF-1.5\n% too long\n%%EOF\n")
	for _, wrapped := range []bool{false, true} {
		t.Run(map[bool]string{false: "bare", true: "wrapped"}[wrapped], func(t *testing.T) {
			g := sim.NewGrobid(sim.GrobidConfig{Version: "0.8.0"})
			g.Add(pdf, tei)
			g.AddNoContent(empty)
			g.AddFailure(failing, "[TIMEOUT] Processing timeout")
			var h http.Handler = g
			if wrapped {
				h = sim.Wrap(sim.GrobidService, g)
			}
			s := &conformance.Suite{
				Start: func(t *testing.T) map[string]string {
					srv := httptest.NewServer(h)
					t.Cleanup(srv.Close)
					return map[string]string{sim.GrobidService: srv.URL}
				},
				GrobidTEI: [][]byte{pdf}, GrobidNoContent: [][]byte{empty}, GrobidFails: [][]byte{failing},
				GrobidVersion: "0.8.0", GrobidBusy: g.SetBusy,
			}
			s.RunTests(t)
		})
	}
}

// TestConformancePDFSite runs the PDF host and robots.txt tests of the
// suite on a PDF host a test sets up: files, a sign-in page, a moved
// file, behind Wrap and a robots.txt.
func TestConformancePDFSite(t *testing.T) {
	pdf := []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n")
	site := sim.NewPDFSite()
	site.Put("/P19-1285.pdf", pdf)
	site.Put("/anthology/open/P19-1286.pdf", pdf)
	site.Set("/login.pdf", sim.LoginPage)
	site.Set("/streamed.pdf", sim.PDFAnswer{Body: append(pdf[:len(pdf):len(pdf)], make([]byte, 4096)...), Chunked: true})
	site.Redirect("/anthology/P19-1285.pdf", "/P19-1285.pdf", http.StatusMovedPermanently)
	site.Put("/gone.pdf", pdf)
	site.Remove("/gone.pdf")
	const file = "User-agent: *\nDisallow: /private/\nCrawl-delay: 1\n"
	robots := sim.NewRobotsFile(http.StatusOK, file)
	var base string
	s := &conformance.Suite{
		Start: func(t *testing.T) map[string]string {
			srv := httptest.NewServer(sim.Wrap(sim.PDFHost, robots.In(site)))
			t.Cleanup(srv.Close)
			base = srv.URL
			return map[string]string{sim.PDFHost: srv.URL}
		},
		PDFs:         []string{"/P19-1285.pdf", "/anthology/open/P19-1286.pdf"},
		PDFMissing:   []string{"/gone.pdf", "/P19-9999.pdf"},
		PDFRedirects: map[string]string{"/anthology/P19-1285.pdf": ""},
		Robots:       map[string]string{sim.PDFHost: file},
	}
	start := s.Start
	s.Start = func(t *testing.T) map[string]string {
		urls := start(t)
		s.PDFRedirects["/anthology/P19-1285.pdf"] = base + "/P19-1285.pdf"
		return urls
	}
	s.RunTests(t)
	if n := robots.Asked(); n != 2 {
		t.Errorf("robots.txt asked %d times, want GET and HEAD", n)
	}
}
