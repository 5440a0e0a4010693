package dataset

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// DropIncomplete is the reason for a target an earlier stage has not
// finished: its Detail names the record that is missing.
const DropIncomplete = "incomplete"

// Records is what LoadTargets needs of a store; *store.Store has it.
type Records interface {
	record.Getter
	record.Lister
}

// Writers names the stage that writes each record kind the dataset reads
// (see Inputs).
type Writers map[string]string

// LoadTargets reads the dataset stage's inputs from the store: per target
// (under its versionless arXiv ID) the Graph (kind "edges"), the
// Selections ("selections"), the Summary ("summary": the gold card and
// each source's card and text level) and, for the order of first mention,
// the Document ("document", optional). ids are target IDs with or without
// version; nil means every target with a Graph. A target whose Graph,
// Selections or Summary is missing, or for which the ledger says the stage
// writing one of them last failed, is listed as dropped (DropIncomplete);
// one whose stage waits on LLM answers in a provider's batch as
// DropPending; an unreadable store is an error.
func LoadTargets(ctx context.Context, st Records, ids []string, in Inputs) ([]TargetInputs, []Dropped, error) {
	var out []TargetInputs
	dropped, err := EachTarget(ctx, st, ids, in, func(t *TargetInputs) error {
		out = append(out, *t)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, dropped, nil
}

// EachTarget is LoadTargets one target at a time, for a dataset built
// without holding every target (BuildStream): fn gets each complete
// target's inputs in ids order (yours to keep), and the targets left out
// are returned. An error from fn stops it and is returned.
func EachTarget(ctx context.Context, st Records, ids []string, in Inputs, fn func(*TargetInputs) error) ([]Dropped, error) {
	if ids == nil {
		var err error
		if ids, err = record.Graphs.Items(ctx, st); err != nil {
			return nil, fmt.Errorf("load dataset targets: %w", err)
		}
	}
	var dropped []Dropped
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		aid, err := arxiv.Parse(id)
		if err != nil {
			dropped = append(dropped, Dropped{TargetID: id, Reason: DropInvalidID, Detail: err.Error()})
			continue
		}
		if why, err := waitingStage(ctx, st, record.Key(aid), in); err != nil {
			return nil, err
		} else if why != "" {
			dropped = append(dropped, Dropped{TargetID: id, Reason: DropPending, Detail: why})
			continue
		}
		t, missing, err := loadTarget(ctx, st, record.Key(aid), in)
		if err != nil {
			return nil, err
		}
		if missing == "" {
			if missing, err = failedStage(ctx, st, record.Key(aid), in); err != nil {
				return nil, err
			}
		}
		if missing != "" {
			dropped = append(dropped, Dropped{TargetID: id, Reason: DropIncomplete, Detail: missing})
			continue
		}
		if err := fn(&t); err != nil {
			return nil, err
		}
	}
	return dropped, nil
}

// ledger is the part of a store that says how each stage went.
type ledger interface {
	Status(ctx context.Context, item, stage string) (store.Entry, error)
}

// failedStage names the stage whose last attempt failed for key, if the
// store keeps a ledger: its records may be partial or stale, so the target
// is left out and listed rather than built from them.
func failedStage(ctx context.Context, st Records, key string, in Inputs) (string, error) {
	stage, e, err := stageWith(ctx, st, key, in, store.StatusFailed)
	if err != nil || stage == "" {
		return "", err
	}
	return fmt.Sprintf("the %s stage failed: %s", stage, e.Error), nil
}

// waitingStage names the stage whose last run for key left it waiting on
// LLM answers in a provider's batch (ledger status pending), if any.
func waitingStage(ctx context.Context, st Records, key string, in Inputs) (string, error) {
	stage, e, err := stageWith(ctx, st, key, in, store.StatusPending)
	if err != nil || stage == "" {
		return "", err
	}
	return fmt.Sprintf("the %s stage waits on LLM answers in a provider's batch (%s): a later run collects them", stage, e.Error), nil
}

// stageWith returns the first stage writing a required kind whose ledger
// entry for key has status, and the entry; "" when none has or the store
// keeps no ledger.
func stageWith(ctx context.Context, st Records, key string, in Inputs, status string) (string, store.Entry, error) {
	l, ok := st.(ledger)
	if !ok {
		return "", store.Entry{}, nil
	}
	for _, kind := range Decl(in.Fields...).Reads {
		stage := in.Writers[kind]
		if stage == "" {
			continue
		}
		e, err := l.Status(ctx, key, stage)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", store.Entry{}, fmt.Errorf("load dataset target %s: %w", key, err)
		}
		if e.Status == status {
			return stage, e, nil
		}
	}
	return "", store.Entry{}, nil
}

// loadTarget reads one target; missing names the first absent record.
func loadTarget(ctx context.Context, st Records, key string, in Inputs) (t TargetInputs, missing string, err error) {
	writers := in.Writers
	g, missing, err := load(ctx, st, key, record.Graphs, writers)
	if err != nil || missing != "" {
		return TargetInputs{}, missing, err
	}
	sels, missing, err := load(ctx, st, key, record.SelectionSets, writers)
	if err != nil || missing != "" {
		return TargetInputs{}, missing, err
	}
	selected := 0
	for _, s := range sels.Selections {
		if s.Role == record.RoleSource {
			selected++
		}
	}
	few := selected < record.MinSources
	res, missing, err := load(ctx, st, key, record.Summaries, writers)
	switch {
	case err != nil:
		return TargetInputs{}, "", err
	case missing != "" && len(sels.Suspect) == 0 && !few:
		return TargetInputs{}, missing, nil
	case missing != "":
		// A suspect target is not summarized, nor one with fewer sources
		// than an instance needs (record.SourceSet.Working): it is dropped
		// for what it is, not as incomplete.
		res = &record.Summary{}
		t.FewSources, t.Selected = few && len(sels.Suspect) == 0, selected
	}
	t.Graph = *g
	t.Suspect = sels.Suspect
	t.Instructions, t.NotClassified = len(sels.Instructions), sels.NotClassified
	t.QuotesNotCiting, t.QuotesNotInPaper = sels.QuotesNotCiting, sels.QuotesDropped
	t.GoldSuspect = res.Suspect
	if t.Graph.Meta.ArxivID == "" {
		t.Graph.Meta.ArxivID = key
	}
	t.Selections = sels.Selections
	trimEdges(&t.Graph, sels.Selections)
	t.Gold, t.GoldVersion = res.Gold.Card, res.Gold.Version
	for _, s := range res.Sources {
		t.Sources = append(t.Sources, SourceInput{RefKey: s.Key, Card: s.Card, TextLevel: s.TextLevel, Version: s.Version})
	}
	if t.Cut, _, err = load(ctx, st, key, record.KnowledgeCuts, writers); err != nil {
		return TargetInputs{}, "", err
	}
	for _, f := range in.Fields {
		// The field's value of the record as stored: the writer decodes
		// it into the field's shape.
		raw, missing, err := load(ctx, st, key, record.RawOf(f.Kind), writers)
		switch {
		case err != nil:
			return TargetInputs{}, "", err
		case missing != "" && f.Absent == nil && held(&t):
			// Held back before the stage that makes it: the target is
			// dropped for what held it, unless suspects are kept.
			t.MissingField = cmp.Or(t.MissingField, missing)
			continue
		case missing != "" && f.Absent == nil:
			return TargetInputs{}, missing, nil
		}
		v := f.Absent
		if raw != nil {
			if v, err = f.ValueOf(*raw); err != nil {
				return TargetInputs{}, "", fmt.Errorf("load dataset target %s: %w", key, err)
			}
		}
		if t.Fields == nil {
			t.Fields = map[string]json.RawMessage{}
		}
		t.Fields[f.Name] = v
	}
	doc, _, err := load(ctx, st, key, record.Documents, writers)
	if err != nil {
		return TargetInputs{}, "", err
	}
	if doc != nil {
		t.MentionOrder = mentionOrder(doc)
	}
	return t, "", nil
}

// held reports whether a guard held t back before its later stages: its
// text addresses a model, its classification or its gold card is suspect.
func held(t *TargetInputs) bool {
	return t.Instructions > 0 || t.NotClassified || len(t.Suspect) > 0 || len(t.GoldSuspect) > 0 || t.FewSources
}

// load reads key's record of kind k; with none, v is nil and missing says
// which stage would make it.
func load[T any](ctx context.Context, st Records, key string, k record.Kind[T], writers Writers) (v *T, missing string, err error) {
	v, _, err = k.Get(ctx, st, key)
	switch {
	case errors.Is(err, store.ErrCorrupt):
		// Lost or damaged, not absent: building without it would publish
		// a different dataset.
		return nil, "", fmt.Errorf("load dataset target %s: %w; the %s stage makes it again (curate run)", key, err, writers[k.Name()])
	case errors.Is(err, store.ErrNotFound):
		return nil, fmt.Sprintf("no %s record: run the %s stage", k.Name(), writers[k.Name()]), nil
	case err != nil:
		return nil, "", fmt.Errorf("load dataset target %s: %w", key, err)
	}
	return v, "", nil
}

// trimEdges drops what the dataset never reads from a target's edges
// (citation contexts, author lists, the abstracts of references that are
// not sources), so a corpus of thousands of targets fits in memory. Edges
// themselves stay: their positions name the references.
func trimEdges(g *record.Graph, sels []record.Selection) {
	source := map[string]bool{}
	for _, s := range sels {
		if s.Role == record.RoleSource {
			source[s.RefKey] = true
		}
	}
	for i, k := range record.RefKeys(g.Edges) {
		e := &g.Edges[i]
		e.Contexts, e.Authors, e.MentionSections = nil, nil, nil
		if !source[k] {
			e.Abstract = nil
		}
	}
}

// mentionOrder lists the reference keys of doc in the order of their
// first citing sentence.
func mentionOrder(doc *record.Document) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range doc.Mentions {
		for _, k := range m.RefKeys {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}
