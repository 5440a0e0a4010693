// Package simtest serves package sim's services in tests and loads the
// shared recorded fixtures (../shared/fixtures: real arXiv and ar5iv
// pages, real Semantic Scholar responses) into a sim.Corpus, so that a
// test talks to the one implementation of each protocol, over real data
// or its own.
//
//	c := sim.NewCorpus()
//	simtest.AddFixturePage(t, c, sim.HTMLArxiv, "2507.11127", "arxiv-2507.11127v1.html")
//	ax := simtest.Serve(t, sim.Arxiv, c)
//	ax.Script("/html/2507.11127", sim.TooManyRequests, 2)
//	... ax.URL ... len(ax.CallsTo("/html/2507.11127"))
//
// It also makes synthetic Semantic Scholar reference lists of any size in
// the real shape (SyntheticReferences).
package simtest

import (
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/groundwork/curate/sim"
)

// Server is one simulated service on a test server, closed when the test
// ends: the Service's methods (Script, Calls, CallsTo, Stats, ...) and the
// test server's (URL, Client).
type Server struct {
	*httptest.Server
	*sim.Service
}

// Serve starts the named service over lit, without limits or faults.
func Serve(tb testing.TB, name string, lit sim.Literature) *Server {
	tb.Helper()
	return ServeOptions(tb, name, lit, sim.Options{})
}

// ServeOptions starts the named service over lit with the limits, faults,
// robots.txt and S2 key opt gives it.
func ServeOptions(tb testing.TB, name string, lit sim.Literature, opt sim.Options) *Server {
	tb.Helper()
	svc, err := sim.NewService(name, lit, opt)
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{Server: httptest.NewServer(svc), Service: svc}
	tb.Cleanup(s.Server.Close)
	return s
}

// BaseURL returns the base URL of the service as curate's flags take it (the
// LLMs' with their /v1).
func (s *Server) BaseURL() string {
	if n := s.Name(); n == sim.LLM || n == sim.Anthropic {
		return s.URL + "/v1"
	}
	return s.URL
}

// OffsetLimit returns the offset and limit a references call asked for,
// S2's defaults 0 and 100 when absent, -1 when malformed.
func OffsetLimit(c sim.Call) (offset, limit int) {
	q := c.Query()
	return intParam(q, "offset", 0), intParam(q, "limit", sim.S2DefaultLimit)
}

func intParam(q url.Values, name string, def int) int {
	v := q.Get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return -1
	}
	return n
}
