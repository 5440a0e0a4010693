package oapdf

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/groundwork/curate/internal/httpx"
)

// productToken is the name curate's User-Agent gives it, which robots.txt
// groups address.
const productToken = "curate"

// maxRobots is how much of a robots.txt is read (RFC 9309 asks parsers
// for at least 500 KiB).
const maxRobots = 512 << 10

// robotsEntry is the parsed robots.txt of one host, fetched once (again
// only when the caller's context ended the first try).
type robotsEntry struct {
	mu    sync.Mutex
	done  bool
	rules []robotsRule // of the group that applies to curate
	err   error        // robots.txt unreachable: everything is disallowed
}

type robotsRule struct {
	allow   bool
	pattern string
}

// robotsAllow reports whether the host's robots.txt lets curate fetch u,
// fetching it the first time the host is asked.
func (f *Fetcher) robotsAllow(ctx context.Context, svc *httpx.Service, u *url.URL) error {
	v, _ := f.robots.LoadOrStore(svc.Name()+" "+u.Scheme, &robotsEntry{})
	e := v.(*robotsEntry)
	e.mu.Lock()
	if !e.done {
		e.rules, e.err = fetchRobots(ctx, svc, u)
		e.done = ctx.Err() == nil
	}
	rules, err := e.rules, e.err
	e.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%w: robots.txt of %s unreachable, so all is disallowed: %w", ErrRobots, u.Host, err)
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	if !robotsAllowed(rules, path) {
		return fmt.Errorf("%w: %s", ErrRobots, path)
	}
	return nil
}

// fetchRobots reads the host's robots.txt as RFC 9309 says: a 4xx means
// no rules; a 5xx (after retries) or a network failure means none could
// be read, so nothing may be fetched.
func fetchRobots(ctx context.Context, svc *httpx.Service, u *url.URL) ([]robotsRule, error) {
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}
	resp, err := svc.Do(ctx, httpx.Request{Path: r.String()})
	switch {
	case errors.Is(err, httpx.ErrForeignRedirect):
		return nil, nil // robots.txt elsewhere: unavailable, which is no rule
	case err != nil:
		return nil, err
	case resp.Status >= 400 && resp.Status < 500:
		return nil, nil
	case resp.Status != http.StatusOK:
		return nil, fmt.Errorf("status %d", resp.Status)
	}
	body := resp.Body[:min(len(resp.Body), maxRobots)]
	return parseRobots(string(body), productToken), nil
}

// parseRobots returns the rules of the group for agent, else of the "*"
// group. Groups start with user-agent lines; rules are allow and
// disallow lines; other lines (sitemap, crawl-delay) are ignored.
func parseRobots(text, agent string) []robotsRule {
	var mine, star []robotsRule
	foundMine := false
	var cur []string // agents of the group being read
	inRules := false
	for _, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.TrimSpace(val)
		switch key {
		case "user-agent":
			if inRules {
				cur, inRules = nil, false
			}
			// "curate/1.0" names the product curate.
			a, _, _ := strings.Cut(strings.ToLower(val), "/")
			cur = append(cur, a)
			if a == agent {
				foundMine = true // a group naming curate applies even without rules
			}
		case "crawl-delay":
			inRules = true // ends the group's user-agent lines, as a rule does
		case "allow", "disallow":
			inRules = true
			if val == "" {
				continue // "Disallow:" with nothing allows all
			}
			rule := robotsRule{allow: key == "allow", pattern: val}
			for _, a := range cur {
				switch {
				case a == agent:
					mine = append(mine, rule)
				case a == "*":
					star = append(star, rule)
				}
			}
		}
	}
	if foundMine {
		return mine
	}
	return star
}

// robotsAllowed applies the longest matching rule; allow wins a tie; no
// match allows. /robots.txt itself is always allowed.
func robotsAllowed(rules []robotsRule, path string) bool {
	if path == "/robots.txt" {
		return true
	}
	best, allow := -1, true
	for _, r := range rules {
		if !robotsMatch(r.pattern, path) {
			continue
		}
		if n := len(r.pattern); n > best || n == best && r.allow {
			best, allow = n, r.allow
		}
	}
	return allow
}

// robotsMatch matches a rule's pattern against a path: a prefix match,
// "*" for any run of characters and a final "$" anchoring the end.
func robotsMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	pattern = strings.TrimSuffix(pattern, "$")
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	rest := path[len(parts[0]):]
	for i, p := range parts[1:] {
		last := i == len(parts)-2
		if last && anchored {
			return strings.HasSuffix(rest, p)
		}
		j := strings.Index(rest, p)
		if j < 0 {
			return false
		}
		rest = rest[j+len(p):]
	}
	return !anchored || rest == ""
}
