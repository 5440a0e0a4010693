package app

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/groundwork/curate/client/grobid"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/pdfs"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/versions"
)

// The knowledge cut's reads, counted for the estimate. Under the cut a
// target is read at v1 (arxiv.org/html/IDv1; when arXiv has no HTML for
// it, the PDF of v1 through GROBID with --grobid, else the version served
// now), and each source at the version its target's cutoff pins
// (html/IDvN, apart from the version stored when that is another; when
// arXiv has no HTML for it, that version's PDF with --grobid, and the
// version served now). What the store holds, the stored cuts and the
// histories known without a request (the metadata snapshot, the stored
// ones) say which reads are asked. What only a request can tell is taken
// at the rates the store shows: whether arXiv has HTML for an older
// version (its lookups of older versions), whether a source is pinned
// before the version served now (the pins known), and, for the targets
// not classified yet, the requests per new source page of the sources
// whose pins are known.

// pageCount is requests to arXiv (pages and PDFs), ar5iv and GROBID.
type pageCount struct{ arxiv, ar5iv, grobid float64 }

func (p *pageCount) add(q pageCount) {
	p.arxiv += q.arxiv
	p.ar5iv += q.ar5iv
	p.grobid += q.grobid
}

func (p pageCount) times(w float64) pageCount {
	return pageCount{arxiv: p.arxiv * w, ar5iv: p.ar5iv * w, grobid: p.grobid * w}
}

func (p pageCount) rounded() pageCount {
	return pageCount{arxiv: math.Round(p.arxiv), ar5iv: math.Round(p.ar5iv), grobid: math.Round(p.grobid)}
}

func (p pageCount) of(service string) float64 {
	switch service {
	case fetch.ServiceArxiv:
		return p.arxiv
	case fetch.ServiceAr5iv:
		return p.ar5iv
	case grobid.ServiceName:
		return p.grobid
	}
	return 0
}

// cutModel counts the reads of a run under the knowledge cut, by stage:
// fetch (the targets at v1, with the PDFs of v1s without HTML), sources
// (the sources at their pins) and pdfs (the PDFs of pinned versions
// without HTML).
type cutModel struct {
	e *estimator
	c *crawlState
	// hist knows the histories had without a request; nil: none.
	hist *versions.Resolver
	// asks: the run asks OAI-PMH for the histories not known, so the
	// sources of those get pins the estimate does not know.
	asks bool
	// pdf makes the Documents of versions without HTML from their PDFs
	// (--grobid); v1PDF for the targets' v1s, pinPDF for the sources'
	// pinned versions (the pdfs stage is in the run).
	pdf           *pdfs.Stage
	v1PDF, pinPDF bool

	// Rates, for what only a request can tell: the shares of pages arXiv
	// has no HTML for (the version served now, as the estimate's other
	// page counts take it), of older versions it has none for (oldSeen
	// lookups seen; none: lacksNow), of the run's targets with a known
	// history that were revised, and of the known pins of sources those
	// before the version served now and those first published after the
	// cutoff (of pinsKnown; pinsNot more the run learns).
	lacksNow, lacksOld float64
	oldSeen            int
	revised            float64
	olderPins, late    float64
	pinsKnown, pinsNot int

	fetch, sources, pdfs pageCount
	// perNewSeen is the source papers of known pins the requests per
	// new source page are taken from (0: one arXiv request and the ar5iv
	// share, as without the cut).
	perNewSeen int

	known map[string]*record.PaperVersions
	// What was counted so far, and of it what the run's stages ask.
	targetsDone, sourcesDone bool
	counted                  struct{ fetch, sources, pdfs bool }
	// Reads counted, for the notes.
	atV1  int
	atPin float64
	// off is what the generic count says of the same stages' pages, as if
	// each paper were read as served now.
	off pageCount
}

// newCutModel returns the count of the cut's reads, or nil when the cut
// is off. The targets' and the sources' reads are counted when a stage's
// page requests are (pipeline.PerItem: the items, read at v1; PerSource:
// their sources, read at their pins).
func (e *estimator) newCutModel() *cutModel {
	if e.a.cut() == knowledgecut.Off {
		return nil
	}
	return &cutModel{e: e, known: map[string]*record.PaperVersions{}, pdf: e.a.pdfStage}
}

// ready reads, once, what the counts are taken from: the pace of the
// page services, the histories at hand and the rates.
func (m *cutModel) ready(ctx context.Context) error {
	if m.c != nil {
		return nil
	}
	e := m.e
	c, err := e.crawl(ctx)
	if err != nil {
		return err
	}
	m.c = c
	for _, s := range e.a.stages {
		if vs, ok := s.(*versions.Stage); ok && vs.Off == "" {
			if m.hist, err = vs.Histories(ctx); err != nil {
				return err
			}
			m.asks = vs.OAI != nil
		}
	}
	if m.hist == nil {
		e.note("knowledge cut: no version history is known before the run (the metadata snapshot is indexed by the run): the reads at v1 and at pinned versions are counted at the rates the store shows")
	}
	m.v1PDF, m.pinPDF = e.a.pdfStage != nil, e.a.pdfStage != nil
	return m.rates(ctx)
}

// pages is the cut's count of a stage's page requests r (an HTML
// service's): the items' reads at v1 (with the GROBID conversions of
// the v1s without HTML, added to the stage) or their sources' at their
// pins.
func (m *cutModel) pages(ctx context.Context, stage string, r pipeline.Request) (float64, error) {
	if err := m.ready(ctx); err != nil {
		return 0, err
	}
	if r.Count == pipeline.PerSource {
		if err := m.countSources(ctx); err != nil {
			return 0, err
		}
		m.counted.sources = true
		return m.sources.of(r.Service), nil
	}
	if !m.targetsDone {
		if err := m.targets(ctx); err != nil {
			return 0, err
		}
		m.targetsDone = true
		m.counted.fetch = true
		if err := m.e.addRequests(ctx, stage, grobid.ServiceName, m.fetch.grobid); err != nil {
			return 0, err
		}
	}
	return m.fetch.of(r.Service), nil
}

// pinnedPDFs is the cut's count of the PDFs of sources' pinned versions
// without HTML a stage converts (its GROBID requests r), and adds their
// downloads from arXiv to the stage.
func (m *cutModel) pinnedPDFs(ctx context.Context, stage string) (float64, error) {
	if err := m.countSources(ctx); err != nil {
		return 0, err
	}
	if m.counted.pdfs {
		return m.pdfs.grobid, nil
	}
	m.counted.pdfs = true
	return m.pdfs.grobid, m.e.addRequests(ctx, stage, fetch.ServiceArxiv, m.pdfs.arxiv)
}

func (m *cutModel) countSources(ctx context.Context) error {
	if m.sourcesDone {
		return nil
	}
	if err := m.ready(ctx); err != nil {
		return err
	}
	m.sourcesDone = true
	return m.sourcePages(ctx)
}

// history is the paper's history known without a request; nil when none.
func (m *cutModel) history(ctx context.Context, key string) (*record.PaperVersions, error) {
	if h, ok := m.known[key]; ok {
		return h, nil
	}
	var out *record.PaperVersions
	if m.hist != nil {
		v, ok, err := m.hist.Known(ctx, key)
		if err != nil {
			return nil, err
		}
		if ok {
			out = &v
		}
	}
	m.known[key] = out
	return out, nil
}

func latestOf(h *record.PaperVersions) int {
	if h == nil {
		return 0
	}
	l, _ := h.Latest()
	return l.Version
}

// held is what the store holds of a paper under its versionless key.
type held struct {
	stored  bool   // a Document
	version int    // its version (0: its page does not say)
	source  string // the site that served it
	// lacking: arXiv is known to have no HTML for the version served now
	// (its page is ar5iv's, or no site had one).
	lacking bool
	// none: fetching it as served now asks nothing (stored, known to
	// have no HTML anywhere within the missing TTL, or in an archive).
	none bool
	// kept: the version of the text the key held before the target's
	// fetch at v1 replaced it, which fetch keeps under its own item
	// (record.VersionItem): a source pinned there asks nothing.
	kept int
}

// docAt reads the version and site of the Document stored under item,
// from its record's meta (fetch writes both), and whether the item is
// recorded without HTML.
func (m *cutModel) docAt(ctx context.Context, item string) (ok bool, version int, source string, noHTML bool, err error) {
	recs, err := m.e.a.Store.Records(ctx, item)
	if err != nil {
		return false, 0, "", false, err
	}
	for _, r := range recs {
		switch r.Kind {
		case record.Documents.Name():
			ok, source = true, r.Meta["source"]
			version, _ = strconv.Atoi(r.Meta["version"])
		case record.NoHTMLs.Name():
			noHTML = true
		}
	}
	return ok, version, source, noHTML, nil
}

func (m *cutModel) held(ctx context.Context, key string) (held, error) {
	ok, v, src, noHTML, err := m.docAt(ctx, key)
	if err != nil {
		return held{}, err
	}
	h := held{stored: ok, version: v, source: src}
	h.lacking = src == record.SourceAr5iv || !ok && noHTML
	h.none = ok || m.e.a.Fetcher.KnownMissing(ctx, key) || m.c.inArchive != nil && m.c.inArchive(key)
	return h, nil
}

// heldAt reports whether the Document of version v is stored under item,
// its own (record.VersionItem).
func (m *cutModel) heldAt(ctx context.Context, item string, v int) (bool, error) {
	ok, got, _, _, err := m.docAt(ctx, item)
	return ok && got == v, err
}

// lacksServed is the chance arXiv has no HTML for the version of the
// paper served now.
func (m *cutModel) lacksServed(h held) float64 {
	switch {
	case h.lacking:
		return 1
	case h.stored && h.source == record.SourceArxiv:
		return 0
	}
	return m.lacksNow
}

// lacksOlder is the chance arXiv has no HTML for an older version of the
// paper: a paper it has none for now is taken to have had none before.
func (m *cutModel) lacksOlder(h held) float64 {
	if h.lacking {
		return 1
	}
	return m.lacksOld
}

// rates reads the shares the counts take for what only a request can
// tell: older versions arXiv has no HTML for, from the store's lookups
// of them (a version read apart, or a target read at its v1, against
// those found without HTML), of papers whose history is known and whose
// served version arXiv is not known to lack.
func (m *cutModel) rates(ctx context.Context) error {
	m.lacksNow = m.c.ar5ivShare
	st := m.e.a.Store
	docs, err := record.Documents.Items(ctx, st)
	if err != nil {
		return err
	}
	missing, err := record.NoHTMLs.Items(ctx, st)
	if err != nil {
		return err
	}
	hits, misses := 0, 0
	// older reports whether version v of the paper item names is older
	// than the one served now, and arXiv is not known to lack that one.
	older := func(item string, v int) (bool, error) {
		id, err := arxiv.Parse(item)
		if err != nil || v < 1 {
			return false, nil
		}
		key := record.Key(id)
		h, err := m.history(ctx, key)
		if err != nil || h == nil || v >= latestOf(h) {
			return false, err
		}
		now, err := m.held(ctx, key)
		return !now.lacking, err
	}
	step := max(1, len(docs)/(4*docSample))
	for i := 0; i < len(docs); i += step {
		ok, v, src, _, err := m.docAt(ctx, docs[i])
		if err != nil {
			return err
		}
		if !ok || src != record.SourceArxiv {
			continue
		}
		if iv := record.ItemVersion(docs[i]); iv > 0 {
			v = iv
		}
		if o, err := older(docs[i], v); err != nil {
			return err
		} else if o {
			hits++
		}
	}
	step = max(1, len(missing)/(4*docSample))
	for i := 0; i < len(missing); i += step {
		v := record.ItemVersion(missing[i])
		if v == 0 {
			continue
		}
		if o, err := older(missing[i], v); err != nil {
			return err
		} else if o {
			misses++
		}
	}
	m.oldSeen = hits + misses
	if m.oldSeen > 0 {
		m.lacksOld = float64(misses) / float64(m.oldSeen)
		m.e.note("knowledge cut: arXiv has no HTML for %d of the %d older versions the store looked up: %.0f%% of the older versions read are taken to have none", misses, m.oldSeen, 100*m.lacksOld)
	} else {
		m.lacksOld = m.lacksNow
		m.e.note("knowledge cut: no older version looked up yet: arXiv is taken to lack HTML for older versions as often as for the pages fetched so far (%.0f%%)", 100*m.lacksNow)
	}
	// Of the run's targets, those revised.
	knownHist, revised := 0, 0
	for _, k := range m.e.keys {
		h, err := m.history(ctx, k)
		if err != nil {
			return err
		}
		if h != nil {
			knownHist++
			if latestOf(h) > 1 {
				revised++
			}
		}
	}
	if knownHist > 0 {
		m.revised = float64(revised) / float64(knownHist)
	}
	return nil
}

// targets counts the fetch stage's reads of the targets at v1.
func (m *cutModel) targets(ctx context.Context) error {
	for _, k := range m.e.keys {
		id, err := arxiv.Parse(k)
		if err != nil {
			continue
		}
		if id.Version != 0 {
			// Asked at a version: read as given, as without the cut.
			h, err := m.held(ctx, k)
			if err != nil {
				return err
			}
			if !h.none {
				m.fetch.add(pageCount{arxiv: 1, ar5iv: m.lacksServed(h)})
			}
			continue
		}
		n, err := m.target(ctx, k)
		if err != nil {
			return err
		}
		m.fetch.add(n)
	}
	return nil
}

// target counts one target's read at v1 (fetch.Stage under AtV1).
func (m *cutModel) target(ctx context.Context, key string) (pageCount, error) {
	var n pageCount
	now, err := m.held(ctx, key)
	if err != nil {
		return n, err
	}
	if now.stored && now.version == 1 {
		return n, nil // read at v1 already
	}
	v1 := record.VersionItem(key, 1)
	if m.c.inArchive != nil && m.c.inArchive(v1) {
		return n, nil
	}
	if ok, err := m.heldAt(ctx, v1, 1); err != nil || ok {
		return n, err // read apart for a source's pin: copied, not asked
	}
	h, err := m.history(ctx, key)
	if err != nil {
		return n, err
	}
	miss, servedToo := m.v1Miss(now, h)
	if m.e.a.Fetcher.KnownMissingAt(ctx, v1) {
		miss = 1
	} else {
		n.arxiv++
		m.atV1++
	}
	asServed := miss
	if m.v1PDF && miss > 0 {
		download, convert, err := m.pdf.VersionAsks(ctx, v1)
		if err != nil {
			return n, err
		}
		if download || convert {
			// arXiv's PDF of each version is taken to convert.
			n.arxiv += miss * b2f(download)
			n.grobid += miss * b2f(convert)
			asServed = 0
		} else if ok, err := m.pdfHeld(ctx, v1); err != nil {
			return n, err
		} else if ok {
			asServed = 0
		}
	}
	if asServed > 0 && !now.none {
		n.arxiv += asServed
		n.ar5iv += asServed * servedToo
	}
	return n, nil
}

// v1Miss is the chance arXiv has no HTML for a target's v1, whose
// history is h (nil: unknown) and whose versionless key holds now; and
// servedToo, that it has none for the version served now either (taken
// to be nested: a page arXiv lacks now it lacked at v1).
func (m *cutModel) v1Miss(now held, h *record.PaperVersions) (miss, servedToo float64) {
	switch latest := latestOf(h); {
	case latest == 1:
		return m.lacksServed(now), 1
	case latest > 1:
		miss = m.lacksServed(now) + (1-m.lacksServed(now))*m.lacksOlder(now)
	default:
		miss = m.lacksServed(now) + (1-m.lacksServed(now))*m.revised*m.lacksOlder(now)
	}
	if miss > 0 {
		servedToo = math.Min(1, m.lacksServed(now)/miss)
	}
	return miss, servedToo
}

// afterFetch is what a target's versionless key holds once its fetch has
// read it at v1: v1's page, or its PDF's Document (hit); else, arXiv
// having no HTML for v1 (with chance miss), what it held, or the version
// served now (missed).
func (m *cutModel) afterFetch(ctx context.Context, key string, now held) (hit, missed held, miss float64, err error) {
	if now.stored && now.version == 1 {
		return now, now, 0, nil
	}
	h, err := m.history(ctx, key)
	if err != nil {
		return now, now, 0, err
	}
	miss, _ = m.v1Miss(now, h)
	if m.e.a.Fetcher.KnownMissingAt(ctx, record.VersionItem(key, 1)) {
		miss = 1
	}
	if m.v1PDF {
		miss = 0 // arXiv's PDF of v1 is taken to convert
	}
	hit, missed = now, now
	hit.stored, hit.version, hit.none = true, 1, true
	if now.stored && now.version > 1 {
		hit.kept = now.version
	}
	if !now.stored {
		missed.stored, missed.version = true, latestOf(h)
		if m.lacksServed(now) >= 0.5 {
			missed.version = 0 // ar5iv's
		}
	}
	missed.none = true
	return hit, missed, miss, nil
}

// pdfHeld reports whether a Document made from the PDF is stored under
// item.
func (m *cutModel) pdfHeld(ctx context.Context, item string) (bool, error) {
	_, ok, err := record.PDFDocuments.Lookup(ctx, m.e.a.Store, item)
	return ok, err
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// need is what the run's targets need of one source paper: the versions
// read apart or at their pins (with the version served now), whether
// the version served now is read, and the sources whose pins the run
// learns (their histories asked of OAI-PMH).
type need struct {
	pins    map[int]bool
	latest  int
	served  bool
	unknown int
}

// sourcePages counts the sources stage's reads under the cut, and the
// pdfs stage's PDFs of pinned versions without HTML.
func (m *cutModel) sourcePages(ctx context.Context) error {
	needs := map[string]*need{}
	var order []string
	chosen, older, late := 0, 0, 0
	for _, k := range m.e.keys {
		set, err := record.Sources(ctx, m.e.a.Store, k)
		if err != nil {
			continue // not classified yet: extrapolated below
		}
		refs, _ := set.Working(m.e.a.cfg.Stages.IncludeSuspect)
		if refs == nil {
			continue
		}
		cut, _, err := record.KnowledgeCuts.Lookup(ctx, m.e.a.Store, k)
		if err != nil {
			return err
		}
		var cutoff *record.PaperVersions
		if cut == nil || cut.Cutoff.IsZero() {
			if cutoff, err = m.history(ctx, k); err != nil {
				return err
			}
		}
		for _, r := range refs {
			id, err := arxiv.Parse(r.ArxivID)
			if err != nil {
				continue
			}
			key := record.Key(id)
			pin, err := m.pin(ctx, cut, cutoff, r.Key, key)
			if err != nil {
				return err
			}
			n := needs[key]
			if n == nil {
				n = &need{pins: map[int]bool{}}
				needs[key] = n
				order = append(order, key)
			}
			switch {
			case pin != nil:
				chosen++
				n.latest = pin.Latest
				if pin.FirstAfter {
					late++
				} else if pin.Version < pin.Latest {
					older++
				}
				if knowledgecut.Skip(m.mode(), pin) {
					continue
				}
				if v := knowledgecut.Pinned(m.mode(), pin); v > 0 {
					n.pins[v] = true
				} else {
					n.served = true
				}
			case m.asks:
				n.unknown++
			default:
				n.served = true // no history to be had: read as served now
			}
		}
	}
	m.pinsKnown = chosen
	if chosen > 0 {
		m.olderPins, m.late = float64(older)/float64(chosen), float64(late)/float64(chosen)
	}
	// From the known pins: requests per source page, as if none stored.
	var fresh paperReads
	for _, key := range order {
		n := needs[key]
		m.pinsNot += n.unknown
		got, err := m.paper(ctx, key, n, false)
		if err != nil {
			return err
		}
		m.sources.add(got.pages)
		m.pdfs.add(got.pdfs)
		if n.unknown == 0 && !m.e.run[key] {
			empty, err := m.paper(ctx, key, n, true)
			if err != nil {
				return err
			}
			fresh.pages.add(empty.pages)
			fresh.pdfs.add(empty.pdfs)
			m.perNewSeen++
		}
	}
	per := paperReads{pages: pageCount{arxiv: 1, ar5iv: m.lacksNow}}
	if k := float64(m.perNewSeen); k > 0 {
		per.pages = pageCount{arxiv: fresh.pages.arxiv / k, ar5iv: fresh.pages.ar5iv / k}
		per.pdfs = pageCount{arxiv: fresh.pdfs.arxiv / k, grobid: fresh.pdfs.grobid / k}
	}
	// The targets not classified yet: their new source pages, each asking
	// what the known ones ask per page.
	if more := m.e.sources.expectedNew(); more > 0 {
		m.sources.add(pageCount{arxiv: more * per.pages.arxiv, ar5iv: more * per.pages.ar5iv})
		m.pdfs.add(pageCount{arxiv: more * per.pdfs.arxiv, grobid: more * per.pdfs.grobid})
		if m.perNewSeen == 0 {
			m.e.note("knowledge cut: no source's pin is known yet: the new source pages of the targets not classified yet are counted as read once each, as served now (a pin before the version served now, or one without HTML, asks one more)")
		}
	}
	return nil
}

// pin is a source's pin: the stored cut's, else where its history, known
// without a request, stood at the target's cutoff; nil when neither is
// known.
func (m *cutModel) pin(ctx context.Context, cut *record.KnowledgeCut, target *record.PaperVersions, refKey, key string) (*record.Pin, error) {
	if cut != nil {
		if sp, ok := cut.Source(refKey); ok && sp.Pin != nil {
			return sp.Pin, nil
		}
		if !cut.Cutoff.IsZero() {
			h, err := m.history(ctx, key)
			if err != nil || h == nil {
				return nil, err
			}
			p, err := knowledgecut.PinAt(*h, cut.Cutoff)
			if err != nil {
				return nil, nil // the versions stage says why
			}
			return &p, nil
		}
	}
	if target == nil {
		return nil, nil
	}
	cutoff, err := knowledgecut.Cutoff(*target)
	if err != nil {
		return nil, nil
	}
	h, err := m.history(ctx, key)
	if err != nil || h == nil {
		return nil, err
	}
	p, err := knowledgecut.PinAt(*h, cutoff)
	if err != nil {
		return nil, nil
	}
	return &p, nil
}

func (m *cutModel) mode() knowledgecut.Mode { return m.e.a.cut() }

// paperReads is what the reads of one source paper ask: its pages (the
// sources stage) and its pinned versions' PDFs (the pdfs stage).
type paperReads struct{ pages, pdfs pageCount }

// paper counts the reads one source paper needs (fetch.Sources.Do and
// pinned, per target), from what the store holds, or from nothing
// (fresh: the requests per page of a paper new to the store). A paper
// that is a target of the run is taken to be read at v1 first, by its
// own fetch.
func (m *cutModel) paper(ctx context.Context, key string, n *need, fresh bool) (paperReads, error) {
	if fresh {
		return m.reads(ctx, key, n, held{}, true, 1)
	}
	now, err := m.held(ctx, key)
	if err != nil || !m.e.run[key] {
		if err != nil {
			return paperReads{}, err
		}
		return m.reads(ctx, key, n, now, false, 1)
	}
	hit, missed, miss, err := m.afterFetch(ctx, key, now)
	if err != nil {
		return paperReads{}, err
	}
	out, err := m.reads(ctx, key, n, hit, false, 1-miss)
	if err != nil || miss == 0 {
		return out, err
	}
	more, err := m.reads(ctx, key, n, missed, false, miss)
	out.pages.add(more.pages)
	out.pdfs.add(more.pdfs)
	return out, err
}

// reads counts the reads n needs with the paper's key holding now,
// weighed by w (the chance it holds that); fresh: nothing else of the
// paper is stored.
func (m *cutModel) reads(ctx context.Context, key string, n *need, now held, fresh bool, w float64) (paperReads, error) {
	var out paperReads
	if w == 0 {
		return out, nil
	}
	// served is the chance the version served now is read.
	served := b2f(n.served)
	if n.unknown > 0 {
		// Pins the run learns: before the version served now as often as
		// the known ones are (one version more to read), first published
		// after the cutoff as often (nothing to read), else the version
		// served now.
		older := m.olderPins
		out.pages.arxiv += older
		miss := older * m.lacksOlder(now)
		out.pdfs.add(m.pinPDFs(miss, true, true))
		served = 1 - (1-served)*(1-(math.Max(0, 1-older-m.late)+miss))
	}
	for _, v := range slices.Sorted(maps.Keys(n.pins)) {
		latest := v == n.latest
		if v == now.kept {
			continue
		}
		if !fetch.Apart(now.stored, now.version, v, latest) {
			served = 1
			continue
		}
		item := record.VersionItem(key, v)
		var miss float64
		switch {
		case fresh:
			out.pages.arxiv++
			miss = m.lacksOlder(now)
		default:
			if ok, err := m.heldAt(ctx, item, v); err != nil {
				return out, err
			} else if ok || m.c.inArchive != nil && m.c.inArchive(item) {
				continue
			}
			if m.e.a.Fetcher.KnownMissingAt(ctx, item) {
				miss = 1
				break
			}
			out.pages.arxiv++
			m.atPin += w
			miss = m.lacksOlder(now)
		}
		if latest {
			miss = m.lacksServed(now)
		}
		if m.pinPDF && miss > 0 {
			download, convert := true, true
			if !fresh {
				var err error
				if download, convert, err = m.pdf.VersionAsks(ctx, item); err != nil {
					return out, err
				}
			}
			out.pdfs.add(m.pinPDFs(miss, download, convert))
		}
		// Without its page, the version served now is read.
		served = 1 - (1-served)*(1-miss)
	}
	if served > 0 && !now.none {
		out.pages.arxiv += served
		out.pages.ar5iv += served * m.lacksServed(now)
	}
	out.pages = out.pages.times(w)
	out.pdfs = out.pdfs.times(w)
	return out, nil
}

// pinPDFs is the pdfs stage's requests for a pinned version whose page
// arXiv lacks with chance miss.
func (m *cutModel) pinPDFs(miss float64, download, convert bool) pageCount {
	if !m.pinPDF {
		return pageCount{}
	}
	return pageCount{arxiv: miss * b2f(download), grobid: miss * b2f(convert)}
}

// note says what the cut adds to the run.
func (m *cutModel) note() {
	e := m.e
	if !m.counted.fetch && !m.counted.sources && !m.counted.pdfs {
		return // the run reads no page
	}
	// As the services count them: each stage's requests rounded.
	var total pageCount
	for _, c := range []struct {
		n  pageCount
		ok bool
	}{{m.fetch, m.counted.fetch}, {m.sources, m.counted.sources}, {m.pdfs, m.counted.pdfs}} {
		if c.ok {
			total.add(c.n.rounded())
		}
	}
	d := pageCount{arxiv: total.arxiv - m.off.arxiv, ar5iv: total.ar5iv - m.off.ar5iv, grobid: total.grobid}
	if m.atV1 == 0 && math.Round(m.atPin) == 0 && total.arxiv+total.ar5iv+total.grobid == 0 {
		e.note("knowledge cut (%s): every version it reads is stored, or known to have no HTML: nothing more is asked", m.mode())
		return
	}
	from := "no source's pin known"
	if m.pinsKnown > 0 {
		from = fmt.Sprintf("the pins of %d sources known from the stored cuts and the histories at hand", m.pinsKnown)
	}
	if m.pinsNot > 0 {
		from += fmt.Sprintf(", %d learnt by the run (taken to be before the version served now as often as the known, %.0f%%)", m.pinsNot, 100*m.olderPins)
	}
	if u := m.e.sources.unknown; u > 0 && m.perNewSeen > 0 {
		from += fmt.Sprintf(", the sources of %d targets not classified yet asking what the known ask per paper", u)
	}
	per := ""
	if n := len(m.e.keys); n > 0 {
		per = fmt.Sprintf(" (%+.2f per target)", d.arxiv/float64(n))
	}
	e.note("knowledge cut (%s): %d targets read at v1 and %d sources at their pinned version (%s): over reading each paper as served now, %s arXiv%s, %s ar5iv and %s GROBID requests",
		m.mode(), m.atV1, int(math.Round(m.atPin)), from, signed(d.arxiv), per, signed(d.ar5iv), signed(d.grobid))
}

// signed writes a count with its sign.
func signed(x float64) string {
	return fmt.Sprintf("%+d", int(math.Round(x)))
}
