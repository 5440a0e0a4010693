package sim

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ArxivRobots returns a robots.txt shaped like arxiv.org's (one group for
// every agent: a Crawl-delay, the pages curate reads allowed, the APIs and
// source downloads disallowed), with the given crawl delay so that tests
// can run at a scaled-down pace. Serve it with Options.Robots.
func ArxivRobots(crawlDelay time.Duration) string {
	var b strings.Builder
	b.WriteString("# Simulated arxiv.org robots.txt\nUser-agent: *\n")
	b.WriteString("Crawl-delay: " + strconv.FormatFloat(crawlDelay.Seconds(), 'f', -1, 64) + "\n")
	for _, p := range []string{"/abs", "/pdf", "/html", "/list"} {
		b.WriteString("Allow: " + p + "\n")
	}
	for _, p := range []string{"/api", "/oai2", "/e-print", "/src", "/auth", "/user"} {
		b.WriteString("Disallow: " + p + "\n")
	}
	return b.String()
}

// Ar5ivRobots is a robots.txt shaped like ar5iv.labs.arxiv.org's: only the
// conversion logs are off limits, and it sets no Crawl-delay.
const Ar5ivRobots = "User-agent: *\nDisallow: /log/\n"

// withRobots serves body at /robots.txt in front of next. The request
// still passes the Service's limits and is logged like any other.
func withRobots(body string, next handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, reqBody []byte, invalid bool) {
		if r.URL.Path != "/robots.txt" {
			next(w, r, reqBody, invalid)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		io.WriteString(w, body)
	}
}
