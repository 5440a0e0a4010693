package sim

import (
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"

	"github.com/groundwork/curate/parse/arxiv"
)

// arXiv's and ar5iv's HTML, answering from a Pages source:
//
//   - arxiv.org: GET /html/ID or /html/IDvN answers 200 with the page when
//     arXiv has HTML for it (a versionless id means the latest version),
//     else 404 "No HTML for 'ID'", as arXiv answers for papers without
//     HTML (PDF-only submissions, failed conversions).
//   - ar5iv.labs.arxiv.org: GET /html/ID answers 200 with the page of a
//     paper ar5iv has (it keeps one version and serves it for any), else a
//     307 to https://arxiv.org/abs/ID; /abs/ID, /pdf/ID and /papers/ID
//     redirect to /html/ID; what is no arXiv id answers 404.
//
// Both answer 405 to methods other than GET and HEAD.

// Pages are the HTML pages arXiv and ar5iv serve.
type Pages interface {
	// HTML returns the page site (HTMLArxiv or HTMLAr5iv) serves for id,
	// as the request names it (versionless or with a version).
	HTML(site string, id arxiv.ID) ([]byte, bool)
}

// arxivSite serves arxiv.org/html over src.
type arxivSite struct{ src Pages }

func (s arxivSite) serve(w http.ResponseWriter, r *http.Request, _ []byte, _ bool) {
	if !getOrHead(w, r) {
		return
	}
	if id, ok := strings.CutPrefix(r.URL.Path, "/pdf/"); ok {
		if pdfs, ok := s.src.(interface {
			arxivPDF(http.ResponseWriter, string)
		}); ok {
			pdfs.arxivPDF(w, id)
			return
		}
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/html/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	rest = strings.TrimSuffix(rest, "/")
	if id, err := arxiv.Parse(rest); err == nil {
		if page, ok := s.src.HTML(HTMLArxiv, id); ok {
			writePage(w, r, page)
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	w.Write(NoHTMLPage(rest))
}

// NoHTMLPage is arXiv's 404 page for a paper without HTML.
func NoHTMLPage(id string) []byte {
	q := html.EscapeString(id)
	return fmt.Appendf(nil, "<!DOCTYPE html>\n<html lang=\"en\"><head><title>No HTML for '%s'</title></head>\n"+
		"<body><h1>No HTML for '%s'</h1>\n<p>HTML is not available for the source. This could be due to the source files not being HTML, LaTeX, or a conversion failure.</p></body></html>\n", q, q)
}

// ar5ivSite serves ar5iv.labs.arxiv.org over src.
type ar5ivSite struct{ src Pages }

func (s ar5ivSite) serve(w http.ResponseWriter, r *http.Request, _ []byte, _ bool) {
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
	id, err := arxiv.Parse(strings.TrimSuffix(rest, "/"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if page, ok := s.src.HTML(HTMLAr5iv, id); ok {
		writePage(w, r, page)
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
