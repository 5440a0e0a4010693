package postknowledge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/client/s2"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/postknowledge"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// countingCiter answers every citations request with its list, counting them.
type countingCiter struct {
	calls int
	list  []s2.Citation
}

func (c *countingCiter) Citations(_ context.Context, id string) (*s2.CitationList, error) {
	c.calls++
	return &s2.CitationList{PaperID: id, Citations: c.list, Pages: 1}, nil
}

func citing(id, arxivID, date string, influential bool, citations int) s2.Citation {
	p := record.ScholarPaper{PaperID: id, Title: "Paper " + id, PublicationDate: &date, CitationCount: &citations}
	if arxivID != "" {
		p.ExternalIDs = &record.ScholarIDs{ArXiv: arxivID}
	}
	return s2.Citation{IsInfluential: influential, CitingPaper: p}
}

func stageStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func putV1(t *testing.T, st *store.Store, id string, v1 time.Time) {
	t.Helper()
	e := record.ArxivEntry{ID: id, Version: 1, Published: v1, Updated: v1}
	if _, err := record.ArxivMetas.Put(t.Context(), st, id, &record.ArxivMeta{Found: true, Entry: &e}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestStageDeclare: off without N (no request, an empty list in every
// instance, the records there read all the same), on with one S2
// request per target and a field each target must have.
func TestStageDeclare(t *testing.T) {
	off := (&postknowledge.Stage{}).Declare()
	if off.Off == "" || len(off.Requests) != 0 || off.Field == nil || string(off.Field.Absent) != "[]" || off.Field.Name != record.FieldPostKnowledge {
		t.Errorf("off: %+v (field %+v)", off, off.Field)
	}
	on := (&postknowledge.Stage{N: 3}).Declare()
	if on.Off != "" || len(on.Requests) != 1 || on.Requests[0].Service != s2.ServiceName || on.Requests[0].Count != pipeline.PerItem ||
		on.Field.Absent != nil || on.Field.Kind != record.PostKnowledgeSets.Name() {
		t.Errorf("on: %+v (field %+v)", on, on.Field)
	}
	v, err := on.Field.ValueOf([]byte(`{"target":"2503.00001","papers":null,"citations":4}`))
	if err != nil || string(v) != "[]" {
		t.Errorf("value of a record without papers: %s %v", v, err)
	}
}

// TestStage: the cutoff is the target's v1 date (its version history
// over the arXiv API's date); the papers first published after it are
// kept, the most influential first, a citing paper dated by its own v1
// when the store has it; a second run, a smaller N, or a larger one when
// every paper after the cutoff is kept, asks nothing; a larger N with
// more to keep, a moved cutoff, or Refresh asks again.
func TestStage(t *testing.T) {
	st := stageStore(t)
	const key = "2503.00001"
	v1 := time.Date(2025, 3, 10, 17, 30, 0, 0, time.UTC)
	putV1(t, st, key, v1.AddDate(0, 0, 3)) // the API's date, which the history overrides
	if _, err := record.PaperVersionSets.Put(t.Context(), st, key, &record.PaperVersions{ID: key,
		Versions: []record.PaperVersion{{Version: 1, Date: v1}, {Version: 2, Date: v1.AddDate(0, 2, 0)}}}, nil); err != nil {
		t.Fatal(err)
	}
	// On arXiv before the cutoff, in a journal (S2's date) after it.
	putV1(t, st, "2502.00009", v1.AddDate(0, -1, 0))
	c := &countingCiter{list: []s2.Citation{
		citing("aa", "", "2025-03-12", false, 50),
		citing("bb", "", "2025-03-11", true, 1), // the day after the v1: after the cutoff
		citing("cc", "", "2025-03-10", true, 9), // the cutoff's own day: before
		citing("dd", "2502.00009", "2025-06-01", true, 9),
		citing("ee", "", "2025-09-01", false, 3),
		citing("ff", "", "2024-01-01", true, 3),
	}}
	s := &postknowledge.Stage{Store: st, S2: c, N: 2}
	step := func(want string, calls int, kept ...string) {
		t.Helper()
		out, err := s.Do(t.Context(), key)
		if err != nil || out != want || c.calls != calls {
			t.Fatalf("Do: %q %v after %d calls, want %q after %d", out, err, c.calls, want, calls)
		}
		pk, _, err := record.PostKnowledgeSets.Get(t.Context(), st, key)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range pk.Papers {
			got = append(got, p.PaperID)
			if postknowledge.Place(p, v1) != postknowledge.After {
				t.Errorf("kept %+v, not after the cutoff", p)
			}
		}
		if strings.Join(got, " ") != strings.Join(kept, " ") || !pk.Cutoff.Equal(v1) || pk.N != s.N {
			t.Errorf("kept %q (cutoff %s, N %d), want %q (cutoff %s, N %d)", got, pk.Cutoff, pk.N, kept, v1, s.N)
		}
	}
	step(pipeline.Done, 1, "bb", "aa")
	pk, _, _ := record.PostKnowledgeSets.Get(t.Context(), st, key)
	if pk.Citations != 6 || pk.Before != 3 || pk.After != 3 || !pk.Complete {
		t.Errorf("counts %+v", pk)
	}
	step(pipeline.Reused, 1, "bb", "aa")
	s.N = 1
	step(pipeline.Done, 1, "bb")
	s.N = 3
	step(pipeline.Done, 2, "bb", "aa", "ee")
	s.N = 10
	step(pipeline.Done, 2, "bb", "aa", "ee") // every paper after the cutoff is kept already
	s.Refresh = true
	step(pipeline.Done, 3, "bb", "aa", "ee")
	s.Refresh = false

	// Without the history, the arXiv API's date: the cutoff moves, S2 is
	// asked again.
	if _, err := st.PutJSON(t.Context(), key, record.PaperVersionSets.Name(), map[string]any{"id": key, "versions": []any{}}, nil); err != nil {
		t.Fatal(err)
	}
	v1 = v1.AddDate(0, 0, 3)
	step(pipeline.Done, 4, "ee")
}

// TestStageNoCutoff: a target without a stored v1 date fails, naming
// what is missing, and asks nothing.
func TestStageNoCutoff(t *testing.T) {
	c := &countingCiter{}
	s := &postknowledge.Stage{Store: stageStore(t), S2: c, N: 2}
	if _, err := s.Do(t.Context(), "2503.00001"); err == nil || !strings.Contains(err.Error(), "no knowledge cutoff") || c.calls != 0 {
		t.Errorf("Do: %v after %d calls", err, c.calls)
	}
}
