// Package pdfs is the pipeline stage that gives a target's sources
// without an arXiv page their full text from open-access PDFs: for each
// source that has no arXiv ID, or whose arXiv page the sources stage found
// missing, it derives the PDF's candidate URLs from the Semantic Scholar
// records citegraph stored (openAccessPdf, the ACL Anthology ID), downloads
// the first that yields a PDF through a Fetcher that enforces the safety
// rules (package oapdf), converts it with a GROBID service (package
// grobid) and parses the TEI into a Document (package tei).
//
// Everything is stored under the paper's own item, as its cards are: the
// PDF as downloaded (record.PDFFiles, content-addressed by the store), the
// TEI as GROBID sent it (record.TEIFiles), the Document
// (record.PDFDocuments) and the outcome with the candidates and their
// licences (record.PDFOutcomes).
// A later run reuses each step: a stored TEI is parsed again without
// GROBID, a stored PDF converted again without downloading it.
package pdfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/groundwork/curate/client/grobid"
	"github.com/groundwork/curate/client/oapdf"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/keylock"
	"github.com/groundwork/curate/internal/membudget"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/parse/tei"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// Name is the stage's name in the ledger and the stage table.
const Name = "pdfs"

// DefaultConcurrency bounds the sources of one target worked on at once;
// the Fetcher paces each host and the GROBID service caps conversions
// below it.
const DefaultConcurrency = 4

// maxAttempts is how many failed attempts in a row a paper gets before a
// failure that may pass is treated as lasting, so a host that is always
// down costs one try per retry interval, not one per run.
const maxAttempts = 3

// Fetcher downloads a PDF under the safety rules (*oapdf.Fetcher).
type Fetcher interface {
	Fetch(ctx context.Context, url string) (*oapdf.PDF, error)
}

// ArxivFetcher downloads the PDF of an arXiv paper through the arXiv
// service, so that arXiv is paced as one host whether curate asks it for
// a page or a PDF.
type ArxivFetcher interface {
	PDF(ctx context.Context, id string) (*oapdf.PDF, error)
}

// Converter converts a PDF into TEI (*grobid.Client).
type Converter interface {
	ProcessFulltext(ctx context.Context, name string, pdf []byte) ([]byte, error)
}

// Source is a source of a target, as the classify stage selected it.
type Source struct {
	Key       string // the reference's key in the target, echoed in the Result
	ArxivID   string // "" when it has none
	S2PaperID string
	Title     string
	// Version, when set, is the arXiv version to read (the knowledge
	// cut's pin, whose page arXiv does not have): arXiv's PDF of that
	// version alone is the candidate, and everything is stored under the
	// version's own item (record.VersionItem).
	Version int
}

// Stage converts the open-access PDFs of targets' sources. A Stage is one
// run's: a paper whose download failed in a way that may pass is tried
// once per Stage, however many targets cite it. Its methods are safe for
// concurrent use; a Stage must not be copied after first use.
type Stage struct {
	Store   *store.Store
	Fetcher Fetcher
	// Arxiv, when set, downloads the PDFs of arXiv (a paper's own arXiv
	// ID, or a candidate URL on arxiv.org); without it those go through
	// Fetcher like any URL.
	Arxiv     ArxivFetcher
	Converter Converter
	Log       *slog.Logger
	// RetryAfter is how long a paper whose PDF full text could not be had
	// is not asked about again (0 or negative: every run asks).
	RetryAfter time.Duration
	// Refresh asks again for papers recorded without PDF full text, the
	// retry interval notwithstanding.
	Refresh bool
	// Concurrency bounds the sources of one target at once
	// (DefaultConcurrency when 0).
	Concurrency int
	// ParseBudget, when set, bounds the memory the parses of all the
	// goroutines sharing it hold at once (each weighs tei.Cost of its
	// TEI); nil bounds nothing.
	ParseBudget *membudget.Budget

	mu sync.Mutex
	// locks serialize work on one paper, so concurrent targets sharing a
	// source download and convert it once: the second finds the first's
	// Document.
	locks keylock.Locks
	// tried holds the papers this Stage (one run) attempted: a failure
	// that may pass is tried again by the next run, not by the next
	// target citing the same paper.
	tried map[string]bool
}

func (s *Stage) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// What happened to one source (PaperResult.Outcome).
const (
	// NotNeeded: the source has its arXiv page, or the sources stage has
	// not yet looked for it.
	NotNeeded = "not_needed"
	// Reused: the stored Document, or the stored outcome within the retry
	// interval, stands; nothing was asked.
	Reused = "reused"
	// Converted: a Document was made now (from a download, a stored PDF
	// or a stored TEI).
	Converted = "converted"
	// None: no PDF full text for now (record.PDFNone).
	None = "none"
	// Failed: the attempt failed and is tried again (record.PDFFailed).
	Failed = "failed"
)

// PaperResult is the outcome for one source.
type PaperResult struct {
	Key     string // the source's ref key
	Paper   string // its store item ("" when it has none)
	Outcome string
	Reason  string
	// Requested says whether a download or conversion was asked for.
	Requested bool
}

// Result is the outcome for a target.
type Result struct {
	Target  string
	Sources []PaperResult
	// Counts by Outcome.
	Converted, Reused, None, Failed, NotNeeded int
	// Requested counts the sources a request was made for.
	Requested int
}

// ProcessTarget makes the PDF Documents of the target's sources that lack
// an arXiv page. A source whose PDF cannot be had is recorded and left to
// its abstract; the error is for what must fail the target so that the
// next run tries again: the GROBID service busy or unreachable, a store
// that cannot record, a cancelled context.
func (s *Stage) ProcessTarget(ctx context.Context, targetKey string, sources []Source) (*Result, error) {
	papers, err := s2Papers(ctx, s.Store, targetKey)
	if err != nil {
		return nil, fmt.Errorf("pdfs %s: %w", targetKey, err)
	}
	res := &Result{Target: targetKey, Sources: make([]PaperResult, len(sources))}
	errs := make([]error, len(sources))
	n := s.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, src := range sources {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			res.Sources[i], errs[i] = s.source(ctx, src, papers[src.S2PaperID])
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pdfs %s: %w", targetKey, err)
	}
	for _, r := range res.Sources {
		switch r.Outcome {
		case Converted:
			res.Converted++
		case Reused:
			res.Reused++
		case None:
			res.None++
		case Failed:
			res.Failed++
		case NotNeeded:
			res.NotNeeded++
		}
		if r.Requested {
			res.Requested++
		}
	}
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("pdfs %s: %w", targetKey, err)
	}
	s.log().Debug("pdfs of target", "target", targetKey, "converted", res.Converted, "reused", res.Reused,
		"none", res.None, "failed", res.Failed, "not_needed", res.NotNeeded)
	return res, nil
}

// s2Papers returns what Semantic Scholar said of the target's cited
// papers, by paper ID: the reference edge's record, with the fields it
// lacks taken from the batch answer that filled it.
func s2Papers(ctx context.Context, st *store.Store, targetKey string) (map[string]*record.ScholarPaper, error) {
	out := map[string]*record.ScholarPaper{}
	refs, ok, err := record.S2References.Lookup(ctx, st, targetKey)
	if err != nil || !ok || refs.List == nil {
		return out, err // no edges: no candidates
	}
	filled, _, err := record.S2Batches.Lookup(ctx, st, targetKey)
	if err != nil {
		return nil, err
	}
	for i := range refs.List.Edges {
		p := refs.List.Edges[i].CitedPaper
		if p.PaperID == "" {
			continue
		}
		if filled != nil {
			if b := (*filled)[p.PaperID]; b != nil {
				if p.OpenAccessPDF == nil || p.OpenAccessPDF.URL == "" && b.OpenAccessPDF != nil {
					p.OpenAccessPDF = b.OpenAccessPDF
				}
				if p.ExternalIDs == nil {
					p.ExternalIDs = b.ExternalIDs
				}
				// The record's metadata, to correct GROBID's (reconcile).
				if p.Title == "" {
					p.Title = b.Title
				}
				if len(p.Authors) == 0 {
					p.Authors = b.Authors
				}
				if p.Abstract == nil || *p.Abstract == "" {
					p.Abstract = b.Abstract
				}
			}
		}
		out[p.PaperID] = &p
	}
	return out, nil
}

// OriginArxiv is the Origin of the candidate arXiv's own PDF of a paper
// with an arXiv ID; OriginArxivVersion that of one version of it.
const (
	OriginArxiv        = "arxiv"
	OriginArxivVersion = "arxiv-version"
)

// candidates returns where a source's PDF may come from: for a paper on
// arXiv, arXiv's PDF first (S2's openAccessPdf usually names it too);
// then the ACL Anthology's and S2's (oapdf.Candidates).
func candidates(src Source, p *record.ScholarPaper) []oapdf.Candidate {
	id, err := arxiv.Parse(strings.TrimSpace(src.ArxivID))
	if err == nil && src.Version > 0 {
		// One version: the other candidates are of no stated one.
		return []oapdf.Candidate{{URL: "https://arxiv.org/pdf/" + record.VersionItem(record.Key(id), src.Version), Origin: OriginArxivVersion}}
	}
	cands := oapdf.Candidates(p)
	if err != nil {
		return cands
	}
	out := []oapdf.Candidate{{URL: "https://arxiv.org/pdf/" + record.Key(id), Origin: OriginArxiv}}
	for _, c := range cands {
		if arxivPDF(c.URL) == record.Key(id) {
			out[0].Status, out[0].License = c.Status, c.License
			continue
		}
		out = append(out, c)
	}
	return out
}

// arxivPDF returns the versionless arXiv ID of a URL of an arXiv PDF
// (https://arxiv.org/pdf/2401.00001v2, export.arxiv.org/pdf/hep-th/9901001.pdf),
// "" for any other URL.
func arxivPDF(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.User != nil {
		return ""
	}
	// The scheme's default port is no port (arxiv.org:443 is arXiv, to be
	// paced as arXiv); another port is some other service.
	switch httpx.HostKey(u) {
	case "arxiv.org", "www.arxiv.org", "export.arxiv.org":
	default:
		return ""
	}
	rest, ok := strings.CutPrefix(u.Path, "/pdf/")
	if !ok {
		return ""
	}
	id, err := arxiv.Parse(strings.TrimSuffix(rest, ".pdf"))
	if err != nil {
		return ""
	}
	return record.Key(id)
}

// fetch downloads one candidate: arXiv's PDFs through the arXiv service,
// the rest through the Fetcher and its rules.
func (s *Stage) fetch(ctx context.Context, c *record.PDFCandidate) (*oapdf.PDF, error) {
	if id := arxivPDF(c.URL); id != "" && s.Arxiv != nil {
		if c.Origin == OriginArxivVersion {
			id = path.Base(c.URL) // the version asked for
		}
		return s.Arxiv.PDF(ctx, id)
	}
	if s.Fetcher == nil {
		return nil, errors.New("no PDF fetcher configured")
	}
	return s.Fetcher.Fetch(ctx, c.URL)
}

// source works on one source, whose Semantic Scholar record is rec (nil
// when citegraph has none); the error fails the target.
func (s *Stage) source(ctx context.Context, src Source, rec *record.ScholarPaper) (PaperResult, error) {
	cands := candidates(src, rec)
	res := PaperResult{Key: src.Key, Outcome: NotNeeded}
	items := record.PaperItems(src.ArxivID, src.S2PaperID, src.Title)
	if len(items) == 0 {
		res.Reason = "no arXiv ID, Semantic Scholar ID or title to identify the paper"
		return res, nil
	}
	item := items[0]
	if src.Version > 0 {
		item = record.VersionItem(item, src.Version)
	}
	res.Paper = item
	defer s.locks.Lock(item)()

	recs, err := s.Store.Records(ctx, item)
	if err != nil {
		return res, err
	}
	has := map[string]bool{}
	for _, r := range recs {
		has[r.Kind] = true
	}
	// A Document whose blob is lost (the store reads it as absent) is
	// made again from the TEI or the PDF, or asked for again.
	if has[record.PDFDocuments.Name()] {
		ok, err := record.PDFDocuments.Has(ctx, s.Store, item)
		if err != nil {
			return res, err
		}
		has[record.PDFDocuments.Name()] = ok
	}
	_, arxivErr := arxiv.Parse(strings.TrimSpace(src.ArxivID))
	switch {
	case has[record.Documents.Name()]:
		res.Reason = "it has its arXiv page"
		return res, nil
	case arxivErr == nil && !has[record.NoHTMLs.Name()]:
		res.Reason = "its arXiv page has not been looked for (the sources stage fetches it)"
		return res, nil
	case has[record.PDFDocuments.Name()]:
		res.Outcome = Reused
		return res, nil
	}
	prev, _, err := record.PDFOutcomes.Lookup(ctx, s.Store, item)
	if err != nil {
		return res, err
	}
	p := &paper{s: s, item: item, prev: prev, rec: rec, out: &record.PDFOutcome{Paper: item, Candidates: toRecord(cands)}}
	if prev != nil {
		p.out.Attempts = prev.Attempts
	}
	switch {
	case prev != nil && prev.Status == record.PDFFailed && s.triedNow(item):
		res.Outcome, res.Reason = Reused, prev.Reason
		return res, nil
	case s.standing(prev, p.out.Candidates):
		res.Outcome, res.Reason = Reused, prev.Reason
		return res, nil
	case has[record.TEIFiles.Name()]:
		err = p.fromTEI(ctx)
	case has[record.PDFFiles.Name()]:
		err = p.fromPDF(ctx)
	default:
		err = p.download(ctx)
	}
	// A stored TEI or PDF whose blob is lost reads as absent: the PDF is
	// converted again, or downloaded again.
	if errors.Is(err, store.ErrNotFound) && has[record.TEIFiles.Name()] && has[record.PDFFiles.Name()] {
		err = p.fromPDF(ctx)
	}
	if errors.Is(err, store.ErrNotFound) {
		err = p.download(ctx)
	}
	res.Requested = p.requested
	if p.requested {
		s.markTried(item)
	}
	if err != nil {
		// The outcome is not recorded: nothing is known of the paper that
		// the next run should keep.
		res.Outcome, res.Reason = Failed, err.Error()
		return res, err
	}
	p.out.CheckedAt = time.Now().UTC()
	if _, err := record.PDFOutcomes.Put(ctx, s.Store, item, p.out, map[string]string{"status": p.out.Status}); err != nil {
		return res, err
	}
	res.Reason = p.out.Reason
	switch p.out.Status {
	case record.PDFConverted:
		res.Outcome = Converted
	case record.PDFNone:
		res.Outcome = None
	default:
		res.Outcome = Failed
	}
	return res, nil
}

// ArxivVersion makes the Document of one version of an arXiv paper (id,
// with its version) from arXiv's PDF of that version through GROBID,
// stored under the version's own item (record.VersionItem) as a pinned
// source's is: what a target is read from at v1 when arXiv has no HTML
// for its v1 (the fetch stage recorded that under the same item). The
// error says why there is none.
func (s *Stage) ArxivVersion(ctx context.Context, id arxiv.ID) (*record.Document, error) {
	if id.Version < 1 {
		return nil, fmt.Errorf("pdf of %s: no version given", id)
	}
	r, err := s.source(ctx, Source{Key: id.String(), ArxivID: record.Key(id), Version: id.Version}, nil)
	if err != nil {
		return nil, fmt.Errorf("pdf of %s: %w", id, err)
	}
	doc, ok, err := record.PDFDocuments.Lookup(ctx, s.Store, r.Paper)
	switch {
	case err != nil:
		return nil, fmt.Errorf("pdf of %s: %w", id, err)
	case !ok:
		return nil, fmt.Errorf("no PDF full text of %s: %s", id, r.Reason)
	}
	return doc, nil
}

// VersionAsks says what making the Document of one version of an arXiv
// paper from its PDF (ArxivVersion, or a pinned source's) would still
// ask, by what its item (record.VersionItem) holds: download, the PDF of
// arXiv (nothing stored of it); convert, GROBID (no TEI stored). A
// Document or an outcome that stands (none within the retry interval)
// asks nothing. For the estimate: it reads the store alone.
func (s *Stage) VersionAsks(ctx context.Context, item string) (download, convert bool, err error) {
	recs, err := s.Store.Records(ctx, item)
	if err != nil {
		return false, false, err
	}
	has := map[string]bool{}
	for _, r := range recs {
		has[r.Kind] = true
	}
	switch {
	case has[record.Documents.Name()], has[record.PDFDocuments.Name()], has[record.TEIFiles.Name()]:
		return false, false, nil
	}
	prev, _, err := record.PDFOutcomes.Lookup(ctx, s.Store, item)
	if err != nil {
		return false, false, err
	}
	id, err := arxiv.Parse(item)
	if err != nil || id.Version < 1 {
		return false, false, fmt.Errorf("pdf of %s: no version given", item)
	}
	cands := toRecord(candidates(Source{ArxivID: record.Key(id), Version: id.Version}, nil))
	if s.standing(prev, cands) {
		return false, false, nil
	}
	return !has[record.PDFFiles.Name()], true, nil
}

// triedNow reports whether this run attempted item already.
func (s *Stage) triedNow(item string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tried[item]
}

func (s *Stage) markTried(item string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tried == nil {
		s.tried = map[string]bool{}
	}
	s.tried[item] = true
}

// standing reports whether the stored outcome stands: no PDF full text,
// checked within the retry interval, for the same candidates.
func (s *Stage) standing(prev *record.PDFOutcome, cands []record.PDFCandidate) bool {
	if prev == nil || s.Refresh || prev.Status == record.PDFConverted {
		return false
	}
	if prev.Status == record.PDFFailed && prev.Attempts < maxAttempts {
		return false
	}
	if s.RetryAfter <= 0 || time.Since(prev.CheckedAt) > s.RetryAfter {
		return false
	}
	return slices.EqualFunc(prev.Candidates, cands, func(a, b record.PDFCandidate) bool { return a.URL == b.URL })
}

func toRecord(cands []oapdf.Candidate) []record.PDFCandidate {
	out := make([]record.PDFCandidate, 0, len(cands))
	for _, c := range cands {
		out = append(out, record.PDFCandidate{URL: c.URL, Origin: c.Origin, Status: c.Status, License: c.License})
	}
	return out
}

// paper is the work on one paper's PDF full text.
type paper struct {
	s         *Stage
	item      string
	rec       *record.ScholarPaper // the paper's Semantic Scholar record, or nil
	prev      *record.PDFOutcome
	out       *record.PDFOutcome
	requested bool
}

// none records that there is no PDF full text for now.
func (p *paper) none(format string, args ...any) {
	p.out.Status, p.out.Reason = record.PDFNone, fmt.Sprintf(format, args...)
}

// download tries the candidates in order until one gives a PDF, then
// converts it.
func (p *paper) download(ctx context.Context) error {
	if len(p.out.Candidates) == 0 {
		p.none("no open-access PDF: Semantic Scholar lists none and the paper has no ACL Anthology ID")
		return nil
	}
	lasting := true
	for i := range p.out.Candidates {
		c := &p.out.Candidates[i]
		p.requested = true
		pdf, err := p.s.fetch(ctx, c)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.Error = err.Error()
			lasting = lasting && refused(err)
			p.s.log().Info("no PDF from this candidate", "paper", p.item, "url", c.URL, "err", err)
			continue
		}
		meta := map[string]string{
			"url": pdf.URL, "final_url": pdf.FinalURL, "origin": c.Origin, "license": c.License,
			"oa_status": c.Status, "content_type": pdf.ContentType, "sha256": pdf.SHA256,
		}
		if _, err := record.PDFFiles.Put(ctx, p.s.Store, p.item, pdf.Body, meta); err != nil {
			return err
		}
		p.out.URL, p.out.FinalURL, p.out.SHA256, p.out.License = pdf.URL, pdf.FinalURL, pdf.SHA256, c.License
		return p.convert(ctx, pdf.Body, pdf.FinalURL)
	}
	p.out.Attempts++
	var why []string
	for _, c := range p.out.Candidates {
		why = append(why, c.Error)
	}
	reason := "no candidate gave a PDF: " + strings.Join(why, "; ")
	if lasting || p.out.Attempts >= maxAttempts {
		p.none("%s", reason)
		return nil
	}
	p.out.Status, p.out.Reason = record.PDFFailed, reason
	return nil
}

// refused reports whether a download failed for a reason that lasts: the
// URL or host is refused by the rules, the answer is no PDF or too
// large, robots.txt disallows it, or the host answered a final status.
// A robots.txt that could not be read may answer next time.
func refused(err error) bool {
	if errors.Is(err, oapdf.ErrRobotsUnreachable) && !errors.Is(err, httpx.ErrPolicy) {
		return false
	}
	for _, e := range []error{oapdf.ErrURL, oapdf.ErrHostNotAllowed, oapdf.ErrNotPDF, oapdf.ErrTooLarge,
		oapdf.ErrRobots, oapdf.ErrStatus, httpx.ErrPolicy} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// fromPDF converts the stored PDF again (a TEI was never stored).
func (p *paper) fromPDF(ctx context.Context) error {
	body, rec, err := record.PDFFiles.Get(ctx, p.s.Store, p.item)
	if err != nil {
		return err
	}
	p.out.URL, p.out.FinalURL, p.out.SHA256, p.out.License = rec.Meta["url"], rec.Meta["final_url"], rec.Meta["sha256"], rec.Meta["license"]
	if p.out.SHA256 == "" {
		p.out.SHA256 = string(rec.Blob)
	}
	return p.convert(ctx, body, p.out.FinalURL)
}

// convert sends the PDF to GROBID and stores the TEI as it came.
func (p *paper) convert(ctx context.Context, pdf []byte, url string) error {
	if p.s.Converter == nil {
		return errors.New("no GROBID service configured")
	}
	p.requested = true
	teiXML, err := p.s.Converter.ProcessFulltext(ctx, cmpOr(url, p.item), pdf)
	switch {
	case errors.Is(err, grobid.ErrNoContent), errors.Is(err, grobid.ErrBadRequest):
		// This PDF gives nothing; asking again gives nothing either.
		p.none("%v", err)
		return nil
	case errors.Is(err, grobid.ErrConversion):
		// A 500 is a broken PDF as often as a timeout or an engine out of
		// memory: a failed attempt, converted again from the stored PDF
		// next run, until maxAttempts.
		p.out.Attempts++
		if p.out.Attempts >= maxAttempts {
			p.none("%v (after %d attempts)", err, p.out.Attempts)
			return nil
		}
		p.out.Status, p.out.Reason = record.PDFFailed, err.Error()
		return nil
	case err != nil:
		return err
	}
	meta := map[string]string{"pdf_sha256": p.out.SHA256, "url": url}
	if _, err := record.TEIFiles.Put(ctx, p.s.Store, p.item, teiXML, meta); err != nil {
		return err
	}
	return p.parse(ctx, teiXML, url)
}

// fromTEI parses the stored TEI again (no Document was stored, or it was
// lost).
func (p *paper) fromTEI(ctx context.Context) error {
	data, rec, err := record.TEIFiles.Get(ctx, p.s.Store, p.item)
	if err != nil {
		return err
	}
	if p.prev != nil {
		p.out.URL, p.out.FinalURL, p.out.SHA256, p.out.License = p.prev.URL, p.prev.FinalURL, p.prev.SHA256, p.prev.License
	}
	p.out.SHA256 = cmpOr(p.out.SHA256, rec.Meta["pdf_sha256"])
	return p.parse(ctx, data, cmpOr(rec.Meta["url"], p.out.FinalURL))
}

// parse makes the Document of the TEI and stores it.
func (p *paper) parse(ctx context.Context, data []byte, url string) error {
	release, err := p.s.ParseBudget.Acquire(ctx, tei.Cost(data))
	if err != nil {
		return err
	}
	doc, err := tei.Parse(data, tei.Options{ID: p.item, URL: url})
	release()
	if err != nil {
		p.none("%v", err)
		return nil
	}
	reconcile(doc, p.rec)
	meta := map[string]string{"source": doc.Source, "served_by": doc.ServedBy, "converter_version": doc.ConverterVersion, "url": url}
	if _, err := record.PDFDocuments.Put(ctx, p.s.Store, p.item, doc, meta); err != nil {
		return err
	}
	p.out.Status, p.out.Reason, p.out.Attempts = record.PDFConverted, "", 0
	p.out.Converter, p.out.ConverterVersion = doc.ServedBy, doc.ConverterVersion
	if doc.Conversion.Empty {
		p.out.Reason = "the TEI has no content"
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
