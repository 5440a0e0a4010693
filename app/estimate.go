package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/client/grobid"
	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/internal/estimate"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/internal/robots"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// Figures an estimate assumes when the store cannot say.
const (
	// defaultSourcePages is the arXiv pages of sources a target needs:
	// the recipe's order (50,000 pages for 9,000 targets, the targets'
	// own included).
	defaultSourcePages = 4.5
	// defaultFillIDs is the cited papers per target whose edges lack an
	// abstract, a date or identifiers.
	defaultFillIDs = 10
	// defaultRefs is a target's references, for the classify answer.
	defaultRefs = 40
	// defaultTextBytes is a paper's full text.
	defaultTextBytes = 60_000
	// bytesPerToken: four bytes a token (the stages declare the rest of
	// a request's size, pipeline.Tokens).
	bytesPerToken = 4
	// docSample bounds the Documents decoded for their sizes.
	docSample = 400
	// arxivHost's robots.txt asks every crawler for arxivCrawlDelay; an
	// estimate without the file stored assumes it still does.
	arxivHost       = "arxiv.org"
	arxivCrawlDelay = 15 * time.Second
)

// EstimateOptions configure Estimate.
type EstimateOptions struct {
	// Stages are the per-target stages the run would take (default all).
	Stages []string
}

// Estimate says what a run of the stages over keys would still ask and
// spend, from the store alone: it makes no request (a host's robots.txt
// and the arXiv metadata count only if stored). Requests are counted
// per service and stage from what each target already has; the work of
// targets the store knows nothing of is taken from the averages of those
// it has (sources per target and how often they repeat, ar5iv fallbacks,
// references, LLM tokens per call of the last run), else from stated
// defaults; the notes say which. Under the knowledge cut the page
// requests are those of the reads at v1 and at the sources' pins, with
// the PDFs of versions without HTML (see cutModel). Intervals are the
// effective ones (robots.txt Crawl-delay included, --ignore-crawl-delay
// honoured), and latencies the last run's means.
func (a *App) Estimate(ctx context.Context, keys []string, opt EstimateOptions) (*estimate.Estimate, error) {
	names, _, err := a.stages.Select(opt.Stages)
	if err != nil {
		return nil, err
	}
	stages := a.stages.Named(a.stages.WithNeeds(names...))
	e := &estimator{a: a, keys: keys, run: map[string]bool{}, in: estimate.Input{Targets: len(keys)}}
	for _, k := range keys {
		e.run[k] = true
	}
	if err := e.lastRun(ctx); err != nil {
		return nil, err
	}
	if err := e.scan(ctx); err != nil {
		return nil, err
	}
	e.cut = e.newCutModel()
	// Each stage's declared requests, counted by what its targets have.
	var llmWork []stageRequest
	for _, s := range stages {
		d := s.Declare()
		for _, r := range d.Requests {
			var err error
			switch c, ok := s.(pipeline.Counter); {
			case ok:
				err = e.counted(ctx, d, r, c)
			case r.LLM != nil:
				llmWork = append(llmWork, stageRequest{d, r})
			case r.Count == pipeline.Batched:
				e.batched(ctx, d, r)
			default:
				err = e.requests(ctx, d, r)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	if e.cut != nil {
		e.cut.note()
	}
	e.llm(llmWork)
	out, err := estimate.Compute(e.in)
	if err != nil {
		return nil, err
	}
	out.Notes = append(e.notes, out.Notes...)
	return &out, nil
}

type estimator struct {
	a     *App
	keys  []string
	run   map[string]bool
	in    estimate.Input
	notes []string

	// What each target has (kinds of records), and sums over the store.
	kinds map[string]map[string]bool

	latency map[string]time.Duration // mean per request, last run
	tally   map[string]llm.Tally     // last run's, by stage

	docBytes, docs, refs, graphs int64 // sampled Document sizes, edges
	fillIDs, refLists            int64 // sampled fill IDs per reference list

	sources *sourceModel
	cut     *cutModel   // the knowledge cut's reads; nil when it is off
	pages   *crawlState // once page requests are counted
	feed    *feedCounts // once a batched service is counted
}

// lastRun reads the last run's request latencies and LLM tallies.
func (e *estimator) lastRun(ctx context.Context) error {
	e.latency, e.tally = map[string]time.Duration{}, map[string]llm.Tally{}
	v, err := e.a.Store.Value(ctx, RunSummaryKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var rec struct {
		Requests map[string]httpx.Stats `json:"requests"`
		LLM      []llm.Tally            `json:"llm"`
	}
	if json.Unmarshal(v, &rec) != nil {
		return nil // an older summary: no latencies
	}
	for name, st := range rec.Requests {
		if st.Requests > 0 && st.Elapsed > 0 {
			e.latency[name] = st.Elapsed / time.Duration(st.Requests)
		}
	}
	for _, t := range rec.LLM {
		if t.Calls > 0 && !llm.IsHeuristic(t.Model) {
			old := e.tally[t.Stage]
			old.Stage, old.Model = t.Stage, t.Model
			old.Calls += t.Calls
			old.Spent.PromptTokens += t.Spent.PromptTokens
			old.Spent.CompletionTokens += t.Spent.CompletionTokens
			e.tally[t.Stage] = old
		}
	}
	return nil
}

// scan notes which records each target has, and samples the sizes of
// stored Documents, graphs and reference lists.
func (e *estimator) scan(ctx context.Context) error {
	e.kinds = make(map[string]map[string]bool, len(e.keys))
	step := max(1, len(e.keys)/docSample)
	for i, k := range e.keys {
		recs, err := e.a.Store.Records(ctx, k)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, r := range recs {
			have[r.Kind] = true
		}
		e.kinds[k] = have
		if i%step != 0 {
			continue
		}
		if have[record.Documents.Name()] {
			if d, _, err := record.Documents.Get(ctx, e.a.Store, k); err == nil {
				e.docBytes += int64(len(d.FullText))
				e.docs++
			}
		}
		if have[record.Graphs.Name()] {
			if g, _, err := record.Graphs.Get(ctx, e.a.Store, k); err == nil {
				e.refs += int64(len(g.Edges))
				e.graphs++
			}
		}
		if have[record.S2References.Name()] {
			if r, _, err := record.S2References.Get(ctx, e.a.Store, k); err == nil && r.List != nil {
				e.fillIDs += int64(len(citegraph.FillIDs(r.List)))
				e.refLists++
			}
		}
	}
	var err error
	e.sources, err = newSourceModel(ctx, e.a.Store, e.keys, e.run, e.kinds)
	return err
}

func (e *estimator) note(format string, args ...any) {
	e.notes = append(e.notes, fmt.Sprintf(format, args...))
}

// service adds the requests of a stage to a service, with its pace.
func (e *estimator) service(stage, name string, requests int, interval time.Duration, source string, inFlight int) {
	if requests <= 0 {
		return
	}
	for _, s := range e.in.Services {
		if s.Name == name {
			// One limiter, whichever stage asks: a later stage's
			// requests (the post-knowledge citations after citegraph's
			// feed) go at the pace and concurrency the first one set.
			interval, source, inFlight = s.Interval, s.IntervalSource, s.MaxInFlight
			break
		}
	}
	e.in.Services = append(e.in.Services, estimate.Service{Stage: stage, Name: name, Requests: requests,
		Interval: interval, IntervalSource: source, MaxInFlight: inFlight, Latency: e.latency[name]})
}

// pace is the interval a run would give an HTML service, from the stored
// robots.txt alone, and the request for the file when none is fresh.
func (e *estimator) pace(ctx context.Context, name string) (time.Duration, string, int, error) {
	svc, err := e.a.HTTP.Service(name)
	if err != nil {
		return 0, "", 0, err
	}
	configured := e.a.cfg.Net.ArxivInterval
	pol, ok, err := StoredRobots(ctx, e.a.Store, svc, httpx.UserAgent(e.a.cfg.Version, e.a.cfg.Net.Mailto))
	if err != nil {
		return 0, "", 0, err
	}
	if !ok {
		host := svc.BaseURL().Host
		// Kept as a run keeps them, with httpx's margin.
		if host == arxivHost && !e.a.cfg.Net.IgnoreCrawlDelay && configured < arxivCrawlDelay {
			e.note("%s: no robots.txt stored: its Crawl-delay is taken to be %s, as the file says at the time of writing", host, arxivCrawlDelay)
			return httpx.Paced(arxivCrawlDelay), robots.SourceCrawlDelay + " (assumed)", 1, nil
		}
		e.note("%s: no robots.txt stored, so its Crawl-delay is unknown: the configured %s is used", host, configured)
		return httpx.Paced(configured), robots.SourceConfigured, 1, nil
	}
	p := robots.Effective(svc.BaseURL().Host, configured, pol, e.a.cfg.Net.IgnoreCrawlDelay)
	ttl := e.a.cfg.Net.RobotsTTL
	if ttl == 0 {
		ttl = 24 * time.Hour
	}
	robotsReq := 0
	if time.Since(pol.Fetched) >= ttl {
		robotsReq = 1 // stale: asked again
	}
	return p.Interval, p.Source, robotsReq, nil
}

// stageRequest is a request a stage declares.
type stageRequest struct {
	stage pipeline.Decl
	req   pipeline.Request
}

// crawlState is what the count of page requests learns once: the share
// of pages served by the fallback site, and the archives' index.
type crawlState struct {
	ar5ivShare float64
	inArchive  func(string) bool
	paces      map[string]paced // by service
}

// paced is the pace of an HTML service, as a run would set it.
type paced struct {
	interval  time.Duration
	source    string
	robotsReq int
}

// crawl readies the count of page requests.
func (e *estimator) crawl(ctx context.Context) (*crawlState, error) {
	if e.pages != nil {
		return e.pages, nil
	}
	c := &crawlState{paces: map[string]paced{}}
	var seen int
	c.ar5ivShare, seen = e.ar5ivShare(ctx)
	if seen == 0 {
		e.note("no page fetched yet: each page is taken to be on arXiv (ar5iv is asked only for papers arXiv has no HTML for)")
	}
	if e.a.archives != nil {
		// Indexed for the targets and the sources known so far.
		for id := range e.sources.known {
			e.a.archives.learn(id)
		}
		if err := e.a.archives.open(e.keys); err != nil {
			return nil, err
		}
		c.inArchive = e.a.archives.has
	}
	e.pages = c
	return c, nil
}

// counted adds the requests a stage counts itself (pipeline.Counter).
func (e *estimator) counted(ctx context.Context, d pipeline.Decl, r pipeline.Request, c pipeline.Counter) error {
	svc, err := e.a.HTTP.Service(r.Service)
	if err != nil {
		return nil // not configured: the run does not ask it
	}
	n, notes, err := c.Count(ctx, e.keys, r)
	if err != nil {
		return err
	}
	for _, note := range notes {
		e.note("%s: %s", d.Name, note)
	}
	e.service(d.Name, r.Service, int(math.Round(n*cmp.Or(r.N, 1))), svc.Interval(), robots.SourceConfigured, 1)
	return nil
}

// todo counts the targets a stage still has work for: those without a
// record of the first kind it writes.
func (e *estimator) todo(d pipeline.Decl, skip func(key string) bool) int {
	n := 0
	for _, k := range e.keys {
		if len(d.Writes) > 0 && e.kinds[k][d.Writes[0]] || skip != nil && skip(k) {
			continue
		}
		n++
	}
	return n
}

// requests counts the requests a stage declares per target or per
// source. Pages of the HTML hosts are not asked for papers known to have
// none or held by an archive, and are paced as a run paces them.
func (e *estimator) requests(ctx context.Context, d pipeline.Decl, r pipeline.Request) error {
	per := cmp.Or(r.N, 1)
	svc, err := e.a.HTTP.Service(r.Service)
	if err != nil {
		return nil // not configured: the run does not ask it
	}
	interval, source, inFlight, extra := svc.Interval(), robots.SourceConfigured, 1, 0
	var n float64
	if !slices.Contains(htmlServices, r.Service) {
		switch r.Count {
		case pipeline.PerSource:
			n = e.sources.newCards()
			if e.cut != nil && r.Service == grobid.ServiceName {
				// The PDFs of pinned versions without HTML.
				pinned, err := e.cut.pinnedPDFs(ctx, d.Name)
				if err != nil {
					return err
				}
				n += pinned
			}
		default:
			n = float64(e.todo(d, nil))
		}
		e.service(d.Name, r.Service, int(math.Round(n*per)), interval, source, inFlight)
		return nil
	}
	c, err := e.crawl(ctx)
	if err != nil {
		return err
	}
	p, ok := c.paces[r.Service]
	if !ok {
		if p.interval, p.source, p.robotsReq, err = e.pace(ctx, r.Service); err != nil {
			return err
		}
		c.paces[r.Service] = p
		extra = p.robotsReq // the file is asked once
	}
	interval, source = p.interval, p.source
	switch r.Count {
	case pipeline.PerSource:
		n = e.sources.newPages(c.inArchive)
		if e.sources.assumed {
			e.note("no target has its sources chosen yet: %.1f source pages per target are assumed", defaultSourcePages)
		}
	default:
		n = float64(e.todo(d, func(k string) bool {
			have := e.kinds[k]
			return have[record.NoHTMLs.Name()] && e.a.Fetcher.KnownMissing(ctx, k) || c.inArchive != nil && c.inArchive(k)
		}))
	}
	if r.Fallback {
		n *= c.ar5ivShare
	}
	if e.cut != nil {
		// Under the knowledge cut the items are read at v1 and their
		// sources at their pins, not as served now.
		e.cut.off.add(pageCount{arxiv: n * b2f(r.Service == fetch.ServiceArxiv), ar5iv: n * b2f(r.Service == fetch.ServiceAr5iv)}.rounded())
		if n, err = e.cut.pages(ctx, d.Name, r); err != nil {
			return err
		}
	}
	e.service(d.Name, r.Service, int(math.Round(n*per))+extra, interval, source, inFlight)
	return nil
}

// addRequests adds n requests of a stage to a service the stage does not
// declare (the knowledge cut's PDFs of versions without HTML): arXiv's at
// the pace a run gives it.
func (e *estimator) addRequests(ctx context.Context, stage, service string, n float64) error {
	if n <= 0 {
		return nil
	}
	svc, err := e.a.HTTP.Service(service)
	if err != nil {
		return nil // not configured: the run does not ask it
	}
	interval, source := svc.Interval(), robots.SourceConfigured
	if slices.Contains(htmlServices, service) {
		c, err := e.crawl(ctx)
		if err != nil {
			return err
		}
		p, ok := c.paces[service]
		if !ok {
			if p.interval, p.source, p.robotsReq, err = e.pace(ctx, service); err != nil {
				return err
			}
			c.paces[service] = p
			n += float64(p.robotsReq) // the file is asked once
		}
		interval, source = p.interval, p.source
	}
	e.service(stage, service, int(math.Round(n)), interval, source, 1)
	return nil
}

// ar5ivShare is the share of fetched pages that needed ar5iv (its pages,
// and papers neither site has), from the records of the run's targets and
// the pages the store holds.
func (e *estimator) ar5ivShare(ctx context.Context) (float64, int) {
	items, err := record.Documents.Items(ctx, e.a.Store)
	if err != nil {
		return 0, 0
	}
	step := max(1, len(items)/(4*docSample))
	seen, ar5iv := 0, 0
	for i := 0; i < len(items); i += step {
		if record.ItemVersion(items[i]) > 0 {
			continue // a version read apart (the knowledge cut's), not a paper as served now
		}
		recs, err := e.a.Store.Records(ctx, items[i])
		if err != nil {
			continue
		}
		for _, r := range recs {
			if r.Kind != record.Documents.Name() {
				continue
			}
			switch r.Meta["source"] {
			case record.SourceArxiv:
				seen++
			case record.SourceAr5iv:
				seen++
				ar5iv++
			}
		}
	}
	missing, _ := record.NoHTMLs.Items(ctx, e.a.Store)
	missing = slices.DeleteFunc(missing, func(item string) bool { return record.ItemVersion(item) > 0 })
	seen += len(missing) / step
	ar5iv += len(missing) / step
	if seen == 0 {
		return 0, 0
	}
	return float64(ar5iv) / float64(seen), seen
}

// batched counts the requests of a service whose feed asks for many
// targets at once: Semantic Scholar's batch endpoint and the arXiv API's
// id_list, as the feed makes them.
func (e *estimator) batched(ctx context.Context, d pipeline.Decl, r pipeline.Request) {
	if e.feed == nil {
		e.feed = e.feedCounts(ctx)
	}
	svc, err := e.a.HTTP.Service(r.Service)
	if err != nil {
		return
	}
	switch r.Service {
	case s2.ServiceName:
		e.service(d.Name, r.Service, e.feed.s2, svc.Interval(), robots.SourceConfigured, citegraph.DefaultFeedWorkers)
	case arxivapi.ServiceName:
		e.service(d.Name, r.Service, e.feed.arxivAPI, svc.Interval(), robots.SourceConfigured, 1)
	}
}

// feedCounts are the requests of the citegraph feed.
type feedCounts struct{ s2, arxivAPI int }

func (e *estimator) feedCounts(ctx context.Context) *feedCounts {
	var meta, refs, fill, api int
	for _, k := range e.keys {
		have := e.kinds[k]
		if have[record.NoHTMLs.Name()] && e.a.Fetcher.KnownMissing(ctx, k) {
			continue
		}
		if !have[record.S2Papers.Name()] {
			meta++
		}
		if !have[record.S2References.Name()] {
			refs++
		}
		if !have[record.S2Batches.Name()] {
			fill++
		}
		if !have[record.ArxivMetas.Name()] {
			api++
		}
	}
	perList := float64(defaultFillIDs)
	if e.refLists > 0 {
		perList = float64(e.fillIDs) / float64(e.refLists)
	} else if fill > 0 {
		e.note("no reference list stored: %d cited papers per target are taken to lack an abstract", defaultFillIDs)
	}
	// The feed sends a batch when 500 IDs wait, or when a target waiting
	// for its batch has seen DefaultFlushAfter more targets walked.
	fills := max(ceilDiv(int(math.Round(float64(fill)*perList)), s2.MaxBatch), ceilDiv(refs, citegraph.DefaultFlushAfter))
	if fill == 0 {
		fills = 0
	}
	return &feedCounts{s2: ceilDiv(meta, s2.MaxBatch) + refs + fills, arxivAPI: ceilDiv(api, arxivapi.MaxLookup)}
}

// llm counts the calls and tokens of the stages' LLM requests: a call per
// target without the stage's record (PerItem), or per source card not yet
// written and the target's own (PerSource, Self), each of the declared
// size over the stored papers' text, or the last run's tokens per call;
// and what of their input the provider's prompt cache serves by the rules
// the run follows (see llm.CachePlan): the system prompt the paper tasks
// share, read by every call but the one that writes it, and in sync mode
// a target's paper, written by one stage's call and read by a later one's
// (its classify call and its gold card).
func (e *estimator) llm(work []stageRequest) {
	if len(work) == 0 {
		return
	}
	model := e.a.Model
	if llm.IsHeuristic(model) {
		e.note("the heuristic backend makes no LLM call")
		return
	}
	textTokens := float64(defaultTextBytes) / bytesPerToken
	if e.docs > 0 {
		textTokens = float64(e.docBytes) / float64(e.docs) / bytesPerToken
	}
	refs := float64(defaultRefs)
	if e.graphs > 0 {
		refs = float64(e.refs) / float64(e.graphs)
	}
	cc := e.a.cfg.LLM.Client
	var price, batchPrice *estimate.Price
	if pr, ok := e.a.Prices.Lookup(model); ok {
		price = &estimate.Price{Input: pr.Input, Output: pr.Output, CachedInput: pr.CachedInputPrice(),
			CacheWrite: pr.CacheWritePrice(llm.TTL5m), CacheWrite1h: pr.CacheWritePrice(llm.TTL1h)}
		f := pr.BatchFactor()
		batchPrice = &estimate.Price{Input: price.Input * f, Output: price.Output * f, CachedInput: price.CachedInput * f,
			CacheWrite: price.CacheWrite * f, CacheWrite1h: price.CacheWrite1h * f}
	} else {
		e.note("no price for %s (--price, or the model table: curate models): the LLM cost is not estimated", model)
	}
	if len(e.tally) == 0 {
		e.note("no LLM call in the last run: tokens are estimated from the stored pages' sizes (%d sampled, %.0f tokens of text each) at %d bytes a token", e.docs, textTokens, bytesPerToken)
	}
	syncPlan, batchPlan, shared := e.cachePlans(work, refs, textTokens)
	// What earlier stages of the run wrote to the cache: the shared
	// prompt, the papers of so many targets.
	sharedWritten, paperWriters := false, 0
	for _, w := range work {
		d, r, tok := w.stage, w.req, w.req.LLM
		self := 0
		if r.Count != pipeline.PerSource || r.Self {
			self = e.todo(d, nil)
		}
		calls := self
		if r.Count == pipeline.PerSource {
			calls += int(math.Round(e.sources.newCards()))
		}
		calls = int(math.Round(float64(calls) * cmp.Or(r.N, 1)))
		if calls == 0 {
			continue
		}
		text := math.Min(textTokens, float64(tok.Text))
		in := float64(tok.Fixed) + text + refs*float64(tok.PerReferenceInput)
		if tok.Shared {
			in += shared
		}
		out := float64(tok.Output) + refs*float64(tok.PerReference)
		if t, ok := e.tally[d.Name]; ok && t.Calls > 0 {
			in = float64(t.Spent.PromptTokens) / float64(t.Calls)
			out = float64(t.Spent.CompletionTokens) / float64(t.Calls)
		}
		cacheOf := func(p llm.CachePlan) estimate.CacheTokens {
			if !tok.Shared {
				return estimate.CacheTokens{}
			}
			// The first stage writes the shared prompt; a batch of a
			// later one writes it again (sent ahead).
			reads, writes := 0, 0
			if tok.ReadsPaper {
				reads = min(self, paperWriters)
			}
			if tok.WritesPaper {
				writes = calls
			}
			return fitCache(cacheTokens(p, calls, !sharedWritten || p.Ahead, reads, writes, text), int64(in*float64(calls)))
		}
		e.in.LLM = append(e.in.LLM, estimate.LLM{Stage: d.Name, Model: model, Calls: calls,
			InputTokens: int64(in * float64(calls)), OutputTokens: int64(out * float64(calls)),
			Concurrency: cc.Concurrency, Latency: e.latency[llm.DefaultService],
			RequestsPerMinute: cc.RequestsPerMinute, TokensPerMinute: cc.TokensPerMinute,
			Batch: e.a.cfg.LLM.Mode == llm.ModeBatch, Price: price, BatchPrice: batchPrice,
			Cache: cacheOf(syncPlan), BatchCache: cacheOf(batchPlan)})
		sharedWritten = sharedWritten || tok.Shared
		if tok.WritesPaper {
			paperWriters += calls
		}
	}
	plan, mode := syncPlan, "sync"
	if e.a.cfg.LLM.Mode == llm.ModeBatch {
		plan, mode = batchPlan, "batch"
	}
	switch {
	case plan.Shared:
		how := "; papers are not shared through it"
		if plan.Paper {
			how = "; a target's gold card reads its paper, which its classify call wrote"
		}
		if plan.Ahead {
			how = ", one request of each batch sent ahead to write it" + how
		}
		e.note("prompt cache (%s mode): the system prompt every paper task shares (about %.0f tokens) is read from the cache by every call but the one that writes it%s", mode, shared, how)
	case e.a.Client != nil:
		e.note("prompt cache (%s mode): not counted on (the provider's cache is off, its least prefix is not reached, or its batches are taken cold)", mode)
	}
}

// cachePlans are the provider's prompt cache plans of the run's LLM
// requests in sync and batch mode, from a sample request a stage of the
// table declares (any paper task shows the layout they share), with the
// paper at the least text the run's paper-sharing requests carry; and
// the shared prompt's size.
func (e *estimator) cachePlans(work []stageRequest, refs, textTokens float64) (syncPlan, batchPlan llm.CachePlan, shared float64) {
	if e.a.Client == nil {
		return
	}
	paper := textTokens
	for _, w := range work {
		if t := w.req.LLM; t.ReadsPaper || t.WritesPaper {
			paper = math.Min(paper, float64(t.Text))
		}
	}
	for _, d := range e.a.stages.Decls() {
		for _, r := range d.Requests {
			if r.LLM == nil || r.LLM.Sample == nil {
				continue
			}
			s, err := r.LLM.Sample(int(math.Round(refs)), int(paper))
			sample, ok := s.(llm.Request)
			if err != nil || !ok {
				continue
			}
			syncPlan, batchPlan = e.a.Client.CachePlan(sample, false), e.a.Client.CachePlan(sample, true)
			return syncPlan, batchPlan, float64(syncPlan.SharedTokens)
		}
	}
	return
}

// cacheTokens is what of n calls' input the prompt cache serves and is
// written by plan: the shared prefix read by all but the writer (when the
// stage writes it), papers read by paperReads calls and written by
// paperWrites.
func cacheTokens(p llm.CachePlan, n int, writesShared bool, paperReads, paperWrites int, paper float64) estimate.CacheTokens {
	var c estimate.CacheTokens
	write := func(ttl string, tokens float64) {
		switch ttl {
		case llm.TTL1h:
			c.Write1h += int64(tokens)
		case llm.TTL5m:
			c.Write5m += int64(tokens)
		}
	}
	if p.Shared {
		s := float64(p.SharedTokens)
		readers := float64(n)
		if writesShared {
			readers--
			write(p.SharedWrite, s)
		}
		c.Read += int64(readers * s)
	}
	if p.Paper {
		c.Read += int64(float64(paperReads) * paper)
		write(p.PaperWrite, float64(paperWrites)*paper)
	}
	return c
}

// fitCache keeps cache tokens within the input they are part of.
func fitCache(c estimate.CacheTokens, input int64) estimate.CacheTokens {
	if over := c.Read + c.Write5m + c.Write1h - input; over > 0 {
		c.Read = max(c.Read-over, 0)
	}
	return c
}

func ceilDiv(n, d int) int {
	if n <= 0 {
		return 0
	}
	return (n + d - 1) / d
}

// sourceModel says how many source pages and cards a run still needs.
// Targets whose sources are chosen name them exactly. For the others, the
// chosen targets give the sources per target and how often a source was
// another's already: sources are taken as draws from a pool whose size
// follows from the repeats among the draws seen (d distinct of k: d =
// M(1-e^(-k/M))), so the new pages of K more draws are M(1-e^(-(k+K)/M))
// - d. A pool with no repeat seen is taken as unbounded.
type sourceModel struct {
	known       map[string]bool // source IDs of chosen targets not yet fetched
	stored      int             // distinct source IDs of chosen targets already stored
	draws       int             // source IDs drawn by chosen targets that are not targets of the run
	distinct    int             // distinct among them
	perTarget   float64         // arXiv sources per chosen target, targets of the run left out
	cardsPer    float64         // sources of any kind per arXiv source
	unknown     int             // targets without chosen sources
	assumed     bool            // no chosen target: defaults
	pendingCard map[string]bool // sources of chosen, unsummarized targets
}

func newSourceModel(ctx context.Context, st *store.Store, keys []string, run map[string]bool, kinds map[string]map[string]bool) (*sourceModel, error) {
	m := &sourceModel{known: map[string]bool{}, pendingCard: map[string]bool{}}
	distinct := map[string]bool{}
	chosen, all := 0, 0
	for _, k := range keys {
		have := kinds[k]
		if !have[record.SelectionSets.Name()] || !have[record.Graphs.Name()] {
			m.unknown++
			continue
		}
		refs, _, err := SourceRefs(ctx, st, k)
		if err != nil {
			m.unknown++
			continue
		}
		chosen++
		summarized := have[record.Summaries.Name()]
		for _, r := range refs {
			all++
			if !summarized {
				m.pendingCard[r.Key+"\x00"+r.ArxivID+r.S2PaperID] = true
			}
			id, ok := canonical(r.ArxivID)
			if !ok {
				continue
			}
			if run[id] {
				continue // a target's page, fetched as a target
			}
			m.draws++
			if !distinct[id] {
				distinct[id] = true
				stored, err := record.Documents.Has(ctx, st, id)
				if err == nil && !stored {
					stored, err = record.NoHTMLs.Has(ctx, st, id)
				}
				if err != nil {
					return nil, fmt.Errorf("estimate the source pages: %w", err)
				}
				if stored {
					m.stored++
				} else {
					m.known[id] = true
				}
			}
		}
	}
	m.distinct = len(distinct)
	if chosen == 0 {
		m.assumed, m.perTarget, m.cardsPer = true, defaultSourcePages, 1
		return m, nil
	}
	m.perTarget = float64(m.draws) / float64(chosen)
	m.cardsPer = 1
	if m.draws > 0 {
		m.cardsPer = float64(all) / float64(m.draws)
	}
	return m, nil
}

// pool is the pool size the repeats among the draws imply; +Inf without
// repeats.
func (m *sourceModel) pool() float64 {
	k, d := float64(m.draws), float64(m.distinct)
	if d == 0 || d >= k {
		return math.Inf(1)
	}
	lo, hi := d, 1e12
	for range 200 {
		mid := (lo + hi) / 2
		if mid*(1-math.Exp(-k/mid)) < d {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// expectedNew is the new distinct sources of the targets without chosen
// sources.
func (m *sourceModel) expectedNew() float64 {
	more := m.perTarget * float64(m.unknown)
	M := m.pool()
	if math.IsInf(M, 1) {
		return more
	}
	k := float64(m.draws)
	return M*(1-math.Exp(-(k+more)/M)) - float64(m.distinct)
}

// newPages is the source pages still to fetch: the known ones not in an
// archive, and the expected ones.
func (m *sourceModel) newPages(inArchive func(string) bool) float64 {
	n := 0.0
	for id := range m.known {
		if inArchive == nil || !inArchive(id) {
			n++
		}
	}
	return n + m.expectedNew()
}

// newCards is the source cards still to write (upper bound for the known:
// a card another target wrote is reused).
func (m *sourceModel) newCards() float64 {
	return float64(len(m.pendingCard)) + m.expectedNew()*m.cardsPer
}

// EstimateRun is the estimate of a run of cfg's stages over keys, from
// the store alone: it is only read, and not locked (a run may hold it).
// A store that does not exist yet is estimated as empty, and nothing is
// created; where says which store was read.
func EstimateRun(ctx context.Context, cfg Config, keys []string, opt EstimateOptions) (est *estimate.Estimate, where string, err error) {
	cfg.Lock, cfg.Existing = false, true
	where = cfg.Store
	a, err := Open(ctx, cfg)
	if errors.Is(err, store.ErrNoStore) {
		where += ", not created yet"
		tmp, terr := os.MkdirTemp("", "curate-estimate-")
		if terr != nil {
			return nil, "", terr
		}
		defer os.RemoveAll(tmp)
		cfg.Store, cfg.Existing = tmp, false
		a, err = Open(ctx, cfg)
	}
	if err != nil {
		return nil, "", err
	}
	defer a.Close()
	est, err = a.Estimate(ctx, keys, opt)
	return est, where, err
}
