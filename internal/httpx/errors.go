package httpx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/groundwork/curate/internal/redact"
)

var (
	// ErrTooLarge means a response body exceeded Config.MaxBody. It is not
	// retried.
	ErrTooLarge = errors.New("response body too large")
	// ErrTruncated means a response body ended early (shorter than its
	// Content-Length, or the connection broke mid-body) on every attempt.
	ErrTruncated = errors.New("truncated response body")
	// ErrForeignRedirect means a redirect pointed at a host that is not one
	// of the configured services. It is not retried.
	ErrForeignRedirect = errors.New("redirect to foreign host")
	// ErrPolicy marks a transport error that is a refusal by policy, such
	// as a dialer that must not connect to a private address: wrapped by
	// a Config.Transport, it is not retried.
	ErrPolicy = errors.New("refused by policy")
	// ErrPaused means the request was not sent: the service is paused by
	// a Retry-After longer than Config.MaxRetryAfter. Service.PausedUntil
	// says until when.
	ErrPaused = errors.New("service paused by the server's retry-after")
	// ErrStopped means a request gave up rather than retry: the run is
	// stopping (Config.Stop). It wraps context.Canceled: the request did
	// not fail, it was not finished.
	ErrStopped = fmt.Errorf("stopped before a retry: the run is stopping: %w", context.Canceled)
)

// NoSuchHostError is a host whose name does not resolve: DNS says it does
// not exist. It is not retried (asking again does not make it exist; on a
// machine that is offline every name fails so), and a caller tells a
// mistyped or unreachable service from a transient failure by it.
type NoSuchHostError struct {
	Service string // the service whose request it was
	Host    string
	Err     error // the resolver's error
}

func (e *NoSuchHostError) Error() string { return "cannot reach " + e.Host + ": no such host" }
func (e *NoSuchHostError) Unwrap() error { return e.Err }

// noSuchHost returns err as a *NoSuchHostError when it is a resolver's
// "no such host" for host.
func noSuchHost(service, host string, err error) error {
	var de *net.DNSError
	if errors.As(err, &de) && de.IsNotFound {
		return &NoSuchHostError{Service: service, Host: host, Err: err}
	}
	return err
}

var (
	errTooManyRedirects  = errors.New("too many redirects")
	errAttemptTimeout    = errors.New("attempt timed out")
	errRequestTimeout    = errors.New("timed out")
	errRetriesExhausted  = errors.New("retries exhausted")
	errRetryAfterTooLong = errors.New("retry-after too long")
	errWaitPastDeadline  = errors.New("rate limit wait would pass the deadline")
)

// refusal is a Guard's error: the request was never sent, and is not
// retried.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// StatusError reports a retryable status (429, or 5xx other than 501)
// that persisted after the retries, or a Retry-After longer than
// Config.MaxRetryAfter, in which case retrying stopped at once and
// RetryAfter tells the caller when to requeue.
type StatusError struct {
	Service    string
	Method     string
	URL        string // request URL, secret query values redacted
	Status     int
	Attempts   int
	RetryAfter time.Duration // the server's Retry-After, unclamped; 0 if absent
	Body       []byte        // start of the last response body, secrets scrubbed
}

func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s: status %d", e.Service, e.Method, e.URL, e.Status)
	if t := http.StatusText(e.Status); t != "" {
		fmt.Fprintf(&b, " (%s)", strings.ToLower(t))
	}
	if e.Attempts == 1 {
		b.WriteString(" after 1 attempt")
	} else {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, ", server asks to retry after %s", e.RetryAfter)
	}
	return b.String()
}

// redact renders u for logs and errors: password and secret-looking query
// values replaced, and any secret header value scrubbed.
func (s *Service) redact(u *url.URL) string {
	r := *u
	if q := r.Query(); len(q) > 0 {
		changed := false
		for k, vs := range q {
			if secretParam(k) {
				for i := range vs {
					vs[i] = redact.Mask
				}
				changed = true
			}
		}
		if changed {
			r.RawQuery = q.Encode()
		}
	}
	return s.scrub(r.Redacted())
}

// secretParam reports whether a query parameter looks like it carries a
// credential ("api_key", "access_token", "X-Amz-Signature", ...).
func secretParam(name string) bool {
	name = strings.ToLower(name)
	for _, suffix := range [...]string{"key", "token", "secret", "password", "signature", "sig", "auth"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// scrub replaces every secret of the Client in text.
func (s *Service) scrub(text string) string { return s.c.red.String(text) }
