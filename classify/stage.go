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

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/client/llm/prompts"
	"github.com/groundwork/curate/injection"
	"github.com/groundwork/curate/paperprompt"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// Name is the classify stage's name in the store's ledger and in LLM
// usage.
const Name = "classify"

// HeuristicModel is the model name of the heuristic backend's outputs.
const HeuristicModel = llm.HeuristicModel

// DefaultBudget is the token budget of the paper's text when Stage.Budget
// is 0: the paper block's, the same as the gold card's, so that the two
// calls about a target share it.
const DefaultBudget = paperprompt.DefaultBudget

// Result is the outcome of Process for one target.
type Result struct {
	TargetID   string
	Selections *record.Selections // nil when the target failed
	// Stored says the selections were already in the store: nothing was
	// classified and no model was called.
	Stored  bool
	Failure *record.ClassifyFailure // set when the classification itself failed
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
	// Budget is the token budget of the paper's text in the prompt (four
	// bytes a token); the paper is trimmed by sections to it. 0 means
	// DefaultBudget.
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
	// IncludeSuspect classifies a target whose text addresses a model
	// (package injection), with those sentences taken out of the prompt.
	// Without it such a target is suspect before any model reads it: its
	// selections say why and hold none (Selections.NotClassified).
	IncludeSuspect bool
}

func (s *Stage) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// backend returns the model name and prompts the stage would use, and
// whether it is the heuristic.
func (s *Stage) backend() (model string, p *prompts.Prompt, sh *paperprompt.Shared, heuristic bool, err error) {
	model = s.Model
	if model == "" && s.LLM != nil {
		if m, ok := s.LLM.(interface{ Model() string }); ok {
			model = m.Model()
		}
	}
	if s.LLM == nil || llm.IsHeuristic(model) {
		return HeuristicModel, nil, nil, true, nil
	}
	if model == "" {
		return "", nil, nil, false, errors.New("no model name for the LLM backend")
	}
	p = s.Prompt
	if p == nil {
		if p, err = DefaultPrompt(); err != nil {
			return "", nil, nil, false, err
		}
	}
	if sh, err = paperprompt.Load(); err != nil {
		return "", nil, nil, false, err
	}
	return model, p, sh, false, nil
}

func (s *Stage) budget() int { return cmp.Or(s.Budget, DefaultBudget) }

// Classify decides every edge of g from doc and g alone: the store is not
// touched. The heuristic backend never fails; the LLM backend returns an
// error wrapping the llm error (*llm.InvalidError keeps the raw answer)
// when the model gave no usable answer.
func (s *Stage) Classify(ctx context.Context, doc *record.Document, g *record.Graph) (*record.Selections, error) {
	if g == nil {
		return nil, errors.New("classify: no reference graph")
	}
	target := cmp.Or(g.TargetID, docID(doc))
	model, p, sh, heur, err := s.backend()
	if err != nil {
		return nil, fmt.Errorf("classify %s: %w", target, err)
	}
	keys := record.RefKeys(g.Edges)
	found := injection.ScanDocument(doc, g.Edges)
	var out *record.Selections
	switch {
	case len(found) > 0 && !s.IncludeSuspect:
		// Suspect before any model reads it: nothing is asked or spent.
		version := HeuristicPromptVersion
		if !heur {
			version = sh.VersionOf(p.Version)
		}
		out = &record.Selections{TargetID: target, Model: model, PromptVersion: version, NotClassified: true}
	case heur:
		out = heuristic(doc, g, keys, target)
		if s.Meter != nil {
			s.Meter.RecordHeuristic(Name)
		}
	default:
		out, err = s.classifyLLM(ctx, doc, g, keys, target, model, p, sh, found)
		if err != nil {
			return nil, fmt.Errorf("classify %s with %s: %w", target, model, err)
		}
	}
	out.Instructions = found
	out.InputDigest = inputDigest(doc, g, p, sh, heur, s.budget())
	out.CreatedAt = time.Now().UTC()
	return out, nil
}

// Process classifies one target (its versionless arXiv ID, the store key)
// from its stored Document and Graph and stores the Selections in one
// write. Selections already stored for the same model, prompt version and
// inputs are returned as they are, without a model call, unless Force is
// set. A failure is stored as a Failure and returned as the error; earlier
// selections stay in the store (they name their own model and prompt
// version).
func (s *Stage) Process(ctx context.Context, targetKey string) (*Result, error) {
	res := &Result{TargetID: targetKey}
	if s.Store == nil {
		return res, fmt.Errorf("classify %s: no store", targetKey)
	}
	model, p, sh, heur, err := s.backend()
	if err != nil {
		return res, fmt.Errorf("classify %s: %w", targetKey, err)
	}
	doc, _, err := record.Documents.Get(ctx, s.Store, targetKey)
	if err != nil {
		return res, fmt.Errorf("classify %s: read document: %w", targetKey, err)
	}
	g, _, err := record.Graphs.Get(ctx, s.Store, targetKey)
	if err != nil {
		return res, fmt.Errorf("classify %s: read reference graph: %w", targetKey, err)
	}
	g.TargetID = targetKey

	version := HeuristicPromptVersion
	if !heur {
		version = sh.VersionOf(p.Version)
	}
	digest := inputDigest(doc, g, p, sh, heur, s.budget())
	if !s.Force {
		// Stored selections stand when made from the same inputs by the same
		// model and prompt, and the text still reads as it did: held back
		// for the same instruction-like text (and suspects still not asked
		// for), or classified whole.
		if old := s.stored(ctx, targetKey); old != nil && old.Model == model && old.PromptVersion == version &&
			old.InputDigest == digest && slices.Equal(old.Instructions, injection.ScanDocument(doc, g.Edges)) &&
			(old.NotClassified && !s.IncludeSuspect || !old.NotClassified && len(old.Selections) == len(g.Edges)) {
			s.log().Debug("classify: selections already stored", "target", targetKey, "model", model, "prompt_version", version)
			res.Selections, res.Stored = old, true
			// The bounds may have changed since: judge again, and keep the
			// record saying what it says now.
			if suspect := s.Plausibility.suspect(old); !slices.Equal(suspect, old.Suspect) {
				old.Suspect = suspect
				if _, err := record.SelectionSets.Put(ctx, s.Store, targetKey, old, selectionsMeta(old)); err != nil {
					return res, fmt.Errorf("classify %s: %w", targetKey, err)
				}
			}
			return res, nil
		}
	}

	sels, err := s.Classify(ctx, doc, g)
	if errors.Is(err, llm.ErrPending) {
		// Not classified yet, not failed: a later pass or run collects
		// the answer.
		return res, err
	}
	if err != nil {
		res.Failure = &record.ClassifyFailure{
			TargetID: targetKey, Model: model, PromptVersion: version,
			Reason: err.Error(), At: time.Now().UTC(),
		}
		var ie *llm.InvalidError
		if errors.As(err, &ie) {
			res.Failure.Raw, res.Failure.Attempts = ie.Raw, ie.Attempts
		}
		if _, perr := record.ClassifyFailures.Put(context.WithoutCancel(ctx), s.Store, targetKey, res.Failure,
			map[string]string{"model": model, "prompt_version": version}); perr != nil {
			s.log().Error("classify: store failure record", "target", targetKey, "err", perr)
		}
		s.log().Warn("classify failed", "target", targetKey, "model", model, "err", err)
		return res, err
	}
	sels.Suspect = s.Plausibility.suspect(sels)
	switch {
	case sels.NotClassified:
		s.log().Warn("classify: the paper addresses a model; held back as suspect before any model read it", "target", targetKey,
			"passages", len(sels.Instructions), "first", sels.Instructions[0].String())
	case len(sels.Suspect) > 0:
		s.log().Warn("classify: implausible selections held back as suspect", "target", targetKey, "model", sels.Model, "reasons", sels.Suspect)
	}
	if _, err := record.SelectionSets.Put(ctx, s.Store, targetKey, sels, selectionsMeta(sels)); err != nil {
		return res, fmt.Errorf("classify %s: %w", targetKey, err)
	}
	if len(sels.Unquoted) > 0 {
		s.log().Warn("classify: sources without a verified quote", "target", targetKey, "ref_keys", sels.Unquoted)
	}
	s.log().Debug("classified", "target", targetKey, "model", sels.Model, "references", len(sels.Selections),
		"sources", sels.Sources, "quotes_dropped", sels.QuotesDropped, "attempts", sels.Attempts, "cached_answer", sels.CachedAnswer)
	res.Selections = sels
	return res, nil
}

// selectionsMeta is the record metadata of stored selections.
func selectionsMeta(sels *record.Selections) map[string]string {
	meta := map[string]string{"model": sels.Model, "prompt_version": sels.PromptVersion, "sources": strconv.Itoa(sels.Sources)}
	if len(sels.Suspect) > 0 {
		meta["suspect"] = strings.Join(sels.Suspect, "; ")
	}
	return meta
}

// stored returns the target's stored selections, or nil.
func (s *Stage) stored(ctx context.Context, key string) *record.Selections {
	old, _, err := record.SelectionSets.Get(ctx, s.Store, key)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log().Warn("classify: stored selections unreadable; classifying again", "target", key, "err", err)
		}
		return nil
	}
	return old
}

// inputDigest hashes what a classification depends on besides the model:
// the document, the edges and, for the LLM, the prompt files and the
// budget.
func inputDigest(doc *record.Document, g *record.Graph, p *prompts.Prompt, sh *paperprompt.Shared, heuristic bool, budget int) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	// Encoding a Document and Edges cannot fail: strings, numbers, slices.
	_ = enc.Encode(doc)
	_ = enc.Encode(g.Edges)
	if !heuristic && p != nil {
		fmt.Fprintf(h, "prompt %s %s budget %d\n", p.Version, p.Digest, budget)
	}
	if !heuristic && sh != nil {
		fmt.Fprintf(h, "shared %s %s\n", sh.Version, sh.Digest())
	}
	return hex.EncodeToString(h.Sum(nil))
}

func docID(doc *record.Document) string {
	if doc == nil {
		return ""
	}
	return doc.ID
}
