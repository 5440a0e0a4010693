// Package httpx is the HTTP layer every remote call of curate goes through:
// arXiv and ar5iv pages, the arXiv API, Semantic Scholar and LLM endpoints.
//
// A Client holds one Service per remote API. Each Service owns a rate
// limiter shared by all goroutines that use it. The limiter sits in a
// RoundTripper under the go-retryablehttp retry loop, so the first attempt
// and every retry take a token. The limiter adapts to the service: a 429
// lengthens its interval for every worker (see Pacing), and a Retry-After
// pauses the whole service, not just the request that got it. Response bodies are read fully inside that
// layer under a size cap, so a truncated body is a retryable transport error
// rather than silently short data. Redirects are followed only between the
// configured hosts, and a service's secret headers go only to that service's
// own origin. Every secret the Client knows (its services' secret headers
// and Config.Secrets) is redacted from what comes back, in every form an
// echo may write it in (see package redact): response bodies and headers,
// URLs, errors and log lines, so nothing past httpx sees a key. A
// service's timeout spans a request's attempts; a name that does not
// resolve is not retried (NoSuchHostError); once Config.Stop closes, no
// request waits to be retried.
package httpx

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/groundwork/curate/internal/redact"
	"github.com/hashicorp/go-retryablehttp"
)

// Defaults applied by New to zero Config fields.
const (
	defaultTimeout       = 60 * time.Second
	defaultMaxBody       = 64 << 20
	defaultRetryMax      = 5
	defaultRetryWaitMin  = 2 * time.Second
	defaultRetryWaitMax  = 2 * time.Minute
	defaultMaxRetryAfter = 5 * time.Minute

	maxRedirects  = 5
	errorBodySize = 512 // bytes of the last body kept in a StatusError
)

// Config configures a Client. Zero fields take the documented defaults.
type Config struct {
	// UserAgent is sent on every request; required. See UserAgent.
	UserAgent string
	// Timeout bounds the time one request may spend on the wire, from
	// sending it to the end of the body, over all its attempts and
	// redirect hops: a retry has what the earlier attempts left, and an
	// attempt that timed out is not retried, for it spent it all (a host
	// that holds its connections would otherwise hold each request for
	// RetryMax+1 timeouts). Waits for the limiter and the backoffs are not
	// counted (default 60s). The caller's ctx bounds the whole call.
	Timeout time.Duration
	// MaxBody caps a response body in bytes (default 64 MiB).
	MaxBody int64
	// RetryMax is the number of retries after the first attempt (default 5;
	// negative means no retries).
	RetryMax int
	// RetryWaitMin and RetryWaitMax bound the jittered exponential backoff
	// (defaults 2s and 2min).
	RetryWaitMin, RetryWaitMax time.Duration
	// MaxRetryAfter clamps a server's Retry-After (default 5min). A server
	// asking for longer ends the call with a *StatusError carrying the
	// requested delay, so the caller can requeue the work, and pauses the
	// service for that long: until then every request to it fails at once
	// with ErrPaused, without being sent. A shorter Retry-After pauses the
	// service too, and the requests wait it out.
	MaxRetryAfter time.Duration
	// Logger receives Debug lines per attempt and Warn lines per retry;
	// nil discards. go-retryablehttp's own logging is always off.
	Logger *slog.Logger
	// Transport sends the requests; nil means a pooled clone of
	// http.DefaultTransport.
	Transport http.RoundTripper
	// OnGrant, when set, is called each time a service's limiter lets an
	// attempt or redirect hop start, in the order of the grants and before
	// the request is sent. It runs under the limiter's lock, so it must be
	// quick. Tests check a limiter's own schedule with it, which scheduling
	// delay cannot disturb, rather than arrival times at a server.
	OnGrant func(Grant)
	// Stop, when closed (the first interrupt), makes requests give up
	// rather than retry: a request waiting to retry (its backoff, a
	// Retry-After pause) or about to, ends at once with ErrStopped; an
	// attempt on the wire finishes. Nil: never.
	Stop <-chan struct{}
	// Secrets are more values to redact from what comes back, besides
	// the services' secret headers: the keys of services on other
	// Clients, a proxy's credentials (see redact.UserInfo). A proxy or a
	// shared gateway may echo any of them.
	Secrets []string
}

// Grant is one decision of a service's limiter: a request may start.
type Grant struct {
	Service  string        // the service whose limiter granted it (the host's owner)
	Method   string        // request method
	URL      string        // request URL, secret query values redacted
	At       time.Time     // when the limiter granted it; the request is sent after
	Interval time.Duration // the spacing in force at the grant; 0: unlimited
}

// ServiceConfig describes one remote service.
type ServiceConfig struct {
	Name    string // "arxiv", "ar5iv", "s2", "arxiv-api", "llm", ...
	BaseURL string // absolute http(s) URL, e.g. "https://arxiv.org"
	// Interval is the minimum spacing between request starts, retries and
	// redirect hops included (arXiv: 3s), to which httpx adds its Margin;
	// 0 means unlimited.
	Interval time.Duration
	// Burst is how many requests may start back to back before Interval
	// applies (default 1).
	Burst int
	// Pacing tunes how Interval adapts to 429s; the zero value adapts
	// with the defaults (see Pacing).
	Pacing Pacing
	// MaxInFlight caps concurrent requests to the service (arXiv asks for a
	// single connection at a time); 0 means no cap.
	MaxInFlight int
	// Timeout bounds a request to this service as Config.Timeout does,
	// overriding it (a GROBID conversion or an LLM generation may take
	// minutes where a page takes seconds); 0 means Config.Timeout.
	Timeout time.Duration
	// TimeoutPerAttempt makes Timeout bound each attempt instead, and a
	// timed-out attempt is retried like a reset: for a caller that keeps
	// its own deadline over the whole call in ctx (the LLM client), and
	// for which a hung answer deserves another try within it.
	TimeoutPerAttempt bool
	// NoRetry lists statuses that httpx would retry (429, 5xx) but that
	// this service means as final: they are returned as they are, for the
	// caller to map. GROBID's 500 is a failed conversion of one PDF, which
	// a retry only repeats at great cost.
	NoRetry []int
	// Header is added to every request sent to the service's own origin,
	// e.g. S2's x-api-key. The values are secret: they are never logged,
	// never put into errors, and never sent to another host.
	Header http.Header
}

// Client sends requests to a fixed set of services. It is safe for
// concurrent use.
type Client struct {
	cfg      Config // defaults applied
	log      *slog.Logger
	rt       http.RoundTripper
	services map[string]*Service
	byHost   map[string]*Service // first service configured for each host
	red      *redact.Redactor    // every secret of the Client, see Config.Secrets
}

// Service is one remote service of a Client. It is safe for concurrent use.
type Service struct {
	c       *Client
	name    string
	base    *url.URL
	header  http.Header // secret, see ServiceConfig.Header
	limiter *limiter
	// configured is the spacing asked for, before its margin (see
	// Configured).
	configured atomic.Int64
	gate       chan struct{} // serialises limiter waits, see wait
	slots      chan struct{} // nil when MaxInFlight is 0
	noRetry    []int         // see ServiceConfig.NoRetry
	timeout    time.Duration // per request, or per attempt with perAttempt
	// perAttempt: see ServiceConfig.TimeoutPerAttempt
	perAttempt bool
	log        *slog.Logger
	stats      counters
	guard      atomic.Pointer[Guard] // see SetGuard
}

// Guard decides whether a request may be sent at all; an error refuses it.
type Guard func(ctx context.Context, u *url.URL) error

// SetGuard installs g as the check every request to the service's host
// must pass before it waits for a slot or a token: first attempts, retries
// and redirect hops that land on the host, whichever service sent them.
// A refusal ends the call at once, unretried, with an error wrapping g's.
// A nil g removes the guard. robots.Checker installs one that enforces
// the host's robots.txt.
func (s *Service) SetGuard(g Guard) {
	if g == nil {
		s.guard.Store(nil)
		return
	}
	s.guard.Store(&g)
}

// New validates cfg and services and returns a Client.
func New(cfg Config, services ...ServiceConfig) (*Client, error) {
	if cfg.UserAgent == "" {
		return nil, errors.New("httpx: new client: user agent is required")
	}
	if strings.ContainsAny(cfg.UserAgent, "\r\n") {
		return nil, errors.New("httpx: new client: user agent contains a line break")
	}
	if cfg.Timeout < 0 || cfg.MaxBody < 0 || cfg.RetryWaitMin < 0 || cfg.RetryWaitMax < 0 || cfg.MaxRetryAfter < 0 {
		return nil, errors.New("httpx: new client: negative timeout, size or wait")
	}
	cfg.Timeout = cmp.Or(cfg.Timeout, defaultTimeout)
	cfg.MaxBody = cmp.Or(cfg.MaxBody, defaultMaxBody)
	cfg.RetryWaitMin = cmp.Or(cfg.RetryWaitMin, defaultRetryWaitMin)
	cfg.RetryWaitMax = cmp.Or(cfg.RetryWaitMax, defaultRetryWaitMax)
	cfg.MaxRetryAfter = cmp.Or(cfg.MaxRetryAfter, defaultMaxRetryAfter)
	switch {
	case cfg.RetryMax == 0:
		cfg.RetryMax = defaultRetryMax
	case cfg.RetryMax < 0:
		cfg.RetryMax = 0
	}
	if cfg.RetryWaitMin > cfg.RetryWaitMax {
		return nil, fmt.Errorf("httpx: new client: retry wait min %s exceeds max %s", cfg.RetryWaitMin, cfg.RetryWaitMax)
	}
	if len(services) == 0 {
		return nil, errors.New("httpx: new client: no services configured")
	}

	c := &Client{
		cfg:      cfg,
		log:      cfg.Logger,
		rt:       cfg.Transport,
		services: make(map[string]*Service, len(services)),
		byHost:   make(map[string]*Service, len(services)),
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 16 // several workers per service reuse connections
		c.rt = t
	}
	secrets := slices.Clone(cfg.Secrets)
	for _, sc := range services {
		s, err := c.newService(sc)
		if err != nil {
			return nil, err
		}
		c.services[s.name] = s
		if h := hostKey(s.base); c.byHost[h] == nil {
			c.byHost[h] = s
		}
		for _, vs := range s.header {
			for _, v := range vs {
				secrets = append(secrets, redact.Credentials(v)...)
			}
		}
	}
	c.red = redact.New(secrets...)
	return c, nil
}

func (c *Client) newService(sc ServiceConfig) (*Service, error) {
	if sc.Name == "" {
		return nil, fmt.Errorf("httpx: service with base url %q: empty name", sc.BaseURL)
	}
	if _, dup := c.services[sc.Name]; dup {
		return nil, fmt.Errorf("httpx: service %q: configured twice", sc.Name)
	}
	base, err := url.Parse(sc.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("httpx: service %q: base url %q: %w", sc.Name, sc.BaseURL, err)
	}
	if base.Scheme != "http" && base.Scheme != "https" || base.Host == "" {
		return nil, fmt.Errorf("httpx: service %q: base url %q: want an absolute http or https url", sc.Name, sc.BaseURL)
	}
	if base.User != nil || base.Fragment != "" {
		return nil, fmt.Errorf("httpx: service %q: base url %q: user info and fragments are not supported", sc.Name, sc.BaseURL)
	}
	if base.Path == "" {
		base.Path = "/"
	}
	if sc.Interval < 0 || sc.Burst < 0 || sc.MaxInFlight < 0 || sc.Timeout < 0 {
		return nil, fmt.Errorf("httpx: service %q: negative interval, burst, max in flight or timeout", sc.Name)
	}
	if p := sc.Pacing; p.Factor != 0 && !(p.Factor > 1 && p.Factor <= 10) || p.RecoverAfter < 0 || p.MaxInterval < 0 {
		return nil, fmt.Errorf("httpx: service %q: pacing factor %v, recover after %d, max interval %s: want a factor in (1, 10] and no negative values", sc.Name, p.Factor, p.RecoverAfter, p.MaxInterval)
	}
	s := &Service{
		c:       c,
		name:    sc.Name,
		base:    base,
		header:  make(http.Header, len(sc.Header)),
		limiter: newLimiter(Paced(sc.Interval), sc.Burst, sc.Pacing),
		gate:    make(chan struct{}, 1),
		log:     c.log.With(slog.String("service", sc.Name)),
		timeout: cmp.Or(sc.Timeout, c.cfg.Timeout),
		noRetry: slices.Clone(sc.NoRetry),

		perAttempt: sc.TimeoutPerAttempt,
	}
	for k, vs := range sc.Header {
		k = http.CanonicalHeaderKey(k)
		for _, v := range vs {
			if strings.ContainsAny(v, "\r\n") {
				// Name the header, not the value: the value is secret.
				return nil, fmt.Errorf("httpx: service %q: header %s: value contains a line break", sc.Name, k)
			}
			s.header[k] = append(s.header[k], v)
		}
	}
	if sc.MaxInFlight > 0 {
		s.slots = make(chan struct{}, sc.MaxInFlight)
	}
	s.configured.Store(int64(sc.Interval))
	return s, nil
}

// Redact returns text with every secret the Client knows replaced (see
// package redact), for text about its services that did not come out of
// httpx already redacted.
func (c *Client) Redact(text string) string { return c.red.String(text) }

// Service returns the service configured under name.
func (c *Client) Service(name string) (*Service, error) {
	s, ok := c.services[name]
	if !ok {
		return nil, fmt.Errorf("httpx: unknown service %q", name)
	}
	return s, nil
}

// allowed reports whether u points at one of the configured hosts.
func (c *Client) allowed(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && c.byHost[hostKey(u)] != nil
}

// pacer returns the service whose limiter paces requests to u: the calling
// service on its own host, otherwise the service that owns the host, so a
// redirect to arxiv.org respects arXiv's interval.
func (c *Client) pacer(u *url.URL, caller *Service) *Service {
	h := hostKey(u)
	if hostKey(caller.base) == h {
		return caller
	}
	if s := c.byHost[h]; s != nil {
		return s
	}
	return caller
}

// Name returns the service name.
func (s *Service) Name() string { return s.name }

// BaseURL returns a copy of the service's base URL.
func (s *Service) BaseURL() *url.URL {
	u := *s.base
	return &u
}

// SetInterval changes the configured minimum spacing between requests,
// e.g. to a robots.txt Crawl-delay; d <= 0 removes the limit. Requests are
// then spaced by Paced(d), d and its margin. The interval in force starts
// from there again, and adapting to 429s never takes it below.
func (s *Service) SetInterval(d time.Duration) {
	s.configured.Store(int64(max(d, 0)))
	s.limiter.set(Paced(d))
}

// Configured returns the spacing last configured (ServiceConfig.Interval
// or SetInterval), without its margin or any slowdown after 429s.
func (s *Service) Configured() time.Duration { return time.Duration(s.configured.Load()) }

// Interval returns the minimum spacing between requests in force now: the
// configured one with its margin, or longer after 429s. 0 means
// unlimited.
func (s *Service) Interval() time.Duration {
	return s.limiter.snapshot().interval
}

// PausedUntil returns when a pause the server asked for with Retry-After
// ends; the zero time, or one in the past, when the service is not paused.
func (s *Service) PausedUntil() time.Time {
	return s.limiter.snapshot().paused
}

// Request is one logical request; retries and redirects happen inside Do.
type Request struct {
	Method string // default GET
	// Path is relative to the service's BaseURL ("abs/2401.00001" and
	// "/abs/2401.00001" both append to the base path), or an absolute URL on
	// a configured host.
	Path       string
	Query      url.Values // added to any query in Path
	Body       []byte     // resent on every attempt
	Header     http.Header
	NoRedirect bool // return a 3xx as is, with Response.Location set
	// Stream, when set, reads a 2xx body as it arrives instead of
	// buffering it, without the MaxBody cap (the reader caps what it
	// keeps, e.g. per line): a results file of a few hundred megabytes.
	// A body that breaks off is retried like a truncated one, Stream
	// reading it again from the start, so it must be idempotent; an error
	// of Stream's own ends the call. The Response then has no Body.
	Stream func(io.Reader) error
}

// Response is a fully read response.
type Response struct {
	Status   int
	Header   http.Header
	Body     []byte
	URL      string // final URL, after redirects
	Location string // absolute redirect target of a 3xx response that was not followed
}

// Get is Do with method GET.
func (s *Service) Get(ctx context.Context, pathOrURL string, query url.Values) (*Response, error) {
	return s.Do(ctx, Request{Path: pathOrURL, Query: query})
}

// Do sends req, retrying 429, 5xx other than 501 and transport failures.
//
// A response with any other status is returned with a nil error, so
// callers decide what, say, a 404 means. A retryable status that persists
// after the retries, or a Retry-After above Config.MaxRetryAfter, yields a
// *StatusError. Oversized bodies fail with ErrTooLarge, bodies still
// truncated after the retries with ErrTruncated, redirects off the
// configured hosts with ErrForeignRedirect. Cancelling ctx stops the
// limiter wait and the backoff; the error then wraps ctx.Err().
func (s *Service) Do(ctx context.Context, req Request) (*Response, error) {
	resp, err := s.do(ctx, req)
	if err != nil {
		s.stats.errors.Add(1)
		// Whatever made it (a transport, a guard, a server's words), the
		// error's text is redacted before anyone sees it.
		return nil, s.c.red.Error(err)
	}
	return resp, nil
}

func (s *Service) do(ctx context.Context, r Request) (*Response, error) {
	method := cmp.Or(r.Method, http.MethodGet)
	u, err := s.resolve(r.Path, r.Query)
	if err != nil {
		shown := s.scrub(r.Path)
		if u, perr := url.Parse(r.Path); perr == nil {
			shown = s.redact(u)
		}
		return nil, fmt.Errorf("%s: %s %s: %w", s.name, method, shown, err)
	}
	var body any // a nil []byte would still become a zero-length body
	if r.Body != nil {
		body = r.Body
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	rreq, err := retryablehttp.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s: %w", s.name, method, s.redact(u), err)
	}
	for k, vs := range r.Header {
		rreq.Header[http.CanonicalHeaderKey(k)] = slices.Clone(vs)
	}

	cl := &call{svc: s, ctx: ctx, cancel: cancel, method: method, url: s.redact(u), noRedirect: r.NoRedirect, stream: r.Stream}
	defer cl.watchStop(s.c.cfg.Stop)()
	// A Client per call lets the callbacks share the call's state (attempt,
	// last error) without context values; the shared parts (transport pool,
	// limiters) live in the Service and Client.
	rc := &retryablehttp.Client{
		HTTPClient: &http.Client{
			Transport:     roundTripFunc(cl.roundTrip),
			CheckRedirect: cl.checkRedirect,
		},
		Logger:         nil, // its [DEBUG] lines would go to stderr; we log ourselves
		RetryWaitMin:   s.c.cfg.RetryWaitMin,
		RetryWaitMax:   s.c.cfg.RetryWaitMax,
		RetryMax:       s.c.cfg.RetryMax,
		RequestLogHook: cl.beforeAttempt,
		CheckRetry:     cl.checkRetry,
		Backoff:        cl.backoff,
		ErrorHandler:   cl.giveUp,
	}
	resp, err := rc.Do(rreq)
	if err != nil {
		return nil, cl.fail(resp, err)
	}
	out := &Response{
		Status: resp.StatusCode,
		Header: resp.Header,
		Body:   bodyBytes(resp),
		URL:    s.scrub(resp.Request.URL.String()),
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc, err := resp.Location(); err == nil {
			loc.User = nil // as a followed redirect's, see checkRedirect
			out.Location = s.scrub(loc.String())
		}
	}
	return out, nil
}

// resolve turns a Request path and query into the URL to fetch.
func (s *Service) resolve(p string, q url.Values) (*url.URL, error) {
	ref, err := url.Parse(p)
	if err != nil {
		return nil, fmt.Errorf("parse path: %w", err)
	}
	var u *url.URL
	switch {
	case ref.IsAbs():
		if !s.c.allowed(ref) {
			return nil, fmt.Errorf("host %s is not a configured service", ref.Host)
		}
		if ref.User != nil {
			return nil, errors.New("credentials in the url are not sent")
		}
		u = ref
	case ref.Host != "":
		return nil, errors.New("scheme-relative urls are not supported")
	default:
		u = s.base.JoinPath(ref.EscapedPath())
		u.RawQuery = joinQuery(s.base.RawQuery, ref.RawQuery)
	}
	u.Fragment, u.RawFragment = "", ""
	if len(q) > 0 {
		u.RawQuery = joinQuery(u.RawQuery, q.Encode())
	}
	return u, nil
}

func joinQuery(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "&" + b
}

// Stats counts a service's traffic since the Client was made, and says
// how its pacing adapted.
type Stats struct {
	Requests  int64 `json:"requests"`   // attempts sent, retries and redirect hops included
	Retries   int64 `json:"retries"`    // attempts after the first of a call
	Status429 int64 `json:"status_429"` // 429 responses seen
	Status5xx int64 `json:"status_5xx"` // 5xx responses seen
	Bytes     int64 `json:"bytes"`      // response body bytes read
	Errors    int64 `json:"errors"`     // Do calls that returned an error
	// Elapsed sums the attempts' times from sending to the end of the
	// body: over Requests, the service's mean latency (for estimates).
	Elapsed time.Duration `json:"elapsed_ns"`

	Interval     time.Duration `json:"interval_ns"`           // spacing in force now
	PeakInterval time.Duration `json:"peak_interval_ns"`      // the longest spacing in force so far
	Slowdowns    int64         `json:"slowdowns"`             // times a 429 lengthened the interval
	Pauses       int64         `json:"pauses"`                // Retry-After pauses of the whole service
	PausedUntil  time.Time     `json:"paused_until,omitzero"` // end of the latest pause; zero if none
	// MinSendGap is the shortest time between two requests of a paced
	// service written out (0 before two, or when unpaced).
	MinSendGap time.Duration `json:"min_send_gap_ns,omitempty"`
}

type counters struct {
	requests, retries, status429, status5xx, bytes, errors, elapsed atomic.Int64
}

// Stats returns a snapshot of the service's counters. Requests made on
// behalf of the service count here even when a redirect took them to
// another configured host.
func (s *Service) Stats() Stats {
	p := s.limiter.snapshot()
	return Stats{
		Interval:     p.interval,
		PeakInterval: p.peak,
		Slowdowns:    p.slowdowns,
		Pauses:       p.pauses,
		PausedUntil:  p.paused,
		MinSendGap:   p.minGap,
		Requests:     s.stats.requests.Load(),
		Retries:      s.stats.retries.Load(),
		Status429:    s.stats.status429.Load(),
		Status5xx:    s.stats.status5xx.Load(),
		Bytes:        s.stats.bytes.Load(),
		Errors:       s.stats.errors.Load(),
		Elapsed:      time.Duration(s.stats.elapsed.Load()),
	}
}

// UserAgent builds a User-Agent naming curate, its version and, when mailto
// is not empty, a contact address, as arXiv and S2 ask of crawlers.
func UserAgent(version, mailto string) string {
	version = cmp.Or(version, "dev")
	if mailto == "" {
		return "curate/" + version + " (+https://github.com/groundwork/curate)"
	}
	return "curate/" + version + " (+https://github.com/groundwork/curate; mailto:" + mailto + ")"
}

// HostKey is u's host as curate compares hosts, the one rule for it:
// lower case, without a trailing dot, and without the port when it is
// the scheme's default (https://arxiv.org:443/x is https://arxiv.org/x;
// http://arxiv.org:443/x is not).
func HostKey(u *url.URL) string {
	host, port := strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), u.Port()
	if port == "" || port == "80" && u.Scheme == "http" || port == "443" && u.Scheme == "https" {
		if strings.Contains(host, ":") {
			return "[" + host + "]" // an IPv6 address, as a URL's host writes it
		}
		return host
	}
	return net.JoinHostPort(host, port)
}

func hostKey(u *url.URL) string { return HostKey(u) }

// sameOrigin reports whether u has the service's scheme and host; only then
// are the secret headers attached.
func (s *Service) sameOrigin(u *url.URL) bool {
	return u.Scheme == s.base.Scheme && hostKey(u) == hostKey(s.base)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// bufferedBody is a response body already read into memory.
type bufferedBody struct {
	*bytes.Reader // serves retryablehttp's drain and http.Client's redirect handling
	b             []byte
}

func (bufferedBody) Close() error { return nil }

// bodyBytes returns the body read by the transport.
func bodyBytes(resp *http.Response) []byte {
	if b, ok := resp.Body.(*bufferedBody); ok {
		return b.b
	}
	b, _ := io.ReadAll(resp.Body) // not reached: the transport always buffers
	return b
}
