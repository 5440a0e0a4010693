package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/sim"
)

// The arXiv HTML and ar5iv invariants: a page is LaTeXML's HTML (its ltx_
// classes within the first MiB, which is how the fetcher tells a page from
// a placeholder), served as text/html with its length; arXiv answers a
// paper without HTML 404 "No HTML for 'ID'"; ar5iv answers a paper it
// lacks with a 307 to https://arxiv.org/abs/ID and sends /abs/ID to
// /html/ID; both refuse methods other than GET and HEAD.

// CheckArxivPage checks the body of a page arXiv or ar5iv served with
// status 200.
func CheckArxivPage(body []byte) error {
	head := body[:min(len(body), 1<<20)]
	var errs []error
	if !bytes.Contains(bytes.ToLower(head), []byte("<html")) {
		errs = append(errs, errors.New("no <html> element"))
	}
	if !bytes.Contains(head, []byte("ltx_")) {
		errs = append(errs, errors.New("no LaTeXML markup (ltx_ classes) in the first MiB"))
	}
	return errors.Join(errs...)
}

// checkPageAnswer checks a 200 answer with a page.
func checkPageAnswer(r response) error {
	var errs []error
	if r.status != 200 {
		return fmt.Errorf("status %d, want 200: %s", r.status, truncate(r.body))
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		errs = append(errs, fmt.Errorf("Content-Type %q, want text/html", ct))
	}
	if cl := r.header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(r.body)) {
		errs = append(errs, fmt.Errorf("Content-Length %s for %d bytes", cl, len(r.body)))
	}
	if err := CheckArxivPage(r.body); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// TestArxivPages asks arXiv for each page: as named, versionless, by HEAD;
// a later version than the page's has no HTML.
func (s *Suite) TestArxivPages(t *testing.T) {
	base := s.url(t, sim.Arxiv)
	need(t, "arXiv pages (ArxivPages)", s.ArxivPages)
	for _, id := range s.ArxivPages {
		r := get(t, base+"/html/"+id)
		if err := checkPageAnswer(r); err != nil {
			t.Errorf("arXiv %s: %v", id, err)
			continue
		}
		a, err := arxiv.Parse(id)
		if err != nil {
			t.Fatalf("probe %q: %v", id, err)
		}
		if a.Version > 0 {
			if v := get(t, base+"/html/"+a.Base()); !bytes.Equal(v.body, r.body) {
				t.Errorf("arXiv %s: the versionless id answers %d with another body", id, v.status)
			}
			later := a.Base() + "v" + strconv.Itoa(a.Version+1)
			if v := get(t, base+"/html/"+later); v.status != 404 {
				t.Errorf("arXiv %s: status %d, want 404 for a version after the page's", later, v.status)
			}
		}
		h := do(t, http.MethodHead, base+"/html/"+id, "")
		if h.status != 200 || len(h.body) != 0 {
			t.Errorf("HEAD arXiv %s: status %d, %d bytes", id, h.status, len(h.body))
		}
	}
}

// TestArxivOlder asks arXiv for the pages of versions before the latest:
// each a page, of that version (its base names it), not the latest's.
func (s *Suite) TestArxivOlder(t *testing.T) {
	base := s.url(t, sim.Arxiv)
	need(t, "older versions' pages (ArxivOlder)", s.ArxivOlder)
	for _, id := range s.ArxivOlder {
		r := get(t, base+"/html/"+id)
		if err := checkPageAnswer(r); err != nil {
			t.Errorf("arXiv %s: %v", id, err)
			continue
		}
		a, err := arxiv.Parse(id)
		if err != nil || a.Version == 0 {
			t.Fatalf("probe %q: want an id with a version", id)
		}
		if !bytes.Contains(r.body, []byte(`<base href="/html/`+id+`/"`)) {
			t.Errorf("arXiv %s: the page does not name its version in its base", id)
		}
		if latest := get(t, base+"/html/"+a.Base()); bytes.Equal(latest.body, r.body) {
			t.Errorf("arXiv %s: the page is the latest version's", id)
		}
	}
}

// TestArxivNoHTML asks arXiv for papers it has no HTML for.
func (s *Suite) TestArxivNoHTML(t *testing.T) {
	base := s.url(t, sim.Arxiv)
	probes := append(s.ArxivNoHTML, "not-an-id")
	for _, id := range probes {
		r := get(t, base+"/html/"+id)
		if r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !bytes.Contains(r.body, []byte("No HTML for '"+id+"'")) {
			t.Errorf("arXiv %s: %d %q %s, want 404 \"No HTML for '%s'\"", id, r.status, r.header.Get("Content-Type"), truncate(r.body), id)
		}
	}
}

// TestAr5ivPages asks ar5iv for each page, and for it by /abs.
func (s *Suite) TestAr5ivPages(t *testing.T) {
	base := s.url(t, sim.Ar5iv)
	need(t, "ar5iv pages (Ar5ivPages)", s.Ar5ivPages)
	for _, id := range s.Ar5ivPages {
		if err := checkPageAnswer(get(t, base+"/html/"+id)); err != nil {
			t.Errorf("ar5iv %s: %v", id, err)
		}
		if r := get(t, base+"/abs/"+id); r.status != http.StatusMovedPermanently || r.header.Get("Location") != "/html/"+id {
			t.Errorf("ar5iv /abs/%s: %d to %q, want 301 to /html/%s", id, r.status, r.header.Get("Location"), id)
		}
	}
}

// TestAr5ivLacks asks ar5iv for papers it lacks: a 307 to arXiv's
// abstract page, and what is no arXiv id 404.
func (s *Suite) TestAr5ivLacks(t *testing.T) {
	base := s.url(t, sim.Ar5iv)
	need(t, "papers ar5iv lacks (Ar5ivLacks)", s.Ar5ivLacks)
	for _, id := range s.Ar5ivLacks {
		r := get(t, base+"/html/"+id)
		if want := "https://arxiv.org/abs/" + id; r.status != http.StatusTemporaryRedirect || r.header.Get("Location") != want {
			t.Errorf("ar5iv %s: %d to %q, want 307 to %s", id, r.status, r.header.Get("Location"), want)
		}
	}
	if r := get(t, base+"/html/not-an-id"); r.status != 404 {
		t.Errorf("ar5iv not-an-id: %d, want 404", r.status)
	}
}

// TestHTMLMethods: arXiv and ar5iv refuse to be posted to.
func (s *Suite) TestHTMLMethods(t *testing.T) {
	for _, svc := range []string{sim.Arxiv, sim.Ar5iv} {
		base, ok := s.urls[svc]
		if !ok {
			continue
		}
		r := do(t, http.MethodPost, base+"/html/2401.00001", "x")
		if r.status != http.StatusMethodNotAllowed || !strings.Contains(r.header.Get("Allow"), "GET") {
			t.Errorf("POST to %s: %d, Allow %q; want 405 allowing GET", svc, r.status, r.header.Get("Allow"))
		}
	}
}
