package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/groundwork/curate/sim"
)

// The PDF host invariants, as static web servers answer (RFC 9110): GET
// of a file is 200 application/pdf, the body a PDF ("%PDF-" within its
// first 1024 bytes, where readers look for it, and "%%EOF" near its end,
// ISO 32000-1 §7.5.5) of the Content-Length sent; HEAD answers GET's
// status and headers without the body (§9.3.2); a path without a file is
// 404 and no PDF; a moved file is a 3xx with a Location (§15.4); methods
// other than GET and HEAD are refused with 405 and Allow (§15.5.6).

// CheckPDF checks the answer of a GET for a PDF.
func CheckPDF(status int, header http.Header, body []byte) error {
	if status != 200 {
		return fmt.Errorf("status %d, want 200: %s", status, truncate(body))
	}
	var errs []error
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/pdf") {
		errs = append(errs, fmt.Errorf("Content-Type %q, want application/pdf", ct))
	}
	if cl := header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(body)) {
		errs = append(errs, fmt.Errorf("Content-Length %s for %d bytes", cl, len(body)))
	}
	if !bytes.Contains(body[:min(len(body), 1024)], []byte("%PDF-")) {
		errs = append(errs, errors.New("no %PDF- header in the first 1024 bytes"))
	}
	if !bytes.Contains(body[max(0, len(body)-1024):], []byte("%%EOF")) {
		errs = append(errs, errors.New("no %%EOF marker in the last 1024 bytes"))
	}
	return errors.Join(errs...)
}

// TestPDFHostFiles asks for each PDF by GET and by HEAD.
func (s *Suite) TestPDFHostFiles(t *testing.T) {
	base := s.url(t, sim.PDFHost)
	need(t, "PDFs (PDFs)", s.PDFs)
	for _, p := range s.PDFs {
		r := get(t, base+p)
		if err := CheckPDF(r.status, r.header, r.body); err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		h := do(t, http.MethodHead, base+p, "")
		if h.status != 200 || len(h.body) != 0 || h.header.Get("Content-Type") != r.header.Get("Content-Type") || h.header.Get("Content-Length") != r.header.Get("Content-Length") {
			t.Errorf("HEAD %s: %d, %d bytes, %q, length %q; want GET's headers and no body", p, h.status, len(h.body), h.header.Get("Content-Type"), h.header.Get("Content-Length"))
		}
	}
}

// TestPDFHostMissing asks for paths without a file: 404, no PDF.
func (s *Suite) TestPDFHostMissing(t *testing.T) {
	base := s.url(t, sim.PDFHost)
	for _, p := range append(append([]string(nil), s.PDFMissing...), "/no/such/file.pdf") {
		r := get(t, base+p)
		if r.status != http.StatusNotFound || strings.HasPrefix(r.header.Get("Content-Type"), "application/pdf") {
			t.Errorf("%s: %d %q, want 404 without a PDF", p, r.status, r.header.Get("Content-Type"))
		}
	}
}

// TestPDFHostRedirects asks for each moved file: a 3xx whose Location
// leads where the backend says.
func (s *Suite) TestPDFHostRedirects(t *testing.T) {
	base := s.url(t, sim.PDFHost)
	if len(s.PDFRedirects) == 0 {
		t.Skip("the backend names no redirects (PDFRedirects)")
	}
	for p, want := range s.PDFRedirects {
		r := get(t, base+p)
		loc := r.header.Get("Location")
		if r.status < 300 || r.status > 308 || r.status == http.StatusNotModified || loc == "" {
			t.Errorf("%s: %d to %q, want a redirect", p, r.status, loc)
			continue
		}
		u, err := url.Parse(base + p)
		if err != nil {
			t.Fatal(err)
		}
		to, err := u.Parse(loc)
		if err != nil || to.String() != want {
			t.Errorf("%s: Location %q (%v), want it to lead to %s", p, loc, err, want)
		}
	}
}

// TestPDFHostMethods: the host refuses to be posted to.
func (s *Suite) TestPDFHostMethods(t *testing.T) {
	base := s.url(t, sim.PDFHost)
	p := "/x.pdf"
	if len(s.PDFs) > 0 {
		p = s.PDFs[0]
	}
	r := do(t, http.MethodPost, base+p, "x")
	if r.status != http.StatusMethodNotAllowed || !strings.Contains(r.header.Get("Allow"), "GET") {
		t.Errorf("POST %s: %d, Allow %q; want 405 allowing GET", p, r.status, r.header.Get("Allow"))
	}
}
