package conformance

import (
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/groundwork/curate/sim"
)

// Suite is the conformance suite for one backend.
type Suite struct {
	// Start starts the backend's services and returns their base URLs by
	// service name (sim.Arxiv, sim.Ar5iv, sim.S2, sim.ArxivAPI); the
	// tests of a service it leaves out are skipped. It is called once.
	Start func(t *testing.T) map[string]string

	// ArxivPages are ids arXiv has HTML for (with the version of the page
	// when the backend knows it); ArxivNoHTML ids it has none for.
	ArxivPages, ArxivNoHTML []string
	// ArxivOlder are ids of a version before the latest that arXiv has
	// HTML for (html/IDvN of a revised paper).
	ArxivOlder []string
	// Ar5ivPages are ids ar5iv has a page of; Ar5ivLacks ids it lacks.
	Ar5ivPages, Ar5ivLacks []string

	// S2Papers are ids, in any form S2 takes, of papers S2 knows.
	S2Papers []string
	// S2Lists are ids of papers whose reference list S2 serves;
	// S2Withheld of papers whose list the publisher withheld.
	S2Lists, S2Withheld []string
	// S2Unknown are ids S2 does not know.
	S2Unknown []string
	// S2Cited are ids of papers other papers cite (the citations
	// endpoint lists them).
	S2Cited []string

	// Entries are versionless ids the arXiv API knows; Unlisted valid ids
	// it does not.
	Entries, Unlisted []string

	// Service returns the service behind a name, for the tests of its
	// limits (they set some and restore the service's own); those tests
	// are skipped when it is nil.
	Service func(name string) *sim.Service

	urls map[string]string
}

// RunTests runs the suite's tests as subtests of t.
func (s *Suite) RunTests(t *testing.T) {
	if s.Start == nil {
		t.Fatal("conformance: Suite.Start is nil")
	}
	s.urls = s.Start(t)
	v := reflect.ValueOf(s)
	typ := v.Type()
	var names []string
	for i := range typ.NumMethod() {
		if name := typ.Method(i).Name; strings.HasPrefix(name, "Test") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		f, ok := v.MethodByName(name).Interface().(func(*testing.T))
		if !ok {
			t.Errorf("conformance: %s is not a func(*testing.T)", name)
			continue
		}
		t.Run(name, f)
	}
}

// url returns the base URL of service, skipping the test when the backend
// does not serve it.
func (s *Suite) url(t *testing.T, service string) string {
	t.Helper()
	u, ok := s.urls[service]
	if !ok {
		t.Skipf("the backend does not serve %s", service)
	}
	return u
}

// service returns the named service, skipping the test when the backend
// gives none.
func (s *Suite) service(t *testing.T, name string) *sim.Service {
	t.Helper()
	if s.Service == nil || s.Service(name) == nil {
		t.Skipf("the backend gives no handle on %s's limits (Suite.Service)", name)
	}
	return s.Service(name)
}

// need skips the test when the backend has no probes of a kind.
func need(t *testing.T, what string, probes []string) {
	t.Helper()
	if len(probes) == 0 {
		t.Skipf("the backend names no %s", what)
	}
}

// noRedirect reports redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// response is an answer, read in full.
type response struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, method, url, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return response{resp.StatusCode, resp.Header, b}
}

func get(t *testing.T, url string) response { t.Helper(); return do(t, http.MethodGet, url, "") }

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}
