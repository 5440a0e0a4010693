// Package oaipmh harvests arXiv's metadata over OAI-PMH 2.0
// (https://oaipmh.arxiv.org/oai), the interface arXiv prefers for keeping
// an up-to-date copy of its metadata. ListRecords walks a selective
// harvest (a date range and a set such as "cs" or "cs:cs:AI") through its
// resumption tokens and hands each record to a callback; GetRecord reads
// one paper's record (for what no harvest brought, such as the licence of
// an older paper); Identify describes the repository.
//
// An OAI-PMH datestamp is the date a record last changed, not the date the
// paper was submitted: a harvest from a date returns new papers and every
// older one revised or re-categorised since. The paper's own date is
// ArxivMeta.Created (v1's submission date). An incremental harvest starts
// from the date of the previous harvest's first response
// (Harvest.ResponseDate), as arXiv recommends, and leaves Until unset.
//
// arXiv asks for one request every three seconds on a single connection;
// ServiceConfig sets that up on the httpx.Service the Client is built on,
// which also honours the Retry-After of OAI-PMH flow control (503).
package oaipmh

import (
	"cmp"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/parse/arxiv"
)

const (
	// ServiceName is the name ServiceConfig gives the httpx service.
	ServiceName = "oai-pmh"
	// DefaultBaseURL is arXiv's OAI-PMH endpoint since its 2025 rewrite
	// (formerly http://export.arxiv.org/oai2).
	DefaultBaseURL = "https://oaipmh.arxiv.org/oai"
	// DefaultInterval is arXiv's requested spacing between requests.
	DefaultInterval = 3 * time.Second
	// DefaultMetadataPrefix is the metadata format ListRecords asks for
	// when the Query names none: arXiv's own, with authors split and the
	// categories listed.
	DefaultMetadataPrefix = "arXiv"

	dayLayout = "2006-01-02"
)

// OAI-PMH error codes (section 3.6 of the protocol) that callers may want
// to tell apart.
const (
	CodeBadArgument             = "badArgument"
	CodeBadResumptionToken      = "badResumptionToken"
	CodeBadVerb                 = "badVerb"
	CodeCannotDisseminateFormat = "cannotDisseminateFormat"
	CodeIDDoesNotExist          = "idDoesNotExist"
	CodeNoRecordsMatch          = "noRecordsMatch"
	CodeNoMetadataFormats       = "noMetadataFormats"
	CodeNoSetHierarchy          = "noSetHierarchy"
)

// ErrIDDoesNotExist matches (with errors.Is) the *Error GetRecord returns
// when the repository has no record of the paper (idDoesNotExist): an id
// arXiv never issued, or a paper whose metadata is not out yet.
var ErrIDDoesNotExist = errors.New("oai-pmh: no record of the identifier")

// ErrBadResumptionToken matches (with errors.Is) the *Error ListRecords
// returns when the repository refuses a resumption token. arXiv's tokens
// expire daily, so a harvest that spans midnight or resumes a day later
// gets one; the remedy is to start the harvest again from Query.From.
var ErrBadResumptionToken = errors.New("oai-pmh: bad resumption token")

// Error is an error condition the repository reported in an OAI-PMH
// response: an <error> element in the body of a 200 response.
type Error struct {
	Code    string // one of the Code constants, or whatever the repository sent
	Message string // the repository's explanation; may be empty
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "oai-pmh error " + e.Code
	}
	return "oai-pmh error " + e.Code + ": " + e.Message
}

// Is reports whether target is ErrBadResumptionToken or ErrIDDoesNotExist
// and e is that error.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrBadResumptionToken:
		return e.Code == CodeBadResumptionToken
	case ErrIDDoesNotExist:
		return e.Code == CodeIDDoesNotExist
	}
	return false
}

// ServiceConfig returns the httpx service configuration for the OAI-PMH
// endpoint at base (DefaultBaseURL when empty): interval between requests
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
	// Logger receives a Debug line per page and a Warn line per record
	// that could not be read; nil discards.
	Logger *slog.Logger
}

// Client harvests an OAI-PMH repository through an httpx.Service. It is
// safe for concurrent use; the service paces all callers together.
type Client struct {
	svc *httpx.Service
	log *slog.Logger
}

// New returns a Client that sends its requests through svc, whose base URL
// is the repository's base URL.
func New(svc *httpx.Service, opts Options) (*Client, error) {
	if svc == nil {
		return nil, errors.New("oaipmh: new client: nil service")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{svc: svc, log: log}, nil
}

// Query selects the records of a harvest.
type Query struct {
	// From and Until bound the records' datestamps, both inclusive, at day
	// granularity: only the UTC date counts. The zero time leaves a bound
	// unset.
	From, Until time.Time
	// Set restricts the harvest to a set: "cs", "physics:hep-th",
	// "cs:cs:AI"; empty means the whole repository.
	Set string
	// MetadataPrefix is the metadata format: "arXiv" (the default),
	// "arXivRaw" or "oai_dc". Record.Meta is filled for the first two only.
	MetadataPrefix string
}

// String renders q as the arguments of its first request, for logs and
// errors.
func (q Query) String() string {
	var b strings.Builder
	b.WriteString("metadataPrefix=" + cmp.Or(q.MetadataPrefix, DefaultMetadataPrefix))
	if !q.From.IsZero() {
		b.WriteString(" from=" + day(q.From))
	}
	if !q.Until.IsZero() {
		b.WriteString(" until=" + day(q.Until))
	}
	if q.Set != "" {
		b.WriteString(" set=" + q.Set)
	}
	return b.String()
}

func day(t time.Time) string { return t.UTC().Format(dayLayout) }

// Harvest sums up a ListRecords call. When ListRecords fails it holds what
// was read before the failure.
type Harvest struct {
	// ResponseDate is the repository's clock at the first response. Pass
	// it as the next harvest's From: records that change while this
	// harvest runs carry a later datestamp and so are not missed. From is
	// inclusive, so the next harvest reads that day's records again;
	// callers must treat records as upserts.
	ResponseDate time.Time
	// Records counts the records the callback accepted, deleted ones
	// included; Deleted counts those among them.
	Records, Deleted int
	// Skipped counts records that could not be read (an identifier that
	// is no arXiv id, malformed dates in the metadata) and so never reached
	// the callback; each is logged at Warn.
	Skipped int
	// Pages counts the responses read.
	Pages int
}

// Record is one OAI-PMH record.
type Record struct {
	Identifier string    // OAI identifier: "oai:arXiv.org:2401.00001"
	ID         string    // canonical versionless arXiv id: "2401.00001", "hep-th/9901001"
	Datestamp  time.Time // when the record last changed, not the paper's date
	Deleted    bool      // the repository deleted the record (<header status="deleted">); Meta is nil
	Sets       []string  // setSpecs: "cs", "physics:hep-th"
	// Meta is the record's metadata in the arXiv or arXivRaw format; nil
	// for deleted records and for other formats.
	Meta *ArxivMeta
}

// ArxivMeta is a paper's metadata at its latest version.
type ArxivMeta struct {
	ID      string    // canonical versionless arXiv id
	Created time.Time // when v1 was submitted: the paper's date
	// Updated is when the latest version was submitted; zero when there is
	// only v1. The arXiv format gives dates only, arXivRaw times as well.
	Updated time.Time
	Title   string   // whitespace collapsed
	Authors []string // "Forenames Keyname Suffix", or a collaboration's name
	// Categories lists the paper's categories, primary first; Primary is
	// that first one ("cs.CL").
	Categories []string
	Primary    string
	Abstract   string // whitespace collapsed
	DOI        string
	JournalRef string
	Comments   string
	License    string // licence URL; empty when the record names none
	// Versions is the version history, by number, v1 first: arXivRaw's
	// only (the arXiv format gives the first and latest dates alone).
	Versions []Version
}

// Version is one version of a paper in arXivRaw's history.
type Version struct {
	N    int       // 1 for v1
	Date time.Time // its submission, UTC
}

// ErrNoV1 is the error of an arXivRaw record whose version history lacks
// v1: such a record is skipped in a harvest and an error from GetRecord,
// as it gives the paper no date.
var ErrNoV1 = errors.New("version history lacks v1")

// Identity describes a repository, as Identify reports it.
type Identity struct {
	RepositoryName    string
	BaseURL           string
	ProtocolVersion   string
	AdminEmails       []string
	EarliestDatestamp time.Time
	// DeletedRecord is the repository's support for deleted records: "no",
	// "transient" or "persistent".
	DeletedRecord string
	// Granularity of datestamps: "YYYY-MM-DD" or "YYYY-MM-DDThh:mm:ssZ".
	Granularity  string
	ResponseDate time.Time
}

// Identify asks the repository to describe itself.
func (c *Client) Identify(ctx context.Context) (*Identity, error) {
	resp, err := c.call(ctx, url.Values{"verb": {"Identify"}})
	if err != nil {
		return nil, fmt.Errorf("oaipmh identify: %w", err)
	}
	if len(resp.Errors) > 0 {
		return nil, fmt.Errorf("oaipmh identify: %w", resp.err())
	}
	id := resp.Identify
	if id == nil {
		return nil, errors.New("oaipmh identify: response has no Identify element")
	}
	out := &Identity{
		RepositoryName:  strings.TrimSpace(id.RepositoryName),
		BaseURL:         strings.TrimSpace(id.BaseURL),
		ProtocolVersion: strings.TrimSpace(id.ProtocolVersion),
		DeletedRecord:   strings.TrimSpace(id.DeletedRecord),
		Granularity:     strings.TrimSpace(id.Granularity),
	}
	for _, a := range id.AdminEmails {
		if a = strings.TrimSpace(a); a != "" {
			out.AdminEmails = append(out.AdminEmails, a)
		}
	}
	if out.EarliestDatestamp, err = parseDatestamp(id.EarliestDatestamp); err != nil {
		return nil, fmt.Errorf("oaipmh identify: earliestDatestamp: %w", err)
	}
	if out.ResponseDate, err = parseDatestamp(resp.ResponseDate); err != nil {
		return nil, fmt.Errorf("oaipmh identify: responseDate: %w", err)
	}
	return out, nil
}

// Identifier returns the OAI identifier of an arXiv paper:
// "oai:arXiv.org:2401.00001", "oai:arXiv.org:hep-th/9901001".
func Identifier(id arxiv.ID) string { return identifierPrefix + id.Canonical() }

const identifierPrefix = "oai:arXiv.org:"

// GetRecord asks for one paper's record in arXiv's own format
// (metadataPrefix=arXiv): its latest version's metadata, the licence
// included. id is an arXiv id, with or without version; the request names
// the paper, not a version. A record the repository does not have is an
// *Error matching ErrIDDoesNotExist; a deleted record comes back with
// Deleted set and no Meta. Any other OAI-PMH error (cannotDisseminateFormat,
// badArgument) is an *Error too.
func (c *Client) GetRecord(ctx context.Context, id string) (Record, error) {
	return c.GetRecordFormat(ctx, id, DefaultMetadataPrefix)
}

// GetRecordFormat is GetRecord in metadata format prefix: "arXiv" (the
// licence) or "arXivRaw" (the version history, Meta.Versions). A record
// whose history lacks v1 is an error wrapping ErrNoV1.
func (c *Client) GetRecordFormat(ctx context.Context, id, prefix string) (Record, error) {
	if prefix != "arXiv" && prefix != "arXivRaw" {
		return Record{}, fmt.Errorf("oaipmh get record %q: metadata format %q: want arXiv or arXivRaw", id, prefix)
	}
	aid, err := arxiv.Parse(id)
	if err != nil {
		return Record{}, fmt.Errorf("oaipmh get record %q: %w", id, err)
	}
	ident := Identifier(aid)
	fail := func(err error) (Record, error) {
		return Record{}, fmt.Errorf("oaipmh get record %s: %w", ident, err)
	}
	resp, err := c.call(ctx, url.Values{
		"verb":           {"GetRecord"},
		"identifier":     {ident},
		"metadataPrefix": {prefix},
	})
	if err != nil {
		return fail(err)
	}
	if len(resp.Errors) > 0 {
		return fail(resp.err())
	}
	if resp.GetRecord == nil || len(resp.GetRecord.Records) != 1 {
		return fail(errors.New("response has neither one GetRecord record nor an error"))
	}
	rec, err := resp.GetRecord.Records[0].record()
	if err != nil {
		return fail(err)
	}
	if rec.ID != aid.Canonical() {
		// A record of another paper would give this one its licence.
		return fail(fmt.Errorf("the repository answered with the record of %s", rec.Identifier))
	}
	if !rec.Deleted && rec.Meta == nil {
		return fail(fmt.Errorf("the record has no metadata in %s's format", prefix))
	}
	return rec, nil
}

// ListRecords harvests the records q selects, calling fn for each in the
// repository's order, deleted records included. It asks for the first page
// with q's arguments, then follows each page's resumption token (sent on
// its own, as the protocol requires) until a page comes without one.
//
// A noRecordsMatch answer is an empty harvest, not an error. Any other
// OAI-PMH error is returned as an *Error; an expired or refused resumption
// token matches ErrBadResumptionToken, and the harvest is then best
// restarted from q.From, which delivers the records already seen again. An
// error from fn stops the harvest and is returned wrapped.
func (c *Client) ListRecords(ctx context.Context, q Query, fn func(Record) error) (Harvest, error) {
	var h Harvest
	if fn == nil {
		return h, fmt.Errorf("oaipmh list records %s: nil callback", q)
	}
	if err := q.check(); err != nil {
		return h, fmt.Errorf("oaipmh list records %s: %w", q, err)
	}
	token := ""
	for {
		page := h.Pages + 1
		where := fmt.Sprintf("page %d", page)
		if token != "" {
			where += fmt.Sprintf(" (resumptionToken %q)", token)
		}
		fail := func(err error) (Harvest, error) {
			return h, fmt.Errorf("oaipmh list records %s: %s: %w", q, where, err)
		}
		p, err := c.listPage(ctx, q, token, page)
		if p != nil {
			h.Pages++
			if page == 1 {
				h.ResponseDate = p.ResponseDate
			}
		}
		if err != nil {
			return fail(err)
		}
		h.Skipped += p.Skipped
		for _, rec := range p.Records {
			if err := ctx.Err(); err != nil {
				return fail(err)
			}
			if err := fn(rec); err != nil {
				return fail(fmt.Errorf("record %s: %w", rec.Identifier, err))
			}
			h.Records++
			if rec.Deleted {
				h.Deleted++
			}
		}
		if p.Token == "" {
			return h, nil
		}
		token = p.Token
	}
}

// Page is one answer of a ListRecords harvest.
type Page struct {
	// Records are the page's records that could be read, deleted ones
	// included, in the repository's order; Skipped counts the others
	// (each logged at Warn).
	Records []Record
	Skipped int
	// Token is the resumption token of the next page; "" on the last.
	Token string
	// Cursor and CompleteListSize are the token's attributes, -1 when
	// the repository sent none (arXiv's 2025 server sends none).
	Cursor, CompleteListSize int
	// ResponseDate is the repository's clock at the answer.
	ResponseDate time.Time
}

// ListPage asks for one page of the harvest q: its first when token is
// "", else the page the token names (sent alone with the verb, as the
// protocol requires). It is ListRecords a page at a time, for a harvester
// that stores its progress after each page and goes on later from the
// token it stored. A noRecordsMatch answer is an empty last page; a
// refused or expired token matches ErrBadResumptionToken.
func (c *Client) ListPage(ctx context.Context, q Query, token string) (*Page, error) {
	if err := q.check(); err != nil {
		return nil, fmt.Errorf("oaipmh list records %s: %w", q, err)
	}
	p, err := c.listPage(ctx, q, token, 0)
	if err != nil {
		if token != "" {
			return nil, fmt.Errorf("oaipmh list records %s: resumptionToken %q: %w", q, token, err)
		}
		return nil, fmt.Errorf("oaipmh list records %s: %w", q, err)
	}
	return p, nil
}

func (q Query) check() error {
	if !q.From.IsZero() && !q.Until.IsZero() && day(q.Until) < day(q.From) {
		return errors.New("until is before from")
	}
	return nil
}

// listPage sends the request of one page (number n, for logs; 0 when
// unknown) and reads it. It returns a nil page when no answer came, and
// the page read with the error of a page that cannot be used, so that a
// harvest counts the answers it had.
func (c *Client) listPage(ctx context.Context, q Query, token string, n int) (*Page, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	args := url.Values{"verb": {"ListRecords"}, "resumptionToken": {token}}
	if token == "" {
		args = url.Values{
			"verb":           {"ListRecords"},
			"metadataPrefix": {cmp.Or(q.MetadataPrefix, DefaultMetadataPrefix)},
		}
		if !q.From.IsZero() {
			args.Set("from", day(q.From))
		}
		if !q.Until.IsZero() {
			args.Set("until", day(q.Until))
		}
		if q.Set != "" {
			args.Set("set", q.Set)
		}
	}
	log := c.log.With(slog.String("query", q.String()))
	if n > 0 {
		log = log.With(slog.Int("page", n))
	}
	resp, err := c.call(ctx, args)
	if err != nil {
		return nil, err
	}
	p := &Page{Cursor: -1, CompleteListSize: -1}
	if p.ResponseDate, err = parseDatestamp(resp.ResponseDate); err != nil && token == "" {
		// The next harvest starts from the first page's date, so a
		// response without a usable one cannot be the base of one.
		return p, fmt.Errorf("responseDate: %w", err)
	}
	if len(resp.Errors) > 0 {
		e := resp.err()
		if e.Code == CodeNoRecordsMatch {
			log.DebugContext(ctx, "oai-pmh no records match")
			return p, nil
		}
		return p, e
	}
	list := resp.ListRecords
	if list == nil {
		return p, errors.New("response has neither ListRecords nor error")
	}
	p.Token = list.token()
	attrs := []any{slog.Int("records", len(list.Records))}
	if t := list.Token; t != nil {
		attrs = append(attrs, slog.String("cursor", t.Cursor), slog.String("complete_list_size", t.CompleteListSize))
		if v, err := strconv.Atoi(strings.TrimSpace(t.Cursor)); err == nil {
			p.Cursor = v
		}
		if v, err := strconv.Atoi(strings.TrimSpace(t.CompleteListSize)); err == nil {
			p.CompleteListSize = v
		}
	}
	log.DebugContext(ctx, "oai-pmh page", attrs...)
	for i := range list.Records {
		rec, err := list.Records[i].record()
		if err != nil {
			p.Skipped++
			log.WarnContext(ctx, "oai-pmh record skipped", slog.String("err", err.Error()))
			continue
		}
		p.Records = append(p.Records, rec)
	}
	if p.Token != "" && p.Token == token {
		// Asking again would loop forever.
		return p, errors.New("repository returned the resumption token it was sent")
	}
	return p, nil
}

// call sends one request and parses the OAI-PMH envelope. OAI-PMH reports
// its errors in a 200 body; a repository that also sets an error status
// still gets its <error> read.
func (c *Client) call(ctx context.Context, args url.Values) (*response, error) {
	resp, err := c.svc.Do(ctx, httpx.Request{Query: args, Header: http.Header{"Accept": {"text/xml, application/xml"}}})
	if err != nil {
		return nil, err
	}
	var r response
	perr := xml.Unmarshal(resp.Body, &r)
	if resp.Status != http.StatusOK {
		if perr == nil && len(r.Errors) > 0 {
			return nil, fmt.Errorf("status %d: %w", resp.Status, r.err())
		}
		return nil, fmt.Errorf("status %d", resp.Status)
	}
	if perr != nil {
		return nil, fmt.Errorf("parse oai-pmh response: %w", perr)
	}
	return &r, nil
}
