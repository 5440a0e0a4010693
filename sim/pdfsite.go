package sim

import (
	"io"
	"net/http"
	"strconv"
	"sync"
)

// A PDFAnswer is what a PDF host answers for one path.
type PDFAnswer struct {
	// Status is the answer's status (default 200).
	Status int
	// ContentType is its Content-Type (default application/pdf).
	ContentType string
	Body        []byte
	// Location is sent with a 3xx Status: the mirror the host moved the
	// file to, or a hop somewhere no download should go.
	Location string
	// Chunked sends the body in pieces of 512 bytes without a
	// Content-Length, as a host streaming the file from storage does
	// (RFC 9112 §7.1: chunked transfer coding).
	Chunked bool
}

// LoginPage is a paywall's answer for a PDF: 200 with an HTML sign-in
// page, the most common "PDF" that is not one.
var LoginPage = PDFAnswer{ContentType: "text/html; charset=utf-8",
	Body: []byte("<!DOCTYPE html><html><body><form>Sign in to download this article</form></body></html>\n")}

// PDFSite is a host of open-access PDFs (the ACL Anthology, a publisher's
// site, a repository) as a downloader meets one: GET and HEAD of a path
// answer the file put there (application/pdf with its Content-Length,
// which HEAD sends without the body), a redirect, a sign-in page, or
// whatever PDFAnswer a test sets; any other path 404 with an HTML page;
// other methods 405 with Allow, as static web servers answer them. It is
// the world's PDF host (Start serves it as PDFHost) and the one a test
// sets up itself: serve it behind Wrap for scripted faults, limits and
// the call log, and behind a RobotsFile for its robots.txt. Its methods
// are safe for concurrent use.
type PDFSite struct {
	mu    sync.Mutex
	files map[string]PDFAnswer
	// find answers the paths no file was put at (the world's PDFs).
	find func(path string) (PDFAnswer, bool)
}

// NewPDFSite returns a PDF host with no files.
func NewPDFSite() *PDFSite { return &PDFSite{files: map[string]PDFAnswer{}} }

// Put serves pdf at path.
func (s *PDFSite) Put(path string, pdf []byte) { s.Set(path, PDFAnswer{Body: pdf}) }

// Set makes path answer a.
func (s *PDFSite) Set(path string, a PDFAnswer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = a
}

// Redirect makes path answer status (a 3xx) to location.
func (s *PDFSite) Redirect(path, location string, status int) {
	s.Set(path, PDFAnswer{Status: status, Location: location})
}

// Remove makes path answer 404 again.
func (s *PDFSite) Remove(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.files, path)
}

func (s *PDFSite) answer(path string) (PDFAnswer, bool) {
	s.mu.Lock()
	a, ok := s.files[path]
	find := s.find
	s.mu.Unlock()
	if !ok && find != nil {
		a, ok = find(path)
	}
	return a, ok
}

func (s *PDFSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusMethodNotAllowed)
		io.WriteString(w, "<html><body>Method Not Allowed</body></html>\n")
		return
	}
	a, ok := s.answer(r.URL.Path)
	if !ok {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "<html><body>Not Found</body></html>\n")
		return
	}
	status := a.Status
	if status == 0 {
		status = http.StatusOK
	}
	if a.Location != "" {
		w.Header().Set("Location", a.Location)
	}
	ctype := a.ContentType
	if ctype == "" {
		ctype = "application/pdf"
	}
	if a.Location == "" || len(a.Body) > 0 {
		w.Header().Set("Content-Type", ctype)
	}
	if !a.Chunked {
		w.Header().Set("Content-Length", strconv.Itoa(len(a.Body)))
		w.WriteHeader(status)
		w.Write(a.Body)
		return
	}
	w.WriteHeader(status)
	f, _ := w.(http.Flusher)
	for b := a.Body; len(b) > 0; {
		n := min(len(b), 512)
		w.Write(b[:n])
		if f != nil {
			f.Flush()
		}
		b = b[n:]
	}
}

// pdfSite is the world's PDF host.
func (w *World) pdfSite() *PDFSite {
	s := NewPDFSite()
	s.find = w.pdfAnswer
	return s
}
