// Package robots reads a site's robots.txt and applies it to curate's
// requests: which paths curate's user agent may fetch (RFC 9309: groups,
// user-agent matching, Allow and Disallow with the longest match winning,
// the * and $ wildcards) and how far apart its requests must be (the
// non-standard but widely used Crawl-delay, which arxiv.org sets to 15
// seconds).
//
// Parse reads a file; a Checker fetches each host's file once through
// httpx, keeps it in a Cache with a TTL, refetches it when stale, guards
// every request to the host with it and sets the host's interval to the
// larger of the configured one and the crawl delay (see Effective).
package robots

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// MaxSize is how much of a robots.txt is read; RFC 9309 asks crawlers to
// parse at least 500 KiB and allows ignoring the rest.
const MaxSize = 500 << 10

// Rules is a parsed robots.txt.
type Rules struct {
	groups   []group
	sitemaps []string
}

type group struct {
	agents   []string // product tokens, lower case; "*" for any
	rules    []rule
	delay    time.Duration
	hasDelay bool
}

type rule struct {
	allow   bool
	pattern string // normalised, see normalise
	text    string // the line as written, for messages
}

// Parse reads a robots.txt leniently, as crawlers must: lines that are not
// "key: value" with a known key are skipped, as are rules before the first
// user-agent line, and only the first MaxSize bytes are read. It never
// fails.
func Parse(data []byte) *Rules {
	if len(data) > MaxSize {
		data = data[:MaxSize]
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // UTF-8 BOM
	r := &Rules{}
	var cur *group
	inAgents := false // the previous meaningful line was a user-agent line
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		key, value, ok := splitLine(string(line))
		if !ok {
			continue
		}
		switch key {
		case "user-agent":
			if !inAgents {
				r.groups = append(r.groups, group{})
				cur = &r.groups[len(r.groups)-1]
			}
			inAgents = true
			cur.agents = append(cur.agents, agentToken(value))
		case "allow", "disallow":
			inAgents = false
			if cur == nil || value == "" {
				// An empty Disallow allows everything, which is the
				// default; an empty Allow means nothing.
				continue
			}
			cur.rules = append(cur.rules, rule{allow: key == "allow", pattern: normalise(value), text: canonicalKey(key) + ": " + value})
		case "crawl-delay":
			inAgents = false
			if cur == nil {
				continue
			}
			if d, ok := parseDelay(value); ok {
				cur.delay, cur.hasDelay = max(cur.delay, d), true
			}
		case "sitemap":
			// Not part of any group.
			r.sitemaps = append(r.sitemaps, value)
		}
	}
	return r
}

// splitLine returns a line's lower-case key and its value, with the
// comment and surrounding space removed. Common misspellings of the keys
// are accepted, as major crawlers accept them, and so is a known key
// separated from its value by space alone.
func splitLine(line string) (key, value string, ok bool) {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return "", "", false
	}
	k, v, found := strings.Cut(line, ":")
	if !found {
		k, v, found = strings.Cut(line, " ")
		if !found {
			k, v, found = strings.Cut(line, "\t")
		}
		if !found {
			return "", "", false
		}
	}
	k = strings.ToLower(strings.TrimSpace(k))
	switch k {
	case "user-agent", "useragent", "user agent":
		k = "user-agent"
	case "disallow", "dissallow", "dissalow", "disalow", "disallaw":
		k = "disallow"
	case "allow":
	case "crawl-delay", "crawldelay", "crawl delay":
		k = "crawl-delay"
	case "sitemap", "site-map":
		k = "sitemap"
	default:
		return "", "", false
	}
	return k, strings.TrimSpace(v), true
}

func canonicalKey(k string) string {
	if k == "allow" {
		return "Allow"
	}
	return "Disallow"
}

// agentToken reduces a user-agent line's value to the product token it
// names: its leading letters, "_" and "-", lower case ("Googlebot/2.1"
// names "googlebot"); "*" stays "*".
func agentToken(v string) string {
	if strings.HasPrefix(v, "*") {
		return "*"
	}
	return strings.ToLower(leadingToken(v))
}

func leadingToken(v string) string {
	end := 0
	for end < len(v) {
		c := v[end]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' {
			end++
			continue
		}
		break
	}
	return v[:end]
}

// ProductToken returns the product token of a User-Agent header, the name
// robots.txt groups address: "curate" for "curate/0.1 (+https://...)".
func ProductToken(userAgent string) string {
	return strings.ToLower(leadingToken(strings.TrimSpace(userAgent)))
}

// parseDelay reads a Crawl-delay: seconds, possibly fractional.
func parseDelay(v string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 365*24*3600 || f != f {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// Sitemaps returns the sitemap URLs the file lists.
func (r *Rules) Sitemaps() []string { return append([]string(nil), r.sitemaps...) }

// Group is the part of a robots.txt that applies to one user agent: the
// groups naming its product token, merged, or else the groups for "*",
// merged, or else nothing (everything allowed).
type Group struct {
	// Agent is what the group was chosen by: the product token, "*", or
	// "" when no group applies.
	Agent    string
	rules    []rule
	delay    time.Duration
	hasDelay bool
}

// For returns the rules for the agent with the given product token (see
// ProductToken); matching ignores case.
func (r *Rules) For(token string) Group {
	token = strings.ToLower(token)
	pick := func(want string) Group {
		g := Group{}
		for _, gr := range r.groups {
			for _, a := range gr.agents {
				if a == want {
					g.Agent = want
					g.rules = append(g.rules, gr.rules...)
					if gr.hasDelay {
						// Several groups for one agent: the longest delay.
						g.delay, g.hasDelay = max(g.delay, gr.delay), true
					}
					break
				}
			}
		}
		return g
	}
	if token != "" && token != "*" {
		if g := pick(token); g.Agent != "" {
			return g
		}
	}
	return pick("*")
}

// CrawlDelay returns the group's Crawl-delay, if it has one.
func (g Group) CrawlDelay() (time.Duration, bool) { return g.delay, g.hasDelay }

// Allowed reports whether the group allows path, which is a URL's escaped
// path with its query, if any ("/html/2401.00001?x=1"), and returns the
// rule that decided ("" when none matched, which allows). The longest
// matching pattern wins; of an Allow and a Disallow of equal length,
// Allow. /robots.txt itself is always allowed.
func (g Group) Allowed(path string) (bool, string) {
	if path == "" {
		path = "/"
	}
	if path == "/robots.txt" {
		return true, ""
	}
	path = normalise(path)
	best, allowed, text := -1, true, ""
	for _, r := range g.rules {
		if !match(r.pattern, path) {
			continue
		}
		if n := len(r.pattern); n > best || n == best && r.allow && !allowed {
			best, allowed, text = n, r.allow, r.text
		}
	}
	return allowed, text
}

// normalise percent-encodes the octets of s that are not printable ASCII
// and upper-cases the hex digits of existing escapes, so that a pattern
// written in UTF-8 matches the escaped path of a URL, as RFC 9309 asks.
func normalise(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte('%')
			b.WriteString(strings.ToUpper(s[i+1 : i+3]))
			i += 2
		case c <= ' ' || c >= 0x7f:
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

const upperHex = "0123456789ABCDEF"

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// match reports whether pattern matches path from its start: "*" matches
// any run of octets and a final "$" anchors the pattern at the end of the
// path; otherwise a pattern matches every path it is a prefix of.
func match(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	parts := strings.Split(pattern, "*")
	// The first part is a prefix.
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	rest := path[len(parts[0]):]
	if len(parts) == 1 {
		return !anchored || rest == ""
	}
	// Middle parts match leftmost, which leaves the most room for the
	// rest; an anchored last part must end the path.
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	if anchored {
		return strings.HasSuffix(rest, last)
	}
	return strings.Contains(rest, last)
}
