package httpx_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/testutil"
)

const secret = "sk-PLANTED-SECRET-123"

// hit is one request as the test server saw it.
type hit = testutil.Request

// server is a test server that records every request and answers with
// handle, which gets the 1-based number of the request.
type server struct{ *testutil.Server }

func newServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *server {
	t.Helper()
	return &server{testutil.NewServer(t, func(w http.ResponseWriter, r testutil.Request) { handle(w, r.HTTP, r.N) })}
}

func (s *server) recorded() []hit { return s.Requests() }

func (s *server) count() int { return len(s.recorded()) }

// Handlers.

func reply(status int, body string, kv ...string) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, _ *http.Request, _ int) {
		for i := 0; i+1 < len(kv); i += 2 {
			w.Header().Set(kv[i], kv[i+1])
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// seq answers request n with hs[n-1], and with the last handler after that.
func seq(hs ...func(http.ResponseWriter, *http.Request, int)) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, n int) {
		hs[min(n, len(hs))-1](w, r, n)
	}
}

// reset closes the connection without a response, with an RST.
func reset(w http.ResponseWriter, _ *http.Request, _ int) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// truncated promises 100 bytes and sends 10.
func truncated(w http.ResponseWriter, _ *http.Request, _ int) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n0123456789")
	buf.Flush()
	conn.Close()
}

// truncatedChunked sends one chunk and closes before the last chunk.
func truncatedChunked(w http.ResponseWriter, _ *http.Request, _ int) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n")
	buf.Flush()
	conn.Close()
}

// Client setup.

type testConfig struct {
	httpx.Config
	svc httpx.ServiceConfig
}

// newService builds a client with one service "svc" pointing at base, with
// fast retries unless cfg says otherwise.
func newService(t *testing.T, base string, tc testConfig) *httpx.Service {
	t.Helper()
	tc.svc.Name = "svc"
	tc.svc.BaseURL = base
	c := newClient(t, tc.Config, tc.svc)
	s, err := c.Service("svc")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newClient(t *testing.T, cfg httpx.Config, svcs ...httpx.ServiceConfig) *httpx.Client {
	t.Helper()
	if cfg.UserAgent == "" {
		cfg.UserAgent = httpx.UserAgent("test", "test@example.org")
	}
	if cfg.RetryMax == 0 {
		cfg.RetryMax = 3
	}
	if cfg.RetryWaitMin == 0 {
		cfg.RetryWaitMin = 2 * time.Millisecond
	}
	if cfg.RetryWaitMax == 0 {
		cfg.RetryWaitMax = max(cfg.RetryWaitMin, 20*time.Millisecond)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	c, err := httpx.New(cfg, svcs...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGet(t *testing.T) {
	srv := newServer(t, reply(200, "hello", "Content-Type", "text/plain"))
	s := newService(t, srv.URL+"/graph/v1", testConfig{svc: httpx.ServiceConfig{
		Header: http.Header{"x-api-key": {secret}},
	}})

	resp, err := s.Do(context.Background(), httpx.Request{
		Path:   "paper/abc/references?fields=title",
		Query:  url.Values{"offset": {"500"}},
		Header: http.Header{"Accept": {"application/json"}, "User-Agent": {"spoofed"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || string(resp.Body) != "hello" || resp.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("got status %d body %q header %v", resp.Status, resp.Body, resp.Header)
	}
	want := srv.URL + "/graph/v1/paper/abc/references?fields=title&offset=500"
	if resp.URL != want {
		t.Errorf("URL = %q, want %q", resp.URL, want)
	}
	h := srv.recorded()[0]
	if h.URI != "/graph/v1/paper/abc/references?fields=title&offset=500" {
		t.Errorf("server saw %q", h.URI)
	}
	if got, want := h.Header.Get("User-Agent"), httpx.UserAgent("test", "test@example.org"); got != want {
		t.Errorf("User-Agent = %q, want %q", got, want)
	}
	if got := h.Header.Get("X-Api-Key"); got != secret {
		t.Errorf("x-api-key = %q, want the configured secret", got)
	}
	if got := h.Header.Get("Accept"); got != "application/json" {
		t.Errorf("Accept = %q", got)
	}

	// A leading slash still appends to the base path; absolute URLs on the
	// service's host work as is.
	for _, p := range []string{"/paper/abc", srv.URL + "/graph/v1/paper/abc"} {
		resp, err := s.Get(context.Background(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.URL != srv.URL+"/graph/v1/paper/abc" {
			t.Errorf("Get(%q) fetched %q", p, resp.URL)
		}
	}

	st := s.Stats()
	if st.Requests != 3 || st.Retries != 0 || st.Errors != 0 || st.Bytes != 15 {
		t.Errorf("stats = %+v", st)
	}
}

func TestGetForeignURL(t *testing.T) {
	srv := newServer(t, reply(200, "ok"))
	other := newServer(t, reply(200, "ok"))
	s := newService(t, srv.URL, testConfig{})
	_, err := s.Get(context.Background(), other.URL+"/x", nil)
	if err == nil || !strings.Contains(err.Error(), "not a configured service") {
		t.Fatalf("err = %v, want a foreign host error", err)
	}
	if other.count() != 0 {
		t.Errorf("foreign server was hit")
	}
}

func TestPost(t *testing.T) {
	var bodies []string
	var mu sync.Mutex
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.Method+" "+string(b))
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(502)
			return
		}
		io.WriteString(w, "done")
	})
	s := newService(t, srv.URL, testConfig{})
	resp, err := s.Do(context.Background(), httpx.Request{Method: "POST", Path: "/v1/chat", Body: []byte(`{"q":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 {
		t.Errorf("status %d", resp.Status)
	}
	// The body is resent on the retry.
	if want := []string{`POST {"q":1}`, `POST {"q":1}`}; !slices.Equal(bodies, want) {
		t.Errorf("server got %q, want %q", bodies, want)
	}
}

func TestStatusRetries(t *testing.T) {
	tests := []struct {
		name    string
		handle  func(http.ResponseWriter, *http.Request, int)
		waitMin time.Duration // RetryWaitMin
		// Outcome: a Response with status, or a *StatusError.
		status        int
		errStatus     int
		retryAfter    time.Duration
		hits          int
		minFirstRetry time.Duration // lower bound on the gap between hit 1 and 2
	}{
		{
			name:          "429 then 200 honours Retry-After seconds",
			handle:        seq(reply(429, "slow down", "Retry-After", "1"), reply(200, "ok")),
			status:        200,
			hits:          2,
			minFirstRetry: time.Second,
		},
		{
			name:          "429 without Retry-After backs off",
			handle:        seq(reply(429, "slow down"), reply(200, "ok")),
			waitMin:       100 * time.Millisecond,
			status:        200,
			hits:          2,
			minFirstRetry: 100 * time.Millisecond,
		},
		{
			name:       "429 asking for too long gives up at once",
			handle:     reply(429, "come back tomorrow", "Retry-After", "99999"),
			errStatus:  429,
			retryAfter: 99999 * time.Second,
			hits:       1,
		},
		{
			name:      "503 with an HTTP-date Retry-After far away gives up at once",
			handle:    reply(503, "maintenance", "Retry-After", time.Now().Add(48*time.Hour).UTC().Format(http.TimeFormat)),
			errStatus: 503,
			hits:      1,
		},
		{
			name:   "503 twice then 200",
			handle: seq(reply(503, "busy"), reply(503, "busy"), reply(200, "ok")),
			status: 200,
			hits:   3,
		},
		{
			name:      "503 forever exhausts the retries",
			handle:    reply(503, "busy"),
			errStatus: 503,
			hits:      4, // RetryMax 3 + 1
		},
		{
			name:      "500 forever exhausts the retries",
			handle:    reply(500, "oops"),
			errStatus: 500,
			hits:      4,
		},
		{
			name:   "404 is an answer, not retried",
			handle: reply(404, "no such paper"),
			status: 404,
			hits:   1,
		},
		{
			name:   "501 is not retried",
			handle: reply(501, "nope"),
			status: 501,
			hits:   1,
		},
		{
			name:   "400 is not retried",
			handle: reply(400, "bad"),
			status: 400,
			hits:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handle)
			s := newService(t, srv.URL, testConfig{Config: httpx.Config{RetryWaitMin: tt.waitMin}})
			resp, err := s.Get(context.Background(), "/x", nil)

			if tt.errStatus == 0 {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if resp.Status != tt.status {
					t.Errorf("status = %d, want %d", resp.Status, tt.status)
				}
			} else {
				var se *httpx.StatusError
				if !errors.As(err, &se) {
					t.Fatalf("err = %v (%T), want *StatusError", err, err)
				}
				if resp != nil {
					t.Errorf("got a response with the error")
				}
				if se.Status != tt.errStatus || se.Attempts != tt.hits || se.Service != "svc" || se.Method != "GET" || se.URL != srv.URL+"/x" {
					t.Errorf("StatusError = %+v", se)
				}
				if tt.retryAfter != 0 && se.RetryAfter != tt.retryAfter {
					t.Errorf("RetryAfter = %s, want %s", se.RetryAfter, tt.retryAfter)
				}
				if len(se.Body) == 0 {
					t.Errorf("StatusError has no body")
				}
				msg := err.Error()
				for _, want := range []string{srv.URL + "/x", fmt.Sprint(tt.errStatus)} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q does not mention %q", msg, want)
					}
				}
				if msg != strings.ToLower(msg[:1])+msg[1:] {
					t.Errorf("error %q starts with a capital", msg)
				}
			}

			hits := srv.recorded()
			if len(hits) != tt.hits {
				t.Errorf("server hit %d times, want %d", len(hits), tt.hits)
			}
			if tt.minFirstRetry > 0 && len(hits) >= 2 {
				if g := hits[1].At.Sub(hits[0].At); g < tt.minFirstRetry {
					t.Errorf("first retry after %s, want >= %s", g, tt.minFirstRetry)
				}
			}
			st := s.Stats()
			if st.Requests != int64(tt.hits) || st.Retries != int64(tt.hits-1) {
				t.Errorf("stats = %+v", st)
			}
			if wantErrs := int64(min(tt.errStatus, 1)); st.Errors != wantErrs {
				t.Errorf("stats.Errors = %d, want %d", st.Errors, wantErrs)
			}
		})
	}
}

func TestStatusErrorMessage(t *testing.T) {
	e := &httpx.StatusError{Service: "s2", Method: "GET", URL: "https://api.example/x", Status: 429, Attempts: 1, RetryAfter: time.Hour}
	want := "s2: GET https://api.example/x: status 429 (too many requests) after 1 attempt, server asks to retry after 1h0m0s"
	if e.Error() != want {
		t.Errorf("got  %q\nwant %q", e.Error(), want)
	}
}

func TestTransportFailures(t *testing.T) {
	ok := reply(200, "0123456789")
	tests := []struct {
		name    string
		handle  func(http.ResponseWriter, *http.Request, int)
		wantErr error // nil: success with body "0123456789"
		hits    int
	}{
		{"connection reset then 200", seq(reset, ok), nil, 2},
		{"truncated body then 200", seq(truncated, ok), nil, 2},
		{"truncated chunked body then 200", seq(truncatedChunked, ok), nil, 2},
		{"truncated forever", truncated, httpx.ErrTruncated, 4},
		{"connection reset forever", reset, nil, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handle)
			s := newService(t, srv.URL, testConfig{})
			resp, err := s.Get(context.Background(), "/x", nil)
			if tt.hits == 2 {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if string(resp.Body) != "0123456789" {
					t.Errorf("body = %q", resp.Body)
				}
			} else {
				if err == nil {
					t.Fatalf("got status %d body %q, want an error", resp.Status, resp.Body)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want it to wrap %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "giving up after 4 attempts") || !strings.Contains(err.Error(), srv.URL+"/x") {
					t.Errorf("err = %v", err)
				}
			}
			if n := srv.count(); n != tt.hits {
				t.Errorf("server hit %d times, want %d", n, tt.hits)
			}
		})
	}
}

// TestTimeoutSpansRetries: the service's timeout bounds a request over
// all its attempts. A server that holds the connection is given one
// attempt, not RetryMax+1 timeouts; attempts that fail slowly each get
// what the earlier ones left, and the request ends when it is spent.
func TestTimeoutSpansRetries(t *testing.T) {
	hung := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		<-r.Context().Done() // hold the connection until the client gives up
	})
	s := newService(t, hung.URL, testConfig{Config: httpx.Config{Timeout: 100 * time.Millisecond, RetryMax: 5}})
	_, err := s.Get(context.Background(), "/slow", nil)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err %v, want a timeout", err)
	}
	if n := hung.count(); n != 1 {
		t.Errorf("%d attempts at a server holding the connection, want 1", n)
	}

	// Each attempt is on the wire at least 40ms and fails with a reset;
	// the transport notes the time each was given.
	const timeout, slow = 200 * time.Millisecond, 40 * time.Millisecond
	var given []time.Duration
	rt := roundTripper(func(r *http.Request) (*http.Response, error) {
		dl, ok := r.Context().Deadline()
		if !ok {
			t.Fatal("an attempt without a deadline")
		}
		given = append(given, time.Until(dl))
		time.Sleep(slow)
		return nil, errors.New("connection reset by peer")
	})
	s = newService(t, "http://reset.example", testConfig{Config: httpx.Config{Timeout: timeout, RetryMax: 50, Transport: rt}})
	_, err = s.Get(context.Background(), "/", nil)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("err %v, want a timeout once the request's time is spent", err)
	}
	if len(given) < 2 || len(given) > int(timeout/slow) {
		t.Errorf("%d attempts, want 2 to %d: each takes at least %s of %s", len(given), timeout/slow, slow, timeout)
	}
	for i, g := range given {
		if most := timeout - time.Duration(i)*slow; g > most {
			t.Errorf("attempt %d was given %s, more than the %s the earlier ones left", i+1, g, most)
		}
	}

	// Per attempt (the LLM client's choice, under its own deadline), a
	// hung attempt is retried.
	srv := newServer(t, seq(
		func(w http.ResponseWriter, r *http.Request, _ int) { <-r.Context().Done() },
		reply(200, "ok"),
	))
	s = newService(t, srv.URL, testConfig{Config: httpx.Config{Timeout: 100 * time.Millisecond}, svc: httpx.ServiceConfig{TimeoutPerAttempt: true}})
	resp, err := s.Get(context.Background(), "/slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	// At least 2: on a loaded machine the quick second answer may itself
	// miss the 100ms and take a third attempt; that is not what is tested.
	if resp.Status != 200 || srv.count() < 2 {
		t.Errorf("status %d after %d hits, want 200 after the hung attempt was abandoned", resp.Status, srv.count())
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTooLarge(t *testing.T) {
	const limit = 1024
	tests := []struct {
		name    string
		handle  func(http.ResponseWriter, *http.Request, int)
		wantErr bool
	}{
		{"content-length over the cap", func(w http.ResponseWriter, _ *http.Request, _ int) {
			w.Header().Set("Content-Length", "4096")
			w.Write(bytes.Repeat([]byte("x"), 4096))
		}, true},
		{"chunked stream over the cap", func(w http.ResponseWriter, _ *http.Request, _ int) {
			for range 8 {
				if _, err := w.Write(bytes.Repeat([]byte("x"), 512)); err != nil {
					return
				}
				http.NewResponseController(w).Flush()
			}
		}, true},
		{"exactly the cap", reply(200, strings.Repeat("x", limit)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handle)
			s := newService(t, srv.URL, testConfig{Config: httpx.Config{MaxBody: limit}})
			resp, err := s.Get(context.Background(), "/big", nil)
			if !tt.wantErr {
				if err != nil || len(resp.Body) != limit {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if !errors.Is(err, httpx.ErrTooLarge) {
				t.Fatalf("err = %v, want ErrTooLarge", err)
			}
			if n := srv.count(); n != 1 {
				t.Errorf("server hit %d times, want 1", n)
			}
		})
	}
}

// TestRedirectCredentials: a redirect to user:pass@ an allowed host is
// followed without the credentials (http.Client would send them as Basic
// auth), and no URL handed back keeps them; a request naming credentials
// itself is refused before it is sent.
func TestRedirectCredentials(t *testing.T) {
	var final atomic.Pointer[http.Request]
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/to-creds":
			u, _ := url.Parse("http://" + r.Host + "/final")
			u.User = url.UserPassword("someone", "hunter2-PLANTED")
			w.Header().Set("Location", u.String())
			w.WriteHeader(http.StatusFound)
		case "/final":
			final.Store(r)
			io.WriteString(w, "ok")
		}
	})
	s := newService(t, srv.URL, testConfig{})
	resp, err := s.Get(context.Background(), "/to-creds", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := final.Load()
	if r == nil {
		t.Fatal("the redirect was not followed")
	}
	if a := r.Header.Get("Authorization"); a != "" {
		t.Errorf("the redirect's credentials were sent: Authorization %q", a)
	}
	if strings.Contains(resp.URL, "hunter2") || strings.Contains(resp.URL, "someone") || !strings.HasSuffix(resp.URL, "/final") {
		t.Errorf("final URL %q", resp.URL)
	}
	resp, err = s.Do(context.Background(), httpx.Request{Path: "/to-creds", NoRedirect: true})
	if err != nil || resp.Location == "" || strings.Contains(resp.Location, "hunter2") {
		t.Errorf("unfollowed redirect: location %q, err %v", resp.Location, err)
	}
	n := srv.count()
	u, _ := url.Parse(srv.URL + "/final")
	u.User = url.UserPassword("someone", "hunter2-PLANTED")
	if _, err := s.Get(context.Background(), u.String(), nil); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a URL with credentials: err %v, want a refusal that does not repeat them", err)
	}
	if srv.count() != n {
		t.Error("a URL with credentials was sent")
	}
}

// TestStream: a streamed body is read as it comes, without the MaxBody
// cap; one that breaks off is read again from the start; the stream's own
// error ends the call; a non-2xx answer is buffered as usual.
func TestStream(t *testing.T) {
	const limit = 1024
	big := strings.Repeat("0123456789abcdef\n", 4*limit/16)
	for _, tt := range []struct {
		name    string
		handle  func(http.ResponseWriter, *http.Request, int)
		fail    error // the stream's own error
		reads   int   // times the stream is called
		wantErr string
		status  int
	}{
		{"over the cap", reply(200, big), nil, 1, "", 200},
		{"cut, then whole", seq(truncated, reply(200, big)), nil, 2, "", 200},
		{"the stream's error", reply(200, big), errors.New("disk full"), 1, "disk full", 0},
		{"an error status", reply(400, `{"error":"bad"}`), nil, 0, "", 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handle)
			s := newService(t, srv.URL, testConfig{Config: httpx.Config{MaxBody: limit}})
			reads, got := 0, 0
			resp, err := s.Do(context.Background(), httpx.Request{Path: "/results", Stream: func(r io.Reader) error {
				reads++
				b, err := io.ReadAll(r)
				got = len(b)
				if err != nil {
					return err
				}
				return tt.fail
			}})
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || srv.count() != 1 {
					t.Errorf("err %v after %d requests, want %q and no retry", err, srv.count(), tt.wantErr)
				}
			case err != nil:
				t.Fatalf("err = %v", err)
			case resp.Status != tt.status || reads != tt.reads:
				t.Errorf("status %d, %d reads; want %d and %d", resp.Status, reads, tt.status, tt.reads)
			case tt.status == 200 && got != len(big):
				t.Errorf("read %d bytes, want %d", got, len(big))
			case tt.status != 200 && string(resp.Body) != `{"error":"bad"}`:
				t.Errorf("error body %q", resp.Body)
			}
		})
	}
}

// TestStreamRedacted: a streamed body is redacted as a buffered one is,
// a line at a time.
func TestStreamRedacted(t *testing.T) {
	const secret = "sk-streamed-secret-123456"
	srv := newServer(t, reply(200, "{\"echo\":\""+secret+"\"}\n"+strings.Repeat("x", 100)+"\n{\"again\":\""+secret+"\"}"))
	s := newService(t, srv.URL, testConfig{Config: httpx.Config{Secrets: []string{secret}}})
	var got []byte
	if _, err := s.Do(context.Background(), httpx.Request{Path: "/results", Stream: func(r io.Reader) error {
		b, err := io.ReadAll(r)
		got = b
		return err
	}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), secret) || strings.Count(string(got), "\n") != 2 {
		t.Errorf("streamed body %q", got)
	}
}

func TestRedirects(t *testing.T) {
	b := newServer(t, reply(200, "from b"))
	foreign := newServer(t, reply(200, "from foreign"))
	a := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/to-b":
			http.Redirect(w, r, b.URL+"/final", http.StatusFound)
		case "/to-foreign":
			http.Redirect(w, r, foreign.URL+"/x", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/ar5iv":
			http.Redirect(w, r, "https://arxiv.org/abs/2401.00001", http.StatusTemporaryRedirect)
		case "/relative":
			http.Redirect(w, r, "/html/2401.00001", http.StatusTemporaryRedirect)
		default:
			http.NotFound(w, r)
		}
	})
	c := newClient(t, httpx.Config{},
		httpx.ServiceConfig{Name: "a", BaseURL: a.URL, Header: http.Header{"X-Api-Key": {secret}}},
		httpx.ServiceConfig{Name: "b", BaseURL: b.URL, Header: http.Header{"X-B-Key": {"b-secret-value"}}},
	)
	s, _ := c.Service("a")
	ctx := context.Background()

	t.Run("to a configured host is followed", func(t *testing.T) {
		resp, err := s.Get(ctx, "/to-b", nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != 200 || string(resp.Body) != "from b" || resp.URL != b.URL+"/final" || resp.Location != "" {
			t.Errorf("got %+v", resp)
		}
		h := b.recorded()[0].Header
		if h.Get("X-Api-Key") != "" || h.Get("X-B-Key") != "" {
			t.Errorf("secret headers crossed hosts: %v", h)
		}
		if h.Get("User-Agent") == "" {
			t.Errorf("redirect hop lacks User-Agent")
		}
	})

	t.Run("to a foreign host fails", func(t *testing.T) {
		before := a.count()
		_, err := s.Get(ctx, "/to-foreign", nil)
		if !errors.Is(err, httpx.ErrForeignRedirect) {
			t.Fatalf("err = %v, want ErrForeignRedirect", err)
		}
		if host := strings.TrimPrefix(foreign.URL, "http://"); !strings.Contains(err.Error(), host) {
			t.Errorf("err %q does not name %s", err, host)
		}
		if foreign.count() != 0 || a.count()-before != 1 {
			t.Errorf("foreign hit %d times, a hit %d times", foreign.count(), a.count()-before)
		}
	})

	t.Run("loop stops and is not retried", func(t *testing.T) {
		before := a.count()
		_, err := s.Get(ctx, "/loop", nil)
		if err == nil || !strings.Contains(err.Error(), "redirects") {
			t.Fatalf("err = %v", err)
		}
		if n := a.count() - before; n != 6 {
			t.Errorf("a hit %d times, want 6 (5 redirects followed)", n)
		}
	})

	t.Run("NoRedirect returns the 3xx", func(t *testing.T) {
		for path, loc := range map[string]string{
			"/ar5iv":    "https://arxiv.org/abs/2401.00001",
			"/relative": a.URL + "/html/2401.00001",
		} {
			resp, err := s.Do(ctx, httpx.Request{Path: path, NoRedirect: true})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != http.StatusTemporaryRedirect || resp.Location != loc {
				t.Errorf("%s: status %d location %q, want 307 %q", path, resp.Status, resp.Location, loc)
			}
		}
	})
}

// grantLog records a client's limiter grants (Config.OnGrant).
type grantLog struct {
	mu     sync.Mutex
	grants []httpx.Grant
}

func (g *grantLog) record(gr httpx.Grant) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.grants = append(g.grants, gr)
}

func (g *grantLog) of(service string) []httpx.Grant {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []httpx.Grant
	for _, gr := range g.grants {
		if gr.Service == service {
			out = append(out, gr)
		}
	}
	return out
}

// checkSchedule asserts a limiter's own schedule: every request the server
// saw was granted, grants are at least the interval in force apart (never
// below the configured interval with its margin: a server enforcing the
// rate with no burst sees requests arrive with jitter), and no request
// reached the server before its grant. None of these can be broken by a
// slow scheduler, unlike a gap between arrivals.
func checkSchedule(t *testing.T, grants []httpx.Grant, hits []hit, want int, interval time.Duration) {
	t.Helper()
	if len(hits) != want || len(grants) != want {
		t.Fatalf("server hit %d times, limiter granted %d, want %d", len(hits), len(grants), want)
	}
	for i := 1; i < len(grants); i++ {
		// The interval in force at a grant spaces it from the one before,
		// however the pacing changed it in between.
		if grants[i].Interval < httpx.Paced(interval) {
			t.Errorf("grant %d at interval %s, below the configured %s and its %s margin", i, grants[i].Interval, interval, httpx.Margin(interval))
		}
		if g := grants[i].At.Sub(grants[i-1].At); g < grants[i].Interval {
			t.Errorf("grants %d and %d %s apart, want >= %s", i-1, i, g, grants[i].Interval)
		}
	}
	// Hits are in order of arrival; the k-th arrival cannot precede the
	// k-th grant, whatever the order the requests overtook each other in.
	for k := range hits {
		if hits[k].At.Before(grants[k].At) {
			t.Errorf("request %d arrived at %s, before its grant at %s", k, hits[k].At.Format(time.StampMicro), grants[k].At.Format(time.StampMicro))
		}
	}
}

func TestRateLimit(t *testing.T) {
	const interval = 200 * time.Millisecond
	setup := func(t *testing.T, handle func(http.ResponseWriter, *http.Request, int), svc httpx.ServiceConfig) (*server, *httpx.Service, *grantLog) {
		srv := newServer(t, handle)
		gl := &grantLog{}
		s := newService(t, srv.URL, testConfig{Config: httpx.Config{OnGrant: gl.record}, svc: svc})
		return srv, s, gl
	}
	paced := httpx.ServiceConfig{Interval: interval}

	t.Run("sequential", func(t *testing.T) {
		srv, s, gl := setup(t, reply(200, "ok"), paced)
		for range 5 {
			if _, err := s.Get(context.Background(), "/x", nil); err != nil {
				t.Fatal(err)
			}
		}
		checkSchedule(t, gl.of("svc"), srv.recorded(), 5, interval)
	})

	t.Run("concurrent", func(t *testing.T) {
		srv, s, gl := setup(t, reply(200, "ok"), paced)
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				if _, err := s.Get(context.Background(), "/x", nil); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		checkSchedule(t, gl.of("svc"), srv.recorded(), 5, interval)
	})

	t.Run("retries take tokens too", func(t *testing.T) {
		// The backoff of a few ms is far below the interval.
		srv, s, gl := setup(t, seq(reply(503, ""), reply(200, "ok")), paced)
		if _, err := s.Get(context.Background(), "/x", nil); err != nil {
			t.Fatal(err)
		}
		checkSchedule(t, gl.of("svc"), srv.recorded(), 2, interval)
	})

	t.Run("SetInterval", func(t *testing.T) {
		srv, s, gl := setup(t, reply(200, "ok"), httpx.ServiceConfig{})
		if s.Interval() != 0 {
			t.Errorf("Interval = %s, want 0", s.Interval())
		}
		s.SetInterval(interval)
		if d := s.Interval(); d != httpx.Paced(interval) || s.Configured() != interval {
			t.Errorf("Interval = %s, configured %s; want %s and %s", d, s.Configured(), httpx.Paced(interval), interval)
		}
		for range 3 {
			if _, err := s.Get(context.Background(), "/x", nil); err != nil {
				t.Fatal(err)
			}
		}
		checkSchedule(t, gl.of("svc"), srv.recorded(), 3, interval)
		for _, g := range gl.of("svc") {
			if g.Interval != s.Interval() || g.Method != "GET" || g.URL != srv.URL+"/x" {
				t.Errorf("grant %+v, want GET %s at interval %s", g, srv.URL+"/x", s.Interval())
			}
		}
	})

	t.Run("unlimited", func(t *testing.T) {
		srv, s, gl := setup(t, reply(200, "ok"), httpx.ServiceConfig{})
		for range 3 {
			if _, err := s.Get(context.Background(), "/x", nil); err != nil {
				t.Fatal(err)
			}
		}
		checkSchedule(t, gl.of("svc"), srv.recorded(), 3, 0)
	})
}

func TestMaxInFlight(t *testing.T) {
	var cur, peak atomic.Int32
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		n := cur.Add(1)
		defer cur.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(30 * time.Millisecond)
		io.WriteString(w, "ok")
	})
	s := newService(t, srv.URL, testConfig{svc: httpx.ServiceConfig{MaxInFlight: 1}})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := s.Get(context.Background(), "/x", nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p != 1 {
		t.Errorf("peak concurrency %d, want 1", p)
	}
}

func TestSecretNeverLeaks(t *testing.T) {
	// The server echoes the key back in bodies, the worst case for errors
	// that quote a body.
	echo := func(status int) func(http.ResponseWriter, *http.Request, int) {
		return func(w http.ResponseWriter, r *http.Request, _ int) {
			w.WriteHeader(status)
			io.WriteString(w, "your key was "+r.Header.Get("X-Api-Key"))
		}
	}
	foreign := newServer(t, reply(200, "ok"))
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch r.URL.Path {
		case "/404":
			echo(404)(w, r, n)
		case "/503":
			echo(503)(w, r, n)
		case "/429":
			w.Header().Set("Retry-After", "99999")
			echo(429)(w, r, n)
		case "/foreign":
			http.Redirect(w, r, foreign.URL+"/?key="+r.Header.Get("X-Api-Key"), http.StatusFound)
		case "/big":
			io.WriteString(w, strings.Repeat(r.Header.Get("X-Api-Key"), 100))
		case "/truncated":
			truncated(w, r, n)
		case "/reset":
			reset(w, r, n)
		}
	})

	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newClient(t, httpx.Config{Logger: logger, MaxBody: 1000},
		httpx.ServiceConfig{Name: "s2", BaseURL: srv.URL, Header: http.Header{"x-api-key": {secret}}})
	s, _ := c.Service("s2")

	var emitted []string
	for _, p := range []string{"/404", "/503", "/429", "/foreign", "/big", "/truncated?api_key=" + secret, "/reset?access_token=" + secret, "/ok?api_key=" + secret} {
		resp, err := s.Get(context.Background(), p, nil)
		if err != nil {
			var se *httpx.StatusError
			if errors.As(err, &se) {
				emitted = append(emitted, string(se.Body), se.URL)
			}
			emitted = append(emitted, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
			for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
				emitted = append(emitted, e.Error())
			}
		} else {
			emitted = append(emitted, resp.Location)
		}
	}
	emitted = append(emitted, fmt.Sprintf("%+v", s.Stats()))
	mu.Lock()
	emitted = append(emitted, logs.String())
	mu.Unlock()

	if !strings.Contains(emitted[len(emitted)-1], "attempt") {
		t.Fatalf("no attempt logged; the test is not looking at the logs")
	}
	if srv.recorded()[0].Header.Get("X-Api-Key") != secret {
		t.Fatalf("the server never got the secret; the test proves nothing")
	}
	for _, text := range emitted {
		if strings.Contains(text, secret) || strings.Contains(text, "PLANTED") {
			t.Errorf("secret leaked in %q", text)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestContextCancel(t *testing.T) {
	// await fails the test if Do hangs: a liveness guard, not a timing
	// assertion; Do should return within milliseconds.
	await := func(t *testing.T, do func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- do() }()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("Do did not return after the context ended")
			return nil
		}
	}

	t.Run("during limiter wait", func(t *testing.T) {
		srv := newServer(t, reply(200, "ok"))
		s := newService(t, srv.URL, testConfig{svc: httpx.ServiceConfig{Interval: time.Hour}})
		if _, err := s.Get(context.Background(), "/first", nil); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		err := await(t, func() error { _, err := s.Get(ctx, "/second", nil); return err })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if srv.count() != 1 {
			t.Errorf("server hit %d times", srv.count())
		}
	})

	t.Run("limiter wait past the deadline", func(t *testing.T) {
		srv := newServer(t, reply(200, "ok"))
		s := newService(t, srv.URL, testConfig{svc: httpx.ServiceConfig{Interval: time.Hour}})
		if _, err := s.Get(context.Background(), "/first", nil); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := await(t, func() error { _, err := s.Get(ctx, "/second", nil); return err })
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
	})

	t.Run("during backoff", func(t *testing.T) {
		srv := newServer(t, reply(503, "busy"))
		ctx, cancel := context.WithCancel(context.Background())
		// Cancel once the client has logged that it is backing off.
		logger := slog.New(onMessage{"http retry", cancel, slog.NewTextHandler(t.Output(), nil)})
		s := newService(t, srv.URL, testConfig{Config: httpx.Config{RetryWaitMin: time.Hour, RetryWaitMax: time.Hour, Logger: logger}})
		err := await(t, func() error { _, err := s.Get(ctx, "/x", nil); return err })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if srv.count() != 1 {
			t.Errorf("server hit %d times", srv.count())
		}
	})

	t.Run("during a slow response", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			cancel()
			<-r.Context().Done()
		})
		s := newService(t, srv.URL, testConfig{})
		err := await(t, func() error { _, err := s.Get(ctx, "/x", nil); return err })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if srv.count() != 1 {
			t.Errorf("server hit %d times", srv.count())
		}
	})
}

// onMessage is a slog.Handler that calls fn when a record with message msg
// is logged.
type onMessage struct {
	msg  string
	fn   func()
	next slog.Handler
}

func (h onMessage) Enabled(context.Context, slog.Level) bool { return true }
func (h onMessage) WithAttrs(as []slog.Attr) slog.Handler {
	return onMessage{h.msg, h.fn, h.next.WithAttrs(as)}
}
func (h onMessage) WithGroup(name string) slog.Handler {
	return onMessage{h.msg, h.fn, h.next.WithGroup(name)}
}
func (h onMessage) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.fn()
	}
	return h.next.Handle(ctx, r)
}

func TestNew(t *testing.T) {
	ok := httpx.Config{UserAgent: "curate/test"}
	tests := []struct {
		name string
		cfg  httpx.Config
		svcs []httpx.ServiceConfig
		want []string // substrings of the error
	}{
		{"no user agent", httpx.Config{}, []httpx.ServiceConfig{{Name: "a", BaseURL: "https://a.example"}}, []string{"user agent"}},
		{"no services", ok, nil, []string{"no services"}},
		{"unparsable base url", ok, []httpx.ServiceConfig{{Name: "arxiv", BaseURL: "https://arxiv.org/%zz"}}, []string{"arxiv", "https://arxiv.org/%zz"}},
		{"relative base url", ok, []httpx.ServiceConfig{{Name: "arxiv", BaseURL: "arxiv.org"}}, []string{"arxiv", `"arxiv.org"`}},
		{"ftp base url", ok, []httpx.ServiceConfig{{Name: "s2", BaseURL: "ftp://api.example"}}, []string{"s2", "ftp://api.example"}},
		{"empty name", ok, []httpx.ServiceConfig{{BaseURL: "https://a.example"}}, []string{"empty name", "https://a.example"}},
		{"duplicate name", ok, []httpx.ServiceConfig{{Name: "a", BaseURL: "https://a.example"}, {Name: "a", BaseURL: "https://b.example"}}, []string{`"a"`, "twice"}},
		{"wait min above max", httpx.Config{UserAgent: "x", RetryWaitMin: time.Minute, RetryWaitMax: time.Second}, []httpx.ServiceConfig{{Name: "a", BaseURL: "https://a.example"}}, []string{"retry wait"}},
		{"line break in secret", ok, []httpx.ServiceConfig{{Name: "a", BaseURL: "https://a.example", Header: http.Header{"X-Api-Key": {"sk-PLANTED\r\nX: y"}}}}, []string{"X-Api-Key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := httpx.New(tt.cfg, tt.svcs...)
			if err == nil {
				t.Fatal("New succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "PLANTED") {
				t.Errorf("err %q leaks a secret", err)
			}
		})
	}

	c, err := httpx.New(ok, httpx.ServiceConfig{Name: "arxiv", BaseURL: "https://arxiv.org"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Service("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Service(nope) err = %v", err)
	}
	s, err := c.Service("arxiv")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "arxiv" || s.BaseURL().String() != "https://arxiv.org/" {
		t.Errorf("service %q at %s", s.Name(), s.BaseURL())
	}
	s.BaseURL().Path = "/changed"
	if s.BaseURL().Path != "/" {
		t.Errorf("BaseURL returned the service's own URL")
	}
}

func TestUserAgent(t *testing.T) {
	tests := []struct{ version, mailto, want string }{
		{"0.1", "someone@example.org", "curate/0.1 (+https://github.com/groundwork/curate; mailto:someone@example.org)"},
		{"0.1", "", "curate/0.1 (+https://github.com/groundwork/curate)"},
		{"", "", "curate/dev (+https://github.com/groundwork/curate)"},
	}
	for _, tt := range tests {
		if got := httpx.UserAgent(tt.version, tt.mailto); got != tt.want {
			t.Errorf("UserAgent(%q, %q) = %q, want %q", tt.version, tt.mailto, got, tt.want)
		}
	}
}

func TestServiceTimeoutOverride(t *testing.T) {
	// The client-wide timeout would cut the slow answer; the service's own,
	// longer one lets it through.
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		time.Sleep(150 * time.Millisecond)
		io.WriteString(w, "slow but fine")
	})
	s := newService(t, srv.URL, testConfig{
		Config: httpx.Config{Timeout: 50 * time.Millisecond, RetryMax: -1},
		svc:    httpx.ServiceConfig{Timeout: 5 * time.Second},
	})
	resp, err := s.Get(context.Background(), "/gen", nil)
	if err != nil || resp.Status != 200 {
		t.Fatalf("status %v, err %v", resp, err)
	}
	if srv.count() != 1 {
		t.Errorf("%d attempts, want 1", srv.count())
	}
}

func TestNoRetry(t *testing.T) {
	// The service's 500 is final: returned at once, not retried; its 503
	// is still retried.
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch {
		case r.URL.Path == "/fail":
			http.Error(w, "[BAD_INPUT_DATA] conversion failed", http.StatusInternalServerError)
		case n == 2: // the first /busy
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			io.WriteString(w, "done")
		}
	})
	s := newService(t, srv.URL, testConfig{svc: httpx.ServiceConfig{NoRetry: []int{http.StatusInternalServerError}}})
	resp, err := s.Get(context.Background(), "/fail", nil)
	if err != nil || resp.Status != http.StatusInternalServerError || !strings.Contains(string(resp.Body), "BAD_INPUT_DATA") {
		t.Fatalf("got %+v, %v; want the 500 with its body", resp, err)
	}
	if srv.count() != 1 {
		t.Errorf("%d attempts for a final 500, want 1", srv.count())
	}
	resp, err = s.Get(context.Background(), "/busy", nil)
	if err != nil || resp.Status != http.StatusOK {
		t.Fatalf("got %+v, %v; want the 503 retried into a 200", resp, err)
	}
	if srv.count() != 3 {
		t.Errorf("%d attempts in all, want 3 (500, 503, 200)", srv.count())
	}
}

// refusingTransport refuses every request by policy, as a dialer that
// will not connect to an address does.
type refusingTransport struct{ n atomic.Int64 }

func (rt *refusingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	rt.n.Add(1)
	return nil, fmt.Errorf("dial 10.0.0.1:80: %w", httpx.ErrPolicy)
}

func TestPolicyRefusalNotRetried(t *testing.T) {
	rt := &refusingTransport{}
	s := newService(t, "http://pdf.example.org", testConfig{Config: httpx.Config{Transport: rt, RetryMax: 3}})
	_, err := s.Get(context.Background(), "/x.pdf", nil)
	if !errors.Is(err, httpx.ErrPolicy) {
		t.Fatalf("got %v, want ErrPolicy", err)
	}
	if n := rt.n.Load(); n != 1 {
		t.Errorf("%d attempts, want 1: a refusal by policy is final", n)
	}
}

func TestGuard(t *testing.T) {
	errNo := errors.New("not here")
	var flaky atomic.Int32
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/to-secret":
			http.Redirect(w, r, "/secret/x", http.StatusFound)
		case "/flaky":
			if flaky.Add(1) == 1 {
				w.WriteHeader(503)
				return
			}
			io.WriteString(w, "ok")
		default:
			io.WriteString(w, "ok")
		}
	})
	s := newService(t, srv.URL, testConfig{})
	var mu sync.Mutex
	var checked []string
	s.SetGuard(func(_ context.Context, u *url.URL) error {
		mu.Lock()
		checked = append(checked, u.Path)
		mu.Unlock()
		if strings.HasPrefix(u.Path, "/secret") {
			return fmt.Errorf("guard: %s: %w", u.Path, errNo)
		}
		return nil
	})
	ctx := context.Background()
	for _, p := range []string{"/secret/y", "/to-secret"} {
		_, err := s.Get(ctx, p, nil)
		if !errors.Is(err, errNo) || !strings.Contains(err.Error(), "/secret") {
			t.Errorf("%s: err = %v, want the guard's refusal", p, err)
		}
	}
	if _, err := s.Get(ctx, "/flaky", nil); err != nil {
		t.Fatal(err)
	}
	for _, h := range srv.recorded() {
		if strings.HasPrefix(h.URI, "/secret") {
			t.Errorf("refused request %s reached the server", h.URI)
		}
	}
	mu.Lock()
	got := slices.Clone(checked)
	mu.Unlock()
	// Refusals are not retried; the redirect hop and the retry are checked.
	want := []string{"/secret/y", "/to-secret", "/secret/x", "/flaky", "/flaky"}
	if !slices.Equal(got, want) {
		t.Errorf("guard checked %q, want %q", got, want)
	}
	s.SetGuard(nil)
	if _, err := s.Get(ctx, "/secret/z", nil); err != nil {
		t.Errorf("guard removed, still refused: %v", err)
	}
}

// TestHostKey: the one rule by which hosts are compared: a scheme's
// default port is no port, case and a trailing dot do not matter.
func TestHostKey(t *testing.T) {
	for raw, want := range map[string]string{
		"https://arxiv.org/pdf/1":      "arxiv.org",
		"https://arxiv.org:443/pdf/1":  "arxiv.org",
		"https://ARXIV.org./pdf/1":     "arxiv.org",
		"http://arxiv.org:80/":         "arxiv.org",
		"http://arxiv.org:443/":        "arxiv.org:443",
		"https://arxiv.org:80/":        "arxiv.org:80",
		"https://arxiv.org:8443/":      "arxiv.org:8443",
		"http://[::1]:80/":             "[::1]",
		"http://[::1]:8080/":           "[::1]:8080",
		"http://127.0.0.1:8080/robots": "127.0.0.1:8080",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := httpx.HostKey(u); got != want {
			t.Errorf("HostKey(%s) = %q, want %q", raw, got, want)
		}
	}
}
