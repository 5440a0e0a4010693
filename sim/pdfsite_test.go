package sim_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/groundwork/curate/sim"
)

// TestPDFSite: the answers a test sets up, through Wrap: a streamed file
// without a Content-Length, a sign-in page, a file removed, a scripted
// fault, and the call log with the Host and credentials asked with.
func TestPDFSite(t *testing.T) {
	pdf := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("x"), 3000)...)
	pdf = append(pdf, "\n%%EOF\n"...)
	site := sim.NewPDFSite()
	site.Set("/streamed.pdf", sim.PDFAnswer{Body: pdf, Chunked: true})
	site.Put("/a.pdf", pdf)
	site.Set("/login", sim.LoginPage)
	site.Set("/mislabelled", sim.PDFAnswer{ContentType: "application/octet-stream", Body: pdf})
	site.Put("/gone.pdf", pdf)
	site.Remove("/gone.pdf")
	svc := sim.Wrap(sim.PDFHost, site)
	srv := httptest.NewServer(svc)
	defer srv.Close()
	svc.Script("/a.pdf", sim.Unavailable, 1)

	ask := func(path string, auth bool) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Host = "pdfs.example.org"
		if auth {
			req.SetBasicAuth("someone", "secret")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	if resp, b := ask("/streamed.pdf", false); resp.StatusCode != 200 || resp.ContentLength != -1 || len(resp.TransferEncoding) == 0 || !bytes.Equal(b, pdf) {
		t.Errorf("streamed: %d, length %d, %v, %d bytes", resp.StatusCode, resp.ContentLength, resp.TransferEncoding, len(b))
	}
	if resp, _ := ask("/a.pdf", true); resp.StatusCode != 503 {
		t.Errorf("scripted: %d, want 503", resp.StatusCode)
	}
	if resp, b := ask("/a.pdf", false); resp.StatusCode != 200 || resp.ContentLength != int64(len(pdf)) || !bytes.Equal(b, pdf) {
		t.Errorf("after the fault: %d, %d bytes", resp.StatusCode, len(b))
	}
	if resp, b := ask("/login", false); resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !bytes.Contains(b, []byte("Sign in")) {
		t.Errorf("login: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp, _ := ask("/mislabelled", false); resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("mislabelled: %q", resp.Header.Get("Content-Type"))
	}
	if resp, _ := ask("/gone.pdf", false); resp.StatusCode != 404 {
		t.Errorf("removed: %d", resp.StatusCode)
	}
	calls := svc.CallsTo("/a.pdf")
	if len(calls) != 2 || calls[0].Outcome != sim.OutcomeScripted || !calls[0].Auth || calls[1].Auth || calls[1].Host != "pdfs.example.org" {
		t.Errorf("calls to /a.pdf: %+v", calls)
	}
}
