package robots

import (
	"strings"
	"testing"
	"time"
)

func TestGroupSelection(t *testing.T) {
	const file = `# comments and blank lines are ignored
Disallow: /before-any-agent

User-agent: Googlebot
Disallow: /

User-agent: *
Disallow: /private
Crawl-delay: 15

user-agent: CURATE/2.0
User-agent: otherbot
Disallow: /cgi-bin
Crawl-delay: 3

User-agent: curate
Allow: /cgi-bin/ok
Crawl-delay: 5
`
	r := Parse([]byte(file))
	tests := []struct {
		token     string
		agent     string
		delay     time.Duration
		allowed   []string
		forbidden []string
	}{
		// Both curate groups, merged; the longer delay; not the * group.
		{"curate", "curate", 5 * time.Second, []string{"/private", "/cgi-bin/ok/x", "/"}, []string{"/cgi-bin/x"}},
		{"Curate", "curate", 5 * time.Second, []string{"/private"}, []string{"/cgi-bin"}},
		{"otherbot", "otherbot", 3 * time.Second, []string{"/private"}, []string{"/cgi-bin/ok"}},
		{"googlebot", "googlebot", 0, nil, []string{"/", "/anything"}},
		// Everyone else gets *; rules before the first agent belong to no group.
		{"nobody", "*", 15 * time.Second, []string{"/before-any-agent", "/cgi-bin"}, []string{"/private", "/private/x"}},
		{"", "*", 15 * time.Second, nil, []string{"/private"}},
	}
	for _, tt := range tests {
		g := r.For(tt.token)
		if g.Agent != tt.agent {
			t.Errorf("For(%q) chose group %q, want %q", tt.token, g.Agent, tt.agent)
		}
		if d, ok := g.CrawlDelay(); d != tt.delay || ok != (tt.delay > 0) {
			t.Errorf("For(%q) crawl delay %s %v, want %s", tt.token, d, ok, tt.delay)
		}
		for _, p := range tt.allowed {
			if ok, rule := g.Allowed(p); !ok {
				t.Errorf("For(%q) disallows %s (%s)", tt.token, p, rule)
			}
		}
		for _, p := range tt.forbidden {
			if ok, _ := g.Allowed(p); ok {
				t.Errorf("For(%q) allows %s", tt.token, p)
			}
		}
	}

	// No group for the agent and no * group: everything allowed.
	g := Parse([]byte("User-agent: googlebot\nDisallow: /\n")).For("curate")
	if ok, _ := g.Allowed("/x"); !ok || g.Agent != "" {
		t.Errorf("no applicable group: agent %q, allowed %v", g.Agent, ok)
	}
}

func TestAllowed(t *testing.T) {
	// Patterns and paths from RFC 9309 and the common crawler docs.
	tests := []struct {
		rules string
		path  string
		want  bool
	}{
		{"Disallow: /fish", "/fish", false},
		{"Disallow: /fish", "/fish.html", false},
		{"Disallow: /fish", "/fish/salmon.html", false},
		{"Disallow: /fish", "/fishheads", false},
		{"Disallow: /fish", "/fish.php?id=anything", false},
		{"Disallow: /fish", "/Fish.asp", true}, // paths are case-sensitive
		{"Disallow: /fish", "/catfish", true},
		{"Disallow: /fish", "/?id=fish", true},
		{"Disallow: /fish*", "/fishheads", false},
		{"Disallow: /fish/", "/fish", true},
		{"Disallow: /fish/", "/fish/?id=x", false},
		{"Disallow: /*.php", "/folder/filename.php?parameters", false},
		{"Disallow: /*.php", "/folder/any.php.file.html", false},
		{"Disallow: /*.php", "/", true},
		{"Disallow: /*.php", "/windows.PHP", true},
		{"Disallow: /*.php$", "/folder/filename.php", false},
		{"Disallow: /*.php$", "/filename.php?parameters", true},
		{"Disallow: /*.php$", "/filename.php/", true},
		{"Disallow: /*.php$", "/filename.php5", true},
		{"Disallow: /fish*.php", "/fishheads/catfish.php?parameters", false},
		{"Disallow: /fish*.php", "/Fish.PHP", true},
		{"Disallow: /a*b*c", "/axxbyyc", false},
		{"Disallow: /a*b*c", "/axxcyyb", true},
		{"Disallow: /a*b*c$", "/abcbc", false},
		{"Disallow: /a*b*c$", "/abcb", true},
		{"Disallow: /$", "/", false},
		{"Disallow: /$", "/x", true},
		{"Disallow: /*?", "/page?x=1", false},
		{"Disallow: /*?", "/page", true},
		// ar5iv.org's robots.txt: a bare * matches everything.
		{"Disallow: *", "/html/2401.00001", false},
		// Longest match wins; on a tie, Allow.
		{"Disallow: /\nAllow: /html", "/html/2401.00001", true},
		{"Disallow: /\nAllow: /html", "/abs/2401.00001", false},
		{"Allow: /page\nDisallow: /*.htm", "/page.htm", false},
		{"Allow: /p\nDisallow: /", "/page", true},
		{"Allow: /folder\nDisallow: /folder", "/folder/page", true},
		{"Allow: /$\nDisallow: /", "/", true},
		{"Allow: /$\nDisallow: /", "/page", false},
		// An empty Disallow allows everything.
		{"Disallow:", "/anything", true},
		// /robots.txt is always allowed.
		{"Disallow: /", "/robots.txt", true},
		// Non-ASCII patterns match the escaped path, escapes in any case.
		{"Disallow: /foo/ツ", "/foo/%E3%83%84", false},
		{"Disallow: /foo/ツ", "/foo/%e3%83%84", false},
		{"Disallow: /foo/%e3%83%84", "/foo/%E3%83%84", false},
		{"Disallow: /foo/bar?baz=quz", "/foo/bar?baz=quz", false},
	}
	for _, tt := range tests {
		g := Parse([]byte("User-agent: *\n" + tt.rules + "\n")).For("curate")
		if got, rule := g.Allowed(tt.path); got != tt.want {
			t.Errorf("%q: Allowed(%q) = %v (rule %q), want %v", tt.rules, tt.path, got, rule, tt.want)
		}
	}
}

func TestAllowedNamesRule(t *testing.T) {
	g := Parse([]byte("User-agent: *\nDisallow: /api # the APIs have their own terms\n")).For("curate")
	if ok, rule := g.Allowed("/api/query"); ok || rule != "Disallow: /api" {
		t.Errorf("got %v %q, want the rule as written, without its comment", ok, rule)
	}
}

func TestParseLeniently(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		delay time.Duration
		path  string // must be disallowed
	}{
		{"CRLF", "User-agent: *\r\nDisallow: /x\r\nCrawl-delay: 2\r\n", 2 * time.Second, "/x"},
		{"CR only", "User-agent: *\rDisallow: /x\rCrawl-delay: 2\r", 2 * time.Second, "/x"},
		{"BOM", "\xef\xbb\xbfUser-agent: *\nDisallow: /x\n", 0, "/x"},
		{"spaces and tabs", "  User-agent :\t*  \n\tDisallow :  /x  \n", 0, "/x"},
		{"no colon", "User-agent *\nDisallow /x\n", 0, "/x"},
		{"misspelt", "Useragent: *\nDissallow: /x\n", 0, "/x"},
		{"fractional delay", "User-agent: *\nCrawl-delay: 0.25\nDisallow: /x\n", 250 * time.Millisecond, "/x"},
		{"invalid delays ignored", "User-agent: *\nCrawl-delay: soon\nCrawl-delay: -1\nCrawl-delay: NaN\nDisallow: /x\n", 0, "/x"},
		{"unknown lines", "User-agent: *\nNoindex: /y\nHost: example.org\nDisallow: /x\n", 0, "/x"},
		{"sitemap does not end the group", "User-agent: *\nSitemap: https://example.org/s.xml\nDisallow: /x\n", 0, "/x"},
	}
	for _, tt := range tests {
		g := Parse([]byte(tt.file)).For("curate")
		if d, ok := g.CrawlDelay(); d != tt.delay || ok != (tt.delay > 0) {
			t.Errorf("%s: crawl delay %s %v, want %s", tt.name, d, ok, tt.delay)
		}
		if ok, _ := g.Allowed(tt.path); ok {
			t.Errorf("%s: %s allowed", tt.name, tt.path)
		}
	}
	r := Parse([]byte("Sitemap: https://example.org/a.xml\nUser-agent: *\nSitemap: https://example.org/b.xml\n"))
	if s := r.Sitemaps(); len(s) != 2 || s[1] != "https://example.org/b.xml" {
		t.Errorf("sitemaps %q", s)
	}
}

func TestParseMaxSize(t *testing.T) {
	file := "User-agent: *\nDisallow: /early\n" + strings.Repeat("# padding\n", MaxSize/10) + "Disallow: /late\n"
	g := Parse([]byte(file)).For("curate")
	if ok, _ := g.Allowed("/early"); ok {
		t.Errorf("rule within the limit ignored")
	}
	if ok, _ := g.Allowed("/late"); !ok {
		t.Errorf("rule past %d bytes applied", MaxSize)
	}
}

func TestProductToken(t *testing.T) {
	for ua, want := range map[string]string{
		"curate/0.1 (+https://github.com/groundwork/curate; mailto:a@b.org)": "curate",
		"Curate":                "curate",
		"my_crawler-2/1.0":      "my_crawler-",
		" spaced/1":             "spaced",
		"/1.0":                  "",
		"Mozilla/5.0 (X11) Foo": "mozilla",
	} {
		if got := ProductToken(ua); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", ua, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /a*b$\nAllow: /a\nCrawl-delay: 1.5\n"), "/axb")
	f.Add([]byte("user-agent curate\ndisallow *\n"), "/")
	f.Fuzz(func(t *testing.T, file []byte, path string) {
		g := Parse(file).For("curate")
		a, _ := g.Allowed(path)
		b, _ := g.Allowed(path)
		if a != b {
			t.Fatalf("Allowed(%q) not deterministic", path)
		}
		if d, ok := g.CrawlDelay(); ok && d < 0 {
			t.Fatalf("negative crawl delay %s", d)
		}
	})
}
