package httpx_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/httpx"
)

// TestNoSuchHost: a name that does not resolve is asked once, not retried,
// and the error names the host.
func TestNoSuchHost(t *testing.T) {
	var dials atomic.Int32
	tr := &http.Transport{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
		dials.Add(1)
		host, _, _ := net.SplitHostPort(addr)
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}}
	s := newService(t, "https://arxiv.invalid", testConfig{Config: httpx.Config{RetryMax: 5, Transport: tr}})
	_, err := s.Get(context.Background(), "/robots.txt", nil)
	var nh *httpx.NoSuchHostError
	if !errors.As(err, &nh) || nh.Host != "arxiv.invalid" || nh.Service != "svc" || !strings.Contains(err.Error(), "cannot reach arxiv.invalid: no such host") {
		t.Fatalf("err %v, want a NoSuchHostError for arxiv.invalid", err)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}

	// A resolver that cannot be reached says nothing about the name: that
	// is retried.
	dials.Store(0)
	tr = &http.Transport{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
		dials.Add(1)
		host, _, _ := net.SplitHostPort(addr)
		return nil, &net.DNSError{Err: "server misbehaving", Name: host, IsTemporary: true}
	}}
	s = newService(t, "https://arxiv.invalid", testConfig{Config: httpx.Config{RetryMax: 2, Transport: tr}})
	if _, err := s.Get(context.Background(), "/robots.txt", nil); errors.As(err, &nh) || dials.Load() != 3 {
		t.Errorf("a temporary resolver failure: err %v after %d attempts, want 3 attempts", err, dials.Load())
	}
}

// TestStopCutsRetries: once Config.Stop closes, a request sleeping before
// its retry gives up at once with ErrStopped, as does one waiting out the
// service's Retry-After pause; an attempt on the wire finishes. Each
// would otherwise sleep an hour; 30 s is only how long the test waits
// before calling it a hang.
func TestStopCutsRetries(t *testing.T) {
	stop := make(chan struct{})
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		switch r.URL.Path {
		case "/busy":
			reply(503, "busy")(w, r, 0)
		case "/pause":
			reply(429, "wait", "Retry-After", "3000")(w, r, 0)
		case "/slow":
			<-release
			reply(200, "done")(w, r, 0)
		}
	})
	s := newService(t, srv.URL, testConfig{Config: httpx.Config{Stop: stop, RetryMax: 5, RetryWaitMin: time.Hour, MaxRetryAfter: time.Hour}})
	type result struct {
		resp *httpx.Response
		err  error
	}
	do := func(path string) <-chan result {
		ch := make(chan result, 1)
		go func() {
			resp, err := s.Get(context.Background(), path, nil)
			ch <- result{resp, err}
		}()
		return ch
	}
	waitHits := func(n int) {
		for srv.count() < n {
			time.Sleep(time.Millisecond)
		}
	}
	busy := do("/busy")
	waitHits(1)
	slow := do("/slow")
	waitHits(2)
	paused := do("/pause") // its 429 pauses the service for 50 min
	for !s.PausedUntil().After(time.Now()) {
		time.Sleep(time.Millisecond)
	}
	behind := do("/busy") // waits out the pause before its first attempt
	time.Sleep(10 * time.Millisecond)
	close(stop)
	for name, ch := range map[string]<-chan result{"backoff": busy, "retry-after": paused, "pause": behind} {
		select {
		case r := <-ch:
			if !errors.Is(r.err, httpx.ErrStopped) || !errors.Is(r.err, context.Canceled) {
				t.Errorf("%s: err %v, want ErrStopped", name, r.err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: still waiting 30s after the stop", name)
		}
	}
	close(release)
	if r := <-slow; r.err != nil || string(r.resp.Body) != "done" {
		t.Errorf("the attempt on the wire: %v", r.err)
	}
	if n := srv.count(); n != 3 {
		t.Errorf("%d requests reached the server, want 3 (no retry after the stop)", n)
	}
}
