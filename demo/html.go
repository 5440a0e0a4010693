package demo

import (
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"

	"github.com/groundwork/curate/arxiv"
)

// arxivHandler serves arxiv.org/html: GET /html/ID or /html/IDvN answers
// 200 with the page when the corpus has it (a versionless id means the
// latest version), else 404 "No HTML for 'ID'", as arXiv does for papers
// without HTML (PDF-only submissions, failed conversions, and here every
// version but the one stored).
type arxivHandler struct{ s *store }

func (h arxivHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !getOrHead(w, r) {
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/html/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	rest = strings.TrimSuffix(rest, "/")
	if id, err := arxiv.Parse(rest); err == nil {
		if pg, ok := h.s.arxivPages[id.Canonical()]; ok && (id.Version == 0 || id.Version == pg.version) {
			writePage(w, r, pg.body)
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	q := html.EscapeString(rest)
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"en\"><head><title>No HTML for '%s'</title></head>\n"+
		"<body><h1>No HTML for '%s'</h1>\n<p>HTML is not available for the source. This could be due to the source files not being HTML, LaTeX, or a conversion failure.</p></body></html>\n", q, q)
}

// ar5ivHandler serves ar5iv.labs.arxiv.org: /html/ID answers 200 with the
// page for the papers only ar5iv has, and a 307 redirect to
// https://arxiv.org/abs/ID for any other plausible arXiv id, as ar5iv does
// for papers it lacks. /abs/ID, /pdf/ID and /papers/ID redirect to /html/ID.
type ar5ivHandler struct{ s *store }

func (h ar5ivHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !getOrHead(w, r) {
		return
	}
	for _, p := range []string{"/abs/", "/pdf/", "/papers/"} {
		if rest, ok := strings.CutPrefix(r.URL.Path, p); ok {
			http.Redirect(w, r, "/html/"+rest, http.StatusMovedPermanently)
			return
		}
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/html/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	rest = strings.TrimSuffix(rest, "/")
	id, err := arxiv.Parse(rest)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if pg, ok := h.s.ar5ivPages[id.Canonical()]; ok {
		// ar5iv keeps a single version of each paper and serves it for any.
		writePage(w, r, pg.body)
		return
	}
	w.Header().Set("Location", "https://arxiv.org/abs/"+id.String())
	w.WriteHeader(http.StatusTemporaryRedirect)
}

func writePage(w http.ResponseWriter, r *http.Request, body []byte) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

// getOrHead answers 405 to other methods and reports whether to go on.
func getOrHead(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}
