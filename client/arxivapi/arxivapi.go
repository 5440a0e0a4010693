// Package arxivapi reads paper metadata from the arXiv API
// (export.arxiv.org/api/query, an Atom feed): the v1 submission date that
// splits train from test, categories, title, authors and abstract. Lookup
// fetches known ids; Search pages through a query, for discovering the
// papers of a category and date range.
//
// arXiv asks API users for one request every three seconds on a single
// connection; ServiceConfig sets that up on the httpx.Service the Client is
// built on, which also retries 429 and 503.
package arxivapi

import (
	"cmp"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

const (
	// ServiceName is the name ServiceConfig gives the httpx service.
	ServiceName = "arxiv-api"
	// DefaultBaseURL is the host arXiv designates for API traffic.
	DefaultBaseURL = "https://export.arxiv.org"
	// DefaultInterval is arXiv's requested spacing between API calls.
	DefaultInterval = 3 * time.Second

	// MaxLookup is the most ids Lookup puts in one id_list; it keeps URLs
	// short.
	MaxLookup = 100
	// MaxPageSize is the most results arXiv returns per call.
	MaxPageSize = 2000
	// DefaultPageSize is Search's page size when Options leave it zero.
	DefaultPageSize = 1000
	// MaxResults is how deep arXiv lets a query page; past it the API
	// answers 400.
	MaxResults = 30000

	queryPath = "api/query"
	// emptyPageRetries is how often Search asks again for a page that came
	// back empty before the total was reached: the API does that under load.
	emptyPageRetries = 2
)

// ServiceConfig returns the httpx service configuration for the arXiv API
// at base (DefaultBaseURL when empty): interval between requests
// (DefaultInterval when 0) and one connection at a time, as arXiv's terms
// of use ask.
func ServiceConfig(base string, interval time.Duration) httpx.ServiceConfig {
	return httpx.ServiceConfig{
		Name:        ServiceName,
		BaseURL:     cmp.Or(base, DefaultBaseURL),
		Interval:    cmp.Or(interval, DefaultInterval),
		MaxInFlight: 1,
	}
}

// Options tune a Client. The zero value is ready to use.
type Options struct {
	// PageSize is the number of results Search asks for per call, 1 to
	// MaxPageSize; 0 means DefaultPageSize.
	PageSize int
	// Logger receives notes on incomplete searches; nil discards.
	Logger *slog.Logger
}

// Client queries the arXiv API through an httpx.Service. It is safe for
// concurrent use; the service paces all callers together.
type Client struct {
	svc      *httpx.Service
	pageSize int
	log      *slog.Logger
}

// New returns a Client that sends its requests through svc.
func New(svc *httpx.Service, opts Options) (*Client, error) {
	if svc == nil {
		return nil, errors.New("arxivapi: new client: nil service")
	}
	size := cmp.Or(opts.PageSize, DefaultPageSize)
	if size < 1 || size > MaxPageSize {
		return nil, fmt.Errorf("arxivapi: new client: page size %d is outside 1..%d", opts.PageSize, MaxPageSize)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{svc: svc, pageSize: size, log: log}, nil
}

// Lookup fetches the entries of ids, MaxLookup ids per call. The result is
// keyed by canonical versionless id (arxiv.Normalize); an id arXiv does not
// know is absent from it. Versions in ids are dropped: the entry describes
// the latest version, and its Published date is v1's either way. An
// invalid id fails the call before anything is sent.
func (c *Client) Lookup(ctx context.Context, ids []string) (map[string]record.ArxivEntry, error) {
	var want []string
	seen := make(map[string]bool, len(ids))
	for _, s := range ids {
		id, err := arxiv.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("arxivapi lookup: %w", err)
		}
		if k := id.Canonical(); !seen[k] {
			seen[k] = true
			want = append(want, k)
		}
	}
	out := make(map[string]record.ArxivEntry, len(want))
	for chunk := range slices.Chunk(want, MaxLookup) {
		q := url.Values{
			"id_list":     {strings.Join(chunk, ",")},
			"start":       {"0"},
			"max_results": {strconv.Itoa(len(chunk))},
		}
		f, err := c.query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("arxivapi lookup of %d ids from %s: %w", len(chunk), chunk[0], err)
		}
		// Entries come back in date order, not request order, and an
		// unknown id has no entry (or an error entry); totalResults is not
		// to be trusted for id lists.
		for _, ae := range f.Entries {
			e, ok, err := ae.entry()
			if err != nil {
				return nil, fmt.Errorf("arxivapi lookup of %d ids from %s: %w", len(chunk), chunk[0], err)
			}
			if ok && seen[e.ID] {
				out[e.ID] = e
			}
		}
	}
	return out, nil
}

// SearchResult is what Search found.
type SearchResult struct {
	Query   string
	Total   int                 // opensearch:totalResults of the last page
	Entries []record.ArxivEntry // in the API's order, duplicates dropped
	// Capped is set when the query has more results than arXiv lets a
	// client page to (MaxResults); narrow the query, e.g. by date.
	Capped bool
	// EmptyPage is set when a page stayed empty before Total was reached
	// even when asked again; the result is short and the search worth
	// repeating later.
	EmptyPage bool
}

// Search runs an API search_query, sorted by submission date, oldest first
// so that papers arriving meanwhile land after the pages already read. It
// returns up to limit results from position start (all of them when limit
// <= 0), paging by start until totalResults is reached. Queries look like
// `cat:cs.CL AND submittedDate:[202601010000 TO 202601312359]`; see
// SubmittedBetween.
func (c *Client) Search(ctx context.Context, query string, start, limit int) (*SearchResult, error) {
	if query == "" {
		return nil, errors.New("arxivapi search: empty query")
	}
	if start < 0 {
		return nil, fmt.Errorf("arxivapi search %q: negative start %d", query, start)
	}
	log := c.log.With(slog.String("query", query))
	res := &SearchResult{Query: query, Total: -1}
	seen := make(map[string]bool)
	pos := start
	empties := 0
	for {
		n := c.pageSize
		if limit > 0 {
			n = min(n, start+limit-pos)
		}
		if res.Total >= 0 {
			n = min(n, res.Total-pos)
		}
		if n <= 0 {
			break
		}
		if pos+n > MaxResults {
			n = MaxResults - pos
			if n <= 0 {
				res.Capped = true
				log.WarnContext(ctx, "arxiv search capped", slog.Int("total", res.Total), slog.Int("entries", len(res.Entries)))
				break
			}
		}
		q := url.Values{
			"search_query": {query},
			"start":        {strconv.Itoa(pos)},
			"max_results":  {strconv.Itoa(n)},
			"sortBy":       {"submittedDate"},
			"sortOrder":    {"ascending"},
		}
		f, err := c.query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("arxivapi search %q start %d: %w", query, pos, err)
		}
		if msg := f.errorMessage(); msg != "" {
			return nil, fmt.Errorf("arxivapi search %q start %d: %s", query, pos, msg)
		}
		res.Total = f.Total
		var got int
		for _, ae := range f.Entries {
			e, ok, err := ae.entry()
			if err != nil {
				return nil, fmt.Errorf("arxivapi search %q start %d: %w", query, pos, err)
			}
			if !ok {
				continue
			}
			got++
			if !seen[e.ID] {
				seen[e.ID] = true
				res.Entries = append(res.Entries, e)
			}
		}
		if got == 0 {
			if pos >= res.Total {
				break
			}
			if empties < emptyPageRetries {
				empties++
				continue
			}
			res.EmptyPage = true
			log.WarnContext(ctx, "arxiv search page stayed empty before the total",
				slog.Int("start", pos), slog.Int("total", res.Total))
			break
		}
		empties = 0
		pos += got // the API may return fewer than asked; go on from there
	}
	res.Total = max(res.Total, 0)
	return res, nil
}

// SubmittedBetween returns the search_query clause selecting papers
// submitted from from to to (inclusive, minute resolution, GMT as the API
// expects), e.g. "submittedDate:[202601010000 TO 202601312359]".
func SubmittedBetween(from, to time.Time) string {
	const layout = "200601021504"
	return "submittedDate:[" + from.UTC().Format(layout) + " TO " + to.UTC().Format(layout) + "]"
}

// query sends one API call and parses the feed.
func (c *Client) query(ctx context.Context, q url.Values) (*feed, error) {
	resp, err := c.svc.Do(ctx, httpx.Request{Path: queryPath, Query: q, Header: http.Header{"Accept": {"application/atom+xml"}}})
	if err != nil {
		return nil, err
	}
	var f feed
	perr := xml.Unmarshal(resp.Body, &f)
	if resp.Status != http.StatusOK {
		// arXiv explains a refused query in an error entry of the feed.
		if perr == nil {
			if msg := f.errorMessage(); msg != "" {
				return nil, fmt.Errorf("status %d: %s", resp.Status, msg)
			}
		}
		return nil, fmt.Errorf("status %d", resp.Status)
	}
	if perr != nil {
		return nil, fmt.Errorf("parse atom feed: %w", perr)
	}
	return &f, nil
}
