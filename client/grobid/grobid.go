// Package grobid is a client for a GROBID service, the PDF-to-TEI
// converter of scholarly documents (started from GROBID's Docker image, it
// listens on port 8070): GET /api/isalive to check the service at start,
// GET /api/version, and POST /api/processFulltextDocument, which returns
// the TEI XML of a PDF for the caller to store raw (package tei parses
// it).
//
// GROBID converts at most its pool size of documents at once (grobid.yaml
// "concurrency", 10 by default) and answers 503 when no engine frees up
// within a second; ServiceConfig caps the requests in flight at the
// server's capacity and gives each attempt a timeout sized for large PDFs.
// The httpx.Service the Client is built on retries a 503 with backoff, and
// the Client waits and asks again when the server stays busy; a 500 (a
// failed conversion) is final, never retried.
package grobid

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/internal/httpx"
)

const (
	// ServiceName is the name ServiceConfig gives the httpx service.
	ServiceName = "grobid"
	// DefaultBaseURL is where GROBID's Docker image listens.
	DefaultBaseURL = "http://localhost:8070"
	// DefaultCapacity is GROBID's default engine pool size.
	DefaultCapacity = 10
	// DefaultTimeout bounds one conversion attempt: a long PDF (a thesis,
	// a 100-page appendix) takes GROBID minutes on a loaded server.
	DefaultTimeout = 5 * time.Minute
	// DefaultBusyWait is the first wait before asking a busy server
	// again; GROBID's documentation suggests 5 to 10 seconds for
	// processFulltextDocument.
	DefaultBusyWait = 10 * time.Second
	// DefaultBusyRetries is how often the Client asks a busy server again
	// after the service's own retries of the 503.
	DefaultBusyRetries = 3
	// MaxPDF is the largest PDF the Client sends (GROBID itself refuses
	// nothing, but a PDF this large is no paper).
	MaxPDF = 100 << 20

	isAlivePath  = "api/isalive"
	versionPath  = "api/version"
	fulltextPath = "api/processFulltextDocument"
)

// ServiceConfig returns the httpx service configuration for the GROBID
// service at base (DefaultBaseURL when empty): at most capacity
// conversions in flight (DefaultCapacity when 0: match the server's
// concurrency setting), timeout per attempt (DefaultTimeout when 0), and
// 500 answered as final, since it is a failed conversion that a retry
// would only repeat.
func ServiceConfig(base string, capacity int, timeout time.Duration) httpx.ServiceConfig {
	return httpx.ServiceConfig{
		Name:        ServiceName,
		BaseURL:     cmp.Or(base, DefaultBaseURL),
		MaxInFlight: cmp.Or(capacity, DefaultCapacity),
		Timeout:     cmp.Or(timeout, DefaultTimeout),
		NoRetry:     []int{http.StatusInternalServerError},
	}
}

// Options are the conversion options sent with every document and the
// Client's patience with a busy server. The zero value sends GROBID's
// own defaults (no consolidation, no raw citations, no sentences); curate
// wants IncludeRawCitations and SegmentSentences, which give each
// reference its full entry text and each citing sentence GROBID's own
// bounds.
type Options struct {
	// ConsolidateHeader: 0 none, 1 consolidate the header against
	// CrossRef or biblio-glutton, 2 only add the DOI, 3 consolidate with
	// the DOI found in the PDF only.
	ConsolidateHeader int
	// ConsolidateCitations: 0 none, 1 consolidate every reference, 2
	// only add DOIs. Consolidation makes GROBID call an external service
	// per reference: slow, and impossible offline.
	ConsolidateCitations int
	// IncludeRawCitations asks for each reference's raw string.
	IncludeRawCitations bool
	// SegmentSentences asks for paragraphs split into <s> sentences.
	SegmentSentences bool
	// BusyRetries is how often a document is asked for again when the
	// server is still busy after the service's retries (0 means
	// DefaultBusyRetries, negative none); BusyWait is the first wait
	// (0 means DefaultBusyWait), doubled each time.
	BusyRetries int
	BusyWait    time.Duration
	// Logger receives a line per busy wait; nil discards.
	Logger *slog.Logger
	// Stop, when closed (the first interrupt), ends a busy wait at once:
	// the document is not asked for again (the error wraps
	// httpx.ErrStopped). Nil: never.
	Stop <-chan struct{}
}

// Client converts PDFs through an httpx.Service. It is safe for
// concurrent use; the service caps the conversions in flight.
type Client struct {
	svc     *httpx.Service
	opts    Options
	log     *slog.Logger
	retries int
	wait    time.Duration
	sleep   func(context.Context, time.Duration) error // replaced in tests
}

// New returns a Client that sends its requests through svc, which should
// be configured with ServiceConfig.
func New(svc *httpx.Service, opts Options) (*Client, error) {
	if svc == nil {
		return nil, errors.New("grobid: new client: nil service")
	}
	if opts.ConsolidateHeader < 0 || opts.ConsolidateHeader > 3 {
		return nil, fmt.Errorf("grobid: new client: consolidateHeader %d: want 0 (none), 1 (full), 2 (DOI only) or 3 (with the PDF's DOI)", opts.ConsolidateHeader)
	}
	if opts.ConsolidateCitations < 0 || opts.ConsolidateCitations > 2 {
		return nil, fmt.Errorf("grobid: new client: consolidateCitations %d: want 0 (none), 1 (full) or 2 (DOI only)", opts.ConsolidateCitations)
	}
	if opts.BusyWait < 0 {
		return nil, fmt.Errorf("grobid: new client: negative busy wait %s", opts.BusyWait)
	}
	c := &Client{svc: svc, opts: opts, log: opts.Logger}
	c.sleep = func(ctx context.Context, d time.Duration) error { return sleep(ctx, opts.Stop, d) }
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	switch {
	case opts.BusyRetries == 0:
		c.retries = DefaultBusyRetries
	case opts.BusyRetries > 0:
		c.retries = opts.BusyRetries
	}
	c.wait = cmp.Or(opts.BusyWait, DefaultBusyWait)
	return c, nil
}

// Errors a conversion can end with, for errors.Is.
var (
	// ErrNotAlive: the service answered /api/isalive with something else
	// than "true".
	ErrNotAlive = errors.New("grobid service is not alive")
	// ErrNoContent: GROBID processed the PDF but could extract nothing
	// (204). The PDF is no use; do not ask again.
	ErrNoContent = errors.New("grobid extracted no content")
	// ErrBusy: every engine stayed busy (503) through all retries. The
	// document may be asked for again later.
	ErrBusy = errors.New("grobid service busy")
	// ErrConversion: GROBID failed to convert the PDF (500), e.g. a PDF
	// that is damaged, scanned without text or too long.
	ErrConversion = errors.New("grobid conversion failed")
	// ErrBadRequest: GROBID refused the request itself (400).
	ErrBadRequest = errors.New("grobid refused the request")
	// ErrNotTEI: a 200 whose body is no TEI document (a proxy's page, a
	// wrong base URL).
	ErrNotTEI = errors.New("grobid answer is no TEI document")
)

// Error is an answer of GROBID that is neither the TEI nor retryable.
type Error struct {
	Status  int
	Message string // GROBID's message from the body, e.g. "[BAD_INPUT_DATA] PDF to XML conversion failed with error code: 1"
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("status %d", e.Status)
	switch e.Status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType:
		msg += " (is the base URL a GROBID service?)"
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Unwrap returns ErrConversion for 500 and ErrBadRequest for 400.
func (e *Error) Unwrap() error {
	switch e.Status {
	case http.StatusInternalServerError:
		return ErrConversion
	case http.StatusBadRequest:
		return ErrBadRequest
	}
	return nil
}

const maxMessage = 300

func message(body []byte) string {
	msg := strings.Join(strings.Fields(string(body)), " ")
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "…"
	}
	return msg
}

// Alive checks GET /api/isalive, as at the start of a run: nil when the
// service answers "true".
func (c *Client) Alive(ctx context.Context) error {
	resp, err := c.svc.Get(ctx, isAlivePath, nil)
	if err != nil {
		return fmt.Errorf("grobid: isalive: %w", err)
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("grobid: isalive %s: %w: %w", c.svc.BaseURL(), ErrNotAlive, &Error{Status: resp.Status, Message: message(resp.Body)})
	}
	if body := strings.TrimSpace(string(resp.Body)); body != "true" {
		return fmt.Errorf("grobid: isalive %s: %w (answer %q)", c.svc.BaseURL(), ErrNotAlive, message([]byte(body)))
	}
	return nil
}

// Version returns the service's version: the bare text of GROBID before
// 0.8.2, the "version" of its JSON answer from 0.8.2 on.
func (c *Client) Version(ctx context.Context) (string, error) {
	resp, err := c.svc.Get(ctx, versionPath, nil)
	if err != nil {
		return "", fmt.Errorf("grobid: version: %w", err)
	}
	if resp.Status != http.StatusOK {
		return "", fmt.Errorf("grobid: version: %w", &Error{Status: resp.Status, Message: message(resp.Body)})
	}
	body := bytes.TrimSpace(resp.Body)
	if len(body) > 0 && body[0] == '{' {
		var v struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(body, &v); err != nil || v.Version == "" {
			return "", fmt.Errorf("grobid: version: answer %q has no version", message(body))
		}
		return v.Version, nil
	}
	return message(body), nil
}

// ProcessFulltext converts one PDF with POST /api/processFulltextDocument
// and returns GROBID's TEI as it came. name identifies the document in
// errors and in the request's file name (a path or URL is reduced to its
// last element). The PDF is checked before anything is sent: not empty,
// at most MaxPDF bytes, "%PDF-" within its first 1024 bytes.
func (c *Client) ProcessFulltext(ctx context.Context, name string, pdf []byte) ([]byte, error) {
	if err := checkPDF(pdf); err != nil {
		return nil, fmt.Errorf("grobid: process %s: %w", name, err)
	}
	ctype, body, err := c.form(fileName(name), pdf)
	if err != nil {
		return nil, fmt.Errorf("grobid: process %s: %w", name, err)
	}
	req := httpx.Request{
		Method: http.MethodPost,
		Path:   fulltextPath,
		Body:   body,
		Header: http.Header{"Content-Type": {ctype}, "Accept": {"application/xml"}},
	}
	wait := c.wait
	for attempt := 0; ; attempt++ {
		resp, err := c.svc.Do(ctx, req)
		var se *httpx.StatusError
		if errors.As(err, &se) && se.Status == http.StatusServiceUnavailable {
			if attempt >= c.retries {
				return nil, fmt.Errorf("grobid: process %s: %w: %w", name, ErrBusy, err)
			}
			d := wait + rand.N(wait/4+1)
			c.log.Info("grobid busy: waiting before asking again", slog.String("document", name),
				slog.Int("attempt", attempt+1), slog.Duration("wait", d))
			if err := c.sleep(ctx, d); err != nil {
				return nil, fmt.Errorf("grobid: process %s: %w", name, err)
			}
			wait *= 2
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("grobid: process %s: %w", name, err)
		}
		switch resp.Status {
		case http.StatusOK:
			if !looksTEI(resp.Body) {
				return nil, fmt.Errorf("grobid: process %s: %w (%d bytes, %q)", name, ErrNotTEI, len(resp.Body), resp.Header.Get("Content-Type"))
			}
			return resp.Body, nil
		case http.StatusNoContent:
			return nil, fmt.Errorf("grobid: process %s: %w", name, ErrNoContent)
		}
		return nil, fmt.Errorf("grobid: process %s: %w", name, &Error{Status: resp.Status, Message: message(resp.Body)})
	}
}

// form builds the multipart body: the PDF as "input", then the options.
func (c *Client) form(name string, pdf []byte) (string, []byte, error) {
	var b bytes.Buffer
	b.Grow(len(pdf) + 1024)
	mw := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="input"; filename="`+name+`"`)
	h.Set("Content-Type", "application/pdf")
	pw, err := mw.CreatePart(h)
	if err != nil {
		return "", nil, err
	}
	if _, err := pw.Write(pdf); err != nil {
		return "", nil, err
	}
	fields := [][2]string{
		{"consolidateHeader", strconv.Itoa(c.opts.ConsolidateHeader)},
		{"consolidateCitations", strconv.Itoa(c.opts.ConsolidateCitations)},
		{"includeRawCitations", flag(c.opts.IncludeRawCitations)},
		{"segmentSentences", flag(c.opts.SegmentSentences)},
	}
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return "", nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return "", nil, err
	}
	return mw.FormDataContentType(), b.Bytes(), nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// checkPDF refuses what cannot be a PDF before it is sent.
func checkPDF(pdf []byte) error {
	switch {
	case len(pdf) == 0:
		return errors.New("empty pdf")
	case len(pdf) > MaxPDF:
		return fmt.Errorf("pdf of %d bytes exceeds the limit of %d", len(pdf), MaxPDF)
	case !bytes.Contains(pdf[:min(len(pdf), 1024)], []byte("%PDF-")):
		return errors.New("not a pdf: no %PDF- header in the first 1024 bytes")
	}
	return nil
}

// fileName reduces a document name to a safe file name for the request.
func fileName(name string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == '"' || r == 0x7f {
			return -1
		}
		return r
	}, name)
	if name == "" || name == "." || name == "/" {
		return "input.pdf"
	}
	if !strings.HasSuffix(strings.ToLower(name), ".pdf") {
		name += ".pdf"
	}
	return name
}

// looksTEI reports whether a body is a TEI document: a TEI root element
// in its first 4 KB (after the XML declaration and comments).
func looksTEI(body []byte) bool {
	head := body[:min(len(body), 4096)]
	return bytes.Contains(head, []byte("<TEI")) || bytes.Contains(head, []byte(":TEI"))
}

func sleep(ctx context.Context, stop <-chan struct{}, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-stop:
		return httpx.ErrStopped
	}
}
