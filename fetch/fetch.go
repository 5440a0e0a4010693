// Package fetch is the first stage of the pipeline: it downloads a paper's
// LaTeXML HTML from arXiv (arxiv.org/html/ID), falling back to ar5iv for
// papers arXiv has no HTML for, keeps the raw page in the store, and parses
// it into a record.Document.
//
// Papers are stored under their versionless arXiv ID, so a paper fetched
// once as a target and later needed as a source is fetched only once. A
// local page archive (Fetcher.Archive) is consulted before any request:
// a paper it holds is never downloaded. A host's robots.txt, applied to
// its service by the caller (robots.Checker.Apply), refuses the paths it
// disallows before they are sent; arXiv refusing sends the paper to
// ar5iv.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/groundwork/curate/internal/archive"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/keylock"
	"github.com/groundwork/curate/internal/membudget"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/internal/robots"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// Name is the fetch stage's name in the store's ledger.
const Name = "fetch"

// Names of the httpx services the Fetcher's sites are.
const (
	ServiceArxiv = "arxiv"
	ServiceAr5iv = "ar5iv"
)

func (f *Fetcher) missingTTL() time.Duration {
	if f.MissingTTL == 0 {
		return 7 * 24 * time.Hour
	}
	return f.MissingTTL
}

// knownMissing reports whether the paper was found without HTML recently
// enough not to ask again: a nightly run would otherwise ask every night.
func (f *Fetcher) knownMissing(ctx context.Context, id arxiv.ID) (record.NoHTML, bool) {
	return f.knownMissingAt(ctx, record.Key(id))
}

// knownMissingAt is knownMissing of the store item item (a paper, or one
// version of it).
func (f *Fetcher) knownMissingAt(ctx context.Context, item string) (record.NoHTML, bool) {
	if f.missingTTL() < 0 {
		return record.NoHTML{}, false
	}
	m, _, err := record.NoHTMLs.Get(ctx, f.Store, item)
	if err != nil {
		return record.NoHTML{}, false
	}
	at, err := time.Parse(time.RFC3339, m.CheckedAt)
	if err != nil || f.now().Sub(at) > f.missingTTL() {
		return *m, false
	}
	return *m, true
}

// KnownMissingAt reports whether the store item (one version of a
// paper, record.VersionItem) was found without HTML on arXiv within the
// missing TTL: a fetch of it would ask nothing.
func (f *Fetcher) KnownMissingAt(ctx context.Context, item string) bool {
	_, ok := f.knownMissingAt(ctx, item)
	return ok
}

// KnownMissing reports whether the paper was found without HTML on arXiv
// and ar5iv within the missing TTL (and is not in the archive or the
// store): a fetch of it would make no request and fail.
func (f *Fetcher) KnownMissing(ctx context.Context, key string) bool {
	id, err := arxiv.Parse(key)
	if err != nil {
		return false
	}
	if _, ok := f.knownMissing(ctx, id); !ok {
		return false
	}
	if has, err := record.Documents.Has(ctx, f.Store, record.Key(id)); has || err != nil {
		return false // a fetch says why the record cannot be read
	}
	if f.Archive != nil {
		if _, err := f.Archive.Lookup(id.String()); err == nil {
			return false
		}
	}
	return true
}

func (f *Fetcher) rememberMissing(ctx context.Context, id arxiv.ID, err error) {
	f.rememberMissingAt(ctx, record.Key(id), err)
}

func (f *Fetcher) rememberMissingAt(ctx context.Context, item string, err error) {
	m := record.NoHTML{CheckedAt: f.now().UTC().Format(time.RFC3339), Reason: err.Error()}
	if _, e := record.NoHTMLs.Put(context.WithoutCancel(ctx), f.Store, item, &m, nil); e != nil {
		f.log().Warn("record a paper without HTML", "item", item, "err", e)
	}
}

// FetchAt fetches version id.Version of a paper from arXiv alone
// (html/IDvN: ar5iv keeps one version, of no stated number) and stores
// its page and Document under item: the paper's own key for a target
// read at v1, record.VersionItem for a source read at the version of its
// target's cutoff. That version's text stored under the paper's other
// item (its key, or its version item) is copied, without a request. A
// version arXiv has no HTML for is Missing, remembered under
// record.VersionItem (within the missing TTL it is not asked again),
// apart from what is known of the paper's other versions.
//
// All reads of one paper hold its key's lock, so a target read at v1
// and another target's source pinned to a version of the same paper,
// met at the same moment, each find what the other stored.
func (f *Fetcher) FetchAt(ctx context.Context, id arxiv.ID, item string) Result {
	if id.Version < 1 {
		return Result{Input: id.String(), ID: item, Outcome: Failed, Err: fmt.Errorf("fetch %s at a version: no version given", id)}
	}
	defer f.locks.Lock(record.Key(id))()
	return f.fetchAt(ctx, id, item)
}

// FetchVersion reads version id.Version of a paper into its own item
// (record.VersionItem), whatever the paper's key holds or comes to hold:
// a source pinned by the knowledge cut. The version's text stored under
// the key is copied, without a request. When the key holds nothing and
// the version is the one served now (latest), the paper is fetched as
// served now (arXiv, else ar5iv), as without the cut, and copied to the
// version's item when its page says it is that version; a Result whose
// ID is the key then says the text is the key's alone (ar5iv's, of no
// stated version), or Missing that there is none.
func (f *Fetcher) FetchVersion(ctx context.Context, id arxiv.ID, latest bool) Result {
	key := record.Key(id)
	item := record.VersionItem(key, id.Version)
	if id.Version < 1 {
		return Result{Input: id.String(), ID: item, Outcome: Failed, Err: fmt.Errorf("fetch %s at a version: no version given", id)}
	}
	defer f.locks.Lock(key)()
	if _, got, stored := f.Stored(ctx, key); latest && !stored && !f.Refetch {
		if _, ok := f.storedAt(ctx, item, id.Version); !ok {
			served, err := arxiv.Parse(key)
			if err != nil {
				return Result{Input: id.String(), ID: item, Outcome: Failed, Err: err}
			}
			r := f.fetch(ctx, served, key)
			if r.Doc == nil || record.DocVersion(r.Doc) != id.Version {
				return r
			}
			if err := f.copyItem(ctx, key, item); err != nil {
				return Result{Input: id.String(), ID: item, Outcome: Failed, Err: err}
			}
			r.ID = item
			return r
		}
	} else if got == 0 && stored && latest && !f.Refetch {
		// ar5iv's page, taken to be the version served now.
		return Result{Input: id.String(), ID: key, Outcome: Stored}
	}
	return f.fetchAt(ctx, id, item)
}

// fetchAt is FetchAt with the paper's lock held.
func (f *Fetcher) fetchAt(ctx context.Context, id arxiv.ID, item string) Result {
	res := Result{Input: id.String(), ID: item}
	key := record.Key(id)
	missingItem := record.VersionItem(key, id.Version)
	if !f.Refetch {
		if doc, ok := f.storedAt(ctx, item, id.Version); ok {
			res.Outcome, res.Doc, res.Source = Stored, doc, doc.Source
			return res
		}
		if doc, ok := f.reparseAt(ctx, id, item); ok {
			// As Fetch does: the page of this version is stored, its
			// Document is not (a crash between them, or lost).
			res.Outcome, res.Doc, res.Source = Stored, doc, doc.Source
			return res
		}
		for _, other := range []string{key, missingItem} {
			if other == item {
				continue
			}
			if _, ok := f.storedAt(ctx, other, id.Version); ok {
				var err error
				if item == key {
					err = f.keepApart(ctx, key) // the version it replaces
				}
				if err == nil {
					err = f.copyItem(ctx, other, item)
				}
				if err != nil {
					res.Outcome, res.Err = Failed, err
					return res
				}
				doc, _ := f.storedAt(ctx, item, id.Version)
				res.Outcome, res.Doc = Stored, doc
				if doc != nil {
					res.Source = doc.Source
				}
				return res
			}
		}
	}
	if doc, ok, err := f.fromArchiveAt(ctx, id, item); err != nil {
		res.Outcome, res.Err = Failed, err
		return res
	} else if ok {
		res.Outcome, res.Doc, res.Source = Archived, doc, doc.Source
		return res
	}
	if !f.Refetch {
		if m, ok := f.knownMissingAt(ctx, missingItem); ok {
			res.Outcome, res.Known = Missing, true
			res.Err = fmt.Errorf("fetch %s: no HTML on arXiv for this version (checked %s; asked again after %s): %w", id, m.CheckedAt, f.missingTTL(), ErrNoHTML)
			return res
		}
	}
	page, pageURL, err := f.fromArxiv(ctx, id)
	if errors.Is(err, ErrNoHTML) {
		f.rememberMissingAt(ctx, missingItem, err)
		res.Outcome, res.Err = Missing, err
		return res
	}
	if err != nil {
		res.Outcome, res.Err = Failed, err
		return res
	}
	doc, err := f.keep(ctx, id, item, page, pageURL, record.SourceArxiv)
	if err != nil {
		res.Outcome, res.Err = Failed, err
		return res
	}
	res.Outcome, res.Doc, res.Source = Fetched, doc, record.SourceArxiv
	return res
}

// keepPDF stores a Document made from the PDF of version id of the
// paper key (through GROBID) as the paper's Document: a target read at
// v1 when its v1 has no HTML.
func (f *Fetcher) keepPDF(ctx context.Context, key string, id arxiv.ID, doc *record.Document) Result {
	d := *doc
	if record.DocVersion(&d) != id.Version {
		d.ID = id.String() // of this version, whatever the TEI says
	}
	defer f.locks.Lock(key)()
	if err := f.keepApart(ctx, key); err != nil {
		return Result{Input: key, ID: key, Outcome: Failed, Err: fmt.Errorf("fetch %s: %w", id, err)}
	}
	if _, err := record.Documents.Put(ctx, f.Store, key, &d, docMeta(&d, d.Source)); err != nil {
		return Result{Input: key, ID: key, Outcome: Failed, Err: fmt.Errorf("fetch %s: %w", id, err)}
	}
	return Result{Input: key, ID: key, Outcome: Fetched, Source: d.Source, Doc: &d}
}

// keep stores a page fetched for id under item, then its Document.
func (f *Fetcher) keep(ctx context.Context, id arxiv.ID, item string, page []byte, pageURL, source string) (*record.Document, error) {
	meta := map[string]string{
		"source":     source,
		"url":        pageURL,
		"fetched_at": f.now().UTC().Format(time.RFC3339),
		"requested":  id.String(),
	}
	if item == record.Key(id) {
		if err := f.keepApart(ctx, item); err != nil {
			return nil, fmt.Errorf("fetch %s: %w", id, err)
		}
	}
	// The raw page is kept before parsing, so a parser bug loses nothing:
	// a later parser version can re-read it without a request.
	if _, err := record.RawPages.Put(ctx, f.Store, item, page, meta); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", id, err)
	}
	doc, err := f.parse(ctx, page, id, source, pageURL)
	if err != nil {
		return nil, fmt.Errorf("fetch %s from %s: %w", id, source, err)
	}
	if _, err := record.Documents.Put(ctx, f.Store, item, doc, docMeta(doc, source)); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", id, err)
	}
	return doc, nil
}

// docMeta is a Document record's meta: the site that served it and the
// version it is of, when its page says (read without the blob: the
// summarize stage tells a card of another version by it).
func docMeta(doc *record.Document, source string) map[string]string {
	m := map[string]string{"source": source}
	if v := record.DocVersion(doc); v > 0 {
		m["version"] = strconv.Itoa(v)
	}
	return m
}

// keepApart copies the text stored under the paper's key to its
// version's own item (record.VersionItem) before something else is
// stored under the key: a target read at v1 where the store held the
// version served now, which another target's source may be pinned to.
// A text of no stated version (ar5iv's) has no item to go to; one its
// item holds already is left.
func (f *Fetcher) keepApart(ctx context.Context, key string) error {
	doc, v, ok := f.Stored(ctx, key)
	if !ok || v < 1 {
		return nil
	}
	item := record.VersionItem(key, v)
	if _, held := f.storedAt(ctx, item, v); held || doc == nil {
		return nil
	}
	return f.copyItem(ctx, key, item)
}

// copyItem copies a paper's raw page and Document from one of its store
// items to another (the Document last, as keep stores them: a copy cut
// short is parsed again or fetched).
func (f *Fetcher) copyItem(ctx context.Context, from, to string) error {
	doc, rec, err := record.Documents.Get(ctx, f.Store, from)
	if err != nil {
		return fmt.Errorf("copy the text of %s to %s: %w", from, to, err)
	}
	if page, prec, err := record.RawPages.Get(ctx, f.Store, from); err == nil {
		if _, err := record.RawPages.Put(ctx, f.Store, to, page, prec.Meta); err != nil {
			return fmt.Errorf("copy the page of %s to %s: %w", from, to, err)
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("copy the page of %s to %s: %w", from, to, err)
	}
	if _, err := record.Documents.Put(ctx, f.Store, to, doc, rec.Meta); err != nil {
		return fmt.Errorf("copy the text of %s to %s: %w", from, to, err)
	}
	return nil
}

// DocVersion is the version a Document is of (record.DocVersion).
func DocVersion(doc *record.Document) int { return record.DocVersion(doc) }

// Outcomes of fetching one paper.
const (
	Fetched  = "fetched"  // downloaded and parsed now
	Archived = "archived" // read from a local archive and parsed now: no request made
	Stored   = "stored"   // already in the store: no request made
	Missing  = "missing"  // neither arXiv nor ar5iv has HTML for it
	Failed   = "failed"   // a request or the parse failed; Err says why
)

// ErrNoHTML means neither arXiv nor ar5iv serves HTML for the paper.
var ErrNoHTML = errors.New("no HTML on arXiv or ar5iv")

// getter is the part of an httpx.Service the fetcher uses.
type getter interface {
	Do(ctx context.Context, req httpx.Request) (*httpx.Response, error)
}

// Archive is a set of local pages consulted before any request, such as
// an *archive.Index. Lookup takes an arXiv ID, versioned or not; its
// error wraps archive.ErrNotFound when no archive holds the paper.
type Archive interface {
	Lookup(id string) (*archive.Page, error)
}

// Fetcher fetches papers into a store. Its methods are safe for concurrent
// use; the services' limiters keep requests polite however many goroutines
// call it.
type Fetcher struct {
	Arxiv getter // arxiv.org
	Ar5iv getter // ar5iv.labs.arxiv.org; nil disables the fallback
	// Archive, when set, is asked first: a paper it holds is parsed from
	// it and makes no request.
	Archive Archive
	Store   *store.Store
	Log     *slog.Logger
	Refetch bool // fetch even when the store holds the paper
	// MissingTTL is how long a paper found without HTML anywhere is not
	// asked about again (arXiv converts old papers over time); 0 means 7
	// days, negative means always ask.
	MissingTTL time.Duration
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// ParseBudget, when set, bounds the memory the parses of all the
	// goroutines sharing it hold at once (each weighs latexml.Cost of its
	// page); nil bounds nothing.
	ParseBudget *membudget.Budget

	// locks serialise fetches of one paper: a target and another
	// target's source may be the same paper, asked for at the same moment.
	locks keylock.Locks
}

// Result is the outcome of fetching one paper.
type Result struct {
	Input   string // as given by the user
	ID      string // the versionless arXiv ID, the paper's key in the store
	Outcome string // Fetched, Stored, Missing or Failed
	Source  string // which site served the page (record.SourceArxiv, SourceAr5iv or SourceArchive)
	Doc     *record.Document
	Err     error
	// Known says a Missing paper was found without HTML by an earlier
	// fetch, within the missing TTL: nothing was asked.
	Known bool
}

// Fetch fetches one paper given as text (an arXiv ID with or without
// version). It never returns an error itself: the Result carries it.
func (f *Fetcher) Fetch(ctx context.Context, input string) Result {
	res := Result{Input: input}
	id, err := arxiv.Parse(input)
	if err != nil {
		res.Outcome, res.Err = Failed, err
		return res
	}
	defer f.locks.Lock(record.Key(id))()
	return f.fetch(ctx, id, input)
}

// fetch is Fetch of id (given as input) with the paper's lock held.
func (f *Fetcher) fetch(ctx context.Context, id arxiv.ID, input string) Result {
	res := Result{Input: input, ID: record.Key(id)}
	if !f.Refetch {
		if doc, ok := f.stored(ctx, id); ok {
			res.Outcome, res.Doc, res.Source = Stored, doc, doc.Source
			return res
		}
		if doc, ok := f.reparse(ctx, id); ok {
			// The raw page was stored but the crash came before its
			// Document: parse it again instead of asking again.
			res.Outcome, res.Doc, res.Source = Stored, doc, doc.Source
			return res
		}
	}
	if doc, ok, err := f.fromArchive(ctx, id); err != nil {
		res.Outcome, res.Err = Failed, err
		return res
	} else if ok {
		// Read from the archive: no request was made.
		res.Outcome, res.Doc, res.Source = Archived, doc, doc.Source
		return res
	}
	if !f.Refetch {
		if m, ok := f.knownMissing(ctx, id); ok {
			res.Outcome, res.Known = Missing, true
			res.Err = fmt.Errorf("fetch %s: %w (checked %s; asked again after %s)", id, ErrNoHTML, m.CheckedAt, f.missingTTL())
			return res
		}
	}
	doc, source, err := f.download(ctx, id)
	res.Doc, res.Source = doc, source
	switch {
	case errors.Is(err, ErrNoHTML):
		res.Outcome, res.Err = Missing, err
		f.rememberMissing(ctx, id, err)
	case err != nil:
		res.Outcome, res.Err = Failed, err
	default:
		res.Outcome = Fetched
	}
	return res
}

func (f *Fetcher) log() *slog.Logger {
	if f.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Log
}

func (f *Fetcher) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// reparse parses a stored raw page that has no Document yet.
func (f *Fetcher) reparse(ctx context.Context, id arxiv.ID) (*record.Document, bool) {
	return f.reparseAt(ctx, id, record.Key(id))
}

// reparseAt is reparse of the page stored under item (a version's own,
// or the paper's key).
func (f *Fetcher) reparseAt(ctx context.Context, id arxiv.ID, item string) (*record.Document, bool) {
	page, rec, err := record.RawPages.Get(ctx, f.Store, item)
	if err != nil {
		return nil, false
	}
	if id.Version > 0 {
		if got, err := arxiv.Parse(rec.Meta["requested"]); err != nil || got.Version != id.Version {
			return nil, false
		}
	}
	var doc *record.Document
	if rec.Meta["source"] == record.SourceArchive {
		doc, err = f.parseArchived(ctx, page, id, rec.Meta["archive"], rec.Meta["entry"])
	} else {
		doc, err = f.parse(ctx, page, id, rec.Meta["source"], rec.Meta["url"])
	}
	if err != nil {
		return nil, false
	}
	if _, err := record.Documents.Put(ctx, f.Store, item, doc, docMeta(doc, rec.Meta["source"])); err != nil {
		return nil, false
	}
	return doc, true
}

// stored returns the stored Document of id when it satisfies the request:
// a versionless request takes any stored version, a versioned one only
// that version.
func (f *Fetcher) stored(ctx context.Context, id arxiv.ID) (*record.Document, bool) {
	return f.storedAt(ctx, record.Key(id), id.Version)
}

// storedAt returns the Document stored under item when it is of version
// v (any version when v is 0).
func (f *Fetcher) storedAt(ctx context.Context, item string, v int) (*record.Document, bool) {
	doc, _, err := record.Documents.Get(ctx, f.Store, item)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			f.log().Warn("stored document unreadable; fetching again", "item", item, "err", err)
		}
		return nil, false
	}
	if v > 0 && DocVersion(doc) != v {
		return nil, false
	}
	return doc, true
}

// Stored returns the Document stored under the versionless key, and its
// version (0 when its page does not say).
func (f *Fetcher) Stored(ctx context.Context, key string) (*record.Document, int, bool) {
	doc, ok := f.storedAt(ctx, key, 0)
	return doc, DocVersion(doc), ok
}

// download tries arXiv, then ar5iv, stores the raw page and the Document.
func (f *Fetcher) download(ctx context.Context, id arxiv.ID) (*record.Document, string, error) {
	page, pageURL, err := f.fromArxiv(ctx, id)
	source := record.SourceArxiv
	if (errors.Is(err, ErrNoHTML) || errors.Is(err, robots.ErrDisallowed)) && f.Ar5iv != nil {
		f.log().Debug("no arXiv HTML; trying ar5iv", "id", id.String(), "why", err.Error())
		arxivErr := err
		page, pageURL, err = f.fromAr5iv(ctx, id)
		source = record.SourceAr5iv
		if errors.Is(arxivErr, robots.ErrDisallowed) && errors.Is(err, ErrNoHTML) {
			// arXiv was not asked, so "no HTML anywhere" is not known: the
			// paper fails (and is asked again) rather than being recorded
			// as missing.
			err = fmt.Errorf("%w; and %w", arxivErr, err)
			err = disallowedError{err}
		}
	}
	if err != nil {
		return nil, "", err
	}
	doc, err := f.keep(ctx, id, record.Key(id), page, pageURL, source)
	if err != nil {
		return nil, source, err
	}
	return doc, source, nil
}

// disallowedError keeps a refusal by robots.txt from reading as
// ErrNoHTML, which would be remembered as "no HTML anywhere".
type disallowedError struct{ err error }

func (e disallowedError) Error() string { return e.err.Error() }

// Is makes the error match robots.ErrDisallowed and nothing else.
func (e disallowedError) Is(target error) bool { return target == robots.ErrDisallowed }

// fromArchive reads id's page from the archive, parses and stores it. ok
// is false when there is no archive, no archive holds the paper, or the
// page it holds cannot be read or is not the one asked for (another
// version, another paper, no LaTeXML): the paper is then fetched as
// usual. The error is the store's.
func (f *Fetcher) fromArchive(ctx context.Context, id arxiv.ID) (*record.Document, bool, error) {
	return f.fromArchiveAt(ctx, id, record.Key(id))
}

// fromArchiveAt is fromArchive storing under item.
func (f *Fetcher) fromArchiveAt(ctx context.Context, id arxiv.ID, item string) (*record.Document, bool, error) {
	if f.Archive == nil {
		return nil, false, nil
	}
	page, err := f.Archive.Lookup(id.String())
	if errors.Is(err, archive.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		// A damaged entry: the paper is still on the network.
		f.log().Warn("archived page unreadable; fetching the paper instead", "id", id.String(), "err", err)
		return nil, false, nil
	}
	doc, err := f.parseArchived(ctx, page.Body, id, page.Archive, page.Entry)
	if err != nil {
		f.log().Warn("archived page unusable; fetching the paper instead", "id", id.String(), "archive", page.Archive, "entry", page.Entry, "err", err)
		return nil, false, nil
	}
	meta := map[string]string{
		"source":     record.SourceArchive,
		"archive":    page.Archive,
		"entry":      page.Entry,
		"url":        doc.URL,
		"fetched_at": f.now().UTC().Format(time.RFC3339),
		"requested":  id.String(),
	}
	if page.Severity != "" {
		meta["severity"] = page.Severity
	}
	if item == record.Key(id) {
		if err := f.keepApart(ctx, item); err != nil {
			return nil, false, fmt.Errorf("fetch %s: %w", id, err)
		}
	}
	if _, err := record.RawPages.Put(ctx, f.Store, item, page.Body, meta); err != nil {
		return nil, false, fmt.Errorf("fetch %s: %w", id, err)
	}
	if _, err := record.Documents.Put(ctx, f.Store, item, doc, docMeta(doc, record.SourceArchive)); err != nil {
		return nil, false, fmt.Errorf("fetch %s: %w", id, err)
	}
	return doc, true, nil
}

// parseArchived parses a page read from an archive: the site that made it
// (arXiv or ar5iv) is read from the page, and the Document says it was
// served by the archive.
func (f *Fetcher) parseArchived(ctx context.Context, page []byte, id arxiv.ID, archiveName, entry string) (*record.Document, error) {
	doc, err := f.parse(ctx, page, id, "", "")
	if err != nil {
		return nil, err
	}
	doc.Source, doc.Archive, doc.ArchiveEntry = record.SourceArchive, archiveName, entry
	return doc, nil
}

// parse is Parse within the parse budget.
func (f *Fetcher) parse(ctx context.Context, page []byte, id arxiv.ID, source, pageURL string) (*record.Document, error) {
	release, err := f.ParseBudget.Acquire(ctx, latexml.Cost(page))
	if err != nil {
		return nil, err
	}
	defer release()
	return Parse(page, id, source, pageURL)
}

// Parse parses a page fetched for id. The page's own ID (arXiv's base href
// names the version served) wins over the requested one. The page is not
// bounded again here: the HTTP layer's body cap and the archives' page
// cap, both the user's to set, bounded it already.
func Parse(page []byte, id arxiv.ID, source, pageURL string) (*record.Document, error) {
	doc, err := latexml.Parse(page, latexml.Options{Source: source, URL: pageURL, MaxBytes: -1})
	if err != nil {
		return nil, err
	}
	if doc.ID == "" {
		doc.ID = id.String()
	} else if got, err := arxiv.Parse(doc.ID); err != nil || got.Canonical() != id.Canonical() {
		// A page for another paper (a wrong redirect, a broken mirror).
		return nil, fmt.Errorf("page is for %q, not %s", doc.ID, id)
	} else if id.Version > 0 && got.Version > 0 && got.Version != id.Version {
		return nil, fmt.Errorf("page is version %d, not the requested %s", got.Version, id)
	}
	return doc, nil
}

// fromArxiv asks arxiv.org/html/ID. A 404 means arXiv has no HTML for it.
func (f *Fetcher) fromArxiv(ctx context.Context, id arxiv.ID) ([]byte, string, error) {
	resp, err := f.Arxiv.Do(ctx, httpx.Request{Path: "/html/" + id.String()})
	if err != nil {
		return nil, "", fmt.Errorf("fetch %s from arxiv: %w", id, err)
	}
	switch {
	case resp.Status == http.StatusOK && looksLikeLaTeXML(resp.Body):
		return resp.Body, resp.URL, nil
	case resp.Status == http.StatusOK, resp.Status == http.StatusNotFound:
		// arXiv answers papers without HTML (PDF-only submissions, failed
		// conversions) with a 404 or a page that is no LaTeXML document.
		return nil, "", fmt.Errorf("fetch %s from arxiv: status %d: %w", id, resp.Status, ErrNoHTML)
	}
	return nil, "", fmt.Errorf("fetch %s from arxiv: unexpected status %d", id, resp.Status)
}

// fromAr5iv asks ar5iv.labs.arxiv.org/html/ID. ar5iv keeps one version per
// paper, so the versionless ID is asked. A 307 redirect to arxiv.org/abs
// means ar5iv does not have the paper either.
func (f *Fetcher) fromAr5iv(ctx context.Context, id arxiv.ID) ([]byte, string, error) {
	resp, err := f.Ar5iv.Do(ctx, httpx.Request{Path: "/html/" + id.Base(), NoRedirect: true})
	if err != nil {
		return nil, "", fmt.Errorf("fetch %s from ar5iv: %w", id, err)
	}
	switch {
	case resp.Status == http.StatusOK:
		return resp.Body, resp.URL, nil
	case resp.Status >= 300 && resp.Status < 400:
		if isAbsRedirect(resp.Location) {
			return nil, "", fmt.Errorf("fetch %s: ar5iv redirects to %s: %w", id, resp.Location, ErrNoHTML)
		}
		return nil, "", fmt.Errorf("fetch %s from ar5iv: unexpected redirect %d to %s", id, resp.Status, resp.Location)
	case resp.Status == http.StatusNotFound:
		return nil, "", fmt.Errorf("fetch %s from ar5iv: status 404: %w", id, ErrNoHTML)
	}
	return nil, "", fmt.Errorf("fetch %s from ar5iv: unexpected status %d", id, resp.Status)
}

func isAbsRedirect(loc string) bool {
	u, err := url.Parse(loc)
	return err == nil && strings.Contains(u.Path, "/abs/")
}

// looksLikeLaTeXML tells a converted paper from arXiv's "no HTML" pages.
func looksLikeLaTeXML(page []byte) bool {
	return strings.Contains(string(page[:min(len(page), 1<<20)]), "ltx_")
}

// All fetches inputs with up to workers goroutines and returns the results
// in input order. Duplicate papers are fetched once. onDone, when set, is
// called after each paper (for progress).
func (f *Fetcher) All(ctx context.Context, inputs []string, workers int, onDone func(Result)) []Result {
	workers = max(workers, 1)
	results := make([]Result, len(inputs))
	first := map[string]int{} // key -> index of its first occurrence
	type job struct{ i int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	// Each paper's fetch is recorded in the ledger as a run records it.
	lc := &pipeline.Lifecycle{Ledger: f.Store}
	decl := (&Stage{}).Declare()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				item := inputs[j.i]
				if id, err := arxiv.Parse(item); err == nil {
					item = record.Key(id)
				}
				lc.Track(ctx, pipeline.Func{Decl: decl, Run: func(ctx context.Context, _ string) (string, error) {
					results[j.i] = f.Fetch(ctx, inputs[j.i])
					return results[j.i].outcome()
				}}, item)
				if onDone != nil {
					onDone(results[j.i])
				}
			}
		}()
	}
	var dups []int
	for i, in := range inputs {
		if id, err := arxiv.Parse(in); err == nil {
			if _, ok := first[record.Key(id)]; ok {
				dups = append(dups, i)
				continue
			}
			first[record.Key(id)] = i
		}
		if ctx.Err() != nil {
			results[i] = Result{Input: in, Outcome: Failed, Err: fmt.Errorf("fetch %s: %w", in, ctx.Err())}
			continue
		}
		jobs <- job{i}
	}
	close(jobs)
	wg.Wait()
	for _, i := range dups {
		id, _ := arxiv.Parse(inputs[i])
		r := results[first[record.Key(id)]]
		r.Input = inputs[i]
		results[i] = r
	}
	return results
}

// Summary counts results by outcome and source.
type Summary struct {
	Fetched, Archived, Stored, Missing, Failed int
	BySource                                   map[string]int
}

// Summarize counts results.
func Summarize(results []Result) Summary {
	s := Summary{BySource: map[string]int{}}
	for _, r := range results {
		switch r.Outcome {
		case Fetched:
			s.Fetched++
			s.BySource[r.Source]++
		case Archived:
			s.Archived++
		case Stored:
			s.Stored++
		case Missing:
			s.Missing++
		default:
			s.Failed++
		}
	}
	return s
}

func (s Summary) String() string {
	var src []string
	for _, k := range []string{record.SourceArxiv, record.SourceAr5iv} {
		if n := s.BySource[k]; n > 0 {
			src = append(src, k+" "+strconv.Itoa(n))
		}
	}
	out := fmt.Sprintf("fetched %d", s.Fetched)
	if len(src) > 0 {
		out += " (" + strings.Join(src, ", ") + ")"
	}
	if s.Archived > 0 {
		out += fmt.Sprintf(", from archives %d", s.Archived)
	}
	return out + fmt.Sprintf(", already stored %d, no HTML %d, failed %d", s.Stored, s.Missing, s.Failed)
}
