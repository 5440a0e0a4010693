package httpx_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/sim"
)

// BenchmarkPacingStrictServer runs Semantic Scholar lookups from several
// workers against a simulated S2 that enforces its rate exactly, with no
// burst: a request arriving less than one interval after the last one it
// accepted gets 429. Arrival jitter alone makes a client that paces at
// exactly the interval meet 429s; adaptive pacing finds the margin.
//
// Times are scaled from S2's 1 request per second (2s minimum backoff) to
// the interval of each case. It reports the share of requests answered
// 429 and the wall time over the bound (requests × interval), for the
// adaptive pacing and for a fixed interval:
//
//	go test ./internal/httpx -run '^$' -bench PacingStrictServer -benchtime 1x
func BenchmarkPacingStrictServer(b *testing.B) {
	for _, tc := range []struct {
		interval time.Duration
		requests int
	}{
		{20 * time.Millisecond, 400},
		{100 * time.Millisecond, 150},
	} {
		for _, fixed := range []bool{false, true} {
			mode := "adaptive"
			if fixed {
				mode = "fixed"
			}
			b.Run(fmt.Sprintf("%s/interval=%s", mode, tc.interval), func(b *testing.B) {
				for range b.N {
					benchStrict(b, tc.interval, tc.requests, httpx.Pacing{Fixed: fixed})
				}
			})
		}
	}
}

func benchStrict(b *testing.B, interval time.Duration, requests int, pacing httpx.Pacing) {
	const workers = 4
	b.StopTimer()
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 7, Targets: 60})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := sim.Start(w, sim.Options{Limits: map[string]sim.Limits{
		sim.S2: {Rate: float64(time.Second) / float64(interval), Burst: 1, Latency: interval / 5, Jitter: interval / 5},
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c, err := httpx.New(httpx.Config{
		UserAgent:    httpx.UserAgent("bench", ""),
		RetryMax:     10,
		RetryWaitMin: 2 * interval,
		RetryWaitMax: 120 * interval,
		Logger:       slog.New(slog.DiscardHandler),
	}, httpx.ServiceConfig{Name: sim.S2, BaseURL: srv.URL(sim.S2) + "/graph/v1", Interval: interval, Pacing: pacing})
	if err != nil {
		b.Fatal(err)
	}
	s2, _ := c.Service(sim.S2)
	ids := w.TargetIDs()
	work := make(chan string)
	var wg sync.WaitGroup
	b.StartTimer()
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for id := range work {
				resp, err := s2.Get(context.Background(), "paper/ARXIV:"+id, nil)
				if err != nil || resp.Status != 200 {
					b.Errorf("%s: %v %v", id, resp, err)
				}
			}
		})
	}
	for i := range requests {
		work <- ids[i%len(ids)]
	}
	close(work)
	wg.Wait()
	wall := time.Since(start)
	b.StopTimer()

	st := s2.Stats()
	sent := srv.Service(sim.S2).Stats()
	if sent.Requests != int(st.Requests) {
		b.Errorf("server saw %d requests, client sent %d", sent.Requests, st.Requests)
	}
	bound := time.Duration(requests) * interval
	b.ReportMetric(100*float64(sent.Sent429())/float64(sent.Requests), "%429")
	b.ReportMetric(float64(wall)/float64(bound), "wall/bound")
	b.ReportMetric(float64(st.PeakInterval)/float64(interval), "peak/interval")
	b.ReportMetric(float64(st.Slowdowns), "slowdowns")
	b.StartTimer()
}
