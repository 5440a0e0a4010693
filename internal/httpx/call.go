package httpx

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/groundwork/curate/internal/redact"
	"github.com/hashicorp/go-retryablehttp"
)

// call is the state of one Do: the callbacks of retryablehttp and the
// transport run on the caller's goroutine, one after another, so it needs
// no locking.
type call struct {
	svc        *Service
	ctx        context.Context // the call's, cancelled with ErrStopped by watchStop
	method     string
	url        string // redacted, for logs and errors
	noRedirect bool
	stream     func(io.Reader) error // Request.Stream

	attempt int   // 1 for the first attempt, set before each attempt
	lastErr error // transport error of the latest attempt, for the retry log
	// spent is the time the attempts and hops so far were on the wire:
	// what is left of the service's timeout for the next (see
	// Config.Timeout).
	spent time.Duration

	// Config.Stop: stopped is set when it closes; retrying once a retry
	// was decided; onWire while an attempt is sent and read. The watcher
	// of Stop cancels the call's context (cause ErrStopped) when it is
	// retrying and not on the wire, which ends a backoff at once.
	stopped, retrying, onWire atomic.Bool
	cancel                    context.CancelCauseFunc
}

// watchStop arranges for the call to give up rather than retry once stop
// closes; the returned function ends the watch.
func (c *call) watchStop(stop <-chan struct{}) (end func()) {
	if stop == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-stop:
			c.stopped.Store(true)
			if c.retrying.Load() && !c.onWire.Load() {
				c.cancel(ErrStopped)
			}
		case <-done:
		}
	}()
	return func() { close(done) }
}

// beforeAttempt is retryablehttp's RequestLogHook; n is 0 for the first
// attempt.
func (c *call) beforeAttempt(_ retryablehttp.Logger, _ *http.Request, n int) {
	c.attempt = n + 1
	if n > 0 {
		c.svc.stats.retries.Add(1)
	}
}

// roundTrip sends one attempt (or one redirect hop): it waits for a slot and
// a limiter token, attaches the User-Agent and, on the service's own origin,
// the secret headers, and reads the body fully so that a short body is an
// error here, where retryablehttp can retry it.
func (c *call) roundTrip(req *http.Request) (*http.Response, error) {
	s := c.svc
	p := s.c.pacer(req.URL, s)
	ctx := req.Context()
	if c.retrying.Load() && c.stopped.Load() {
		closeBody(req)
		return nil, ErrStopped
	}
	if g := p.guard.Load(); g != nil {
		if err := (*g)(ctx, req.URL); err != nil {
			closeBody(req)
			return nil, &refusal{err}
		}
	}
	if err := p.acquire(ctx); err != nil {
		closeBody(req)
		return nil, err
	}
	defer p.release()
	granted, err := p.wait(ctx, req)
	if err != nil {
		closeBody(req)
		return nil, err
	}

	limit := s.timeout
	if !s.perAttempt {
		limit -= c.spent
		if limit <= 0 {
			closeBody(req)
			return nil, fmt.Errorf("%w: %s on the wire over %d attempts", errRequestTimeout, c.spent.Round(time.Millisecond), c.attempt-1)
		}
	}
	actx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out := req.Clone(actx) // RoundTrippers must not modify the request
	out.Header.Set("User-Agent", s.c.cfg.UserAgent)
	if p.Interval() > 0 {
		// net/http silently resends a GET whose reused connection died
		// before the response, below this limiter; a fresh connection per
		// request keeps a paced service's spacing exact. At one request per
		// second or slower the extra handshakes cost nothing that matters.
		out.Close = true
		// The next start waits an interval from when this request is on
		// the wire, not only from its grant (see limiter.sent).
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { p.limiter.sent(time.Now()) }}
		out = out.WithContext(httptrace.WithClientTrace(out.Context(), trace))
	}
	if s.sameOrigin(req.URL) {
		for k, vs := range s.header {
			out.Header[k] = slices.Clone(vs) // the next RoundTripper may edit them
		}
	}

	s.stats.requests.Add(1)
	start := time.Now()
	c.onWire.Store(true)
	resp, err := s.c.rt.RoundTrip(out)
	var n int64
	if err == nil {
		resp.Request = req // out carries the secret headers; keep it from callers
		n, err = c.readBody(resp)
		s.stats.bytes.Add(n)
	} else {
		err = noSuchHost(p.name, req.URL.Hostname(), err)
	}
	c.onWire.Store(false)
	took := time.Since(start)
	c.spent += took
	s.stats.elapsed.Add(int64(took))
	switch {
	case err == nil:
	case ctx.Err() != nil:
		err = ctx.Err()
	case actx.Err() != nil && s.perAttempt:
		err = fmt.Errorf("%w after %s", errAttemptTimeout, s.timeout)
	case actx.Err() != nil:
		// The request's time is spent: another attempt would have none.
		err = fmt.Errorf("%w: no answer within %s", errRequestTimeout, s.timeout)
	}

	attrs := []slog.Attr{
		slog.String("method", req.Method),
		slog.String("url", s.redact(req.URL)),
		slog.Int("attempt", c.attempt),
		slog.Duration("elapsed", time.Since(start)),
	}
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelDebug, "http attempt failed", append(attrs, slog.String("err", s.scrub(err.Error())))...)
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		s.stats.status429.Add(1)
	case resp.StatusCode >= 500:
		s.stats.status5xx.Add(1)
	}
	s.log.LogAttrs(ctx, slog.LevelDebug, "http attempt", append(attrs, slog.Int("status", resp.StatusCode), slog.Int64("bytes", n))...)
	p.adapt(ctx, granted, resp)
	return resp, nil
}

// adapt tells the limiter how a request it granted was answered, and logs
// what changed: a slowdown after a 429 and a pause for a Retry-After at
// Info and Warn, recovery at Debug.
func (s *Service) adapt(ctx context.Context, granted time.Time, resp *http.Response) {
	ra := time.Duration(-1)
	if d, ok := retryAfter(resp); ok {
		ra = d
	}
	from, to, until := s.limiter.observe(time.Now(), granted, resp.StatusCode, ra)
	switch {
	case to > from:
		s.log.LogAttrs(ctx, slog.LevelInfo, "http slowing down", slog.Int("status", resp.StatusCode),
			slog.Duration("interval", to), slog.Duration("was", from))
	case to < from:
		s.log.LogAttrs(ctx, slog.LevelDebug, "http speeding up", slog.Duration("interval", to), slog.Duration("was", from))
	}
	if !until.IsZero() {
		s.log.LogAttrs(ctx, slog.LevelWarn, "http pause", slog.Int("status", resp.StatusCode),
			slog.Duration("retry_after", ra), slog.Time("until", until))
	}
}

// readBody replaces resp.Body by its content, read in full under the
// MaxBody cap, or hands a 2xx body to the call's stream. It returns the
// number of bytes read.
func (c *call) readBody(resp *http.Response) (int64, error) {
	defer resp.Body.Close()
	if c.stream != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return c.readStream(resp)
	}
	limit := c.svc.c.cfg.MaxBody
	if resp.ContentLength > limit && resp.Request.Method != http.MethodHead {
		return 0, fmt.Errorf("%w: content-length %d exceeds the limit of %d bytes", ErrTooLarge, resp.ContentLength, limit)
	}
	var buf bytes.Buffer
	if resp.ContentLength > 0 {
		buf.Grow(int(resp.ContentLength))
	}
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if resp.ContentLength >= 0 {
			return n, fmt.Errorf("%w: read %d of %d bytes: %w", ErrTruncated, n, resp.ContentLength, err)
		}
		return n, fmt.Errorf("%w: read %d bytes: %w", ErrTruncated, n, err)
	}
	if n > limit {
		return n, fmt.Errorf("%w: body exceeds the limit of %d bytes", ErrTooLarge, limit)
	}
	// An endpoint or proxy may echo the request, keys included: nothing
	// past this point sees them (redirects follow the redacted Location).
	red := c.svc.c.red
	body := red.Bytes(buf.Bytes())
	for k, vs := range resp.Header {
		for i, v := range vs {
			resp.Header[k][i] = red.String(v)
		}
	}
	resp.Body = &bufferedBody{Reader: bytes.NewReader(body), b: body}
	resp.ContentLength = int64(len(body))
	return n, nil
}

// readStream hands resp's body to the call's stream. A read that fails is
// a truncated body (retried); the stream's own error is final.
func (c *call) readStream(resp *http.Response) (int64, error) {
	r := &countingReader{r: resp.Body}
	// The stream sees the body redacted a line at a time, as a buffered
	// body is redacted whole (a results file is lines).
	red := c.svc.c.red
	for k, vs := range resp.Header {
		for i, v := range vs {
			resp.Header[k][i] = red.String(v)
		}
	}
	err := c.stream(&redactedLines{br: bufio.NewReaderSize(r, 64<<10), red: red, limit: int(c.svc.c.cfg.MaxBody)})
	if err == nil && r.err == nil {
		// What the stream left unread is read out, so a short body is
		// still noticed and the connection can be reused.
		_, err = io.Copy(io.Discard, r)
	}
	switch {
	case r.err != nil && !errors.Is(r.err, io.EOF):
		if resp.ContentLength >= 0 {
			return r.n, fmt.Errorf("%w: read %d of %d bytes: %w", ErrTruncated, r.n, resp.ContentLength, r.err)
		}
		return r.n, fmt.Errorf("%w: read %d bytes: %w", ErrTruncated, r.n, r.err)
	case err != nil:
		return r.n, &refusal{fmt.Errorf("read the body: %w", err)}
	}
	resp.Body = &bufferedBody{Reader: bytes.NewReader(nil)}
	return r.n, nil
}

// redactedLines serves a body redacted a line at a time; a line longer
// than limit is redacted in pieces of limit bytes.
type redactedLines struct {
	br      *bufio.Reader
	red     *redact.Redactor
	limit   int
	pending []byte
	err     error
}

func (l *redactedLines) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		var line []byte
		for {
			chunk, err := l.br.ReadSlice('\n')
			line = append(line, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) && len(line) < l.limit {
				continue
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				l.err = err
			}
			break
		}
		l.pending = l.red.Bytes(line)
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

// countingReader counts the bytes read and keeps the first read error.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// checkRedirect is the http.Client redirect policy.
func (c *call) checkRedirect(req *http.Request, via []*http.Request) error {
	if c.noRedirect {
		return http.ErrUseLastResponse
	}
	if !c.svc.c.allowed(req.URL) {
		return fmt.Errorf("%w %s", ErrForeignRedirect, req.URL.Host)
	}
	if req.URL.User != nil {
		// http.Client would send them as Basic auth, and the final URL
		// (stored as where a page or PDF came from) would keep them:
		// credentials a server puts in a redirect are not curate's to use.
		req.URL.User = nil
		c.svc.log.LogAttrs(req.Context(), slog.LevelDebug, "http redirect credentials dropped", slog.String("url", c.svc.redact(req.URL)))
	}
	if len(via) > maxRedirects {
		return fmt.Errorf("%w: more than %d", errTooManyRedirects, maxRedirects)
	}
	return nil
}

// checkRetry is the retry policy: 429, 5xx other than 501 and transport
// errors are retried, unless the server asks to wait longer than
// MaxRetryAfter or the error cannot improve on a retry.
func (c *call) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	retry, err := c.retryPolicy(ctx, resp, err)
	if retry {
		c.retrying.Store(true)
		if c.stopped.Load() {
			// Set after retrying, read after stopped by the watcher: one
			// of the two sees the other.
			return false, ErrStopped
		}
	}
	return retry, err
}

func (c *call) retryPolicy(ctx context.Context, resp *http.Response, err error) (bool, error) {
	c.lastErr = unwrapURLError(err)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		// Not context.DeadlineExceeded: net reports dial timeouts as that,
		// and those deserve a retry.
		for _, final := range []error{ErrTooLarge, ErrForeignRedirect, ErrPolicy, ErrPaused, errTooManyRedirects, errWaitPastDeadline, errRequestTimeout, ErrStopped} {
			if errors.Is(err, final) {
				return false, err
			}
		}
		if r := (*refusal)(nil); errors.As(err, &r) {
			return false, err
		}
		if nh := (*NoSuchHostError)(nil); errors.As(err, &nh) {
			return false, err
		}
		// Keeps retryablehttp's judgement on bad schemes, headers and
		// untrusted certificates; it returns a nil error, so Do sees err.
		return retryablehttp.DefaultRetryPolicy(ctx, nil, err)
	}
	code := resp.StatusCode
	if slices.Contains(c.svc.noRetry, code) {
		return false, nil
	}
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		if d, ok := retryAfter(resp); ok && d > c.svc.c.cfg.MaxRetryAfter {
			return false, errRetryAfterTooLong
		}
	}
	if code == http.StatusTooManyRequests || code == 0 || code >= 500 && code != http.StatusNotImplemented {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return true, nil
	}
	return false, nil
}

// backoff returns the wait before retry n+1: the server's Retry-After on
// 429 and 503 (checkRetry has already refused one above MaxRetryAfter),
// else a jittered exponential backoff between lo and hi.
func (c *call) backoff(lo, hi time.Duration, n int, resp *http.Response) time.Duration {
	wait := jitteredBackoff(lo, hi, n)
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if d, ok := retryAfter(resp); ok {
			wait = d
		}
	}
	attrs := []slog.Attr{
		slog.String("method", c.method),
		slog.String("url", c.url),
		slog.Int("attempt", c.attempt),
		slog.Duration("wait", wait),
	}
	if resp != nil {
		attrs = append(attrs, slog.Int("status", resp.StatusCode))
	} else if c.lastErr != nil {
		attrs = append(attrs, slog.String("err", c.svc.scrub(c.lastErr.Error())))
	}
	c.svc.log.LogAttrs(context.Background(), slog.LevelWarn, "http retry", attrs...)
	return wait
}

// jitteredBackoff is lo·2ⁿ stretched by up to half again, so that workers
// hit by the same outage spread out, and kept within [lo, hi].
func jitteredBackoff(lo, hi time.Duration, n int) time.Duration {
	d := lo
	for i := 0; i < n && d < hi; i++ {
		d *= 2
	}
	d += rand.N(d/2 + 1)
	if d > hi {
		// Jitter below the cap, never below lo.
		d = hi - rand.N((hi-lo)/4+1)
	}
	return d
}

// retryAfter parses Retry-After as seconds or an HTTP date.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		const year = 365 * 24 * 60 * 60 // keeps the Duration from overflowing
		return time.Duration(min(secs, year)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(time.Until(t), 0), true
}

// giveUp is retryablehttp's ErrorHandler, called when the policy stops or
// the retries run out. A nil err means the last attempt still had a
// retryable status.
func (c *call) giveUp(resp *http.Response, err error, _ int) (*http.Response, error) {
	if err == nil {
		err = errRetriesExhausted
	}
	return resp, err
}

// fail turns the result of a failed retryablehttp Do into the error Do
// returns.
func (c *call) fail(resp *http.Response, err error) error {
	s := c.svc
	if resp != nil && (errors.Is(err, errRetriesExhausted) || errors.Is(err, errRetryAfterTooLong)) {
		se := &StatusError{
			Service:  s.name,
			Method:   c.method,
			URL:      c.url,
			Status:   resp.StatusCode,
			Attempts: c.attempt,
		}
		if d, ok := retryAfter(resp); ok {
			se.RetryAfter = d
		}
		body := bodyBytes(resp) // redacted as it was read
		se.Body = bytes.Clone(body[:min(len(body), errorBodySize)])
		s.log.LogAttrs(context.Background(), slog.LevelWarn, "http give up",
			slog.String("method", c.method), slog.String("url", c.url),
			slog.Int("status", se.Status), slog.Int("attempts", se.Attempts),
			slog.Duration("retry_after", se.RetryAfter))
		return se
	}
	err = unwrapURLError(err)
	if errors.Is(err, context.Canceled) && errors.Is(context.Cause(c.ctx), ErrStopped) {
		err = ErrStopped // the backoff was cut short, see watchStop
	}
	if c.attempt > 1 {
		return fmt.Errorf("%s: %s %s: giving up after %d attempts: %w", s.name, c.method, c.url, c.attempt, err)
	}
	return fmt.Errorf("%s: %s %s: %w", s.name, c.method, c.url, err)
}

// acquire takes an in-flight slot when MaxInFlight is set.
func (s *Service) acquire(ctx context.Context) error {
	if s.slots == nil {
		return nil
	}
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Service) release() {
	if s.slots != nil {
		<-s.slots
	}
}

// wait takes a limiter token at the moment the request is about to start
// and returns the time of the grant.
//
// It asks the limiter with the real time at each wake-up rather than
// booking a slot in advance: a goroutine the scheduler wakes late must not
// hand the next one a shorter gap. Grants are therefore at least an
// interval apart whatever the delays (see Config.OnGrant). The gate queues
// waiters one at a time. A pause longer than MaxRetryAfter is not waited
// out: the request fails with ErrPaused.
func (s *Service) wait(ctx context.Context, req *http.Request) (time.Time, error) {
	select {
	case s.gate <- struct{}{}:
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
	defer func() { <-s.gate }()
	for {
		now := time.Now()
		sl := s.limiter.reserve(now)
		if sl.ok {
			if f := s.c.cfg.OnGrant; f != nil {
				f(Grant{Service: s.name, Method: req.Method, URL: s.redact(req.URL), At: now, Interval: sl.interval})
			}
			return now, nil
		}
		var stop <-chan struct{}
		if sl.paused {
			stop = s.c.cfg.Stop // a pause is a retry's wait, whoever asked for it
		}
		if sl.paused && sl.wait > s.c.cfg.MaxRetryAfter {
			until := now.Add(sl.wait)
			return time.Time{}, fmt.Errorf("%w until %s (%s from now)", ErrPaused, until.Format(time.RFC3339), sl.wait.Round(time.Second))
		}
		if dl, ok := ctx.Deadline(); ok && now.Add(sl.wait).After(dl) {
			// Fail now rather than sleep into a certain timeout.
			return time.Time{}, fmt.Errorf("%w: %w", errWaitPastDeadline, context.DeadlineExceeded)
		}
		t := time.NewTimer(sl.wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, ctx.Err()
		case <-stop:
			t.Stop()
			return time.Time{}, ErrStopped
		}
	}
}

// unwrapURLError drops the *url.Error that http.Client wraps around
// transport errors: it repeats the unredacted URL, and we name the call
// ourselves.
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
