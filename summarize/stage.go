package summarize

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/keylock"
	"github.com/groundwork/curate/knowledgecut"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// sourceConcurrency bounds the sources of one target summarized at once;
// the LLM client and the fetcher apply their own limits below it.
const sourceConcurrency = 4

// SourceRef is a source of a target, as the classify stage selected it.
type SourceRef = record.SourceRef

// Stage writes the idea cards of targets and their sources into the store.
// Its methods are safe for concurrent use (targets may be processed in
// parallel); a Stage must not be copied after first use.
type Stage struct {
	Store *store.Store
	// LLM writes the cards; nil (or Model llm.HeuristicModel) selects the
	// heuristic backend.
	LLM llm.Completer
	// Model is the model name recorded on cards and in their store kind;
	// "" takes the LLM's own Model() name.
	Model string
	// Budget is the token budget of a paper's text (DefaultBudget when 0).
	Budget int
	Log    *slog.Logger
	// Meter counts the heuristic backend's cards (an LLM client meters its
	// own calls); nil counts nothing.
	Meter *llm.Meter
	// Force writes cards again even when the store holds them, once per
	// card per Stage: a source shared by several targets is rewritten for
	// the first and reused by the others.
	Force bool
	// MinGrounding is the least share of a gold card's claim words that
	// must occur in the paper's abstract and introduction (see Grounded):
	// 0 means DefaultMinGrounding, a negative value turns the rule off.
	MinGrounding float64
	// IncludeSuspect summarizes the sources of a target whose gold card is
	// suspect (not grounded in the paper); without it they are left
	// unsummarized and the target is held back.
	IncludeSuspect bool
	// Mode is the knowledge cut: unless off, a source the versions stage
	// pinned (record.KnowledgeCuts) is carded from the text of the
	// version of its target's cutoff when the store holds it (its own
	// item, record.VersionItem), else from the version served now; a
	// source first published after the cutoff is not carded.
	Mode knowledgecut.Mode

	// locks serialize work on one card, so concurrent targets sharing a
	// source summarize it once: the second finds the first's card.
	locks  keylock.Locks
	mu     sync.Mutex
	forced map[string]bool
}

// mayReuse reports whether a stored card may stand; under Force only a
// card this Stage has already rewritten may.
func (s *Stage) mayReuse(key string) bool {
	if !s.Force {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forced[key]
}

func (s *Stage) markWritten(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forced == nil {
		s.forced = map[string]bool{}
	}
	s.forced[key] = true
}

func (s *Stage) minGrounding() float64 {
	if s.MinGrounding == 0 {
		return DefaultMinGrounding
	}
	return s.MinGrounding
}

func (s *Stage) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// backend returns the model name cards are recorded and keyed under, and
// whether it is the heuristic.
func (s *Stage) backend() (model string, heuristic bool, err error) {
	if s.LLM == nil || llm.IsHeuristic(s.Model) {
		return llm.HeuristicModel, true, nil
	}
	if s.Model != "" {
		return s.Model, false, nil
	}
	if m, ok := s.LLM.(interface{ Model() string }); ok && m.Model() != "" {
		return m.Model(), false, nil
	}
	return "", false, errors.New("no model name: set Stage.Model")
}

// Versions returns the model and the prompt version of each card kind the
// Stage writes with, as recorded on its cards.
func (s *Stage) Versions() (model, gold, source string, err error) {
	model, heuristic, err := s.backend()
	if err != nil {
		return "", "", "", fmt.Errorf("summarize: %w", err)
	}
	if heuristic {
		return model, HeuristicPromptVersion, HeuristicPromptVersion, nil
	}
	if gold, err = PromptVersion(record.CardGold); err != nil {
		return "", "", "", fmt.Errorf("summarize: %w", err)
	}
	if source, err = PromptVersion(record.CardSource); err != nil {
		return "", "", "", fmt.Errorf("summarize: %w", err)
	}
	return model, gold, source, nil
}

// unsummarizableError says why a paper has no text to summarize.
type unsummarizableError struct{ reason string }

func (e *unsummarizableError) Error() string { return e.reason }

func unsummarizable(format string, args ...any) error {
	return &unsummarizableError{fmt.Sprintf(format, args...)}
}

// ProcessTarget writes the gold card of the target (its versionless arXiv
// ID; its Document must be in the store or fetchable) and a source card
// for each source, reusing the cards the store already holds, and records
// the Summary (record.Summaries) unless cards still wait on LLM batches.
// Failures of single cards are reported in the Summary; the error is for
// an invalid target ID, a cancelled context or a store that cannot record
// the outcome.
func (s *Stage) ProcessTarget(ctx context.Context, targetKey string, sources []SourceRef) (*record.Summary, error) {
	id, err := arxiv.Parse(targetKey)
	if err != nil {
		return nil, fmt.Errorf("summarize target %q: %w", targetKey, err)
	}
	key := record.Key(id)
	model, gold, source, err := s.Versions()
	if err != nil {
		return nil, fmt.Errorf("summarize target %s: %w", key, err)
	}
	var cut *record.KnowledgeCut
	if s.Mode != knowledgecut.Off {
		if cut, _, err = record.KnowledgeCuts.Lookup(ctx, s.Store, key); err != nil {
			return nil, fmt.Errorf("summarize target %s: %w", key, err)
		}
	}
	res := &record.Summary{Target: key, Model: model, Sources: make([]record.CardResult, len(sources))}
	res.Gold = s.card(ctx, key, key, record.CardGold, model, gold, func() (Input, error) { return s.goldInput(ctx, key) })
	if res.Gold.Card != nil {
		// Judged every run, a reused card too: the rule may have changed.
		if in, err := s.goldInput(ctx, key); err == nil {
			res.Grounding, res.Suspect = Grounded(res.Gold.Card, in, s.minGrounding())
		}
	}
	if len(res.Suspect) > 0 && !s.IncludeSuspect {
		// Held back: its sources are not summarized, so nothing is spent on
		// an instance that is not published.
		s.log().Warn("gold card not grounded in the paper; target held back as suspect", "target", key, "reasons", res.Suspect)
		res.Sources = nil
		if res.Gold.Reused {
			res.Reused++
		} else {
			res.Written++
		}
		if _, err := record.Summaries.Put(ctx, s.Store, key, res, map[string]string{"model": model}); err != nil {
			return nil, fmt.Errorf("summarize target %s: %w", key, err)
		}
		return res, nil
	}

	sem := make(chan struct{}, sourceConcurrency)
	var wg sync.WaitGroup
	for i, src := range sources {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var pin *record.Pin
			if cut != nil {
				if sp, ok := cut.Source(src.Key); ok {
					pin = sp.Pin
				}
			}
			res.Sources[i] = s.source(ctx, src, model, source, pin)
		}()
	}
	wg.Wait()

	if err := ctx.Err(); err != nil {
		// Abandoned: the run leaves it running for the next run.
		return nil, fmt.Errorf("summarize target %s: %w", key, err)
	}
	var problems []string
	for i, r := range append([]record.CardResult{res.Gold}, res.Sources...) {
		switch {
		case r.Pending:
			res.Pending++
			continue
		case r.Card != nil && r.Reused:
			res.Reused++
		case r.Card != nil:
			res.Written++
		case r.Unsummarizable:
			res.Unsummarizable++
		default:
			res.Failed++
		}
		if r.Card != nil && (r.Card.Opportunity == record.Other || r.Card.Paradigm == record.Other) {
			res.OtherLabels++
		}
		if r.Card == nil && (i == 0 || !r.Unsummarizable) {
			what := "gold card"
			if i > 0 {
				what = "source " + r.Key
			}
			problems = append(problems, what+": "+r.Failure)
		}
	}
	if res.Pending > 0 && len(problems) == 0 {
		// The target's summary is not finished: nothing is stored for it
		// (its written cards are); it waits.
		return res, nil
	}
	if _, err := record.Summaries.Put(ctx, s.Store, key, res, map[string]string{"model": model}); err != nil {
		return nil, fmt.Errorf("summarize target %s: %w", key, err)
	}
	s.log().Debug("summarized target", "target", key, "model", model, "written", res.Written, "reused", res.Reused,
		"failed", res.Failed, "unsummarizable", res.Unsummarizable)
	return res, nil
}

// source writes or reuses the card of one source, pinned at pin by the
// knowledge cut (nil: read as served now).
func (s *Stage) source(ctx context.Context, src SourceRef, model, version string, pin *record.Pin) record.CardResult {
	if knowledgecut.Skip(s.Mode, pin) {
		return record.CardResult{Key: src.Key, Unsummarizable: true,
			Failure: "first published after the target's knowledge cutoff: no source of it"}
	}
	item, arxivID := s.paperItem(src)
	if item == "" {
		return record.CardResult{Key: src.Key, Unsummarizable: true,
			Failure: "no arXiv ID, Semantic Scholar ID or title to identify the paper"}
	}
	if arxivID != "" {
		// The pinned version's own item when its text is stored (the
		// sources or pdfs stage made it), else the version served now.
		items := knowledgecut.ReadItems(s.Mode, arxivID, pin)
		for _, it := range items[:len(items)-1] {
			ok, err := hasText(ctx, s.Store, it)
			if err != nil {
				// Not the served version's text in its place: the card
				// would carry what the cut keeps out.
				return record.CardResult{Key: src.Key, Paper: it, Failure: fmt.Sprintf("read the pinned version's text: %v", err)}
			}
			if ok {
				item, arxivID = it, it
				break
			}
		}
	}
	return s.card(ctx, src.Key, item, record.CardSource, model, version, func() (Input, error) {
		return s.sourceInput(ctx, src, item, arxivID)
	})
}

// hasText reports whether item has its text stored, as a Document or a
// PDFDocument.
func hasText(ctx context.Context, st record.Getter, item string) (bool, error) {
	if ok, err := record.Documents.Has(ctx, st, item); ok || err != nil {
		return ok, err
	}
	return record.PDFDocuments.Has(ctx, st, item)
}

// docVersion is the version of the Document stored under item, from its
// record's meta (no blob read); 0 when it does not say.
func (s *Stage) docVersion(ctx context.Context, item string) int {
	recs, err := s.Store.Records(ctx, item)
	if err != nil {
		return 0
	}
	for _, r := range recs {
		if r.Kind == record.Documents.Name() {
			v, _ := strconv.Atoi(r.Meta["version"])
			return v
		}
	}
	return 0
}

// paperItem returns the store item of a source's paper (the first of
// PaperItems) and its arXiv ID if it has a valid one.
func (s *Stage) paperItem(src SourceRef) (item, arxivID string) {
	if a := strings.TrimSpace(src.ArxivID); a != "" {
		if id, err := arxiv.Parse(a); err == nil {
			return record.Key(id), record.Key(id)
		}
		s.log().Warn("source has an invalid arXiv ID; identifying it otherwise", "key", src.Key, "arxiv_id", a)
	}
	if items := record.PaperItems("", src.S2PaperID, src.Title); len(items) > 0 {
		return items[0], ""
	}
	return "", ""
}

// card returns the card of kind for the paper stored as item: the stored
// one if it is there and still valid, else one written from load's Input.
func (s *Stage) card(ctx context.Context, key, item, cardKind, model, version string, load func() (Input, error)) record.CardResult {
	kind := record.CardKind(cardKind, model, version)
	res := record.CardResult{Key: key, Paper: item, StoreKind: kind.Name()}
	lockKey := item + "\x00" + kind.Name()
	defer s.locks.Lock(lockKey)()

	var in Input
	var err error
	loaded := false
	// stale is a valid stored card written from less text than there is
	// now: it stands if writing the new one fails.
	var stale *record.Card
	var staleLevel string
	if s.mayReuse(lockKey) {
		c, rec, gerr := kind.Get(ctx, s.Store, item)
		switch {
		case gerr == nil:
			verr := Validate(c, cardKind)
			if verr != nil {
				s.log().Warn("stored card fails validation; writing it again", "paper", item, "kind", kind.Name(), "reason", verr)
				break
			}
			level := rec.Meta["text_level"]
			cardV, _ := strconv.Atoi(rec.Meta["version"])
			docV := s.docVersion(ctx, item)
			if cardV > 0 && docV > 0 && cardV != docV {
				// Written from another version than the store now holds
				// (a target read at v1 since): the card is of that text.
				s.log().Info("the paper's stored text is of another version than its card; writing it again",
					"paper", item, "kind", kind.Name(), "card", cardV, "text", docV)
				break
			}
			if in, loaded = betterText(level, load); !loaded {
				res.Card, res.Reused, res.TextLevel, res.Version = c, true, level, cmp.Or(cardV, docV)
				return res
			}
			stale, staleLevel = c, level
			s.log().Info("more of the paper's text is stored than its card was written from; writing it again",
				"paper", item, "kind", kind.Name(), "was", level, "now", in.Level())
		case !errors.Is(gerr, store.ErrNotFound):
			s.log().Warn("stored card unreadable; writing it again", "paper", item, "kind", kind.Name(), "err", gerr)
		}
	}

	if !loaded {
		in, err = load()
	}
	var ue *unsummarizableError
	switch {
	case errors.As(err, &ue):
		res.Unsummarizable, res.Failure = true, ue.reason
		return res
	case err != nil:
		res.Failure = err.Error()
		return res
	}
	res.TextLevel = in.Level()
	c, trim, err := s.summarize(ctx, in, cardKind, model)
	if (errors.Is(err, ErrNoText) || errors.Is(err, ErrTooLittleText)) && stale == nil {
		res.Unsummarizable, res.Failure = true, err.Error()
		return res
	}
	if errors.Is(err, llm.ErrPending) {
		// Not written yet, not failed: a later pass or run collects it.
		res.Pending, res.Failure = true, err.Error()
		return res
	}
	if err != nil {
		s.recordFailure(ctx, item, cardKind, model, version, res.TextLevel, err)
		if stale != nil {
			// The next run tries again: the stored card is still below the text.
			res.Card, res.Reused, res.TextLevel = stale, true, staleLevel
			return res
		}
		res.Failure = err.Error()
		return res
	}
	meta := map[string]string{"text_level": res.TextLevel, "card_kind": cardKind}
	if in.Version > 0 {
		meta["version"] = strconv.Itoa(in.Version)
		res.Version = in.Version
	}
	if trim != "" {
		meta["context_trim"], res.ContextTrim = trim, trim
	}
	if _, err := kind.Put(ctx, s.Store, item, c, meta); err != nil {
		res.Failure = err.Error()
		return res
	}
	if _, err := record.CardIndex.Put(ctx, s.Store, item, &map[string]string{"paper": item}, nil); err != nil {
		s.log().Warn("record card index", "paper", item, "err", err)
	}
	s.markWritten(lockKey)
	res.Card = c
	return res
}

// betterText reports whether a card written at level must be written
// again because the store now holds more of the paper's text (a PDF full
// text for a card written from the abstract, the arXiv page for one
// written from a PDF), returning the Input it loaded to find out. A card
// at the highest level, or at a level it does not know, stands without
// loading anything; so does one whose input cannot be loaded now.
func betterText(level string, load func() (Input, error)) (Input, bool) {
	rank := record.TextRank(level)
	if rank == 0 || rank == record.TextRank(record.TextFull) {
		return Input{}, false
	}
	in, err := load()
	if err != nil || record.TextRank(in.Level()) <= rank {
		return Input{}, false
	}
	return in, true
}

func (s *Stage) summarize(ctx context.Context, in Input, cardKind, model string) (*record.Card, string, error) {
	if llm.IsHeuristic(model) {
		c, err := Heuristic(in, cardKind)
		if err == nil && s.Meter != nil {
			s.Meter.RecordHeuristic(Name)
		}
		return c, "", err
	}
	return summarizeTrimmed(ctx, s.LLM, model, in, cardKind)
}

// recordFailure keeps the last failed attempt at a card, with the model's
// raw answer when it gave one, for inspection.
func (s *Stage) recordFailure(ctx context.Context, item, cardKind, model, version, level string, err error) {
	if ctx.Err() != nil {
		// Abandoned (an interrupt, a run stopping), not failed: the next
		// run writes it.
		s.log().Debug("card abandoned", "paper", item, "card", cardKind, "err", err)
		return
	}
	f := record.CardFailure{Paper: item, CardKind: cardKind, Model: model, PromptVersion: version, TextLevel: level,
		Reason: err.Error(), At: time.Now().UTC()}
	var ie *llm.InvalidError
	if errors.As(err, &ie) {
		f.Reason, f.Attempts, f.Raw = ie.Reason, ie.Attempts, ie.Raw
	}
	if _, perr := record.FailureKind(cardKind, model, version).Put(context.WithoutCancel(ctx), s.Store, item, &f, nil); perr != nil {
		s.log().Error("record card failure", "paper", item, "err", perr)
	}
	s.log().Warn("card failed", "paper", item, "card", cardKind, "model", model, "reason", f.Reason)
}

// goldInput loads the target's Document.
func (s *Stage) goldInput(ctx context.Context, key string) (Input, error) {
	doc, err := s.document(ctx, key)
	switch {
	case errors.Is(err, errNoHTML):
		return Input{}, unsummarizable("the target has no HTML on arXiv or ar5iv")
	case errors.Is(err, errNotStored):
		return Input{}, fmt.Errorf("the target's document is not in the store: run fetch first")
	case err != nil:
		return Input{}, err
	}
	in := Input{Key: key, Doc: doc, Budget: s.Budget, Version: record.DocVersion(doc)}
	if in.title() == "" {
		// A page without a title: the citegraph stage may know it.
		if g, _, err := record.Graphs.Get(ctx, s.Store, key); err == nil {
			in.Title = g.Meta.Title
		}
	}
	if in.Level() == "" {
		return in, unsummarizable("the target's page has no text (conversion %s)", doc.Conversion.Severity)
	}
	return in, nil
}

// sourceInput loads a source's text: its Document when it has an arXiv ID
// and a page with body text, else the Document the pdfs stage made of its
// PDF when that has body text, else its abstract.
func (s *Stage) sourceInput(ctx context.Context, src SourceRef, item, arxivID string) (Input, error) {
	in := Input{Key: item, Title: src.Title, Abstract: src.Abstract, Budget: s.Budget}
	var why string
	if arxivID == "" {
		why = "it has no arXiv ID"
	} else {
		doc, err := s.document(ctx, arxivID)
		switch {
		case err == nil && hasBody(doc):
			in.Doc, in.Version = doc, cmp.Or(record.DocVersion(doc), record.ItemVersion(item))
			return in, nil
		case err == nil:
			in.Doc = doc // its abstract may still serve
			why = "its page has no body text"
		case errors.Is(err, errNoHTML):
			why = "arXiv and ar5iv have no HTML for it"
		case errors.Is(err, errNotStored):
			why = "its page is not in the store (the sources stage fetches it)"
		default:
			return in, err
		}
	}
	// The full text the pdfs stage made of its open-access PDF.
	switch pdf, ok, err := record.PDFDocuments.Lookup(ctx, s.Store, item); {
	case err != nil:
		return in, err
	case ok && hasBody(pdf):
		// A PDF is of the version its item names (arXiv's PDF of a pinned
		// version), else of no stated version.
		in.Doc, in.Version = pdf, record.ItemVersion(item)
		return in, nil
	case ok:
		why += "; its PDF gave no body text"
	}
	in.TextLevel = record.TextAbstract
	if in.Level() == "" {
		return in, unsummarizable("%s and there is no abstract", why)
	}
	s.log().Debug("summarizing source from its abstract", "paper", item, "why", why)
	return in, nil
}

var (
	errNotStored = errors.New("not in the store")
	errNoHTML    = errors.New("arXiv and ar5iv have no HTML for it")
)

// document returns the stored Document of a paper: the fetch stage stores
// targets' pages and the sources stage their sources'. A paper they found
// without HTML anywhere is errNoHTML.
func (s *Stage) document(ctx context.Context, arxivID string) (*record.Document, error) {
	doc, ok, err := record.Documents.Lookup(ctx, s.Store, arxivID)
	switch {
	case err != nil:
		return nil, err
	case ok:
		return doc, nil
	}
	if _, ok, err := record.NoHTMLs.Lookup(ctx, s.Store, arxivID); err != nil {
		return nil, err
	} else if ok {
		return nil, errNoHTML
	}
	return nil, errNotStored
}
