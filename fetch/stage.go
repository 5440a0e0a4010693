package fetch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
)

// SourcesName is the sources stage's name in the ledger.
const SourcesName = "sources"

// Stage is the fetch stage: a paper's page, parsed. Its items are papers
// (a target, or a source when the sources stage asks for it).
type Stage struct {
	Fetcher *Fetcher
	// Ready, when set, readies a run before its first paper (robots.txt
	// applied, the local archives indexed for the run's targets).
	Ready func(ctx context.Context, keys []string) error
	// Learn, when set, is told the arXiv IDs a fetched page's
	// bibliography names: papers the run may ask for next (the archives
	// index them).
	Learn func(ids ...string)
	// AtV1 reads each target at its v1 (the knowledge cut is on):
	// arxiv.org/html/IDv1, else its PDF through V1PDF when set, else the
	// version served now, as without it.
	AtV1 bool
	// V1PDF, when set, makes a target's Document from the PDF of its v1
	// (--grobid), for a target whose v1 arXiv has no HTML for.
	V1PDF func(ctx context.Context, id arxiv.ID) (*record.Document, error)
}

func (s *Stage) Declare() pipeline.Decl {
	return pipeline.Decl{
		Name: Name, About: "arXiv HTML (ar5iv as fallback) of each target, parsed", Workers: 2,
		Writes: []string{record.RawPages.Name(), record.Documents.Name(), record.NoHTMLs.Name()},
		Requests: []pipeline.Request{
			{Service: ServiceArxiv},
			{Service: ServiceAr5iv, Fallback: true},
		},
	}
}

// Prepare readies the run (see Stage.Ready).
func (s *Stage) Prepare(ctx context.Context, keys []string) (func(context.Context) error, error) {
	if s.Ready == nil {
		return nil, nil
	}
	return nil, s.Ready(ctx, keys)
}

// reused reports whether the paper's page is stored: fetching it again
// would make no request and change nothing.
func (s *Stage) reused(ctx context.Context, key string) bool {
	if s.Fetcher.Refetch {
		return false
	}
	id, err := arxiv.Parse(key)
	if err != nil {
		return false
	}
	_, ok := s.Fetcher.stored(ctx, id)
	return ok
}

// Do fetches one paper. A paper neither arXiv nor ar5iv has HTML for is
// an error wrapping ErrNoHTML.
func (s *Stage) Do(ctx context.Context, key string) (string, error) {
	r := s.fetch(ctx, key)
	if s.Learn != nil {
		s.Learn(referencedIDs(r.Doc)...)
	}
	return r.outcome()
}

// fetch fetches one paper: at v1 under AtV1 (a target is read as its
// authors first wrote it), the version served now when arXiv has no HTML
// for v1 (the Document's ID then says which version it is).
func (s *Stage) fetch(ctx context.Context, key string) Result {
	id, err := arxiv.Parse(key)
	if !s.AtV1 || err != nil || id.Version != 0 {
		return s.Fetcher.Fetch(ctx, key)
	}
	v1, err := arxiv.Parse(key + "v1")
	if err != nil {
		return s.Fetcher.Fetch(ctx, key)
	}
	r := s.Fetcher.FetchAt(ctx, v1, record.Key(id))
	if r.Outcome != Missing {
		r.Input = key
		return r
	}
	if s.V1PDF != nil {
		doc, err := s.V1PDF(ctx, v1)
		if err == nil {
			return s.Fetcher.keepPDF(ctx, key, v1, doc)
		}
		if ctx.Err() != nil {
			return Result{Input: key, ID: key, Outcome: Failed, Err: err}
		}
		s.Fetcher.log().Info("no PDF full text of the target's v1; reading the version served now", "target", key, "why", err.Error())
	}
	return s.Fetcher.Fetch(ctx, key)
}

// outcome is a fetch's Result as the stage reports it.
func (r Result) outcome() (string, error) {
	switch r.Outcome {
	case Fetched, Archived:
		return pipeline.Done, nil
	case Stored:
		return pipeline.Reused, nil
	case Missing:
		if r.Known {
			return pipeline.Reused, r.Err
		}
	}
	return "", r.Err
}

// referencedIDs lists the arXiv IDs a Document's bibliography names.
func referencedIDs(doc *record.Document) []string {
	if doc == nil {
		return nil
	}
	var out []string
	for _, r := range doc.References {
		if r.ArxivID != "" {
			out = append(out, r.ArxivID)
		}
	}
	return out
}

// Sources is the sources stage: the arXiv pages of a target's sources
// (those with an arXiv ID), fetched into the store, where summarize reads
// them. Each page is fetched under the lifecycle of the fetch stage, so
// the ledger says how each paper's fetch went. A page already stored, or
// a paper known to have no HTML, makes no request.
type Sources struct {
	Fetcher *Fetcher
	Store   record.Getter
	// Lifecycle records each paper's fetch (nil: nothing is recorded).
	Lifecycle *pipeline.Lifecycle
	// IncludeSuspect works on a target whose selections are suspect.
	IncludeSuspect bool
	// Ready, when set, readies a run before its first target.
	Ready func(ctx context.Context, keys []string) error
	// Mode is the knowledge cut: unless off, each source the versions
	// stage pinned (record.KnowledgeCuts) is fetched at the version of
	// its target's cutoff, a source first published after it not at all.
	Mode knowledgecut.Mode
}

func (s *Sources) Declare() pipeline.Decl {
	return pipeline.Decl{
		Name: SourcesName, About: "the arXiv HTML of each target's sources, parsed", Workers: 2,
		Reads:    []string{record.Graphs.Name(), record.SelectionSets.Name()},
		Optional: []string{record.KnowledgeCuts.Name()},
		Writes:   []string{record.RawPages.Name(), record.Documents.Name(), record.NoHTMLs.Name()},
		// The versions stage pins each source to the version of the
		// target's cutoff (when it is on).
		Before: []string{"versions"},
		Requests: []pipeline.Request{
			{Service: ServiceArxiv, Count: pipeline.PerSource},
			{Service: ServiceAr5iv, Count: pipeline.PerSource, Fallback: true},
		},
	}
}

// Prepare readies the run (see Sources.Ready).
func (s *Sources) Prepare(ctx context.Context, keys []string) (func(context.Context) error, error) {
	if s.Ready == nil {
		return nil, nil
	}
	return nil, s.Ready(ctx, keys)
}

// Do fetches the pages of one target's sources. A source whose fetch
// failed fails the target, which the next run retries; one with no HTML
// anywhere is no failure (its card comes from its abstract or PDF).
func (s *Sources) Do(ctx context.Context, key string) (string, error) {
	set, err := record.Sources(ctx, s.Store, key)
	if err != nil {
		return "", err
	}
	refs, held := set.Working(s.IncludeSuspect)
	switch {
	case held != nil:
		return "", pipeline.Hold(pipeline.SuspectReason(held))
	case refs == nil:
		return pipeline.Skipped, nil
	}
	cut, _, err := record.KnowledgeCuts.Lookup(ctx, s.Store, key)
	if err != nil {
		return "", err
	}
	paper := &Stage{Fetcher: s.Fetcher}
	fetched := false
	var failed []string
	for _, r := range refs {
		id, err := arxiv.Parse(r.ArxivID)
		if err != nil {
			continue // no arXiv page to fetch: its card comes from the abstract
		}
		var pin *record.Pin
		if cut != nil {
			if sp, ok := cut.Source(r.Key); ok {
				pin = sp.Pin
			}
		}
		if knowledgecut.Skip(s.Mode, pin) {
			continue // first published after the cutoff: no source
		}
		if v := knowledgecut.Pinned(s.Mode, pin); v > 0 {
			ok, now, err := s.pinned(ctx, paper, id, v, v == pin.Latest)
			fetched = fetched || now
			switch {
			case pipeline.Abandoned(ctx, err):
				return "", err
			case err != nil:
				failed = append(failed, err.Error())
				continue
			case ok:
				continue
			}
			// The pinned version has no HTML: the version served now is
			// the fallback, marked as read after the cutoff, read into its
			// own item too (the key may come to hold the paper's v1).
			if v < pin.Latest {
				ok, now, err := s.pinned(ctx, paper, id, pin.Latest, true)
				fetched = fetched || now
				switch {
				case pipeline.Abandoned(ctx, err):
					return "", err
				case err != nil:
					failed = append(failed, err.Error())
					continue
				case ok:
					continue
				}
			}
		}
		if paper.reused(ctx, r.ArxivID) || s.Fetcher.KnownMissing(ctx, r.ArxivID) {
			continue
		}
		outcome, err := s.Lifecycle.Track(ctx, paper, r.ArxivID)
		switch {
		case err == nil:
			fetched = fetched || outcome == pipeline.Done
		case errors.Is(err, ErrNoHTML):
		case pipeline.Abandoned(ctx, err):
			return "", err // the next run fetches it
		default:
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 {
		return "", fmt.Errorf("sources of %s: %d not fetched: %s", key, len(failed), strings.Join(failed, "; "))
	}
	if fetched {
		return pipeline.Done, nil
	}
	return pipeline.Reused, nil
}

// pinned reads version v of a source (latest: the version served now)
// into that version's own item (record.VersionItem, Fetcher.FetchVersion),
// under the fetch stage's lifecycle: ok when that version's text is
// stored there (now: fetched by this call), not ok when arXiv has no
// HTML for it, or the text read is the paper key's alone (ar5iv's page
// of the version served now): the versionless key is then read, and
// fetched as usual. The item is never left to the key: a target read at
// v1 replaces what its key holds, whichever of the two runs first.
func (s *Sources) pinned(ctx context.Context, paper *Stage, id arxiv.ID, v int, latest bool) (ok, now bool, err error) {
	item := record.VersionItem(record.Key(id), v)
	at, err := arxiv.Parse(item)
	if err != nil {
		return false, false, err
	}
	if !s.Fetcher.Refetch {
		if _, stored := s.Fetcher.storedAt(ctx, item, v); stored {
			return true, false, nil
		}
		if _, missing := s.Fetcher.knownMissingAt(ctx, item); missing {
			return false, false, nil
		}
	}
	var r Result
	_, err = s.Lifecycle.Track(ctx, pipeline.Func{Decl: paper.Declare(), Run: func(ctx context.Context, _ string) (string, error) {
		r = s.Fetcher.FetchVersion(ctx, at, latest)
		return r.outcome()
	}}, item)
	now = r.Outcome == Fetched || r.Outcome == Archived
	switch {
	case r.Outcome == Missing:
		return false, !r.Known, nil
	case err != nil:
		return false, false, err
	}
	return r.ID == item, now, nil
}

// Apart reports whether a source pinned at version v (latest: v is the
// version served now) is asked of arXiv at that version (html/IDvN),
// when the paper's versionless key holds a page of version got (stored:
// it holds one; got 0: a page that does not say its version, ar5iv's,
// taken to be the version served now, as the dataset takes it).
// Otherwise what the key holds, or the version served now fetched under
// it, is read (and copied to the version's own item when it is of that
// version). The estimate counts by the same rule.
func Apart(stored bool, got, v int, latest bool) bool {
	return !(stored && (got == v || got == 0 && latest) || !stored && latest)
}

// Report says where each paper's page came from and its title, then the
// counts (see pipeline.Reporter).
func (s *Stage) Report(ctx context.Context, keys []string, events map[string]pipeline.Event, invalid int) pipeline.Report {
	var lines []string
	var results []Result
	for range invalid {
		results = append(results, Result{Outcome: Failed})
	}
	for _, k := range keys {
		ev, ran := events[k]
		r := Result{ID: k, Outcome: Failed, Err: ev.Err}
		doc, ok, _ := record.Documents.Lookup(ctx, s.Fetcher.Store, k)
		switch {
		case ok && ev.Outcome == pipeline.Done:
			r.Outcome, r.Source = Fetched, doc.Source
		case ok:
			r.Outcome, r.Source = Stored, doc.Source
		case errors.Is(ev.Err, ErrNoHTML):
			r.Outcome = Missing
		case !ran:
			continue // not reached (interrupted)
		}
		results = append(results, r)
		line := ""
		switch {
		case r.Err != nil:
			line = r.Err.Error()
		case doc != nil && doc.Title != nil:
			line = *doc.Title
		}
		lines = append(lines, fmt.Sprintf("%s\t%s\t%s\t%s", k, r.Outcome, r.Source, line))
	}
	return pipeline.Report{Lines: lines, Total: fmt.Sprintf("curate fetch: %s; store %s", Summarize(results), s.Fetcher.Store.Dir()), Failures: true}
}
