package classify

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/groundwork/curate/citegraph"
	"github.com/groundwork/curate/fetch"
	"github.com/groundwork/curate/llm"
	"github.com/groundwork/curate/llm/prompts"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// StageName is the classify stage's name in the store's ledger and in LLM
// usage.
const StageName = "classify"

// Record kinds the classify stage writes for a target.
const (
	KindSelections = "selections"       // the Selections
	KindFailure    = "classify-failure" // the last Failure, kept for inspection
)

// HeuristicModel is the model name of the heuristic backend's outputs.
const HeuristicModel = llm.HeuristicModel

// DefaultBudget is the prompt token budget when Stage.Budget is 0.
const DefaultBudget = 12000

// Selections is what the stage stores for a target (kind "selections"):
// exactly one Selection per edge of the target's Graph, in edge order.
type Selections struct {
	TargetID      string `json:"target_id"`
	Model         string `json:"model"`
	PromptVersion string `json:"prompt_version"`
	// ServedBy is the model name the endpoint reported, which may be more
	// specific than Model ("gpt-4o-mini-2024-07-18").
	ServedBy string `json:"served_by,omitempty"`
	// InputDigest hashes what the selections were made from (document,
	// edges, prompt file, budget); a stored record with another digest is
	// redone.
	InputDigest string             `json:"input_digest"`
	Selections  []record.Selection `json:"selections"`
	Sources     int                `json:"sources"`
	QuotesKept  int                `json:"quotes_kept"`
	// QuotesDropped counts quotes of sources that did not occur in the
	// target's text (or were too short to be evidence).
	QuotesDropped int `json:"quotes_dropped"`
	// Unquoted lists the ref keys of sources left without a verified
	// quote: they keep their role, flagged here.
	Unquoted []string `json:"unquoted_sources,omitempty"`
	// InvalidAnswers counts the model's answers that failed validation and
	// were asked again; Attempts is all answers requested (0: none, as for
	// the heuristic or a target without references).
	InvalidAnswers int       `json:"invalid_answers"`
	Attempts       int       `json:"attempts"`
	Usage          llm.Usage `json:"usage"`
	// CachedAnswer says the model's answer came from the LLM cache.
	CachedAnswer bool      `json:"cached_answer,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	// Suspect lists why the selections look implausible (Plausibility);
	// a suspect target is held back unless asked for by name.
	Suspect []string `json:"suspect,omitempty"`
}

// count fills Sources and Unquoted from the selections.
func (s *Selections) count() {
	s.Sources, s.Unquoted = 0, nil
	for _, sel := range s.Selections {
		if sel.Role == record.RoleSource {
			s.Sources++
			if len(sel.Quotes) == 0 {
				s.Unquoted = append(s.Unquoted, sel.RefKey)
			}
		}
	}
}

// Failure is what the stage stores (kind "classify-failure") when a target
// could not be classified: the reason and, for an unusable model answer,
// the answer as the model gave it.
type Failure struct {
	TargetID      string    `json:"target_id"`
	Model         string    `json:"model"`
	PromptVersion string    `json:"prompt_version"`
	Reason        string    `json:"reason"`
	Raw           string    `json:"raw,omitempty"`
	Attempts      int       `json:"attempts,omitempty"`
	At            time.Time `json:"at"`
}

// Result is the outcome of Process for one target.
type Result struct {
	TargetID   string
	Selections *Selections // nil when the target failed
	// Stored says the selections were already in the store: nothing was
	// classified and no model was called.
	Stored  bool
	Failure *Failure // set when the classification itself failed
}

// Stage classifies the references of targets. Its methods are safe for
// concurrent use.
type Stage struct {
	// Store is where Process reads targets and writes selections;
	// Classify does not use it.
	Store *store.Store
	// LLM answers the classification prompt; nil, or Model naming the
	// heuristic, selects the heuristic backend.
	LLM llm.Completer
	// Model is the model name recorded on the selections; empty takes the
	// Completer's Model() if it has one (as *llm.Client does).
	Model string
	// Budget is the prompt's token budget (four bytes a token): the body
	// of the paper is trimmed to what the rest of the prompt leaves. 0
	// means DefaultBudget.
	Budget int
	Log    *slog.Logger
	// Meter counts the heuristic's answers (the Client meters LLM calls).
	Meter *llm.Meter
	// Force classifies again even when the store holds current selections.
	// The LLM client's response cache may still answer the same prompt; a
	// new prompt version (or a client without a store) asks the model.
	Force bool
	// Prompt replaces the embedded classify prompt (experiments, tests).
	Prompt *prompts.Prompt
	// Plausibility bounds the selections before they are held back as
	// suspect (zero: the defaults).
	Plausibility Plausibility
}

func (s *Stage) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// backend returns the model name and prompt version the stage would
// record, and whether it is the heuristic.
func (s *Stage) backend() (model string, p *prompts.Prompt, heuristic bool, err error) {
	model = s.Model
	if model == "" && s.LLM != nil {
		if m, ok := s.LLM.(interface{ Model() string }); ok {
			model = m.Model()
		}
	}
	if s.LLM == nil || llm.IsHeuristic(model) {
		return HeuristicModel, nil, true, nil
	}
	if model == "" {
		return "", nil, false, errors.New("no model name for the LLM backend")
	}
	p = s.Prompt
	if p == nil {
		if p, err = DefaultPrompt(); err != nil {
			return "", nil, false, err
		}
	}
	return model, p, false, nil
}

func (s *Stage) budget() int { return cmp.Or(s.Budget, DefaultBudget) }

// Classify decides every edge of g from doc and g alone: the store is not
// touched. The heuristic backend never fails; the LLM backend returns an
// error wrapping the llm error (*llm.InvalidError keeps the raw answer)
// when the model gave no usable answer.
func (s *Stage) Classify(ctx context.Context, doc *record.Document, g *citegraph.Graph) (*Selections, error) {
	if g == nil {
		return nil, errors.New("classify: no reference graph")
	}
	target := cmp.Or(g.TargetID, docID(doc))
	model, p, heur, err := s.backend()
	if err != nil {
		return nil, fmt.Errorf("classify %s: %w", target, err)
	}
	keys := RefKeys(g.Edges)
	var out *Selections
	if heur {
		out = heuristic(doc, g, keys, target)
		if s.Meter != nil {
			s.Meter.RecordHeuristic(StageName)
		}
	} else {
		out, err = s.classifyLLM(ctx, doc, g, keys, target, model, p)
		if err != nil {
			return nil, fmt.Errorf("classify %s with %s: %w", target, model, err)
		}
	}
	out.InputDigest = inputDigest(doc, g, p, heur, s.budget())
	out.CreatedAt = time.Now().UTC()
	return out, nil
}

// Process classifies one target (its versionless arXiv ID, the store key)
// from its stored Document and Graph, stores the Selections in one write
// and marks the ledger. Selections already stored for the same model,
// prompt version and inputs are returned as they are, without a model
// call, unless Force is set. A failure is marked in the ledger with its
// reason, stored as a Failure, and returned as the error; earlier
// selections stay in the store (they name their own model and prompt
// version) but the ledger says failed.
func (s *Stage) Process(ctx context.Context, targetKey string) (*Result, error) {
	res := &Result{TargetID: targetKey}
	if s.Store == nil {
		return res, fmt.Errorf("classify %s: no store", targetKey)
	}
	model, p, heur, err := s.backend()
	if err != nil {
		err = fmt.Errorf("classify %s: %w", targetKey, err)
		s.mark(ctx, targetKey, store.StatusFailed, err)
		return res, err
	}
	var doc record.Document
	if _, err := s.Store.GetJSON(ctx, targetKey, fetch.KindDocument, &doc); err != nil {
		err = fmt.Errorf("classify %s: read document: %w", targetKey, err)
		s.mark(ctx, targetKey, store.StatusFailed, err)
		return res, err
	}
	var g citegraph.Graph
	if _, err := s.Store.GetJSON(ctx, targetKey, citegraph.KindGraph, &g); err != nil {
		err = fmt.Errorf("classify %s: read reference graph: %w", targetKey, err)
		s.mark(ctx, targetKey, store.StatusFailed, err)
		return res, err
	}
	g.TargetID = targetKey

	version := HeuristicPromptVersion
	if !heur {
		version = p.Version
	}
	digest := inputDigest(&doc, &g, p, heur, s.budget())
	if !s.Force {
		if old := s.stored(ctx, targetKey); old != nil && old.Model == model && old.PromptVersion == version &&
			old.InputDigest == digest && len(old.Selections) == len(g.Edges) {
			s.log().Debug("classify: selections already stored", "target", targetKey, "model", model, "prompt_version", version)
			res.Selections, res.Stored = old, true
			// The bounds may have changed since: judge again, and keep the
			// record saying what it says now.
			if suspect := s.Plausibility.Check(old.Selections); !slices.Equal(suspect, old.Suspect) {
				old.Suspect = suspect
				if _, err := s.Store.PutJSON(ctx, targetKey, KindSelections, old, selectionsMeta(old)); err != nil {
					err = fmt.Errorf("classify %s: %w", targetKey, err)
					s.mark(ctx, targetKey, store.StatusFailed, err)
					return res, err
				}
			}
			s.markSelections(ctx, targetKey, old)
			return res, nil
		}
	}

	if err := s.Store.SetStatus(ctx, targetKey, StageName, store.StatusRunning, ""); err != nil {
		return res, fmt.Errorf("classify %s: %w", targetKey, err)
	}
	sels, err := s.Classify(ctx, &doc, &g)
	if err != nil {
		res.Failure = &Failure{
			TargetID: targetKey, Model: model, PromptVersion: version,
			Reason: err.Error(), At: time.Now().UTC(),
		}
		var ie *llm.InvalidError
		if errors.As(err, &ie) {
			res.Failure.Raw, res.Failure.Attempts = ie.Raw, ie.Attempts
		}
		if _, perr := s.Store.PutJSON(context.WithoutCancel(ctx), targetKey, KindFailure, res.Failure,
			map[string]string{"model": model, "prompt_version": version}); perr != nil {
			s.log().Error("classify: store failure record", "target", targetKey, "err", perr)
		}
		s.log().Warn("classify failed", "target", targetKey, "model", model, "err", err)
		s.mark(ctx, targetKey, store.StatusFailed, err)
		return res, err
	}
	sels.Suspect = s.Plausibility.Check(sels.Selections)
	if len(sels.Suspect) > 0 {
		s.log().Warn("classify: implausible selections held back as suspect", "target", targetKey, "model", sels.Model, "reasons", sels.Suspect)
	}
	if _, err := s.Store.PutJSON(ctx, targetKey, KindSelections, sels, selectionsMeta(sels)); err != nil {
		err = fmt.Errorf("classify %s: %w", targetKey, err)
		s.mark(ctx, targetKey, store.StatusFailed, err)
		return res, err
	}
	if len(sels.Unquoted) > 0 {
		s.log().Warn("classify: sources without a verified quote", "target", targetKey, "ref_keys", sels.Unquoted)
	}
	s.log().Debug("classified", "target", targetKey, "model", sels.Model, "references", len(sels.Selections),
		"sources", sels.Sources, "quotes_dropped", sels.QuotesDropped, "attempts", sels.Attempts, "cached_answer", sels.CachedAnswer)
	res.Selections = sels
	s.markSelections(ctx, targetKey, sels)
	return res, nil
}

// selectionsMeta is the record metadata of stored selections.
func selectionsMeta(sels *Selections) map[string]string {
	meta := map[string]string{"model": sels.Model, "prompt_version": sels.PromptVersion, "sources": strconv.Itoa(sels.Sources)}
	if len(sels.Suspect) > 0 {
		meta["suspect"] = strings.Join(sels.Suspect, "; ")
	}
	return meta
}

// markSelections records done, or suspect with the reasons.
func (s *Stage) markSelections(ctx context.Context, key string, sels *Selections) {
	if len(sels.Suspect) == 0 {
		s.mark(ctx, key, store.StatusDone, nil)
		return
	}
	if e := s.Store.SetStatus(context.WithoutCancel(ctx), key, StageName, store.StatusSuspect, strings.Join(sels.Suspect, "; ")); e != nil {
		s.log().Error("classify: record status", "target", key, "err", e)
	}
}

// stored returns the target's stored selections, or nil.
func (s *Stage) stored(ctx context.Context, key string) *Selections {
	var old Selections
	if _, err := s.Store.GetJSON(ctx, key, KindSelections, &old); err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log().Warn("classify: stored selections unreadable; classifying again", "target", key, "err", err)
		}
		return nil
	}
	return &old
}

// mark records the stage status; a ledger write failure is logged, since
// the records themselves are already written.
func (s *Stage) mark(ctx context.Context, key, status string, err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	// The ledger must say what happened even when ctx was cancelled.
	if e := s.Store.SetStatus(context.WithoutCancel(ctx), key, StageName, status, msg); e != nil {
		s.log().Error("classify: record status", "target", key, "err", e)
	}
}

// RefKeys returns the ref_key of each edge, in order, unique within the
// target: the bibliography key when the edge has one ("bib.bib12"), else
// "s2:" and the Semantic Scholar paper ID, else "edge:N" with N the edge's
// 1-based position in the Graph (the number the prompt gives it). A key
// already taken by an earlier edge (S2 listing a paper twice) falls back to
// the position, with ".2", ".3", … appended in the unlikely case that is
// taken too.
func RefKeys(edges []record.Edge) []string {
	keys := make([]string, len(edges))
	used := make(map[string]bool, len(edges))
	for i, e := range edges {
		k := ""
		switch {
		case e.RefKey != nil && *e.RefKey != "":
			k = *e.RefKey
		case e.S2PaperID != nil && *e.S2PaperID != "":
			k = "s2:" + *e.S2PaperID
		}
		if k == "" || used[k] {
			k = "edge:" + strconv.Itoa(i+1)
			for j := 2; used[k]; j++ {
				k = "edge:" + strconv.Itoa(i+1) + "." + strconv.Itoa(j)
			}
		}
		used[k] = true
		keys[i] = k
	}
	return keys
}

// inputDigest hashes what a classification depends on besides the model:
// the document, the edges and, for the LLM, the prompt file and the
// budget.
func inputDigest(doc *record.Document, g *citegraph.Graph, p *prompts.Prompt, heuristic bool, budget int) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	// Encoding a Document and Edges cannot fail: strings, numbers, slices.
	_ = enc.Encode(doc)
	_ = enc.Encode(g.Edges)
	if !heuristic && p != nil {
		fmt.Fprintf(h, "prompt %s %s budget %d\n", p.Version, p.Digest, budget)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func docID(doc *record.Document) string {
	if doc == nil {
		return ""
	}
	return doc.ID
}
