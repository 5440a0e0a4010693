package citegraph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/groundwork/curate/client/arxivapi"
	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// Fields asked of the batch endpoint to fill what reference edges lack.
const batchFields = "paperId,externalIds,abstract,publicationDate,year,venue"

// Fields asked about the target itself.
const targetFields = "paperId,corpusId,externalIds,title,venue,year,publicationDate,citationCount,influentialCitationCount,referenceCount"

// Runner runs citegraph for targets already fetched (or fetched on demand).
// Responses of the services are stored as received (decoded with every
// field asked for) and reused, so re-linking never makes a request.
type Runner struct {
	Store    *store.Store
	S2       *s2.Client       // nil: no Semantic Scholar (edges from the bibliography)
	ArxivAPI *arxivapi.Client // nil: no arXiv metadata beyond the ID
	// Fetch returns the target's Document, fetching it when the store lacks
	// it; nil means the Document must already be stored.
	Fetch func(ctx context.Context, id string) (*record.Document, error)
	Log   *slog.Logger
	// Refresh asks the services again instead of reusing stored responses.
	Refresh bool
	// OpenAccess asks the batch endpoint for openAccessPdf too, for the
	// pdfs stage (reference edges carry it already).
	OpenAccess bool
	// FlushAfter and FeedWorkers tune the feed (see Feed): 0 means
	// DefaultFlushAfter and DefaultFeedWorkers.
	FlushAfter, FeedWorkers int
	// Skip, when set, names targets the feed leaves alone (targets known
	// to have no page, which never reach the stage): a Build of one asks
	// for it on its own.
	Skip func(ctx context.Context, key string) bool

	feedMu sync.Mutex
	feed   *feed
}

// Result is the outcome for one target.
type Result struct {
	Input string
	Key   string
	Graph *record.Graph
	// Requests says whether any request was made for this target (false
	// on a re-run that reused stored responses).
	Requests bool
	Err      error
}

func (s *Runner) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// All runs the stage for every input with up to workers goroutines,
// through a feed of all of them (see Feed): target records and the fields
// edges lack come from /paper/batch calls shared across targets, the
// arXiv metadata 100 IDs a request. A paper named by several inputs
// ("2401.00001", "2401.00001v2") is processed once and each of them gets
// its result. Results come back in input order. onDone, if set, is called
// once per input.
func (s *Runner) All(ctx context.Context, inputs []string, workers int, onDone func(Result)) []Result {
	results := make([]Result, len(inputs))
	var keys []string
	first := map[string]int{} // key -> index of its first input
	var dups []int
	for i, in := range inputs {
		id, err := arxiv.Parse(in)
		if err != nil {
			results[i] = Result{Input: in, Err: err}
			continue
		}
		k := record.Key(id)
		results[i] = Result{Input: in, Key: k}
		if _, ok := first[k]; ok {
			// Processing it twice at once would fetch every page twice.
			dups = append(dups, i)
			continue
		}
		first[k] = i
		keys = append(keys, k)
	}
	stop := s.Feed(ctx, keys, nil)
	jobs := make(chan int)
	var wg sync.WaitGroup
	// Each target's build is recorded in the ledger as a run records it.
	lc := &pipeline.Lifecycle{Ledger: s.Store}
	decl := (&Row{}).Declare()
	for range max(workers, 1) {
		wg.Go(func() {
			for i := range jobs {
				lc.Track(ctx, pipeline.Func{Decl: decl, Run: func(ctx context.Context, key string) (string, error) {
					r := s.Build(ctx, key)
					results[i].Graph, results[i].Requests, results[i].Err = r.Graph, r.Requests, r.Err
					return outcome(r)
				}}, results[i].Key)
				if onDone != nil {
					onDone(results[i])
				}
			}
		})
	}
	for i := range results {
		switch k := results[i].Key; {
		case k != "" && first[k] == i:
			jobs <- i
		case k == "" && onDone != nil:
			onDone(results[i])
		}
	}
	close(jobs)
	wg.Wait()
	if err := stop(); err != nil {
		s.log().Warn("arxiv metadata lookup failed; targets keep the date from their ID", "err", err)
	}
	for _, i := range dups {
		r := results[first[results[i].Key]]
		r.Input = inputs[i]
		results[i] = r
		if onDone != nil {
			onDone(r)
		}
	}
	return results
}

// Process runs the stage for one target given by its arXiv ID.
func (s *Runner) Process(ctx context.Context, input string) Result {
	return s.All(ctx, []string{input}, 1, nil)[0]
}

// Build builds and stores one target's Graph. A target the running feed
// covers waits for the feed's answers and links them without a request;
// another is asked for on its own, without arXiv metadata (a pipeline
// looks that up for all its targets at once: a failed lookup must not
// turn into one request per target), taking its date from its ID unless
// the metadata is stored.
func (s *Runner) Build(ctx context.Context, input string) Result {
	res := Result{Input: input}
	id, err := arxiv.Parse(input)
	if err != nil {
		res.Err = err
		return res
	}
	res.Key = record.Key(id)
	if f := s.currentFeed(); f != nil {
		req, ok, err := f.wait(ctx, res.Key)
		if ok {
			if err != nil {
				res.Err = err
				return res
			}
			res.Graph, res.Requests, res.Err = s.process(ctx, res.Key, false, req)
			return res
		}
	}
	res.Graph, res.Requests, res.Err = s.process(ctx, res.Key, s.Refresh, false)
	return res
}

// LookupArxiv stores the arXiv API entries of the keys that lack one (all
// of them with Refresh), 100 IDs a request.
func (s *Runner) LookupArxiv(ctx context.Context, keys []string) error {
	return s.lookupArxiv(ctx, keys, s.Refresh)
}

// process builds and stores one target's Graph. With refresh the
// services are asked again rather than the stored answers reused (the
// feed, having asked them already this run, passes false, and asked when
// it made a request for key: the attempt counts as one that asked).
func (s *Runner) process(ctx context.Context, key string, refresh, asked bool) (g *record.Graph, requested bool, err error) {
	defer func() { requested = requested || asked }()
	doc, err := s.document(ctx, key)
	if err != nil {
		return nil, false, fmt.Errorf("citegraph %s: %w", key, err)
	}

	// The target's own S2 record tells whether S2 knows the paper at all.
	var target *record.ScholarPaper
	refs := record.S2ReferenceList{Status: record.S2OK}
	if s.S2 != nil {
		target, requested, err = s.s2Target(ctx, key, refresh)
		if err != nil {
			return nil, requested, fmt.Errorf("citegraph %s: %w", key, err)
		}
		var req bool
		refs, req, err = s.s2References(ctx, key, target, refresh)
		requested = requested || req
		if err != nil {
			return nil, requested, fmt.Errorf("citegraph %s: %w", key, err)
		}
	}
	var filled record.S2Filled
	if refs.List != nil {
		var req bool
		filled, req, err = s.fill(ctx, key, refs.List, refresh)
		requested = requested || req
		if err != nil {
			return nil, requested, fmt.Errorf("citegraph %s: %w", key, err)
		}
	}

	g = &record.Graph{TargetID: key, S2Status: refs.Status}
	if s.S2 == nil {
		g.S2Status = "skipped"
	}
	var in []Ref
	if refs.List != nil {
		g.Disclaimer = refs.List.Disclaimer
		for _, r := range refs.List.Edges {
			in = append(in, toRef(r, filled[r.CitedPaper.PaperID]))
		}
	}
	g.Edges, g.Report = Link(key, doc, in)
	g.Meta = s.meta(ctx, key, doc, target)
	if _, err := record.Graphs.Put(ctx, s.Store, key, g, map[string]string{"s2_status": g.S2Status}); err != nil {
		return nil, requested, fmt.Errorf("citegraph %s: %w", key, err)
	}
	return g, requested, nil
}

// document returns the target's stored Document, fetching it if allowed.
func (s *Runner) document(ctx context.Context, key string) (*record.Document, error) {
	doc, _, err := record.Documents.Get(ctx, s.Store, key)
	if err == nil {
		return doc, nil
	}
	if !errors.Is(err, store.ErrNotFound) || s.Fetch == nil {
		return nil, fmt.Errorf("no parsed document (run curate fetch first): %w", err)
	}
	return s.Fetch(ctx, key)
}

// s2Target returns S2's record of the target (nil when S2 does not know
// it), stored or asked.
func (s *Runner) s2Target(ctx context.Context, key string, refresh bool) (*record.ScholarPaper, bool, error) {
	if !refresh {
		if stored, _, err := record.S2Papers.Get(ctx, s.Store, key); err == nil {
			return stored.Paper, false, nil
		}
	}
	var stored record.S2Paper
	p, err := s.S2.Paper(ctx, s2.ArxivPaperID(key), strings.Split(targetFields, ",")...)
	switch {
	case errors.Is(err, s2.ErrNotFound):
		stored.Found, stored.Paper = false, nil
	case err != nil:
		return nil, true, err
	default:
		stored.Found, stored.Paper = true, p
	}
	if _, err := record.S2Papers.Put(ctx, s.Store, key, &stored, nil); err != nil {
		return nil, true, err
	}
	return stored.Paper, true, nil
}

// s2References returns the target's S2 reference list, stored or asked.
func (s *Runner) s2References(ctx context.Context, key string, target *record.ScholarPaper, refresh bool) (record.S2ReferenceList, bool, error) {
	if !refresh {
		if stored, _, err := record.S2References.Get(ctx, s.Store, key); err == nil {
			return *stored, false, nil
		}
	}
	var refs record.S2ReferenceList
	if target == nil {
		// S2 does not know the paper: recorded as missing, edges come from
		// the bibliography, and the run goes on.
		refs = record.S2ReferenceList{Status: record.S2Missing, Error: "semantic scholar has no paper " + s2.ArxivPaperID(key)}
	} else {
		list, err := s.S2.References(ctx, s2.ArxivPaperID(key))
		switch {
		case errors.Is(err, s2.ErrNotFound):
			refs = record.S2ReferenceList{Status: record.S2Missing, Error: err.Error()}
		case err != nil:
			return refs, true, err
		default:
			refs = record.S2ReferenceList{Status: record.S2OK, List: list}
			switch {
			case list.Elided:
				refs.Status = record.S2Withheld
			case !list.Complete():
				refs.Status = record.S2Partial
			}
		}
	}
	if _, err := record.S2References.Put(ctx, s.Store, key, &refs, map[string]string{"status": refs.Status}); err != nil {
		return refs, true, err
	}
	return refs, true, nil
}

// fill asks the batch endpoint for the abstracts, dates and identifiers
// that reference edges lack (S2 often omits abstracts under citedPaper).
func (s *Runner) fill(ctx context.Context, key string, list *record.ScholarReferences, refresh bool) (record.S2Filled, bool, error) {
	if !refresh {
		if stored, _, err := record.S2Batches.Get(ctx, s.Store, key); err == nil {
			return *stored, false, nil
		}
	}
	filled := record.S2Filled{}
	ids := FillIDs(list)
	if len(ids) > 0 && s.S2 != nil {
		papers, err := s.S2.Batch(ctx, ids, s.fillFields()...)
		if err != nil {
			return nil, true, err
		}
		for i, p := range papers {
			if p != nil {
				filled[ids[i]] = p
			}
		}
	}
	if _, err := record.S2Batches.Put(ctx, s.Store, key, &filled, nil); err != nil {
		return nil, true, err
	}
	return filled, len(ids) > 0, nil
}

// fillFields are the fields a fill asks the batch endpoint for.
func (s *Runner) fillFields() []string {
	fields := strings.Split(batchFields, ",")
	if s.OpenAccess {
		fields = append(fields, "openAccessPdf")
	}
	return fields
}

// FillIDs lists the cited papers of list whose edges lack an abstract, a
// date or identifiers, each once, in list order: what the batch endpoint
// is asked to fill.
func FillIDs(list *record.ScholarReferences) []string {
	var ids []string
	seen := map[string]bool{}
	for _, r := range list.Edges {
		p := r.CitedPaper
		if p.PaperID == "" || seen[p.PaperID] {
			continue
		}
		if p.Abstract == nil || p.PublicationDate == nil || p.ExternalIDs == nil {
			seen[p.PaperID] = true
			ids = append(ids, p.PaperID)
		}
	}
	return ids
}

// toRef reduces an S2 edge to a Ref, taking fields the edge lacks from the
// batch answer.
func toRef(r record.ScholarReference, extra *record.ScholarPaper) Ref {
	p := r.CitedPaper
	out := Ref{
		PaperID:       p.PaperID,
		CorpusID:      p.CorpusID,
		ArxivID:       p.ArxivID(),
		DOI:           p.DOI(),
		Title:         p.Title,
		Venue:         p.Venue,
		OpenAccessPDF: p.PDFURL(),
		Contexts:      r.Contexts,
		Intents:       r.Intents,
		IsInfluential: r.IsInfluential,
	}
	if p.Abstract != nil {
		out.Abstract = *p.Abstract
	}
	if p.Year != nil {
		out.Year = *p.Year
	}
	if p.PublicationDate != nil {
		out.PublicationDate = *p.PublicationDate
	}
	for _, a := range p.Authors {
		out.Authors = append(out.Authors, a.Name)
	}
	// Intents are often given per context only.
	if len(out.Intents) == 0 {
		seen := map[string]bool{}
		for _, c := range r.ContextsWithIntent {
			for _, in := range c.Intents {
				if !seen[in] {
					seen[in] = true
					out.Intents = append(out.Intents, in)
				}
			}
		}
		sort.Strings(out.Intents)
	}
	if len(out.Contexts) == 0 {
		for _, c := range r.ContextsWithIntent {
			out.Contexts = append(out.Contexts, c.Context)
		}
	}
	if extra != nil {
		if out.Abstract == "" && extra.Abstract != nil {
			out.Abstract = *extra.Abstract
		}
		if out.PublicationDate == "" && extra.PublicationDate != nil {
			out.PublicationDate = *extra.PublicationDate
		}
		if out.Year == 0 && extra.Year != nil {
			out.Year = *extra.Year
		}
		if out.ArxivID == "" {
			out.ArxivID = extra.ArxivID()
		}
		if out.DOI == "" {
			out.DOI = extra.DOI()
		}
		if out.Venue == "" {
			out.Venue = extra.Venue
		}
	}
	return out
}

// meta assembles the target's metadata. The date that decides the split is
// arXiv's v1 date from the arXiv API; without it, the year and month of the
// ID (the month the paper entered arXiv) are used and the source says so.
func (s *Runner) meta(ctx context.Context, key string, doc *record.Document, target *record.ScholarPaper) record.TargetMeta {
	m := record.TargetMeta{ArxivID: key, Sources: map[string]string{}}
	if doc != nil && doc.Title != nil {
		m.Title, m.Sources["title"] = *doc.Title, "html"
	}
	if am, _, err := record.ArxivMetas.Get(ctx, s.Store, key); err == nil && am.Entry != nil {
		e := am.Entry
		m.Published, m.Sources["published"] = e.Published.UTC().Format("2006-01-02"), "arxiv-api"
		m.PrimaryCategory, m.Categories = e.PrimaryCategory, e.Categories
		if m.PrimaryCategory != "" {
			m.Sources["categories"] = "arxiv-api"
		}
		if m.Title == "" && e.Title != "" {
			m.Title, m.Sources["title"] = e.Title, "arxiv-api"
		}
		if e.DOI != "" {
			m.DOI = e.DOI
		}
	}
	if target != nil {
		m.S2PaperID, m.CorpusID, m.Venue, m.CitationCount = target.PaperID, target.CorpusID, target.Venue, target.CitationCount
		if target.Year != nil {
			m.Year = *target.Year
		}
		if m.Title == "" && target.Title != "" {
			m.Title, m.Sources["title"] = target.Title, "s2"
		}
		if m.DOI == "" {
			if d := target.DOI(); d != "" && !strings.HasPrefix(strings.ToLower(d), "10.48550/") {
				m.DOI = d
			}
		}
	}
	if m.Published == "" {
		if id, err := arxiv.Parse(key); err == nil {
			m.Published = fmt.Sprintf("%04d-%02d-01", id.Year(), id.Month())
			m.Sources["published"] = "arxiv-id"
		}
	}
	return m
}
