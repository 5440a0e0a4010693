package tuples

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/paperprompt"
	"github.com/groundwork/curate/record"
)

// Tokens of a tuple request besides the paper's text and the shared
// prompt, for estimates: the task, and the tuple (some twenty claims,
// each with its quote).
const (
	taskTokens   = 60
	answerTokens = 1500
)

// Store is what the stage reads and writes (*store.Store).
type Store interface {
	record.Getter
	record.Putter
}

// Stage is the tuples stage: one idea tuple per target that has its gold
// card, asked of the model with the shared paper prompt (so the call reads
// the target's paper block from the provider's prompt cache, as its gold
// card does), or made by the heuristic backend offline; stored under
// record.IdeaTupleSets and reused while its inputs are unchanged.
type Stage struct {
	Store Store
	// LLM asks the model; nil (or Model llm.HeuristicModel) selects the
	// heuristic backend.
	LLM llm.Completer
	// Model is the model name recorded and digested; "" takes the LLM's
	// own Model() name.
	Model string
	// Budget is the tokens of text the paper block holds: the gold card's
	// (summarize's budget), so that the block is the one it sent
	// (paperprompt.DefaultBudget when 0).
	Budget int
	// Force makes the tuple again even when a current one is stored.
	Force bool
	Log   *slog.Logger
	// Meter counts the heuristic backend's tuples (an LLM client meters
	// its own calls); nil counts nothing.
	Meter *llm.Meter
}

func (s *Stage) budget() int { return cmp.Or(s.Budget, paperprompt.DefaultBudget) }

func (s *Stage) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// Declare is the tuples stage's row of the stage table.
func (s *Stage) Declare() pipeline.Decl {
	kind := record.IdeaTupleSets.Name()
	f := pipeline.FieldFrom(record.FieldIdea, kind,
		"the target's research idea as an InnoEval six-tuple: summary, motivations, research_questions, methods (with steps), experimental_settings, expected_results, each a list of self-contained claims with the paper's verbatim quote; backend and model that made it; claims dropped by why",
		(*record.IdeaTuples).Column)
	pipeline.CountsOf(f, func(v *record.Idea) []pipeline.Count {
		heuristic := 0
		if v.Backend == record.TupleBackendHeuristic {
			heuristic = 1
		}
		return []pipeline.Count{
			{What: "claims dropped for a quote not in the paper", N: v.Unverified},
			{What: "claims dropped as not self-contained", N: v.NotSelfContained},
			{What: "claims dropped as not atomic", N: v.NotAtomic},
			{What: "ideas made by the heuristic backend (sentences picked by cue words, not a model's reading)", N: heuristic},
		}
	})
	return pipeline.Decl{
		Name: Name, About: "the target's idea as an InnoEval six-tuple of claims with verified quotes", Workers: 4,
		Reads:    []string{record.Documents.Name(), record.Summaries.Name()},
		Optional: []string{record.Graphs.Name()},
		Writes:   []string{kind},
		Before:   []string{"summarize"},
		Requests: []pipeline.Request{{Service: llm.DefaultService,
			LLM: &pipeline.Tokens{Shared: true, Fixed: taskTokens, Text: s.budget(), Output: answerTokens, ReadsPaper: true}}},
		Field: f,
	}
}

// backend returns the model a tuple is made and digested with, and
// whether it is the heuristic.
func (s *Stage) backend() (Made, error) {
	if s.LLM == nil || llm.IsHeuristic(s.Model) {
		return Made{Backend: record.TupleBackendHeuristic, Model: HeuristicName}, nil
	}
	m := Made{Backend: record.TupleBackendLLM, Model: s.Model}
	if m.Model == "" {
		if n, ok := s.LLM.(interface{ Model() string }); ok {
			m.Model = n.Model()
		}
	}
	if m.Model == "" {
		return Made{}, errors.New("tuples: no model name: set Stage.Model")
	}
	v, err := PromptVersion()
	if err != nil {
		return Made{}, fmt.Errorf("tuples: %w", err)
	}
	m.PromptVersion = v
	return m, nil
}

// Do makes or reuses the idea tuple of one target. A target without a
// gold card is skipped: it cannot become an instance, and a tuple would
// only cost a call. A tuple missing a required field is stored (it says
// what was dropped) and fails the target, now and on every run that finds
// it standing, until its inputs change or Force makes it again.
func (s *Stage) Do(ctx context.Context, key string) (string, error) {
	sum, ok, err := record.Summaries.Lookup(ctx, s.Store, key)
	switch {
	case err != nil:
		return "", fmt.Errorf("tuples %s: %w", key, err)
	case !ok || sum.Gold.Card == nil:
		return pipeline.Skipped, nil
	}
	doc, ok, err := record.Documents.Lookup(ctx, s.Store, key)
	switch {
	case err != nil:
		return "", fmt.Errorf("tuples %s: %w", key, err)
	case !ok:
		return "", fmt.Errorf("tuples %s: the target's document is not in the store: run fetch first", key)
	}
	m, err := s.backend()
	if err != nil {
		return "", err
	}
	in := Input{Key: key, Doc: doc, Budget: s.budget()}
	if in.paper().Title == "" {
		// A page without a title: the citegraph stage may know it, as
		// the gold card's input does.
		if g, ok, err := record.Graphs.Lookup(ctx, s.Store, key); err == nil && ok {
			in.Title = g.Meta.Title
		}
	}
	digest := inputDigest(doc, m, in.Budget)
	if !s.Force {
		if old, ok, err := record.IdeaTupleSets.Lookup(ctx, s.Store, key); err != nil {
			s.log().Warn("stored idea tuple unreadable; making it again", "target", key, "err", err)
		} else if ok && old.InputDigest == digest {
			return pipeline.Reused, incomplete(key, old)
		}
	}
	var r record.IdeaTuples
	if m.Backend == record.TupleBackendHeuristic {
		r = Offline(in)
		if s.Meter != nil {
			s.Meter.RecordHeuristic(Name)
		}
	} else {
		r, err = Extract(ctx, s.LLM, m.Model, in)
		var pe *llm.PendingError
		switch {
		case errors.As(err, &pe) && pe.Batch == "":
			return "", pipeline.Wait("its LLM request is queued for the next batch")
		case errors.As(err, &pe):
			return "", pipeline.Wait(fmt.Sprintf("its LLM request is %s in batch %s", pe.State, pe.Batch))
		case err != nil:
			return "", err
		}
	}
	r.InputDigest = digest
	if _, err := record.IdeaTupleSets.Put(ctx, s.Store, key, &r, map[string]string{"backend": r.Backend, "model": r.Model}); err != nil {
		return "", fmt.Errorf("tuples %s: %w", key, err)
	}
	s.log().Debug("idea tuple", "target", key, "backend", r.Backend, "unverified", r.Unverified,
		"not_self_contained", r.NotSelfContained, "not_atomic", r.NotAtomic, "missing", r.Missing)
	return pipeline.Done, incomplete(key, &r)
}

// inputDigest is the stage's digest of a tuple's inputs: InputDigest's,
// and the paper block's budget.
func inputDigest(doc *record.Document, m Made, budget int) string {
	return InputDigest(doc, m) + fmt.Sprintf("/%d", budget)
}

// incomplete is the failure of a tuple missing a required field, saying
// which and why (nil for a complete one).
func incomplete(key string, r *record.IdeaTuples) error {
	if Complete(*r) {
		return nil
	}
	missing := r.Idea.Missing()
	var why []string
	for _, d := range r.Dropped {
		for _, f := range missing {
			if d.Field == f && len(why) < 3 {
				why = append(why, fmt.Sprintf("%s %q: %s", d.Field, d.Claim, cmp.Or(d.Detail, d.Why)))
			}
		}
	}
	msg := fmt.Sprintf("tuples %s: the idea tuple has no verified claim of %s (%s backend)", key, strings.Join(missing, ", "), r.Backend)
	if len(why) > 0 {
		msg += ": dropped " + strings.Join(why, "; ")
	}
	return errors.New(msg)
}
