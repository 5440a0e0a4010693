package app

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/groundwork/curate/client/grobid"
	"github.com/groundwork/curate/client/oapdf"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/robots"
	"github.com/groundwork/curate/pdfs"
)

// buildPDFs makes the pdfs stage: the GROBID client over svc and the PDF
// downloader, whose hosts are services of a client of their own (each
// paced, its robots.txt obeyed: read at the host's first request and
// stored like arXiv's, its Crawl-delay setting the interval when longer
// than --pdf-interval) with a dialer that reaches only public addresses.
func (a *App) buildPDFs(svc *httpx.Service, retries int) error {
	pc := a.cfg.PDF
	gc, err := grobid.New(svc, grobid.Options{IncludeRawCitations: true, SegmentSentences: true, Logger: a.Log, Stop: a.cfg.Drain})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	ua := httpx.UserAgent(a.cfg.Version, a.cfg.Net.Mailto)
	rb, err := robots.New(robots.Config{UserAgent: ua, Cache: robotsStore{a.Store}, TTL: a.cfg.Net.RobotsTTL, Logger: a.Log})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	f, err := oapdf.New(oapdf.Config{
		UserAgent: ua,
		Hosts:     pc.Hosts, MaxSize: pc.MaxSize, Interval: pc.Interval, RetryMax: retries,
		Logger: a.Log, Resolve: pc.Resolve, AllowAddr: pc.AllowAddr, Robots: rb, Secrets: a.secrets(), Stop: a.cfg.Drain,
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	a.Grobid, a.PDFFetcher, a.pdfRobots = gc, f, rb
	arxiv, _ := a.HTTP.Service(fetch.ServiceArxiv)
	a.pdfStage = &pdfs.Stage{Store: a.Store, Fetcher: f, Converter: gc, Log: a.Log,
		Arxiv:      arxivPDFs{svc: arxiv, maxSize: cmp.Or(pc.MaxSize, oapdf.DefaultMaxSize)},
		RetryAfter: a.cfg.Net.MissingTTL, Refresh: a.cfg.Stages.Refresh, Concurrency: cmp.Or(pc.Capacity, grobid.DefaultCapacity),
		ParseBudget: a.parseBudget}
	return nil
}

// CheckGrobid asks the GROBID service whether it is alive, as a run does
// before its first conversion, and logs its version. A service that is
// down or is no GROBID is ErrCannotRun, before anything else is asked.
func (a *App) CheckGrobid(ctx context.Context) error {
	if a.Grobid == nil {
		return nil
	}
	if err := a.Grobid.Alive(ctx); err != nil {
		if nh, ok := a.unreachable(err); ok {
			return offlineError(nh)
		}
		return Fail(ErrCannotRun, fmt.Errorf("%w; start the service (docker run --rm --init --ulimit core=0 -p 8070:8070 grobid/grobid:0.8.1) or run without --grobid", err))
	}
	v, err := a.Grobid.Version(ctx)
	if err != nil {
		a.Log.Warn("the GROBID service does not say its version", "err", err)
		return nil
	}
	a.Log.Info("GROBID service is alive", "base", a.cfg.PDF.GrobidBase, "version", v)
	return nil
}

// arxivPDFs downloads arXiv's PDFs through the arXiv service, which paces
// them with the pages (one connection, --arxiv-interval). The URL is
// made from the configured base and an arXiv ID, never taken from remote
// data, so it needs none of oapdf's address rules; the answer is checked
// as oapdf checks one.
type arxivPDFs struct {
	svc     *httpx.Service
	maxSize int64
}

func (a arxivPDFs) PDF(ctx context.Context, id string) (*oapdf.PDF, error) {
	resp, err := a.svc.Get(ctx, "pdf/"+id, nil)
	if err != nil {
		return nil, fmt.Errorf("arxiv pdf %s: %w", id, err)
	}
	if resp.Status != http.StatusOK {
		return nil, fmt.Errorf("arxiv pdf %s: %w %d", id, oapdf.ErrStatus, resp.Status)
	}
	if int64(len(resp.Body)) > a.maxSize {
		return nil, fmt.Errorf("arxiv pdf %s: %w: %d bytes", id, oapdf.ErrTooLarge, len(resp.Body))
	}
	ctype := resp.Header.Get("Content-Type")
	if err := oapdf.CheckPDF(ctype, resp.Body); err != nil {
		return nil, fmt.Errorf("arxiv pdf %s: %w", id, err)
	}
	sum := sha256.Sum256(resp.Body)
	return &oapdf.PDF{URL: a.svc.BaseURL().JoinPath("pdf", id).String(), FinalURL: resp.URL, ContentType: ctype, Body: resp.Body, SHA256: hex.EncodeToString(sum[:])}, nil
}
