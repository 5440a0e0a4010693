package tuples_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
	"github.com/groundwork/curate/tuples"
)

// stageStore is a store holding a target's page and, with gold, its
// summary with a gold card: what the tuples stage finds after summarize.
func stageStore(t *testing.T, key string, doc *record.Document, gold bool) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := record.Documents.Put(t.Context(), st, key, doc, nil); err != nil {
		t.Fatal(err)
	}
	sum := record.Summary{Target: key}
	if gold {
		sum.Gold = record.CardResult{Key: key, Card: &record.Card{ProblemGap: "gap", CoreClaim: "claim", Method: "method", Inspiration: "inspiration"}}
	}
	if _, err := record.Summaries.Put(t.Context(), st, key, &sum, nil); err != nil {
		t.Fatal(err)
	}
	return st
}

// answering is a model that answers each request with the idea tuple
// idea makes of the paper, counting the requests.
type answering struct {
	calls atomic.Int32
	idea  func() record.IdeaTuple
	err   error
}

func (a *answering) Complete(_ context.Context, r llm.Request) (*llm.Response, error) {
	a.calls.Add(1)
	if a.err != nil {
		return nil, a.err
	}
	b, err := json.Marshal(map[string]any{"idea": a.idea(), "card": nil, "references": []any{}})
	if err != nil {
		return nil, err
	}
	return &llm.Response{JSON: b, Model: "m-2026-01-01"}, nil
}

// TestStageLLM: one request per target with a gold card; the tuple is
// stored held to the paper and reused while the paper, the model, the
// prompt and the block's budget are unchanged; Force, a changed page or
// a changed budget ask again; a target without a gold card asks nothing.
func TestStageLLM(t *testing.T) {
	doc := paper()
	st := stageStore(t, doc.ID, doc, true)
	m := &answering{idea: func() record.IdeaTuple {
		h := tuples.Heuristic(doc)
		h.Motivations = append(h.Motivations, record.Claim{Claim: "A claim the paper does not hold.", Quote: "a sentence nowhere in the paper at all"})
		return h
	}}
	s := &tuples.Stage{Store: st, LLM: m, Model: "m"}
	step := func(want string, calls int32) {
		t.Helper()
		out, err := s.Do(t.Context(), doc.ID)
		if err != nil || out != want || m.calls.Load() != calls {
			t.Fatalf("Do: %q %v after %d calls, want %q after %d", out, err, m.calls.Load(), want, calls)
		}
	}
	step(pipeline.Done, 1)
	r, ok, err := record.IdeaTupleSets.Lookup(t.Context(), st, doc.ID)
	if err != nil || !ok {
		t.Fatalf("no stored tuple: %v", err)
	}
	if !tuples.Complete(*r) || r.Backend != record.TupleBackendLLM || r.Model != "m-2026-01-01" || r.Unverified != 1 || r.PromptVersion == "" {
		t.Errorf("stored %+v", r)
	}
	step(pipeline.Reused, 1)

	s.Force = true
	step(pipeline.Done, 2)
	s.Force = false
	step(pipeline.Reused, 2)
	s.Budget = 500
	step(pipeline.Done, 3)
	changed := *doc
	changed.Abstract += " We also release the code."
	if _, err := record.Documents.Put(t.Context(), st, doc.ID, &changed, nil); err != nil {
		t.Fatal(err)
	}
	step(pipeline.Done, 4)
	step(pipeline.Reused, 4)

	// No gold card: no instance, no request.
	none := stageStore(t, doc.ID, doc, false)
	s2 := &tuples.Stage{Store: none, LLM: m, Model: "m"}
	if out, err := s2.Do(t.Context(), doc.ID); err != nil || out != pipeline.Skipped || m.calls.Load() != 4 {
		t.Errorf("without a gold card: %q %v, %d calls", out, err, m.calls.Load())
	}
}

// TestStageIncomplete: a tuple that keeps no claim in a required field is
// stored and fails the target (an attempt), and a later run finds the
// failure standing without asking again (no attempt).
func TestStageIncomplete(t *testing.T) {
	doc := paper()
	st := stageStore(t, doc.ID, doc, true)
	m := &answering{idea: func() record.IdeaTuple {
		h := tuples.Heuristic(doc)
		h.ResearchQuestions = []record.Claim{{Claim: "Can translation do without parallel data?", Quote: "words the paper never wrote down anywhere"}}
		return h
	}}
	s := &tuples.Stage{Store: st, LLM: m, Model: "m"}
	out, err := s.Do(t.Context(), doc.ID)
	if err == nil || out != pipeline.Done || !strings.Contains(err.Error(), "no verified claim of research_questions") ||
		!strings.Contains(err.Error(), "not in the paper") {
		t.Fatalf("Do: %q %v", out, err)
	}
	if e := pipeline.EntryOf(out, err); e.Status != pipeline.StatusFailed || !e.Worked {
		t.Errorf("ledger entry %+v", e)
	}
	r, ok, _ := record.IdeaTupleSets.Lookup(t.Context(), st, doc.ID)
	if !ok || len(r.Missing) != 1 || r.Missing[0] != record.TupleResearchQuestions || r.Unverified != 1 {
		t.Errorf("stored %+v", r)
	}
	out, err = s.Do(t.Context(), doc.ID)
	if e := pipeline.EntryOf(out, err); err == nil || m.calls.Load() != 1 || e.Status != pipeline.StatusFailed || e.Worked {
		t.Errorf("second Do: %q %v after %d calls (entry %+v)", out, err, m.calls.Load(), e)
	}
}

// TestStageWaitsAndFails: an answer waiting in a batch leaves the target
// pending; a failed call fails it; neither stores a tuple.
func TestStageWaitsAndFails(t *testing.T) {
	doc := paper()
	for _, c := range []struct {
		err    error
		status string
	}{
		{&llm.PendingError{Stage: tuples.Name, State: "queued"}, pipeline.StatusPending},
		{&llm.PendingError{Stage: tuples.Name, State: "in_progress", Batch: "b1"}, pipeline.StatusPending},
		{errors.New("llm: status 500"), pipeline.StatusFailed},
	} {
		st := stageStore(t, doc.ID, doc, true)
		s := &tuples.Stage{Store: st, LLM: &answering{err: c.err}, Model: "m"}
		out, err := s.Do(t.Context(), doc.ID)
		if e := pipeline.EntryOf(out, err); e.Status != c.status {
			t.Errorf("%v: entry %+v", c.err, e)
		}
		if _, ok, _ := record.IdeaTupleSets.Lookup(t.Context(), st, doc.ID); ok {
			t.Errorf("%v: a tuple was stored", c.err)
		}
	}
}

// TestStageHeuristic: without a model the heuristic backend makes the
// tuple, counted as the stage's heuristic answer, reused on the next run.
func TestStageHeuristic(t *testing.T) {
	doc := paper()
	st := stageStore(t, doc.ID, doc, true)
	meter := &llm.Meter{}
	s := &tuples.Stage{Store: st, Model: llm.HeuristicModel, Meter: meter}
	for i, want := range []string{pipeline.Done, pipeline.Reused} {
		if out, err := s.Do(t.Context(), doc.ID); err != nil || out != want {
			t.Fatalf("run %d: %q %v", i, out, err)
		}
	}
	r, _, _ := record.IdeaTupleSets.Lookup(t.Context(), st, doc.ID)
	if r.Backend != record.TupleBackendHeuristic || !r.Heuristic || !tuples.Complete(*r) {
		t.Errorf("stored %+v", r)
	}
	if tl := meter.ByStage()[tuples.Name]; tl.Calls != 1 {
		t.Errorf("heuristic tuples counted %+v, want the one made", tl)
	}
}

// TestStageField: the stage's field in every instance is the six-tuple
// with what made it and the counts of what was dropped, not the stored
// record's digest or its dropped claims one by one; the card counts the
// drops and the heuristic ideas.
func TestStageField(t *testing.T) {
	d := (&tuples.Stage{}).Declare()
	f := d.Field
	if f == nil || f.Name != record.FieldIdea || f.Kind != record.IdeaTupleSets.Name() || f.Absent != nil {
		t.Fatalf("field %+v", f)
	}
	r := tuples.Offline(tuples.Input{Key: "2503.00001", Doc: paper()})
	r.Dropped = append(r.Dropped, record.TupleDrop{Field: record.TupleMotivations, Claim: "x", Why: record.DropUnverified})
	r.Unverified++
	stored, _ := json.Marshal(r)
	v, err := f.ValueOf(stored)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(v, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(record.TupleFields, "backend", "model", "unverified", "not_self_contained", "not_atomic") {
		if got[k] == nil {
			t.Errorf("the field lacks %s: %s", k, v)
		}
	}
	for _, k := range []string{"input_digest", "dropped", "target", "idea"} {
		if got[k] != nil {
			t.Errorf("the field carries %s: %s", k, v)
		}
	}
	cs, err := f.Counts(v)
	if err != nil || len(cs) != 4 || cs[0].N != 1 || cs[3].N != 1 {
		t.Errorf("counts %+v %v", cs, err)
	}
	if len(d.Requests) != 1 || d.Requests[0].LLM == nil || !d.Requests[0].LLM.ReadsPaper || !d.Requests[0].LLM.Shared || d.Requests[0].Count != "" {
		t.Errorf("requests %+v", d.Requests)
	}
}
