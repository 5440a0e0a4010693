// Package oapdf downloads the open-access PDFs of papers, from URLs that
// come from remote data (Semantic Scholar's openAccessPdf, an ACL
// Anthology id) and are therefore untrusted.
//
// A Fetcher fetches only http and https URLs whose host (and port) is on
// an allow-list of PDF hosts, never an IP address written as the host;
// it resolves names itself and connects only to public unicast addresses,
// checked again at connect time in net.Dialer's Control, so neither a
// redirect nor a resolver that answers differently the second time (DNS
// rebinding) reaches loopback, private, link-local or other internal
// addresses. Redirects are followed only between allowed hosts; a body is
// capped in size and returned only when it is a PDF by its content type
// and its "%PDF-" header. Every host is a service of one httpx.Client:
// paced by its own interval, retried on 429 and 5xx, asked with curate's
// User-Agent, and its robots.txt obeyed as package robots reads it for
// every host curate crawls (its Disallow rules, and its Crawl-delay when
// longer than the interval), read at the host's first request.
//
// Candidates derives a paper's PDF URLs with their licence: the ACL
// Anthology's for an ACL id, and Semantic Scholar's openAccessPdf.
package oapdf

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/robots"
)

// Defaults applied by New to zero Config fields.
const (
	// DefaultMaxSize caps a PDF: real papers are rarely over 20 MB;
	// scanned books are no input for a card.
	DefaultMaxSize = 50 << 20
	// DefaultInterval spaces requests to one host, like a polite crawler.
	DefaultInterval = time.Second
	// DefaultTimeout bounds one attempt, body included.
	DefaultTimeout = 2 * time.Minute
)

// DefaultHosts returns the default allow-list: the open-access PDF hosts
// of the literature curate reads (a new slice each time).
func DefaultHosts() []string {
	return []string{
		// ACL Anthology (aclweb.org redirects there).
		"aclanthology.org", "www.aclweb.org", "aclweb.org",
		// Preprint servers.
		"arxiv.org", "export.arxiv.org", "www.biorxiv.org", "www.medrxiv.org", "zenodo.org",
		// Conference proceedings and review sites.
		"openreview.net", "proceedings.neurips.cc", "papers.nips.cc", "papers.neurips.cc",
		"proceedings.mlr.press", "jmlr.org", "www.jmlr.org", "openaccess.thecvf.com",
		"www.ijcai.org", "ojs.aaai.org", "www.isca-archive.org", "www.isca-speech.org",
		"dl.acm.org",
		// PubMed Central and Europe PMC.
		"europepmc.org", "www.ncbi.nlm.nih.gov", "pmc.ncbi.nlm.nih.gov",
		// Open archives and institutional repositories.
		"hal.science", "hal.archives-ouvertes.fr", "inria.hal.science", "hal.inria.fr",
		"dspace.mit.edu", "escholarship.org", "papers.nber.org", "www.nber.org",
		// Publishers' open-access hosts.
		"link.springer.com", "www.mdpi.com", "mdpi-res.com", "journals.plos.org",
		"www.frontiersin.org", "peerj.com", "elifesciences.org", "www.nature.com",
		"academic.oup.com", "journals.sagepub.com", "royalsocietypublishing.org",
		"www.cambridge.org", "direct.mit.edu", "transacl.org", "www.tandfonline.com",
		"onlinelibrary.wiley.com", "iopscience.iop.org", "www.pnas.org", "www.science.org",
		"bmcbioinformatics.biomedcentral.com", "jneuroengrehab.biomedcentral.com",
	}
}

// Config configures a Fetcher. Zero fields take the documented defaults.
type Config struct {
	// UserAgent is sent on every request; required (see httpx.UserAgent).
	UserAgent string
	// Hosts is the allow-list: host names ("aclanthology.org"), with a
	// port where it is not the scheme's default ("pdf.example.org:8443").
	// Nil means DefaultHosts. IP addresses are refused.
	Hosts []string
	// MaxSize caps a PDF in bytes (default DefaultMaxSize).
	MaxSize int64
	// Interval spaces requests to each host (default DefaultInterval).
	Interval time.Duration
	// Timeout bounds one attempt (default DefaultTimeout).
	Timeout time.Duration
	// RetryMax is httpx's retries after the first attempt (0: httpx's
	// default; negative: none).
	RetryMax int
	// RetryWaitMin and RetryWaitMax bound httpx's backoff (0: httpx's
	// defaults).
	RetryWaitMin, RetryWaitMax time.Duration
	// Robots reads and applies each host's robots.txt (a *robots.Checker,
	// whose Cache keeps the files between runs). Nil means a Checker of
	// its own that keeps them in memory for the Fetcher's life.
	Robots Robots
	// IgnoreRobots skips robots.txt; only for hosts that are the user's
	// own.
	IgnoreRobots bool
	// Logger receives httpx's lines; nil discards.
	Logger *slog.Logger

	// Resolve and AllowAddr make the network policy injectable: Resolve
	// resolves a host name (default: the system resolver), AllowAddr
	// decides which addresses may be dialled (default PublicAddr). A test
	// maps an allowed host name to its server and permits that one
	// address; the rest of the policy stays as it is.
	Resolve   func(ctx context.Context, host string) ([]netip.Addr, error)
	AllowAddr func(netip.Addr) bool
	// Stop, when closed, makes downloads give up rather than retry
	// (httpx's Config.Stop).
	Stop <-chan struct{}
	// Secrets are redacted from every answer and error (httpx's
	// Config.Secrets): the run's keys, which a host or a proxy in front
	// of it may echo though they are never sent to it.
	Secrets []string
}

// Robots applies a host's robots.txt to the service that asks it
// (*robots.Checker): its Disallow rules refuse requests before they are
// sent, and its Crawl-delay replaces configured when longer, unless
// override (either kept with httpx's margin).
type Robots interface {
	Guard(svc *httpx.Service, configured time.Duration, override bool)
}

// Errors of Fetch, for errors.Is. Fetch returns them before any request
// for a URL that is refused outright.
var (
	// ErrURL: the URL is no absolute http(s) URL, carries credentials, or
	// names an IP address as its host.
	ErrURL = errors.New("not a fetchable url")
	// ErrHostNotAllowed: the URL's host (or a redirect's) is not on the
	// allow-list.
	ErrHostNotAllowed = errors.New("host not on the pdf allow-list")
	// ErrNotPDF: the answer is not a PDF (content type or "%PDF-" header).
	ErrNotPDF = errors.New("not a pdf")
	// ErrTooLarge: the PDF exceeds Config.MaxSize.
	ErrTooLarge = errors.New("pdf too large")
	// ErrRobots: the host's robots.txt disallows the path, refuses curate
	// (401, 403) or could not be read (RFC 9309's unreachable file:
	// nothing is fetched until it answers); see robots.KindDisallowAll.
	// It is robots.ErrDisallowed.
	ErrRobots = robots.ErrDisallowed
	// ErrRobotsUnreachable is wrapped, besides ErrRobots, when the host's
	// robots.txt could not be read: unlike its rules, that may pass. It is
	// robots.ErrUnreachable.
	ErrRobotsUnreachable = robots.ErrUnreachable
	// ErrStatus: the host answered with a status other than 200.
	ErrStatus = errors.New("unexpected status")
)

// PDF is a downloaded PDF.
type PDF struct {
	URL         string // as asked for
	FinalURL    string // after redirects
	ContentType string
	Body        []byte
	SHA256      string // hex digest of Body: the content address to store it under
}

// Fetcher downloads PDFs under the policy of its Config. It is safe for
// concurrent use.
type Fetcher struct {
	cfg    Config
	hc     *httpx.Client
	byHost map[string]*httpx.Service // allow-list key (host[:port]) -> service
}

// New validates cfg and returns a Fetcher.
func New(cfg Config) (*Fetcher, error) {
	if cfg.Hosts == nil {
		cfg.Hosts = DefaultHosts()
	}
	if len(cfg.Hosts) == 0 {
		return nil, errors.New("oapdf: new fetcher: empty host allow-list")
	}
	if cfg.MaxSize < 0 || cfg.Interval < 0 || cfg.Timeout < 0 {
		return nil, errors.New("oapdf: new fetcher: negative size, interval or timeout")
	}
	cfg.MaxSize = cmp.Or(cfg.MaxSize, DefaultMaxSize)
	cfg.Interval = cmp.Or(cfg.Interval, DefaultInterval)
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)

	f := &Fetcher{cfg: cfg, byHost: map[string]*httpx.Service{}}
	var services []httpx.ServiceConfig
	for _, h := range cfg.Hosts {
		key, err := hostEntry(h)
		if err != nil {
			return nil, fmt.Errorf("oapdf: new fetcher: allow-list entry %q: %w", h, err)
		}
		if _, dup := f.byHost[key]; dup {
			continue
		}
		f.byHost[key] = nil
		scheme := "https"
		if _, port, err := net.SplitHostPort(key); err == nil && port == "80" {
			scheme = "http"
		}
		services = append(services, httpx.ServiceConfig{
			Name: "pdf:" + key, BaseURL: scheme + "://" + key, Interval: cfg.Interval, MaxInFlight: 1,
		})
	}
	d := newDialer(cfg.Resolve, cfg.AllowAddr)
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would dial for us, past the address policy
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: time.Minute,
		ExpectContinueTimeout: time.Second,
	}
	hc, err := httpx.New(httpx.Config{
		UserAgent:    cfg.UserAgent,
		Timeout:      cfg.Timeout,
		MaxBody:      cfg.MaxSize,
		RetryMax:     cfg.RetryMax,
		RetryWaitMin: cfg.RetryWaitMin,
		RetryWaitMax: cfg.RetryWaitMax,
		Logger:       cfg.Logger,
		Transport:    transport,
		Secrets:      cfg.Secrets,
		Stop:         cfg.Stop,
	}, services...)
	if err != nil {
		return nil, fmt.Errorf("oapdf: new fetcher: %w", err)
	}
	f.hc = hc
	rb := cfg.Robots
	if rb == nil && !cfg.IgnoreRobots {
		c, err := robots.New(robots.Config{UserAgent: cfg.UserAgent, Logger: cfg.Logger})
		if err != nil {
			return nil, fmt.Errorf("oapdf: new fetcher: %w", err)
		}
		rb = c
	}
	for _, sc := range services {
		svc, err := hc.Service(sc.Name)
		if err != nil {
			return nil, err
		}
		if !cfg.IgnoreRobots {
			// A guard on every host, not only the one asked first, so a
			// redirect to another allowed host obeys that host's file.
			rb.Guard(svc, cfg.Interval, false)
		}
		f.byHost[strings.TrimPrefix(sc.Name, "pdf:")] = svc
	}
	return f, nil
}

// hostEntry validates an allow-list entry and returns its key: the host
// in lower case, with a port unless it is empty.
func hostEntry(h string) (string, error) {
	h = strings.ToLower(strings.TrimSpace(h))
	host, port := h, ""
	if strings.Contains(h, ":") {
		var err error
		if host, port, err = net.SplitHostPort(h); err != nil {
			return "", fmt.Errorf("want host or host:port: %w", err)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("bad port %q", port)
		}
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return "", errors.New("an IP address, not a host name")
	}
	if host == "" || strings.ContainsAny(host, "/@?#* ") || strings.HasPrefix(host, ".") || strings.HasSuffix(host, ".") {
		return "", errors.New("not a host name")
	}
	if port == "" {
		return host, nil
	}
	return net.JoinHostPort(host, port), nil
}

// urlKey returns the allow-list key of a URL: its host, with its port
// unless the scheme's default (httpx.HostKey).
func urlKey(u *url.URL) string { return httpx.HostKey(u) }

// Check validates a URL without fetching it: absolute http or https, no
// credentials, a host name (no IP address) on the allow-list.
func (f *Fetcher) Check(raw string) error {
	_, _, err := f.check(raw)
	return err
}

func (f *Fetcher) check(raw string) (*url.URL, *httpx.Service, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "" {
		return nil, nil, fmt.Errorf("%w: want an absolute http or https url", ErrURL)
	}
	if u.User != nil {
		return nil, nil, fmt.Errorf("%w: credentials in the url", ErrURL)
	}
	if _, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		return nil, nil, fmt.Errorf("%w: an IP address as host", ErrURL)
	}
	svc := f.byHost[urlKey(u)]
	if svc == nil {
		return nil, nil, fmt.Errorf("%w: %s", ErrHostNotAllowed, urlKey(u))
	}
	u.Fragment, u.RawFragment = "", ""
	return u, svc, nil
}

// Fetch downloads the PDF at raw. A URL refused by the policy fails before
// any request, a path the host's robots.txt disallows before any request
// but the one for robots.txt; an answer that is not a PDF, or too large,
// is never returned.
func (f *Fetcher) Fetch(ctx context.Context, raw string) (*PDF, error) {
	u, svc, err := f.check(raw)
	if err != nil {
		return nil, fmt.Errorf("oapdf: fetch %s: %w", raw, err)
	}
	resp, err := svc.Do(ctx, httpx.Request{Path: u.String(), Header: http.Header{"Accept": {"application/pdf"}}})
	switch {
	case errors.Is(err, httpx.ErrTooLarge):
		return nil, fmt.Errorf("oapdf: fetch %s: %w: %w", u.Redacted(), ErrTooLarge, err)
	case errors.Is(err, httpx.ErrForeignRedirect):
		return nil, fmt.Errorf("oapdf: fetch %s: %w: %w", u.Redacted(), ErrHostNotAllowed, err)
	case err != nil:
		return nil, fmt.Errorf("oapdf: fetch %s: %w", u.Redacted(), err)
	}
	if resp.Status != http.StatusOK {
		return nil, fmt.Errorf("oapdf: fetch %s: %w %d", u.Redacted(), ErrStatus, resp.Status)
	}
	ctype := resp.Header.Get("Content-Type")
	if err := checkPDF(ctype, resp.Body); err != nil {
		return nil, fmt.Errorf("oapdf: fetch %s: %w", u.Redacted(), err)
	}
	sum := sha256.Sum256(resp.Body)
	return &PDF{URL: raw, FinalURL: resp.URL, ContentType: ctype, Body: resp.Body, SHA256: hex.EncodeToString(sum[:])}, nil
}

// CheckPDF applies Fetch's test of a PDF to an answer fetched otherwise
// (arXiv's PDFs come through the arXiv service, paced with its pages):
// a PDF, generic binary or no content type, and "%PDF-" within the first
// 1024 bytes. The error wraps ErrNotPDF.
func CheckPDF(contentType string, body []byte) error { return checkPDF(contentType, body) }

// pdfTypes are the content types a PDF is served with: its own, and the
// generic ones of download scripts and repositories.
var pdfTypes = []string{"application/pdf", "application/x-pdf", "application/octet-stream", "binary/octet-stream", "application/download", "application/force-download"}

// checkPDF accepts a body served as a PDF (or as generic binary, or with
// no type) that starts with "%PDF-" within its first 1024 bytes, where
// readers look for it.
func checkPDF(ctype string, body []byte) error {
	if ctype != "" {
		mt, _, err := mime.ParseMediaType(ctype)
		if err != nil || !slices.Contains(pdfTypes, strings.ToLower(mt)) {
			return fmt.Errorf("%w: content type %q", ErrNotPDF, ctype)
		}
	}
	if !bytes.Contains(body[:min(len(body), 1024)], []byte("%PDF-")) {
		return fmt.Errorf("%w: no %%PDF- header in %d bytes", ErrNotPDF, len(body))
	}
	return nil
}

// Stats returns the traffic of every allowed host that was asked.
func (f *Fetcher) Stats() map[string]httpx.Stats {
	out := map[string]httpx.Stats{}
	for key, svc := range f.byHost {
		if s := svc.Stats(); s.Requests > 0 {
			out[key] = s
		}
	}
	return out
}
