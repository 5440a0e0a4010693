package httpx_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/httpx"
)

// TestPacingSlowsDownAfter429 checks that a 429 lengthens the interval
// for the requests that follow, whoever sends them, and that the limiter
// keeps to the lengthened interval.
func TestPacingSlowsDownAfter429(t *testing.T) {
	const interval = 20 * time.Millisecond
	for _, withRetryAfter := range []bool{false, true} {
		name := "without Retry-After"
		tooMany := reply(429, "slow down")
		if withRetryAfter {
			name = "with Retry-After 0"
			tooMany = reply(429, "slow down", "Retry-After", "0")
		}
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, seq(reply(200, "ok"), reply(200, "ok"), tooMany, reply(200, "ok")))
			gl := &grantLog{}
			s := newService(t, srv.URL, testConfig{Config: httpx.Config{OnGrant: gl.record}, svc: httpx.ServiceConfig{Interval: interval}})
			for range 6 {
				if _, err := s.Get(context.Background(), "/x", nil); err != nil {
					t.Fatal(err)
				}
			}
			// The configured 20ms is kept with its 2ms margin, and grows
			// from there by a tenth.
			kept := httpx.Paced(interval)
			grown := kept * 11 / 10
			st := s.Stats()
			if st.Status429 != 1 || st.Slowdowns != 1 || st.Interval != grown || st.PeakInterval != grown {
				t.Errorf("stats %+v, want one 429, one slowdown to %s", st, grown)
			}
			grants := gl.of("svc")
			checkSchedule(t, grants, srv.recorded(), 7, interval)
			// Grants 0-2 at the configured interval; the retry of the 429
			// and everything after at the grown one.
			for i, g := range grants {
				want := kept
				if i >= 3 {
					want = grown
				}
				if g.Interval != want {
					t.Errorf("grant %d at interval %s, want %s", i, g.Interval, want)
				}
			}
		})
	}
}

// TestPacingConcurrent429sSlowDownOnce: requests that were all in flight
// when the server began refusing are one overload, not four.
func TestPacingConcurrent429sSlowDownOnce(t *testing.T) {
	const workers = 4
	arrived := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	n := 0
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, hit int) {
		if hit > workers {
			reply(200, "ok")(w, r, hit)
			return
		}
		// Hold the first requests until all have arrived, so that every
		// one was granted before any 429 came back.
		mu.Lock()
		n++
		if n == workers {
			once.Do(func() { close(arrived) })
		}
		mu.Unlock()
		<-arrived
		reply(429, "slow down")(w, r, hit)
	})
	gl := &grantLog{}
	s := newService(t, srv.URL, testConfig{Config: httpx.Config{OnGrant: gl.record}, svc: httpx.ServiceConfig{Interval: 10 * time.Millisecond}})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			if _, err := s.Get(context.Background(), "/x", nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	if grown := httpx.Paced(10*time.Millisecond) * 11 / 10; st.Status429 != workers || st.Slowdowns != 1 || st.Interval != grown {
		t.Errorf("stats %+v, want %d 429s and one slowdown to %s", st, workers, grown)
	}
	checkSchedule(t, gl.of("svc"), srv.recorded(), 2*workers, 10*time.Millisecond)
}

// TestRetryAfterPausesService: a Retry-After holds back every worker's
// requests, not only the retry of the one that got it.
func TestRetryAfterPausesService(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/first" && n == 1 {
			reply(429, "slow down", "Retry-After", "1")(w, r, n)
			return
		}
		reply(200, "ok")(w, r, n)
	})
	gl := &grantLog{}
	s := newService(t, srv.URL, testConfig{Config: httpx.Config{OnGrant: gl.record}}) // no interval at all
	first := make(chan error, 1)
	go func() { _, err := s.Get(context.Background(), "/first", nil); first <- err }()
	// Wait (a liveness poll, not a timing assertion) until the 429 has
	// paused the service, then send from other workers.
	for s.Stats().Pauses == 0 {
		select {
		case err := <-first:
			t.Fatalf("first call returned %v before the pause", err)
		case <-time.After(time.Millisecond):
		}
	}
	until := s.PausedUntil()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range 2 {
				if _, err := s.Get(context.Background(), "/other", nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	grants := gl.of("svc")
	if len(grants) != 8 {
		t.Fatalf("%d grants, want 8 (the 429, its retry, 6 others)", len(grants))
	}
	for i, g := range grants[1:] {
		if g.At.Before(until) {
			t.Errorf("grant %d (%s) at %s, inside the pause ending %s", i+1, g.URL, g.At.Format(time.StampMicro), until.Format(time.StampMicro))
		}
	}
	for _, h := range srv.recorded()[1:] {
		if h.At.Before(until) {
			t.Errorf("%s reached the server during the pause", h.URI)
		}
	}
	if st := s.Stats(); st.Pauses != 1 || !st.PausedUntil.Equal(until) {
		t.Errorf("stats %+v, want one pause until %s", st, until)
	}
}

// TestRetryAfterBeyondClamp: a Retry-After longer than MaxRetryAfter ends
// the call that got it and stops every other request to the service,
// unsent, until the server's time has passed.
func TestRetryAfterBeyondClamp(t *testing.T) {
	srv := newServer(t, seq(reply(429, "come back in an hour", "Retry-After", "3600"), reply(200, "ok")))
	other := newServer(t, reply(200, "ok"))
	c := newClient(t, httpx.Config{MaxRetryAfter: time.Second},
		httpx.ServiceConfig{Name: "s2", BaseURL: srv.URL, Interval: time.Millisecond},
		httpx.ServiceConfig{Name: "other", BaseURL: other.URL},
	)
	s, _ := c.Service("s2")
	before := time.Now()
	_, err := s.Get(context.Background(), "/paper/1", nil)
	after := time.Now()
	var se *httpx.StatusError
	if !errors.As(err, &se) || se.Status != 429 || se.RetryAfter != time.Hour || se.Attempts != 1 {
		t.Fatalf("err = %v, want a *StatusError with the hour", err)
	}
	until := s.PausedUntil()
	if until.Before(before.Add(time.Hour)) || until.After(after.Add(time.Hour)) {
		t.Errorf("paused until %s, want an hour after the answer (%s)", until, before.Add(time.Hour))
	}

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = s.Get(context.Background(), "/paper/2", nil) })
	}
	wg.Wait()
	for _, err := range errs {
		if !errors.Is(err, httpx.ErrPaused) || !strings.Contains(err.Error(), "s2") || !strings.Contains(err.Error(), "until") {
			t.Errorf("err = %v, want ErrPaused naming the service and the time", err)
		}
	}
	if n := srv.count(); n != 1 {
		t.Errorf("server hit %d times, want 1: the paused service sent nothing", n)
	}
	// Another service is not affected.
	if o, _ := c.Service("other"); o != nil {
		if _, err := o.Get(context.Background(), "/", nil); err != nil {
			t.Errorf("other service: %v", err)
		}
	}
}

func TestPacingFixed(t *testing.T) {
	srv := newServer(t, seq(reply(429, "no"), reply(200, "ok")))
	s := newService(t, srv.URL, testConfig{svc: httpx.ServiceConfig{Interval: 5 * time.Millisecond, Pacing: httpx.Pacing{Fixed: true}}})
	if _, err := s.Get(context.Background(), "/x", nil); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Status429 != 1 || st.Slowdowns != 0 || st.Interval != httpx.Paced(5*time.Millisecond) {
		t.Errorf("stats %+v, want the interval kept", st)
	}
}

func TestPacingConfig(t *testing.T) {
	for _, p := range []httpx.Pacing{{Factor: 0.9}, {Factor: 1}, {Factor: 11}, {RecoverAfter: -1}, {MaxInterval: -time.Second}} {
		_, err := httpx.New(httpx.Config{UserAgent: "curate/test"}, httpx.ServiceConfig{Name: "s2", BaseURL: "https://api.example", Pacing: p})
		if err == nil || !strings.Contains(err.Error(), `"s2"`) || !strings.Contains(err.Error(), "pacing") {
			t.Errorf("pacing %+v: err %v, want one naming the service and pacing", p, err)
		}
	}
}
