package summarize

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
)

// Tokens of a card request besides the paper's text and the shared
// prompt, for estimates: the card's task, and the card.
const (
	taskTokens = 40
	cardTokens = 400
)

// Declare is the summarize stage's row of the stage table.
func (s *Stage) Declare() pipeline.Decl {
	return pipeline.Decl{
		Name: Name, About: "the target's gold card and a card per source", Workers: 4,
		Reads:    []string{record.Documents.Name(), record.Graphs.Name(), record.SelectionSets.Name()},
		Optional: []string{record.PDFDocuments.Name(), record.KnowledgeCuts.Name()},
		Writes:   []string{record.Summaries.Name(), record.CardIndex.Name(), "card:*"},
		Before:   []string{"sources", "pdfs"},
		Requests: []pipeline.Request{{Service: llm.DefaultService, Count: pipeline.PerSource, Self: true,
			LLM: &pipeline.Tokens{Shared: true, Fixed: taskTokens, Text: cmp.Or(s.Budget, DefaultBudget), Output: cardTokens, ReadsPaper: true}}},
	}
}

// Do writes the target's gold card and its sources' cards. A target with
// fewer than record.MinSources sources is skipped: it cannot become an
// instance, and carding it would only cost tokens.
func (s *Stage) Do(ctx context.Context, key string) (string, error) {
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
	r, err := s.ProcessTarget(ctx, key, refs)
	return s.outcome(key, r, err)
}

// outcome is Do's account of what ProcessTarget returned for key.
func (s *Stage) outcome(key string, r *record.Summary, err error) (string, error) {
	if err != nil {
		return "", err
	}
	outcome := pipeline.Done
	if r.Written == 0 {
		outcome = pipeline.Reused // reusing every stored card is no new attempt
	}
	if r.Pending > 0 && (r.Gold.Card != nil || r.Gold.Pending) && r.Failed == 0 {
		return outcome, pipeline.Wait(fmt.Sprintf("%d of its cards wait on LLM answers in a batch", r.Pending))
	}
	if r.Gold.Card == nil {
		return "", fmt.Errorf("summarize %s: no gold card: %s", key, r.Gold.Failure)
	}
	if len(r.Suspect) > 0 && !s.IncludeSuspect {
		return outcome, pipeline.Suspect(r.Suspect...)
	}
	if r.Failed > 0 {
		// A source without a card would silently shrink the instance; the
		// next run retries the failed cards (the others are stored).
		var why []string
		for _, c := range r.Sources {
			if c.Card == nil && !c.Unsummarizable {
				why = append(why, c.Key+": "+c.Failure)
			}
		}
		return "", fmt.Errorf("summarize %s: %d cards failed: %s", key, r.Failed, strings.Join(why, "; "))
	}
	return outcome, nil
}
