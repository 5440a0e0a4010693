package sim_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/internal/fixtures"
	"github.com/groundwork/curate/parse/tei"
	"github.com/groundwork/curate/sim"
)

// s2Paper asks the simulated S2 for a paper's record.
func s2Paper(t *testing.T, s *sim.Servers, id string) map[string]any {
	t.Helper()
	resp, err := http.Get(s.URL(sim.S2) + "/graph/v1/paper/" + id + "?fields=externalIds,isOpenAccess,openAccessPdf")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rec map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// viaLoopback rewrites a URL on the PDF host's name to its listener.
func viaLoopback(s *sim.Servers, url string) string {
	return strings.Replace(url, "http://"+s.PDFHosts()[0], s.URL(sim.PDFHost), 1)
}

func convert(t *testing.T, s *sim.Servers, pdf []byte) (int, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, _ := mw.CreateFormFile("input", "paper.pdf")
	fw.Write(pdf)
	mw.WriteField("segmentSentences", "1")
	mw.Close()
	resp, err := http.Post(s.URL(sim.GrobidService)+sim.GrobidFulltextPath, mw.FormDataContentType(), &b)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// TestOpenAccessWorld: in an open-access world, a cited paper without an
// arXiv page has an openAccessPdf on the PDF host, the host serves its
// PDF, and GROBID converts that into TEI that the pipeline's parser reads
// as the paper: its title, authors, abstract, sections, bibliography and
// citing sentences.
func TestOpenAccessWorld(t *testing.T) {
	w := newWorld(t, sim.WorldConfig{Seed: 3, Targets: 20, OpenAccess: &sim.OpenAccess{}})
	s, err := sim.Start(w, sim.Options{Grobid: sim.GrobidConfig{Version: "0.8.2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	with, without, acl := 0, 0, 0
	for j := range w.Config().Papers {
		p := w.Background(j)
		if p.HTML != sim.HTMLNone {
			continue
		}
		rec := s2Paper(t, s, w.S2ID(&p))
		oa := rec["openAccessPdf"].(map[string]any)
		ext := rec["externalIds"].(map[string]any)
		if !w.HasPDF(&p) {
			without++
			if oa["url"] != "" || oa["status"] != "CLOSED" || rec["isOpenAccess"] != false {
				t.Errorf("%s has no PDF, but S2 says %v", p.Name, oa)
			}
			continue
		}
		with++
		if ext["ACL"] != nil {
			acl++
			if ext["ACL"] != w.ACLID(&p) {
				t.Errorf("%s: ACL id %v, want %s", p.Name, ext["ACL"], w.ACLID(&p))
			}
		}
		url, _ := oa["url"].(string)
		get := viaLoopback(s, url)
		switch {
		case p.ArxivID != "":
			// arXiv's own PDF, which the arxiv service serves.
			if url != "https://arxiv.org/pdf/"+p.ArxivID {
				t.Errorf("%s on arXiv: openAccessPdf %v", p.Name, oa)
				continue
			}
			get = s.URL(sim.Arxiv) + "/pdf/" + p.IDv()
		case !strings.HasPrefix(url, "http://"+s.PDFHosts()[0]+"/") || oa["status"] == "CLOSED" || rec["isOpenAccess"] != true:
			t.Errorf("%s: openAccessPdf %v", p.Name, oa)
			continue
		}
		resp, err := http.Get(get)
		if err != nil {
			t.Fatal(err)
		}
		pdf, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
			t.Errorf("%s: PDF host answered %d %q", url, resp.StatusCode, resp.Header.Get("Content-Type"))
			continue
		}
		status, teiXML := convert(t, s, pdf)
		if status != 200 {
			t.Errorf("%s: GROBID answered %d %s", p.Name, status, teiXML)
			continue
		}
		doc, err := tei.Parse(teiXML, tei.Options{ID: "x", URL: url})
		if err != nil {
			t.Fatal(err)
		}
		refs := w.References(&p)
		if doc.Title == nil || *doc.Title != p.Title || doc.ConverterVersion != "0.8.2" || doc.Abstract == "" ||
			len(doc.Authors) != len(p.Authors) || len(doc.Sections) != 4 || len(doc.References) != len(refs) {
			t.Errorf("%s: parsed %q v%s, %d authors, %d sections, %d references (want %d); notes %v",
				p.Name, deref(doc.Title), doc.ConverterVersion, len(doc.Authors), len(doc.Sections), len(doc.References), len(refs), doc.Conversion.Notes)
		}
		cited := map[string]bool{}
		for _, m := range doc.Mentions {
			for _, k := range m.RefKeys {
				cited[k] = true
			}
		}
		if len(cited) != len(refs) {
			t.Errorf("%s: mentions cite %d of %d references", p.Name, len(cited), len(refs))
		}
	}
	if with == 0 || without == 0 || acl == 0 {
		t.Errorf("%d papers with a PDF (%d with an ACL id), %d without: want some of each", with, acl, without)
	}
	// Papers on arXiv without HTML have their PDF too; a PDF GROBID was
	// not made for is refused as GROBID refuses a bad PDF.
	if status, _ := convert(t, s, []byte("%PDF-1.4\n% someone else's paper\n%%EOF\n")); status != 500 {
		t.Errorf("a foreign PDF: %d, want 500", status)
	}
	if n := s.Service(sim.Internal).Stats().Requests; n != 0 {
		t.Errorf("the internal service got %d requests", n)
	}
}

// TestHostilePDFs: each hostile kind puts the URL it names into S2's
// record, and the PDF host answers it as the kind says.
func TestHostilePDFs(t *testing.T) {
	cfg := sim.WorldConfig{Seed: 3, Targets: 20}
	plain := newWorld(t, cfg)
	var nonArxiv []int
	for j := range plain.Config().Papers {
		if p := plain.Background(j); p.ArxivID == "" {
			nonArxiv = append(nonArxiv, j)
		}
	}
	cases := sim.HostileCases()
	if len(nonArxiv) < len(cases) {
		t.Fatalf("only %d papers without arXiv", len(nonArxiv))
	}
	cfg.OpenAccess = &sim.OpenAccess{Hostile: map[int]string{}, OversizeBytes: 4096}
	for i, c := range cases {
		cfg.OpenAccess.Hostile[nonArxiv[i]] = c
	}
	w := newWorld(t, cfg)
	s, err := sim.Start(w, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, c := range cases {
		p := w.Background(nonArxiv[i])
		if w.HasPDF(&p) || w.PDFCase(&p) != c {
			t.Errorf("%s: case %q, has PDF %v", c, w.PDFCase(&p), w.HasPDF(&p))
		}
		url := s2Paper(t, s, w.S2ID(&p))["openAccessPdf"].(map[string]any)["url"].(string)
		want := map[string]string{
			sim.PDFLoopback: s.URL(sim.Internal) + "/", sim.PDFPrivate: "http://10.0.0.7/", sim.PDFMetadata: "http://169.254.169.254/",
			sim.PDFForeign: "https://pdfs.example.net/", sim.PDFRebind: "http://" + s.PDFHosts()[1] + "/",
		}[c]
		if want == "" {
			want = "http://" + s.PDFHosts()[0] + "/"
		}
		if !strings.HasPrefix(url, want) {
			t.Errorf("%s: url %s, want %s...", c, url, want)
			continue
		}
		if !strings.HasPrefix(url, "http://"+s.PDFHosts()[0]) {
			continue
		}
		resp, err := noRedirect.Get(viaLoopback(s, url))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch c {
		case sim.PDFRedirectLoopback, sim.PDFRedirectMetadata:
			loc := resp.Header.Get("Location")
			if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, map[string]string{sim.PDFRedirectLoopback: s.URL(sim.Internal), sim.PDFRedirectMetadata: "http://169.254.169.254/"}[c]) {
				t.Errorf("%s: %d to %q", c, resp.StatusCode, loc)
			}
		case sim.PDFNotPDF:
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Errorf("%s: %q", c, resp.Header.Get("Content-Type"))
			}
		case sim.PDFOversize:
			if len(body) < 4096 || !bytes.HasPrefix(body, []byte("%PDF-")) {
				t.Errorf("%s: %d bytes", c, len(body))
			}
		}
	}
	if n := s.Service(sim.Internal).Stats().Requests; n != 0 {
		t.Errorf("the internal service got %d requests", n)
	}
	if _, err := sim.NewWorld(sim.WorldConfig{Seed: 1, Targets: 2, OpenAccess: &sim.OpenAccess{Hostile: map[int]string{0: "nope"}}}); err == nil {
		t.Error("an unknown hostile kind was accepted")
	}
}

// TestClosedWorld: without OpenAccess, papers not on arXiv are closed, as
// before.
func TestClosedWorld(t *testing.T) {
	w := newWorld(t, sim.WorldConfig{Seed: 3, Targets: 20})
	s, err := sim.Start(w, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for j := range w.Config().Papers {
		p := w.Background(j)
		if p.ArxivID != "" {
			continue
		}
		rec := s2Paper(t, s, w.S2ID(&p))
		oa := rec["openAccessPdf"].(map[string]any)
		if oa["url"] != "" || oa["status"] != "CLOSED" || rec["externalIds"].(map[string]any)["ACL"] != nil || w.PDFCase(&p) != "" {
			t.Errorf("%s: %v", p.Name, rec)
		}
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// elementPaths returns every element path of an XML document with the
// attribute names each carries ("TEI/text/body/div/head@n").
func elementPaths(t *testing.T, data []byte) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	dec := xml.NewDecoder(bytes.NewReader(data))
	var stack []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			stack = append(stack, el.Name.Local)
			p := strings.Join(stack, "/")
			out[p] = true
			for _, a := range el.Attr {
				if a.Name.Space == "" || a.Name.Space == "xml" {
					out[p+"@"+a.Name.Local] = true
				}
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
}

// TestTEIShape: every element and attribute the simulated GROBID writes,
// where it writes it, occurs in the recorded TEI of the real GROBID.
func TestTEIShape(t *testing.T) {
	dir := fixtures.Dir(t, "grobid-tei")
	files, err := filepath.Glob(filepath.Join(dir, "*.tei.xml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no TEI fixtures in %s", dir)
	}
	real := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for p := range elementPaths(t, data) {
			real[p] = true
		}
	}
	w := newWorld(t, sim.WorldConfig{Seed: 3, Targets: 5, OpenAccess: &sim.OpenAccess{}})
	for _, p := range []sim.Paper{w.Background(1), w.Background(40), w.Target(3)} {
		for path := range elementPaths(t, w.TEI(&p, "0.8.1")) {
			if !real[path] {
				t.Errorf("%s: the simulated TEI has %s, which no recorded TEI has", p.Name, path)
			}
		}
	}
}
