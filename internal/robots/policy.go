package robots

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/groundwork/curate/internal/httpx"
)

// ErrDisallowed means a host's robots.txt does not let curate fetch a
// path, or could not be read (see Policy).
var ErrDisallowed = errors.New("disallowed by robots.txt")

// ErrUnreachable is wrapped, besides ErrDisallowed, by a refusal because
// the host's robots.txt could not be read (and no cached copy stands in):
// unlike its rules, that may pass.
var ErrUnreachable = errors.New("robots.txt unreachable")

// Entry is a fetched robots.txt as a Cache keeps it: the file, or the
// status that said there is none.
type Entry struct {
	URL     string    `json:"url"` // e.g. https://arxiv.org/robots.txt
	Fetched time.Time `json:"fetched"`
	Status  int       `json:"status"`         // HTTP status of the answer
	Body    []byte    `json:"body,omitempty"` // the file, for a 2xx answer
}

// Cache keeps fetched robots.txt files between runs, keyed by URL. Only
// answers are kept (a file, or a 4xx saying there is none), never the
// failure to get one, so a cached copy can stand in while a host is
// unreachable.
type Cache interface {
	Load(ctx context.Context, url string) (Entry, bool, error)
	Save(ctx context.Context, e Entry) error
}

// MemoryCache is a Cache in memory, for tests and single runs.
type MemoryCache struct {
	mu sync.Mutex
	m  map[string]Entry
}

// NewMemoryCache returns an empty MemoryCache.
func NewMemoryCache() *MemoryCache { return &MemoryCache{m: map[string]Entry{}} }

// Load returns the entry for url.
func (c *MemoryCache) Load(_ context.Context, url string) (Entry, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[url]
	return e, ok, nil
}

// Save keeps e under its URL.
func (c *MemoryCache) Save(_ context.Context, e Entry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[e.URL] = e
	return nil
}

// Kinds of Policy.
const (
	// KindRules: the file was read; its rules for curate apply.
	KindRules = "rules"
	// KindAllowAll: the host has no robots.txt (a 4xx other than 401, 403
	// and 429, as RFC 9309 says): everything is allowed.
	KindAllowAll = "allow-all"
	// KindDisallowAll: nothing may be fetched. The conservative reading of
	// a file that is refused to curate (401, 403: arXiv answers 403 to
	// crawlers it blocks) or cannot be read (5xx or 429 after httpx's
	// retries, a connection failure, a redirect off the configured hosts)
	// while no earlier copy is cached, as RFC 9309 asks for unreachable
	// files. It is asked again after Config.RetryUnreachable.
	KindDisallowAll = "disallow-all"
)

// Policy is what a host's robots.txt means for curate.
type Policy struct {
	URL     string    // the robots.txt URL
	Kind    string    // KindRules, KindAllowAll or KindDisallowAll
	Status  int       // HTTP status of the answer used; 0 if there was none
	Fetched time.Time // when the answer used was fetched
	// Stale is set when the file could not be read and an older cached
	// copy (at most Config.MaxStale old) stands in for it.
	Stale bool
	// Reason says in a sentence where the policy comes from, for logs and
	// the run summary.
	Reason string
	group  Group
	// unreachable marks a KindDisallowAll of a file that could not be
	// read; cause is the error that kept it from being read, if any.
	// Refusals wrap both, so a caller tells a host that is down from its
	// rules, and a dialer's policy from a host that is down.
	unreachable bool
	cause       error
}

// Allowed reports whether path (escaped, with its query) may be fetched,
// and the rule that decided; see Group.Allowed.
func (p *Policy) Allowed(path string) (bool, string) {
	switch p.Kind {
	case KindAllowAll:
		return true, ""
	case KindDisallowAll:
		if path == "/robots.txt" {
			return true, ""
		}
		return false, p.Reason
	}
	return p.group.Allowed(path)
}

// CrawlDelay returns the Crawl-delay the file sets for curate, if any.
func (p *Policy) CrawlDelay() (time.Duration, bool) { return p.group.CrawlDelay() }

// Group returns the rules that apply to curate (empty unless Kind is
// KindRules).
func (p *Policy) Group() Group { return p.group }

// Sources of a Pace's interval.
const (
	SourceConfigured = "configured"  // the configured interval; no longer Crawl-delay
	SourceCrawlDelay = "crawl-delay" // the robots.txt Crawl-delay, longer than the configured interval
	SourceOverride   = "override"    // the configured interval, shorter than the Crawl-delay, by explicit override
)

// Pace is the interval chosen for a host and why, for the log at start
// and the run summary.
type Pace struct {
	Host       string
	Interval   time.Duration // the interval in force
	Source     string        // SourceConfigured, SourceCrawlDelay or SourceOverride
	Configured time.Duration
	CrawlDelay time.Duration // 0 when the file sets none (HasCrawlDelay false)
	HasDelay   bool
	RobotsURL  string
	Robots     string // Policy.Reason
}

// Effective chooses a host's interval: the larger of the configured
// interval and the robots.txt Crawl-delay, kept with httpx's margin (see
// httpx.Margin). With override the configured interval wins even when it
// is shorter than the delay; Source then says so.
func Effective(host string, configured time.Duration, p *Policy, override bool) Pace {
	pace := Pace{Host: host, Source: SourceConfigured, Configured: configured, RobotsURL: p.URL, Robots: p.Reason}
	pace.CrawlDelay, pace.HasDelay = p.CrawlDelay()
	switch {
	case !pace.HasDelay:
	case override && pace.CrawlDelay > configured:
		pace.Source = SourceOverride
	case !override && pace.CrawlDelay >= configured:
		// At the delay itself, too: the delay is what the pace keeps to.
		pace.Source = SourceCrawlDelay
	}
	pace.Interval = httpx.Paced(pace.spacing())
	return pace
}

// spacing is the interval chosen, before its margin: what the service is
// configured with.
func (p Pace) spacing() time.Duration {
	if p.Source == SourceCrawlDelay {
		return p.CrawlDelay
	}
	return p.Configured
}

func (p Pace) String() string {
	margin := ""
	if m := p.Interval - p.spacing(); m > 0 {
		margin = fmt.Sprintf(" and a %s margin", m)
	}
	switch p.Source {
	case SourceCrawlDelay:
		return fmt.Sprintf("%s: %s from the Crawl-delay in %s (%s%s; configured %s)", p.Host, p.Interval, p.RobotsURL, p.CrawlDelay, margin, p.Configured)
	case SourceOverride:
		return fmt.Sprintf("%s: %s by override (%s%s), faster than the Crawl-delay of %s in %s", p.Host, p.Interval, p.Configured, margin, p.CrawlDelay, p.RobotsURL)
	}
	if p.HasDelay {
		return fmt.Sprintf("%s: %s configured (%s%s; the Crawl-delay in %s is %s)", p.Host, p.Interval, p.Configured, margin, p.RobotsURL, p.CrawlDelay)
	}
	return fmt.Sprintf("%s: %s configured (%s%s; %s)", p.Host, p.Interval, p.Configured, margin, p.Robots)
}

// Config configures a Checker. Zero fields take the documented defaults.
type Config struct {
	// UserAgent is the User-Agent curate sends; its product token (see
	// ProductToken) picks the robots.txt group. Required.
	UserAgent string
	// Cache keeps files between runs; nil keeps them in memory for the
	// Checker's life.
	Cache Cache
	// TTL is how long a fetched file is trusted before it is fetched
	// again (default 24h, the most RFC 9309 allows).
	TTL time.Duration
	// RetryUnreachable is how soon a file that could not be read is asked
	// for again (default 10 minutes).
	RetryUnreachable time.Duration
	// MaxStale is how old a cached copy may be to stand in for a file that
	// cannot be read (default 30 days, after which RFC 9309 lets a crawler
	// stop using it).
	MaxStale time.Duration
	// Now tells the time (default time.Now).
	Now func() time.Time
	// Logger gets the chosen intervals (Info), overrides (Warn, once per
	// host) and fetch failures (Warn); nil discards.
	Logger *slog.Logger
}

// Checker fetches and applies robots.txt, once per host and again when
// stale. It is safe for concurrent use.
type Checker struct {
	cfg   Config
	token string
	log   *slog.Logger

	mu    sync.Mutex
	hosts map[string]*host // by robots.txt URL
}

// host is a Checker's state for one robots.txt.
type host struct {
	lock    chan struct{} // held while fetching; a channel so waiters can give up
	pol     *Policy
	expires time.Time

	applied    bool // the interval was set (by Apply, or Guard's first request)
	configured time.Duration
	override   bool
	pace       Pace
	warned     bool
}

// New returns a Checker.
func New(cfg Config) (*Checker, error) {
	token := ProductToken(cfg.UserAgent)
	if token == "" {
		return nil, fmt.Errorf("robots: user agent %q has no product token (want one starting with a name, like curate/1.0)", cfg.UserAgent)
	}
	if cfg.TTL < 0 || cfg.RetryUnreachable < 0 || cfg.MaxStale < 0 {
		return nil, errors.New("robots: negative ttl, retry or max stale")
	}
	cfg.TTL = cmp.Or(cfg.TTL, 24*time.Hour)
	cfg.RetryUnreachable = cmp.Or(cfg.RetryUnreachable, 10*time.Minute)
	cfg.MaxStale = cmp.Or(cfg.MaxStale, 30*24*time.Hour)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Cache == nil {
		cfg.Cache = NewMemoryCache()
	}
	c := &Checker{cfg: cfg, token: token, log: cfg.Logger, hosts: map[string]*host{}}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// robotsURL is the robots.txt of the service's host: at the root,
// whatever the service's base path, the host as httpx compares hosts (a
// default port written out is the same file).
func robotsURL(svc *httpx.Service) *url.URL {
	u := svc.BaseURL()
	return &url.URL{Scheme: u.Scheme, Host: httpx.HostKey(u), Path: "/robots.txt"}
}

// FileURL returns the URL of the robots.txt that applies to svc's host,
// the key its copy is cached under.
func FileURL(svc *httpx.Service) string { return robotsURL(svc).String() }

func (c *Checker) host(key string) *host {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hosts[key]
	if h == nil {
		h = &host{lock: make(chan struct{}, 1)}
		c.hosts[key] = h
	}
	return h
}

// Policy returns the robots.txt policy for the service's host: from
// memory, else from the Cache while fresh, else fetched through svc. A
// file that cannot be read is not an error but a policy (see
// KindDisallowAll); errors are the context's and the Cache's.
func (c *Checker) Policy(ctx context.Context, svc *httpx.Service) (*Policy, error) {
	pol, _, err := c.policy(ctx, svc, robotsURL(svc).String())
	return pol, err
}

// policy is Policy for the robots.txt at key, also reporting whether the
// policy was (re)loaded by this call.
func (c *Checker) policy(ctx context.Context, svc *httpx.Service, key string) (*Policy, bool, error) {
	h := c.host(key)
	select {
	case h.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	defer func() { <-h.lock }()
	now := c.cfg.Now()
	if h.pol != nil && now.Before(h.expires) {
		return h.pol, false, nil
	}
	pol, expires, err := c.load(ctx, svc, key, now)
	if err != nil {
		return nil, false, err
	}
	h.pol, h.expires = pol, expires
	return pol, true, nil
}

// load gets the policy from the cache or the host.
func (c *Checker) load(ctx context.Context, svc *httpx.Service, key string, now time.Time) (*Policy, time.Time, error) {
	cached, ok, err := c.cfg.Cache.Load(ctx, key)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("robots: load %s from the cache: %w", key, err)
	}
	if ok && now.Sub(cached.Fetched) < c.cfg.TTL {
		return c.fromEntry(cached, false), cached.Fetched.Add(c.cfg.TTL), nil
	}

	resp, err := svc.Get(ctx, key, nil)
	if ctx.Err() != nil {
		return nil, time.Time{}, fmt.Errorf("robots: fetch %s: %w", key, ctx.Err())
	}
	if errors.Is(err, httpx.ErrStopped) {
		// The run is stopping: no answer, and no news of the host.
		return nil, time.Time{}, fmt.Errorf("robots: fetch %s: %w", key, err)
	}
	var why string
	var cause error
	switch {
	case err != nil:
		why, cause = err.Error(), err
	case resp.Status >= 200 && resp.Status < 300,
		resp.Status >= 400 && resp.Status < 500 && resp.Status != 429:
		e := Entry{URL: key, Fetched: now, Status: resp.Status}
		if resp.Status < 300 {
			e.Body = resp.Body[:min(len(resp.Body), MaxSize)]
		}
		if err := c.cfg.Cache.Save(ctx, e); err != nil {
			return nil, time.Time{}, fmt.Errorf("robots: save %s to the cache: %w", key, err)
		}
		return c.fromEntry(e, false), now.Add(c.cfg.TTL), nil
	default:
		why = fmt.Sprintf("status %d", resp.Status)
	}

	// Unreachable: an older copy stands in if there is one, else nothing
	// may be fetched. Either way, ask again soon.
	retry := now.Add(c.cfg.RetryUnreachable)
	if ok && now.Sub(cached.Fetched) < c.cfg.MaxStale {
		pol := c.fromEntry(cached, true)
		pol.Reason = fmt.Sprintf("%s unreachable (%s); using the copy fetched %s: %s", key, why, cached.Fetched.UTC().Format(time.RFC3339), pol.Reason)
		c.log.LogAttrs(ctx, slog.LevelWarn, "robots.txt unreachable, using the cached copy", slog.String("url", key), slog.String("err", why), slog.Time("fetched", cached.Fetched))
		return pol, retry, nil
	}
	u, _ := url.Parse(key)
	pol := &Policy{URL: key, Kind: KindDisallowAll, unreachable: true, cause: cause,
		Reason: fmt.Sprintf("%s unreachable (%s); nothing is fetched from %s until it answers (asked again after %s)", key, why, u.Host, c.cfg.RetryUnreachable)}
	c.log.LogAttrs(ctx, slog.LevelWarn, "robots.txt unreachable, host disallowed", slog.String("url", key), slog.String("err", why), slog.Duration("retry_after", c.cfg.RetryUnreachable))
	return pol, retry, nil
}

// fromEntry turns a cached or fetched answer into a policy.
func (c *Checker) fromEntry(e Entry, stale bool) *Policy {
	p := &Policy{URL: e.URL, Status: e.Status, Fetched: e.Fetched, Stale: stale}
	switch {
	case e.Status >= 200 && e.Status < 300:
		p.Kind, p.group = KindRules, Parse(e.Body).For(c.token)
		switch p.group.Agent {
		case "":
			p.Reason = fmt.Sprintf("%s has no group for %s or *", e.URL, c.token)
		case "*":
			p.Reason = fmt.Sprintf("%s, group *", e.URL)
		default:
			p.Reason = fmt.Sprintf("%s, group %s", e.URL, p.group.Agent)
		}
	case e.Status == 401 || e.Status == 403:
		p.Kind = KindDisallowAll
		p.Reason = fmt.Sprintf("%s answered %d: curate is refused there, so nothing is fetched", e.URL, e.Status)
	default:
		p.Kind = KindAllowAll
		p.Reason = fmt.Sprintf("%s answered %d: no robots.txt, everything allowed", e.URL, e.Status)
	}
	return p
}

// Apply reads the host's robots.txt and applies it to svc (a name that
// does not resolve is an error wrapping *httpx.NoSuchHostError): the interval
// becomes Effective's choice (override lets a configured interval shorter
// than the Crawl-delay stand, with a warning logged once per host), and a
// guard (httpx.Service.SetGuard) refuses every request the file
// disallows, with ErrDisallowed, before it is sent. The guard refetches
// the file when it goes stale and updates the interval if its Crawl-delay
// changed.
func (c *Checker) Apply(ctx context.Context, svc *httpx.Service, configured time.Duration, override bool) (Pace, error) {
	key := robotsURL(svc).String()
	pol, _, err := c.policy(ctx, svc, key)
	if err != nil {
		return Pace{}, err
	}
	if nh := (*httpx.NoSuchHostError)(nil); pol.unreachable && errors.As(pol.cause, &nh) {
		// Not a host that is down but a name that does not exist, or a
		// machine that is offline: nothing of the host can be had, and
		// the caller is told rather than handed a host that refuses all.
		return Pace{}, fmt.Errorf("robots: %s: %w", key, pol.cause)
	}
	h := c.host(key)
	c.mu.Lock()
	h.configured, h.override = configured, override
	c.mu.Unlock()
	pace := c.pace(ctx, svc, h, pol, true)
	svc.SetGuard(func(ctx context.Context, u *url.URL) error { return c.check(ctx, svc, h, key, u) })
	return pace, nil
}

// Guard is Apply without reading the file now: it installs the same
// guard on svc, and the first request to the host reads the file (from
// the Cache while fresh, else with one request) and sets the interval
// before that request waits for its turn. It suits a client of many hosts
// of which a run asks few, such as the open-access PDF hosts; Paces lists
// a host once it was asked.
//
// The file read is the one of the request's scheme (RFC 9309 scopes a
// robots.txt to its scheme and authority), not only the service's: such
// a service is asked for absolute URLs of either.
func (c *Checker) Guard(svc *httpx.Service, configured time.Duration, override bool) {
	svc.SetGuard(func(ctx context.Context, u *url.URL) error {
		ru := robotsURL(svc)
		ru.Scheme = u.Scheme
		key := ru.String()
		h := c.host(key)
		c.mu.Lock()
		h.configured, h.override = configured, override
		c.mu.Unlock()
		return c.check(ctx, svc, h, key, u)
	})
}

// pace sets svc's interval from pol if it changed (or first is true), and
// logs the choice.
func (c *Checker) pace(ctx context.Context, svc *httpx.Service, h *host, pol *Policy, first bool) Pace {
	c.mu.Lock()
	p := Effective(svc.BaseURL().Host, h.configured, pol, h.override)
	changed := first || !h.applied || p.Interval != h.pace.Interval
	h.applied = true
	warn := p.Source == SourceOverride && !h.warned
	if warn {
		h.warned = true
	}
	h.pace = p
	c.mu.Unlock()
	if changed {
		svc.SetInterval(p.spacing()) // httpx adds the margin
		c.log.LogAttrs(ctx, slog.LevelInfo, "robots interval", slog.String("host", p.Host),
			slog.Duration("interval", p.Interval), slog.String("source", p.Source), slog.String("pace", p.String()))
	}
	if warn {
		c.log.LogAttrs(ctx, slog.LevelWarn, "going faster than robots.txt asks", slog.String("host", p.Host),
			slog.Duration("interval", p.Interval), slog.Duration("crawl_delay", p.CrawlDelay), slog.String("robots", p.RobotsURL))
	}
	return p
}

// check is the guard Apply installs.
func (c *Checker) check(ctx context.Context, svc *httpx.Service, h *host, key string, u *url.URL) error {
	path := u.EscapedPath()
	if path == "/robots.txt" {
		return nil // always allowed, and fetching it must not wait on itself
	}
	pol, reloaded, err := c.policy(ctx, svc, key)
	if err != nil {
		return err
	}
	c.mu.Lock()
	applied := h.applied
	c.mu.Unlock()
	if reloaded || !applied {
		c.pace(ctx, svc, h, pol, false)
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	if ok, rule := pol.Allowed(path); !ok {
		switch {
		case pol.cause != nil:
			return fmt.Errorf("%w: %s for %s (%s): %w: %w", ErrDisallowed, u.Redacted(), c.token, rule, ErrUnreachable, pol.cause)
		case pol.unreachable:
			return fmt.Errorf("%w: %s for %s (%s): %w", ErrDisallowed, u.Redacted(), c.token, rule, ErrUnreachable)
		}
		return fmt.Errorf("%w: %s for %s (%s)", ErrDisallowed, u.Redacted(), c.token, rule)
	}
	return nil
}

// Paces returns the interval chosen for every host Apply was called for,
// sorted by host, for the run summary.
func (c *Checker) Paces() []Pace {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Pace
	for _, h := range c.hosts {
		if h.applied {
			out = append(out, h.pace)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}

// MarshalJSON writes durations as text ("15s") and in seconds, for the
// run summary.
func (p Pace) MarshalJSON() ([]byte, error) {
	out := struct {
		Host            string   `json:"host"`
		Interval        string   `json:"interval"`
		IntervalSeconds float64  `json:"interval_seconds"`
		Source          string   `json:"source"`
		Configured      string   `json:"configured"`
		CrawlDelay      *string  `json:"crawl_delay"`
		CrawlDelaySecs  *float64 `json:"crawl_delay_seconds"`
		RobotsURL       string   `json:"robots_url"`
		Robots          string   `json:"robots"`
	}{
		Host: p.Host, Interval: p.Interval.String(), IntervalSeconds: p.Interval.Seconds(),
		Source: p.Source, Configured: p.Configured.String(), RobotsURL: p.RobotsURL, Robots: p.Robots,
	}
	if p.HasDelay {
		d, s := p.CrawlDelay.String(), p.CrawlDelay.Seconds()
		out.CrawlDelay, out.CrawlDelaySecs = &d, &s
	}
	return json.Marshal(out)
}
