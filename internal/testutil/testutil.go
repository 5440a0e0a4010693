// Package testutil holds the helpers tests of several packages share: a
// buffer that goroutines may log into, and a recording HTTP test server,
// for tests that read what was sent or script each answer of a generic
// HTTP client themselves. (A fake that speaks a service's protocol belongs
// in package sim, not here: put a sim service behind the server to record
// what reaches it.)
package testutil

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// SyncBuffer is a bytes.Buffer safe for concurrent writes, for the logs of
// code that logs from several goroutines.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Request is one request a Server received.
type Request struct {
	N      int // 1-based, in order of arrival
	At     time.Time
	Method string
	URI    string // RequestURI, as sent on the wire
	Path   string // decoded
	Query  url.Values
	Header http.Header
	Body   []byte
	// HTTP is the request itself, for what the fields above leave out
	// (its context, http.Redirect); its body is Body again.
	HTTP *http.Request
}

// Server is an httptest server that records every request and answers
// with a handler the test writes. It is closed when the test ends.
type Server struct {
	*httptest.Server
	handle func(w http.ResponseWriter, r Request)

	mu        sync.Mutex
	requests  []Request
	inFlight  atomic.Int64
	maxFlight atomic.Int64
}

// NewServer starts a Server answering with handle.
func NewServer(tb testing.TB, handle func(w http.ResponseWriter, r Request)) *Server {
	tb.Helper()
	s := &Server{handle: handle}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	cur := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.maxFlight.Load(); cur > m && !s.maxFlight.CompareAndSwap(m, cur); m = s.maxFlight.Load() {
	}
	at := time.Now()
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	req := Request{
		At: at, Method: r.Method, URI: r.RequestURI, Path: r.URL.Path,
		Query: r.URL.Query(), Header: r.Header.Clone(), Body: body, HTTP: r,
	}
	s.mu.Lock()
	req.N = len(s.requests) + 1
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	s.handle(w, req)
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Count returns the number of requests received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Request returns the i-th request (from 0).
func (s *Server) Request(i int) Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[i]
}

// InFlight returns the requests the handler is answering now.
func (s *Server) InFlight() int { return int(s.inFlight.Load()) }

// MaxInFlight returns the most requests the handler was answering at once.
func (s *Server) MaxInFlight() int { return int(s.maxFlight.Load()) }

// WriteJSON answers with status and body, JSON-encoded unless it is a
// string or []byte, and the headers given as pairs.
func WriteJSON(w http.ResponseWriter, status int, body any, header ...string) {
	for i := 0; i+1 < len(header); i += 2 {
		w.Header().Set(header[i], header[i+1])
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	switch b := body.(type) {
	case string:
		io.WriteString(w, b)
	case []byte:
		w.Write(b)
	default:
		json.NewEncoder(w).Encode(b)
	}
}

// WriteZip writes a zip file at path holding files (entry name -> body),
// entries in name order.
func WriteZip(tb testing.TB, path string, files map[string][]byte) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.Create(name)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(files[name]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// Has reads the answer of a record.Kind's Has, failing tb on a read
// error: testutil.Has(t)(record.Documents.Has(ctx, st, item)).
func Has(tb testing.TB) func(ok bool, err error) bool {
	return func(ok bool, err error) bool {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return ok
	}
}
