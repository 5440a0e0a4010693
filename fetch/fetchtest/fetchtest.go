// Package fetchtest runs in-process arXiv and ar5iv servers for tests.
// They speak the sites' real protocol: arxiv.org/html/ID answers 200 with
// the page or 404; ar5iv answers 200, or 307 to arxiv.org/abs/ID for a
// paper it lacks. Scripted faults (429 with and without Retry-After, 503,
// reset connections, truncated and oversized bodies, foreign redirects)
// can be attached to any path.
package fetchtest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/fixtures"
)

// Fault is a scripted misbehaviour served instead of the page.
type Fault string

// Faults a path can be scripted with. Each is served once, in order, before
// the path answers normally (unless the script ends with Forever).
const (
	TooMany         Fault = "429"             // 429 without Retry-After
	TooManyRetry1s  Fault = "429-retry-after" // 429 with Retry-After: 1
	Unavailable     Fault = "503"
	Reset           Fault = "reset"     // close the connection without a response
	TruncatedBody   Fault = "truncated" // Content-Length larger than the bytes sent
	ForeignRedirect Fault = "foreign"   // 302 to a host no service is configured for
	NotFoundFault   Fault = "404"
	Forever         Fault = "forever" // repeat the previous fault on every request
)

// Hit is one request the server received.
type Hit struct {
	Path string
	At   time.Time
	UA   string
}

// Site is one fake site (arXiv or ar5iv).
type Site struct {
	*httptest.Server
	mu      sync.Mutex
	pages   map[string][]byte // path -> page
	missing map[string]bool   // ar5iv: paths answered with 307 to arxiv.org/abs
	faults  map[string][]Fault
	hits    []Hit
	big     map[string]int // path -> size of an oversized generated body
}

// NewSite starts a fake site; it is closed when the test ends.
func NewSite(t testing.TB) *Site {
	s := &Site{pages: map[string][]byte{}, missing: map[string]bool{}, faults: map[string][]Fault{}, big: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Page serves page at path ("/html/2507.11127").
func (s *Site) Page(path string, page []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path] = page
}

// Fixture serves the recorded fixture file at path; the test is skipped
// when the shared fixtures are not present.
func (s *Site) Fixture(t testing.TB, path, file string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures.Dir(t, "arxiv-html"), file))
	if err != nil {
		t.Fatalf("fixture %s: %v", file, err)
	}
	s.Page(path, data)
}

// Lacks makes path answer as ar5iv does for a paper it lacks: 307 to
// https://arxiv.org/abs/ID.
func (s *Site) Lacks(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.missing[path] = true
}

// Oversized serves a generated body of n bytes at path.
func (s *Site) Oversized(path string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.big[path] = n
}

// Script attaches faults to path.
func (s *Site) Script(path string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[path] = append(s.faults[path], faults...)
}

// Hits returns the requests received so far, optionally only for path.
func (s *Site) Hits(path string) []Hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Hit
	for _, h := range s.hits {
		if path == "" || h.Path == path {
			out = append(out, h)
		}
	}
	return out
}

func (s *Site) nextFault(path string) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.faults[path]
	if len(q) == 0 {
		return ""
	}
	f := q[0]
	if len(q) > 1 && q[1] == Forever {
		return f
	}
	s.faults[path] = q[1:]
	return f
}

func (s *Site) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	s.mu.Lock()
	s.hits = append(s.hits, Hit{Path: path, At: time.Now(), UA: r.UserAgent()})
	page, ok := s.pages[path]
	lacks := s.missing[path]
	big := s.big[path]
	s.mu.Unlock()

	switch s.nextFault(path) {
	case TooMany:
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
		return
	case TooManyRetry1s:
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
		return
	case Unavailable:
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	case NotFoundFault:
		http.NotFound(w, r)
		return
	case ForeignRedirect:
		http.Redirect(w, r, "http://elsewhere.invalid"+path, http.StatusFound)
		return
	case Reset:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	case TruncatedBody:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, buf, err := hj.Hijack(); err == nil {
				body := page
				if len(body) == 0 {
					body = []byte("<html>")
				}
				fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n", len(body))
				buf.Write(body[:len(body)/2])
				buf.Flush()
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	switch {
	case big > 0:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		chunk := []byte(strings.Repeat("<p class=\"ltx_p\">padding</p>\n", 1024))
		for sent := 0; sent < big; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	case lacks:
		id := strings.TrimPrefix(path, "/html/")
		w.Header().Set("Location", "https://arxiv.org/abs/"+id)
		w.WriteHeader(http.StatusTemporaryRedirect)
	case ok:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(page)))
		w.Write(page)
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "<html><head><title>No HTML for '%s'</title></head><body><h1>No HTML for '%s'</h1></body></html>",
			strings.TrimPrefix(path, "/html/"), strings.TrimPrefix(path, "/html/"))
	}
}
