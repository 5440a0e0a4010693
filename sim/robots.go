package sim

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RobotsPath is where a site serves its robots.txt (RFC 9309 §2.3: "the
// rules MUST be accessible in a file named "/robots.txt" (all lower case)
// in the top-level path of the service").
const RobotsPath = "/robots.txt"

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

// RobotsFile is a site's /robots.txt, the one fake of it every simulated
// site serves (Options.Robots, a PDFSite, a test's own site): what it
// answers can change during a test, and it counts how often it was asked.
// RFC 9309 §2.3.1 gives each answer its meaning to a crawler, which is
// what tests of one set up:
//
//	200          the file: its rules apply (text/plain, §2.3)
//	3xx          a redirect, to follow for at least five hops (§2.3.1.2)
//	400-499      "unavailable": the crawler MAY access anything (§2.3.1.3)
//	500-599      "unreachable": the crawler MUST assume a complete
//	             disallow (§2.3.1.4)
//
// Its methods are safe for concurrent use.
type RobotsFile struct {
	mu       sync.Mutex
	status   int
	body     string
	location string
	asked    int
}

// NewRobotsFile returns a robots.txt answering status (0 means 200) with
// body.
func NewRobotsFile(status int, body string) *RobotsFile {
	f := &RobotsFile{}
	f.Set(status, body)
	return f
}

// NoRobotsFile returns the robots.txt of a site that has none: 404.
func NoRobotsFile() *RobotsFile { return NewRobotsFile(http.StatusNotFound, "") }

// Set makes the file answer status (0 means 200) with body from now on.
func (f *RobotsFile) Set(status int, body string) {
	if status == 0 {
		status = http.StatusOK
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.body, f.location = status, body, ""
}

// Redirect makes the file answer status (a 3xx) to location from now on.
func (f *RobotsFile) Redirect(status int, location string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.body, f.location = status, "", location
}

// Asked returns how many requests the file answered.
func (f *RobotsFile) Asked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

// ServeHTTP answers a request for the file: GET and HEAD, others 405.
func (f *RobotsFile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.asked++
	status, body, location := f.status, f.body, f.location
	f.mu.Unlock()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	switch {
	case location != "":
		http.Redirect(w, r, location, status)
	case status == http.StatusOK:
		writeBody(w, "text/plain; charset=utf-8", []byte(body))
	case status == http.StatusNotFound && body == "":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		io.WriteString(w, "<html><body>Not Found</body></html>\n")
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// In returns a handler serving the file at RobotsPath and every other
// path by next (nil: 404).
func (f *RobotsFile) In(next http.Handler) http.Handler {
	if next == nil {
		next = http.NotFoundHandler()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == RobotsPath {
			f.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withRobots serves f at RobotsPath in front of next. The request still
// passes the Service's limits and is logged like any other.
func withRobots(f *RobotsFile, next handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, reqBody []byte, invalid bool) {
		if r.URL.Path != RobotsPath {
			next(w, r, reqBody, invalid)
			return
		}
		f.ServeHTTP(w, r)
	}
}
