package conformance

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/groundwork/curate/internal/robots"
)

// The robots.txt invariants (RFC 9309): a site's file is at /robots.txt,
// served as text/plain (§2.3) in UTF-8, within the 500 KiB a crawler
// must read (§2.5); its lines are comments or "key: value" records, and
// the rules come in groups opened by user-agent lines (§2.1, §2.2); a
// site without one answers 4xx, which lets a crawler in (§2.3.1.3); HEAD
// answers as GET does.

// CheckRobotsFile checks a robots.txt served with status 200.
func CheckRobotsFile(status int, contentType string, body []byte) error {
	if status != 200 {
		return fmt.Errorf("status %d, want 200", status)
	}
	var errs []error
	if !strings.HasPrefix(contentType, "text/plain") {
		errs = append(errs, fmt.Errorf("Content-Type %q, want text/plain", contentType))
	}
	if len(body) > robots.MaxSize {
		errs = append(errs, fmt.Errorf("%d bytes, more than the %d a crawler reads", len(body), robots.MaxSize))
	}
	if !utf8.Valid(body) {
		errs = append(errs, errors.New("not UTF-8"))
	}
	agent := false
	for i, line := range strings.Split(string(body), "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" {
			continue
		}
		key, _, ok := strings.Cut(line, ":")
		if !ok {
			errs = append(errs, fmt.Errorf("line %d %q is no record", i+1, line))
			continue
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "user-agent":
			agent = true
		case "allow", "disallow":
			if !agent {
				errs = append(errs, fmt.Errorf("line %d: a rule before any user-agent line", i+1))
			}
		}
	}
	return errors.Join(errs...)
}

// TestRobots asks every service for its robots.txt: the file the backend
// says it serves (Robots), or 4xx where it names none.
func (s *Suite) TestRobots(t *testing.T) {
	names := make([]string, 0, len(s.urls))
	for name := range s.urls {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		u := s.urls[name] + "/robots.txt"
		r := get(t, u)
		h := do(t, http.MethodHead, u, "")
		if h.status != r.status || len(h.body) != 0 {
			t.Errorf("%s: HEAD /robots.txt %d with %d bytes, GET %d", name, h.status, len(h.body), r.status)
		}
		want, ok := s.Robots[name]
		if !ok {
			if r.status < 400 || r.status > 499 {
				t.Errorf("%s: /robots.txt %d, want 4xx (the backend serves no file)", name, r.status)
			}
			continue
		}
		if err := CheckRobotsFile(r.status, r.header.Get("Content-Type"), r.body); err != nil {
			t.Errorf("%s: robots.txt: %v", name, err)
		} else if string(r.body) != want {
			t.Errorf("%s: robots.txt %q, want %q", name, truncate(r.body), want)
		}
	}
}
