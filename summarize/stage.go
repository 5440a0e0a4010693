package summarize

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/groundwork/curate/arxiv"
	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/llm"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// Record kinds the stage writes. Card kinds carry the card kind, model and
// prompt version (see CardKind), so each combination is its own record.
const (
	// KindCardIndex marks a paper item that holds cards, so CardsInStore
	// can find them; its content is only the paper's key.
	KindCardIndex = "card-index"
	// KindResult is a target's Result: its gold card and, per source, the
	// text level and card or the reason there is none.
	KindResult = "summary"

	cardKindPrefix    = "card:"
	failureKindPrefix = "card-failure:"
	s2ItemPrefix      = "s2:"
	titleItemPrefix   = "title:"
)

// sourceConcurrency bounds the sources of one target summarized at once;
// the LLM client and the fetcher apply their own limits below it.
const sourceConcurrency = 4

// CardKind returns the store record kind of a card: "card:" + card kind
// ("gold" or "source") + ":" + model + ":" + prompt version, e.g.
// "card:source:heuristic:heuristic-v2". Cards live under the paper's own
// item, so a paper has at most one card per (card kind, model, prompt
// version), whichever target asked for it.
func CardKind(cardKind, model, promptVersion string) string {
	return cardKindPrefix + cardKind + ":" + model + ":" + promptVersion
}

// FailureKind returns the record kind of the last failed attempt at the
// card CardKind names: a Failure with the reason and the raw answer.
func FailureKind(cardKind, model, promptVersion string) string {
	return failureKindPrefix + cardKind + ":" + model + ":" + promptVersion
}

// SourceRef is a source of a target, as the classify stage selected it.
type SourceRef struct {
	Key       string // the reference's key in the target (e.g. "bib.bib12"), echoed in the Result
	ArxivID   string // with or without version; "" when it has none
	S2PaperID string
	Title     string
	Abstract  string // Semantic Scholar's, for sources without full text
}

// CardResult is the outcome for one card of a target: a card (written now
// or reused), or why there is none.
type CardResult struct {
	Key   string `json:"key"`             // SourceRef.Key, or the target ID for the gold card
	Paper string `json:"paper,omitempty"` // the store item of the paper
	// StoreKind is the record kind the card is stored under (CardKind).
	StoreKind string       `json:"store_kind,omitempty"`
	TextLevel string       `json:"text_level,omitempty"` // TextFull or TextAbstract
	Card      *record.Card `json:"card,omitempty"`
	Reused    bool         `json:"reused,omitempty"`
	// Unsummarizable is set when the paper has no text to summarize
	// (Failure says why); such a source does not fail the target.
	Unsummarizable bool   `json:"unsummarizable,omitempty"`
	Failure        string `json:"failure,omitempty"`
}

// Result is the outcome of summarizing one target.
type Result struct {
	Target         string       `json:"target"`
	Model          string       `json:"model"`
	Gold           CardResult   `json:"gold"`
	Sources        []CardResult `json:"sources"`
	Written        int          `json:"written"`        // cards summarized in this run
	Reused         int          `json:"reused"`         // cards found in the store
	Failed         int          `json:"failed"`         // cards that failed (LLM, fetch, store)
	Unsummarizable int          `json:"unsummarizable"` // papers without text
	// OtherLabels counts [Other] labels among this target's cards.
	OtherLabels int `json:"other_labels"`
}

// Failure is the stored record of a card that could not be written.
type Failure struct {
	Paper         string    `json:"paper"`
	CardKind      string    `json:"card_kind"`
	Model         string    `json:"model"`
	PromptVersion string    `json:"prompt_version"`
	TextLevel     string    `json:"text_level,omitempty"`
	Reason        string    `json:"reason"`
	Attempts      int       `json:"attempts,omitempty"`
	Raw           string    `json:"raw,omitempty"` // the last answer as the model sent it
	At            time.Time `json:"at"`
}

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
	// Fetch fetches a paper's page into the store under its versionless
	// arXiv ID (fetch.Fetcher.Fetch, which makes no request for a stored
	// paper); an error wrapping fetch.ErrNoHTML means there is no page to
	// get. nil never fetches: only papers already stored have full text.
	Fetch func(ctx context.Context, arxivID string) error
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

	mu     sync.Mutex
	locks  map[string]*keyLock
	forced map[string]bool
}

type keyLock struct {
	mu sync.Mutex
	n  int
}

// lock serializes work on one card, so concurrent targets sharing a source
// summarize it once: the second finds the first's card.
func (s *Stage) lock(key string) (unlock func()) {
	s.mu.Lock()
	if s.locks == nil {
		s.locks = map[string]*keyLock{}
	}
	l := s.locks[key]
	if l == nil {
		l = &keyLock{}
		s.locks[key] = l
	}
	l.n++
	s.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		s.mu.Lock()
		if l.n--; l.n == 0 {
			delete(s.locks, key)
		}
		s.mu.Unlock()
	}
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
	if gold, err = PromptVersion(CardGold); err != nil {
		return "", "", "", fmt.Errorf("summarize: %w", err)
	}
	if source, err = PromptVersion(CardSource); err != nil {
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
// the Result (kind KindResult) and the ledger status of stage "summarize":
// done when the gold card exists and no source failed (sources without
// any text do not count as failures), failed otherwise, with the reasons.
// Failures of single cards are reported in the Result; the error is for
// an invalid target ID, a cancelled context or a store that cannot record
// the outcome.
func (s *Stage) ProcessTarget(ctx context.Context, targetKey string, sources []SourceRef) (*Result, error) {
	id, err := arxiv.Parse(targetKey)
	if err != nil {
		return nil, fmt.Errorf("summarize target %q: %w", targetKey, err)
	}
	key := fetch.Key(id)
	model, gold, source, err := s.Versions()
	if err != nil {
		return nil, fmt.Errorf("summarize target %s: %w", key, err)
	}
	if err := s.Store.SetStatus(ctx, key, StageName, store.StatusRunning, ""); err != nil {
		return nil, fmt.Errorf("summarize target %s: %w", key, err)
	}
	res := &Result{Target: key, Model: model, Sources: make([]CardResult, len(sources))}
	res.Gold = s.card(ctx, key, key, CardGold, model, gold, func() (Input, error) { return s.goldInput(ctx, key) })

	sem := make(chan struct{}, sourceConcurrency)
	var wg sync.WaitGroup
	for i, src := range sources {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			res.Sources[i] = s.source(ctx, src, model, source)
		}()
	}
	wg.Wait()

	if err := ctx.Err(); err != nil {
		s.mark(ctx, key, store.StatusFailed, "interrupted: "+err.Error())
		return nil, fmt.Errorf("summarize target %s: %w", key, err)
	}
	var problems []string
	for i, r := range append([]CardResult{res.Gold}, res.Sources...) {
		switch {
		case r.Card != nil && r.Reused:
			res.Reused++
		case r.Card != nil:
			res.Written++
		case r.Unsummarizable:
			res.Unsummarizable++
		default:
			res.Failed++
		}
		if r.Card != nil && (r.Card.Opportunity == Other || r.Card.Paradigm == Other) {
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
	if _, err := s.Store.PutJSON(ctx, key, KindResult, res, map[string]string{"model": model}); err != nil {
		s.mark(ctx, key, store.StatusFailed, err.Error())
		return nil, fmt.Errorf("summarize target %s: %w", key, err)
	}
	status := store.StatusDone
	if len(problems) > 0 {
		status = store.StatusFailed
	}
	s.mark(ctx, key, status, strings.Join(problems, "; "))
	s.log().Debug("summarized target", "target", key, "model", model, "written", res.Written, "reused", res.Reused,
		"failed", res.Failed, "unsummarizable", res.Unsummarizable)
	return res, nil
}

// mark records the ledger status; the ledger must say what happened even
// when ctx was cancelled.
func (s *Stage) mark(ctx context.Context, key, status, msg string) {
	if err := s.Store.SetStatus(context.WithoutCancel(ctx), key, StageName, status, msg); err != nil {
		s.log().Error("record summarize status", "target", key, "err", err)
	}
}

// source writes or reuses the card of one source.
func (s *Stage) source(ctx context.Context, src SourceRef, model, version string) CardResult {
	item, arxivID := s.paperItem(src)
	if item == "" {
		return CardResult{Key: src.Key, Unsummarizable: true,
			Failure: "no arXiv ID, Semantic Scholar ID or title to identify the paper"}
	}
	return s.card(ctx, src.Key, item, CardSource, model, version, func() (Input, error) {
		return s.sourceInput(ctx, src, item, arxivID)
	})
}

// PaperItems returns the store items a paper's cards may be kept under,
// in the order the stage picks them: its versionless arXiv ID, else
// "s2:"+paperId, else "title:"+normalized title. An invalid arXiv ID is
// skipped. Other stages look cards up through it.
func PaperItems(arxivID, s2PaperID, title string) []string {
	var items []string
	if id, err := arxiv.Parse(strings.TrimSpace(arxivID)); err == nil {
		items = append(items, fetch.Key(id))
	}
	if p := strings.TrimSpace(s2PaperID); p != "" {
		items = append(items, s2ItemPrefix+p)
	}
	if t := citegraph.NormalizeTitle(title); t != "" {
		items = append(items, titleItemPrefix+t)
	}
	return items
}

// paperItem returns the store item of a source's paper (the first of
// PaperItems) and its arXiv ID if it has a valid one.
func (s *Stage) paperItem(src SourceRef) (item, arxivID string) {
	if a := strings.TrimSpace(src.ArxivID); a != "" {
		if id, err := arxiv.Parse(a); err == nil {
			return fetch.Key(id), fetch.Key(id)
		}
		s.log().Warn("source has an invalid arXiv ID; identifying it otherwise", "key", src.Key, "arxiv_id", a)
	}
	if items := PaperItems("", src.S2PaperID, src.Title); len(items) > 0 {
		return items[0], ""
	}
	return "", ""
}

// card returns the card of kind for the paper stored as item: the stored
// one if it is there and still valid, else one written from load's Input.
func (s *Stage) card(ctx context.Context, key, item, cardKind, model, version string, load func() (Input, error)) CardResult {
	kind := CardKind(cardKind, model, version)
	res := CardResult{Key: key, Paper: item, StoreKind: kind}
	lockKey := item + "\x00" + kind
	defer s.lock(lockKey)()

	if s.mayReuse(lockKey) {
		var c record.Card
		rec, err := s.Store.GetJSON(ctx, item, kind, &c)
		switch {
		case err == nil:
			verr := Validate(&c, cardKind)
			if verr == nil {
				res.Card, res.Reused, res.TextLevel = &c, true, rec.Meta["text_level"]
				return res
			}
			s.log().Warn("stored card fails validation; writing it again", "paper", item, "kind", kind, "reason", verr)
		case !errors.Is(err, store.ErrNotFound):
			s.log().Warn("stored card unreadable; writing it again", "paper", item, "kind", kind, "err", err)
		}
	}

	in, err := load()
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
	c, err := s.summarize(ctx, in, cardKind, model)
	if errors.Is(err, ErrNoText) || errors.Is(err, ErrTooLittleText) {
		res.Unsummarizable, res.Failure = true, err.Error()
		return res
	}
	if err != nil {
		res.Failure = err.Error()
		s.recordFailure(ctx, item, cardKind, model, version, res.TextLevel, err)
		return res
	}
	meta := map[string]string{"text_level": res.TextLevel, "card_kind": cardKind}
	if _, err := s.Store.PutJSON(ctx, item, kind, c, meta); err != nil {
		res.Failure = err.Error()
		return res
	}
	if _, err := s.Store.PutJSON(ctx, item, KindCardIndex, map[string]string{"paper": item}, nil); err != nil {
		s.log().Warn("record card index", "paper", item, "err", err)
	}
	s.markWritten(lockKey)
	res.Card = c
	return res
}

func (s *Stage) summarize(ctx context.Context, in Input, cardKind, model string) (*record.Card, error) {
	if llm.IsHeuristic(model) {
		c, err := Heuristic(in, cardKind)
		if err == nil && s.Meter != nil {
			s.Meter.RecordHeuristic(StageName)
		}
		return c, err
	}
	return summarizeLLM(ctx, s.LLM, model, in, cardKind)
}

// recordFailure keeps the last failed attempt at a card, with the model's
// raw answer when it gave one, for inspection.
func (s *Stage) recordFailure(ctx context.Context, item, cardKind, model, version, level string, err error) {
	f := Failure{Paper: item, CardKind: cardKind, Model: model, PromptVersion: version, TextLevel: level,
		Reason: err.Error(), At: time.Now().UTC()}
	var ie *llm.InvalidError
	if errors.As(err, &ie) {
		f.Reason, f.Attempts, f.Raw = ie.Reason, ie.Attempts, ie.Raw
	}
	if _, perr := s.Store.PutJSON(context.WithoutCancel(ctx), item, FailureKind(cardKind, model, version), f, nil); perr != nil {
		s.log().Error("record card failure", "paper", item, "err", perr)
	}
	s.log().Warn("card failed", "paper", item, "card", cardKind, "model", model, "reason", f.Reason)
}

// goldInput loads the target's Document.
func (s *Stage) goldInput(ctx context.Context, key string) (Input, error) {
	doc, err := s.document(ctx, key)
	switch {
	case errors.Is(err, fetch.ErrNoHTML):
		return Input{}, unsummarizable("the target has no HTML on arXiv or ar5iv")
	case errors.Is(err, errNotStored):
		return Input{}, fmt.Errorf("the target's document is not in the store: run fetch first")
	case err != nil:
		return Input{}, err
	}
	in := Input{Key: key, Doc: doc, Budget: s.Budget}
	if in.title() == "" {
		// A page without a title: the citegraph stage may know it.
		var g citegraph.Graph
		if _, err := s.Store.GetJSON(ctx, key, citegraph.KindGraph, &g); err == nil {
			in.Title = g.Meta.Title
		}
	}
	if in.Level() == "" {
		return in, unsummarizable("the target's page has no text (conversion %s)", doc.Conversion.Severity)
	}
	return in, nil
}

// sourceInput loads a source's text: its Document when it has an arXiv ID
// and a page with body text, else its abstract.
func (s *Stage) sourceInput(ctx context.Context, src SourceRef, item, arxivID string) (Input, error) {
	in := Input{Key: item, Title: src.Title, Abstract: src.Abstract, Budget: s.Budget}
	var why string
	if arxivID == "" {
		why = "it has no arXiv ID"
	} else {
		doc, err := s.document(ctx, arxivID)
		switch {
		case err == nil && hasBody(doc):
			in.Doc = doc
			return in, nil
		case err == nil:
			in.Doc = doc // its abstract may still serve
			why = "its page has no body text"
		case errors.Is(err, fetch.ErrNoHTML):
			why = "arXiv and ar5iv have no HTML for it"
		case errors.Is(err, errNotStored):
			why = "its page is not in the store and fetching is off"
		default:
			return in, err
		}
	}
	in.TextLevel = TextAbstract
	if in.Level() == "" {
		return in, unsummarizable("%s and there is no abstract", why)
	}
	s.log().Debug("summarizing source from its abstract", "paper", item, "why", why)
	return in, nil
}

var errNotStored = errors.New("not in the store")

// document returns the stored Document of a paper, fetching it first
// through the Fetch hook when the store lacks it.
func (s *Stage) document(ctx context.Context, arxivID string) (*record.Document, error) {
	var doc record.Document
	_, err := s.Store.GetJSON(ctx, arxivID, fetch.KindDocument, &doc)
	if err == nil {
		return &doc, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if s.Fetch == nil {
		return nil, errNotStored
	}
	if err := s.Fetch(ctx, arxivID); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", arxivID, err)
	}
	if _, err := s.Store.GetJSON(ctx, arxivID, fetch.KindDocument, &doc); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", arxivID, err)
	}
	return &doc, nil
}
