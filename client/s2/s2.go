// Package s2 is a client for the Semantic Scholar Academic Graph API v1: the
// reference edges of a paper (citation contexts, intents, influence and the
// cited paper's metadata), single-paper lookups and batch lookups.
//
// It decodes the API as it really answers rather than as documented: the
// last page of a list has no "next"; a publisher-elided reference list is
// "data": null, which is not an empty bibliography; unresolved references
// have a null paperId and a raw bibliography fragment as title;
// externalIds mixes an integer CorpusId with string ids. Rate limiting,
// retries of 429 and 5xx, and the secrecy of the API key are the business of
// the httpx.Service the Client is built on; ServiceConfig configures one.
package s2

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/parse/arxiv"
)

const (
	// ServiceName is the name ServiceConfig gives the httpx service.
	ServiceName = "s2"
	// DefaultBaseURL is the API host; paths start with /graph/v1.
	DefaultBaseURL = "https://api.semanticscholar.org"

	// MaxPageLimit is the largest limit the references endpoint accepts.
	MaxPageLimit = 1000
	// DefaultPageLimit keeps a page with every reference field near 1.5 MB,
	// well under the API's 10 MB response cap.
	DefaultPageLimit = 500
	// MaxBatch is the most ids one POST /paper/batch accepts.
	MaxBatch = 500

	// offsetWindow bounds offset paging: the API rejects offset+limit >=
	// 10000, so at most 9999 items of a list are reachable.
	offsetWindow = 10000

	apiPrefix = "graph/v1/"
)

// ReferenceFields are the fields References asks for: the edge fields, then
// the cited paper's fields, unprefixed as the API wants them. referenceCount
// is a BasePaper field and therefore valid for a cited paper.
const ReferenceFields = "contexts,intents,contextsWithIntent,isInfluential," +
	"paperId,corpusId,externalIds,title,abstract,year,venue,publicationDate,openAccessPdf,authors,referenceCount"

// PaperFields are the fields Paper and Batch ask for when given none: what
// a target or a cited paper needs to be identified, dated and summarized.
const PaperFields = "paperId,corpusId,externalIds,url,title,abstract,venue,year,publicationDate," +
	"referenceCount,citationCount,influentialCitationCount,isOpenAccess,openAccessPdf," +
	"fieldsOfStudy,publicationTypes,journal,authors"

// ServiceConfig returns the httpx service configuration for S2 at base
// (DefaultBaseURL when empty). A non-empty apiKey is sent as x-api-key. An
// interval of 0 means one request per second with a key, the rate S2 grants
// new keys, and one every 5 seconds without, because the keyless pool is
// shared by everyone and throttles hard.
func ServiceConfig(base, apiKey string, interval time.Duration) httpx.ServiceConfig {
	if interval == 0 {
		interval = 5 * time.Second
		if apiKey != "" {
			interval = time.Second
		}
	}
	sc := httpx.ServiceConfig{
		Name:     ServiceName,
		BaseURL:  cmp.Or(base, DefaultBaseURL),
		Interval: interval,
	}
	if apiKey != "" {
		sc.Header = http.Header{}
		sc.Header.Set("x-api-key", apiKey)
	}
	return sc
}

// Options tune a Client. The zero value is ready to use.
type Options struct {
	// PageLimit is the number of references asked for per page, 1 to
	// MaxPageLimit; 0 means DefaultPageLimit.
	PageLimit int
	// Logger receives notes on incomplete reference lists; nil discards.
	Logger *slog.Logger
}

// Client calls the Graph API through an httpx.Service. It is safe for
// concurrent use; the service's limiter paces all callers together.
type Client struct {
	svc   *httpx.Service
	limit int
	log   *slog.Logger
}

// New returns a Client that sends its requests through svc.
func New(svc *httpx.Service, opts Options) (*Client, error) {
	if svc == nil {
		return nil, errors.New("s2: new client: nil service")
	}
	limit := cmp.Or(opts.PageLimit, DefaultPageLimit)
	if limit < 1 || limit > MaxPageLimit {
		return nil, fmt.Errorf("s2: new client: page limit %d is outside 1..%d", opts.PageLimit, MaxPageLimit)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{svc: svc, limit: limit, log: log}, nil
}

// ArxivPaperID returns the S2 paper id of an arXiv paper, "ARXIV:" and the
// versionless id (S2 knows papers, not versions; old-style ids keep their
// slash and drop the subject class, as S2's ArXiv external ids do). It
// returns "" when id is not an arXiv id.
func ArxivPaperID(id string) string {
	a, err := arxiv.Parse(id)
	if err != nil {
		return ""
	}
	return "ARXIV:" + a.Canonical()
}

// DOIPaperID returns the S2 paper id of a DOI, "DOI:" and the DOI with any
// "doi:" or doi.org URL prefix removed. It returns "" for an empty DOI.
func DOIPaperID(doi string) string {
	doi = strings.TrimSpace(doi)
	for _, p := range []string{"https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi:"} {
		if len(doi) >= len(p) && strings.EqualFold(doi[:len(p)], p) {
			doi = doi[len(p):]
			break
		}
	}
	if doi == "" {
		return ""
	}
	return "DOI:" + doi
}

// paperPath returns the API path of a paper id, with suffix appended.
//
// Each slash-separated part is escaped on its own: the slashes of DOIs and
// of old-style arXiv ids stay as they are, as in recorded S2 requests, and
// the API resolves them. Empty, "." and ".." parts are refused because URL
// path cleaning would silently turn the id into another one.
func paperPath(id, suffix string) (string, error) {
	if id == "" {
		return "", errors.New("empty paper id")
	}
	parts := strings.Split(id, "/")
	for i, p := range parts {
		if p == "" || p == "." || p == ".." {
			return "", fmt.Errorf("paper id %q has an empty or dot path segment", id)
		}
		parts[i] = url.PathEscape(p)
	}
	return apiPrefix + "paper/" + strings.Join(parts, "/") + suffix, nil
}

// Sentinel errors that an *Error wraps according to its status.
var (
	// ErrNotFound: S2 does not know the paper (404). Callers record the
	// paper as missing and go on.
	ErrNotFound = errors.New("not found")
	// ErrBadRequest: S2 refused the request (400), e.g. an unknown field or
	// a response that would exceed its size cap.
	ErrBadRequest = errors.New("bad request")
	// ErrForbidden: S2 rejected the API key (401 or 403).
	ErrForbidden = errors.New("s2 rejected the api key")
)

// Error is an answer of S2 that is neither a success nor retryable. 429
// and 5xx are retried by httpx and surface as *httpx.StatusError instead.
type Error struct {
	Op      string // "references", "paper" or "batch"
	ID      string // paper id asked for; empty for a batch
	Status  int
	Message string // S2's explanation from the body; empty for 401 and 403
}

// Error describes the answer; the caller's wrapping names the operation
// and the paper.
func (e *Error) Error() string {
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return fmt.Sprintf("%s (status %d)", ErrForbidden, e.Status)
	case e.Message != "":
		return fmt.Sprintf("status %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("status %d", e.Status)
}

// Unwrap returns ErrNotFound, ErrBadRequest or ErrForbidden by status, so
// errors.Is works; nil for other statuses.
func (e *Error) Unwrap() error {
	switch e.Status {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusBadRequest:
		return ErrBadRequest
	case http.StatusUnauthorized, http.StatusForbidden:
		return ErrForbidden
	}
	return nil
}

// maxMessage bounds the part of an error body quoted in an Error.
const maxMessage = 300

// checkStatus turns a non-200 response into an *Error.
func checkStatus(op, id string, resp *httpx.Response) error {
	if resp.Status == http.StatusOK {
		return nil
	}
	e := &Error{Op: op, ID: id, Status: resp.Status}
	// The body of a rejected key is not repeated: nothing in it helps, and
	// a proxy could echo the request.
	if resp.Status != http.StatusUnauthorized && resp.Status != http.StatusForbidden {
		e.Message = apiMessage(resp.Body)
	}
	return e
}

// apiMessage extracts S2's explanation from an error body: {"error": ...}
// from the API itself, {"message": ...} from its gateway, else the text.
func apiMessage(body []byte) string {
	var v struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	msg := ""
	if json.Unmarshal(body, &v) == nil {
		msg = cmp.Or(v.Error, v.Message)
	}
	if msg == "" {
		msg = strings.Join(strings.Fields(string(body)), " ")
	}
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "…"
	}
	return msg
}

// encodeQuery encodes q with the commas of field lists left as they are,
// so requests read like S2's documentation and the recorded ones
// ("fields=title,year"); S2 decodes either form.
func encodeQuery(q url.Values) string {
	return strings.ReplaceAll(q.Encode(), "%2C", ",")
}

// get sends a GET for op on id and returns the 200 body.
func (c *Client) get(ctx context.Context, op, id, path string, q url.Values) ([]byte, error) {
	resp, err := c.svc.Do(ctx, httpx.Request{Path: path + "?" + encodeQuery(q), Header: http.Header{"Accept": {"application/json"}}})
	if err != nil {
		return nil, err
	}
	if err := checkStatus(op, id, resp); err != nil {
		return nil, err
	}
	return resp.Body, nil
}
