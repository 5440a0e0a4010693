package summarize

import (
	"context"
	"github.com/groundwork/curate/internal/testutil"
	"strings"
	"sync"
	"testing"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/pipeline"
	"github.com/groundwork/curate/parse/arxiv"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

// callsFor counts the first-round requests for a paper title and card kind.
func (f *fakeLLM) callsFor(title string, source bool) int {
	n := 0
	for _, r := range f.requests() {
		if r.title() == title && r.source() == source && r.followUp() == "" {
			n++
		}
	}
	return n
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func putDoc(t *testing.T, st *store.Store, key string, doc *record.Document) {
	t.Helper()
	if _, err := record.Documents.Put(t.Context(), st, key, doc, nil); err != nil {
		t.Fatal(err)
	}
}

// fetchSources does what the sources stage does before summarize: each
// source with an arXiv ID is stored from pages, or recorded as having no
// HTML anywhere.
func (w *world) fetchSources(t *testing.T, refs ...SourceRef) {
	t.Helper()
	for _, r := range refs {
		id, err := arxiv.Parse(r.ArxivID)
		if err != nil {
			continue
		}
		key := record.Key(id)
		if testutil.Has(t)(record.Documents.Has(t.Context(), w.st, key)) {
			continue
		}
		if d, ok := w.pages[key]; ok {
			putDoc(t, w.st, key, d)
			continue
		}
		if _, err := record.NoHTMLs.Put(t.Context(), w.st, key, &record.NoHTML{CheckedAt: "2026-01-01T00:00:00Z", Reason: "no HTML"}, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// world is a store with two stored targets, A and B, and a fetchable
// source S; A is also a source of B.
type world struct {
	st    *store.Store
	pages map[string]*record.Document // what the sources stage can fetch
}

const (
	idA = "2501.00001"
	idB = "2501.00002"
	idS = "2401.00003"
)

func newWorld(t *testing.T) *world {
	st := openStore(t)
	putDoc(t, st, idA, testDoc(idA+"v1", "Paper A"))
	putDoc(t, st, idB, testDoc(idB+"v1", "Paper B"))
	w := &world{st: st, pages: map[string]*record.Document{idS: testDoc(idS+"v2", "Paper S")}}
	w.fetchSources(t, refS)
	return w
}

var (
	refS = SourceRef{Key: "bib.bib1", ArxivID: idS + "v2", S2PaperID: "s2S", Title: "Paper S"}
	refT = SourceRef{Key: "bib.bib2", S2PaperID: "s2T", Title: "Paper T", Abstract: "Paper T studies how language models respond to prompts. However, prompts dense with constraints remain unexplored by current evaluations. We propose a grading scheme for such dense prompts. We show that grading separates strong models from weak ones."}
	refU = SourceRef{Key: "bib.bib3", S2PaperID: "s2U", Title: "Paper U"}
	refA = SourceRef{Key: "bib.bib4", ArxivID: idA, Title: "Paper A"}
)

// processTarget runs s's ProcessTarget for key as a run does, under the
// stage lifecycle over s.Store, so that the ledger says how it went.
func processTarget(t *testing.T, s *Stage, key string, refs []SourceRef) (*record.Summary, error) {
	t.Helper()
	var res *record.Summary
	var err error
	lc := &pipeline.Lifecycle{Ledger: s.Store}
	item := key // a run's items are store keys (app.Targets)
	if id, err := arxiv.Parse(key); err == nil {
		item = record.Key(id)
	}
	lc.Track(t.Context(), pipeline.Func{Decl: s.Declare(), Run: func(ctx context.Context, _ string) (string, error) {
		res, err = s.ProcessTarget(ctx, key, refs)
		return s.outcome(item, res, err)
	}}, item)
	return res, err
}

func ledger(t *testing.T, st *store.Store, key string) store.Entry {
	t.Helper()
	e, err := st.Status(t.Context(), key, Name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A source shared by two targets, and a paper that is a target and a
// source, are each summarized once per card kind; a second run makes no
// call at all.
func TestStageReuse(t *testing.T) {
	w := newWorld(t)
	srv := newFakeLLM(t, func(r fakeRequest) string { return validCard(r.title(), r.source()) })
	s := &Stage{Store: w.st, LLM: srv.client(t, nil)}
	ctx := t.Context()

	resA, err := processTarget(t, s, idA+"v1", []SourceRef{refS, refT, refU})
	if err != nil {
		t.Fatal(err)
	}
	if resA.Target != idA || resA.Written != 3 || resA.Reused != 0 || resA.Unsummarizable != 1 || resA.Failed != 0 {
		t.Errorf("result A: %+v", resA)
	}
	wantLevels := []string{record.TextFull, record.TextAbstract, ""}
	for i, r := range resA.Sources {
		if r.TextLevel != wantLevels[i] {
			t.Errorf("source %s: text level %q, want %q", r.Key, r.TextLevel, wantLevels[i])
		}
	}
	if u := resA.Sources[2]; !u.Unsummarizable || u.Card != nil || !strings.Contains(u.Failure, "no arXiv ID and there is no abstract") {
		t.Errorf("source U: %+v", u)
	}
	if r := resA.Sources[0]; r.Paper != idS || r.StoreKind != "card:source:test-model:"+sourceVersion(t) || r.Card == nil {
		t.Errorf("source S: %+v", r)
	}
	if r := resA.Sources[1]; r.Paper != "s2:s2T" {
		t.Errorf("source T stored under %q", r.Paper)
	}
	if e := ledger(t, w.st, idA); e.Status != store.StatusDone {
		t.Errorf("ledger A: %+v", e)
	}

	resB, err := processTarget(t, s, idB, []SourceRef{refS, refA, refT})
	if err != nil {
		t.Fatal(err)
	}
	if resB.Written != 2 || resB.Reused != 2 {
		t.Errorf("result B: written %d reused %d, want 2 and 2 (gold B and A's source card new)", resB.Written, resB.Reused)
	}
	if !resB.Sources[0].Reused || resB.Sources[1].Reused || !resB.Sources[2].Reused {
		t.Errorf("reuse flags: %v %v %v", resB.Sources[0].Reused, resB.Sources[1].Reused, resB.Sources[2].Reused)
	}
	if resB.Sources[0].TextLevel != record.TextFull {
		t.Errorf("reused card lost its text level: %+v", resB.Sources[0])
	}

	for _, c := range []struct {
		title  string
		source bool
	}{{"Paper A", false}, {"Paper A", true}, {"Paper B", false}, {"Paper S", true}, {"Paper T", true}} {
		if n := srv.callsFor(c.title, c.source); n != 1 {
			t.Errorf("%s (source %v): %d calls, want 1", c.title, c.source, n)
		}
	}
	if srv.calls() != 5 {
		t.Errorf("%d calls, want 5", srv.calls())
	}

	// A second run: everything from the store, no call.
	for _, run := range []struct {
		id   string
		refs []SourceRef
	}{{idA, []SourceRef{refS, refT, refU}}, {idB, []SourceRef{refS, refA, refT}}} {
		res, err := processTarget(t, s, run.id, run.refs)
		if err != nil {
			t.Fatal(err)
		}
		if res.Written != 0 {
			t.Errorf("second run of %s wrote %d cards", run.id, res.Written)
		}
	}
	if srv.calls() != 5 {
		t.Errorf("second run made %d calls", srv.calls()-5)
	}

	stored, _, err := record.Summaries.Get(ctx, w.st, idA)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Sources) != 3 || stored.Sources[0].Key != "bib.bib1" || stored.Sources[2].Failure == "" {
		t.Errorf("stored result: %+v", stored)
	}
	cards, err := record.StoredCards(ctx, w.st)
	if err != nil {
		t.Fatal(err)
	}
	if len(cards) != 5 {
		t.Errorf("%d stored cards, want 5", len(cards))
	}
	for _, c := range cards {
		if err := Validate(&c.Card, c.CardKind); err != nil {
			t.Errorf("stored card %s %s: %v", c.Paper, c.Kind, err)
		}
	}
}

// With the LLM cache in the store, even a forced rewrite makes no call.
func TestStageForceUsesLLMCache(t *testing.T) {
	w := newWorld(t)
	srv := newFakeLLM(t, func(r fakeRequest) string { return validCard(r.title(), r.source()) })
	client := srv.client(t, w.st)
	first := &Stage{Store: w.st, LLM: client}
	if _, err := processTarget(t, first, idA, []SourceRef{refS, refT}); err != nil {
		t.Fatal(err)
	}
	calls := srv.calls()
	forced := &Stage{Store: w.st, LLM: client, Force: true}
	res, err := processTarget(t, forced, idA, []SourceRef{refS, refT, refS})
	if err != nil {
		t.Fatal(err)
	}
	if srv.calls() != calls {
		t.Errorf("forced rerun made %d calls; the LLM cache should answer", srv.calls()-calls)
	}
	// S twice: rewritten once, then reused within the same Stage.
	if res.Written != 3 || res.Reused != 1 {
		t.Errorf("forced: written %d reused %d, want 3 and 1", res.Written, res.Reused)
	}
}

// Targets processed at the same time summarize a shared source once.
func TestStageConcurrentTargets(t *testing.T) {
	w := newWorld(t)
	srv := newFakeLLM(t, func(r fakeRequest) string { return validCard(r.title(), r.source()) })
	s := &Stage{Store: w.st, LLM: srv.client(t, nil)}
	var wg sync.WaitGroup
	for _, id := range []string{idA, idB} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := processTarget(t, s, id, []SourceRef{refS, refT, refS}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := srv.callsFor("Paper S", true); n != 1 {
		t.Errorf("shared source summarized %d times", n)
	}
	if n := srv.callsFor("Paper T", true); n != 1 {
		t.Errorf("shared abstract-only source summarized %d times", n)
	}
}

// A card that stays invalid is a failure with the raw answer; the target
// fails in the ledger with the reason, and the next run tries again.
func TestStageInvalidCard(t *testing.T) {
	w := newWorld(t)
	bad := withField(validCard("Paper S", true), "problem_gap", "[Synthesis / Unification] Connect everything.")
	srv := newFakeLLM(t, func(r fakeRequest) string {
		if r.title() == "Paper S" {
			return bad
		}
		return validCard(r.title(), r.source())
	})
	s := &Stage{Store: w.st, LLM: srv.client(t, nil)}
	res, err := processTarget(t, s, idA, []SourceRef{refS, refT})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Sources[0]
	if r.Card != nil || r.Unsummarizable || !strings.Contains(r.Failure, "a label of the other axis") || r.TextLevel != record.TextFull {
		t.Errorf("failed source: %+v", r)
	}
	if res.Failed != 1 || res.Written != 2 {
		t.Errorf("result: %+v", res)
	}
	f, _, err := record.FailureKind(record.CardSource, "test-model", sourceVersion(t)).Get(t.Context(), w.st, idS)
	if err != nil {
		t.Fatal(err)
	}
	if f.Raw != bad || f.Attempts != 3 || !strings.Contains(f.Reason, "other axis") {
		t.Errorf("failure record: %+v", f)
	}
	e := ledger(t, w.st, idA)
	if e.Status != store.StatusFailed || !strings.Contains(e.Error, "1 cards failed: bib.bib1: ") {
		t.Errorf("ledger: %+v", e)
	}

	calls := srv.calls()
	if _, err := processTarget(t, s, idA, []SourceRef{refS, refT}); err != nil {
		t.Fatal(err)
	}
	if srv.calls()-calls != 3 {
		t.Errorf("rerun made %d calls, want 3 (the failed card again, nothing else)", srv.calls()-calls)
	}
}

// [Other] is a valid label, counted in the result and the label stats.
func TestStageOtherLabel(t *testing.T) {
	w := newWorld(t)
	srv := newFakeLLM(t, func(r fakeRequest) string {
		ans := validCard(r.title(), r.source())
		if r.title() == "Paper T" {
			ans = withField(ans, "problem_gap", "[Other] Grading prompts is a matter of taste.")
		}
		return ans
	})
	s := &Stage{Store: w.st, LLM: srv.client(t, nil)}
	res, err := processTarget(t, s, idA, []SourceRef{refT})
	if err != nil {
		t.Fatal(err)
	}
	if res.OtherLabels != 1 || res.Sources[0].Card.Opportunity != record.Other {
		t.Errorf("result: %+v", res)
	}
	stored, err := record.StoredCards(t.Context(), w.st)
	if err != nil {
		t.Fatal(err)
	}
	var cards []record.Card
	for _, sc := range stored {
		cards = append(cards, sc.Card)
	}
	st := Stats(cards)
	if st.Cards != 2 || st.Opportunity.Other != 1 || st.Opportunity.Share(record.Other) != 0.5 {
		t.Errorf("stats: %+v", st.Opportunity)
	}
}

func TestStageSourceText(t *testing.T) {
	tests := []struct {
		name      string
		ref       SourceRef
		noFetch   bool // the sources stage did not run
		level     string
		unsummary string // reason when unsummarizable
		failure   string // reason when failed
	}{
		{"no HTML, abstract", SourceRef{Key: "k", ArxivID: "2402.00009", Title: "Paper N", Abstract: refT.Abstract}, false, record.TextAbstract, "", ""},
		{"no HTML, no abstract", SourceRef{Key: "k", ArxivID: "2402.00009", Title: "Paper N"}, false, "", "arXiv and ar5iv have no HTML for it and there is no abstract", ""},
		{"not fetched, abstract", SourceRef{Key: "k", ArxivID: "2402.00009", Title: "Paper N", Abstract: refT.Abstract}, true, record.TextAbstract, "", ""},
		{"invalid arXiv ID", SourceRef{Key: "k", ArxivID: "not-an-id", S2PaperID: "s2N", Title: "Paper N", Abstract: refT.Abstract}, false, record.TextAbstract, "", ""},
		{"no identity", SourceRef{Key: "k"}, false, "", "no arXiv ID, Semantic Scholar ID or title", ""},
		{"title only", SourceRef{Key: "k", Title: "Paper N", Abstract: refT.Abstract}, false, record.TextAbstract, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			srv := newFakeLLM(t, func(r fakeRequest) string { return validCard(r.title(), r.source()) })
			s := &Stage{Store: w.st, LLM: srv.client(t, nil)}
			if !tt.noFetch {
				w.fetchSources(t, tt.ref)
			}
			res, err := processTarget(t, s, idA, []SourceRef{tt.ref})
			if err != nil {
				t.Fatal(err)
			}
			r := res.Sources[0]
			switch {
			case tt.unsummary != "":
				if !r.Unsummarizable || !strings.Contains(r.Failure, tt.unsummary) {
					t.Errorf("got %+v, want unsummarizable: %s", r, tt.unsummary)
				}
				if e := ledger(t, w.st, idA); e.Status != store.StatusDone {
					t.Errorf("an unsummarizable source failed the target: %+v", e)
				}
			case tt.failure != "":
				if r.Unsummarizable || r.Card != nil || !strings.Contains(r.Failure, tt.failure) {
					t.Errorf("got %+v, want failure: %s", r, tt.failure)
				}
			default:
				if r.Card == nil || r.TextLevel != tt.level {
					t.Errorf("got %+v, want a card at level %s", r, tt.level)
				}
			}
		})
	}
}

func TestStageMissingTarget(t *testing.T) {
	w := newWorld(t)
	s := &Stage{Store: w.st}
	res, err := processTarget(t, s, "2503.00001", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Gold.Card != nil || !strings.Contains(res.Gold.Failure, "run fetch first") {
		t.Errorf("gold: %+v", res.Gold)
	}
	if e := ledger(t, w.st, "2503.00001"); e.Status != store.StatusFailed || !strings.Contains(e.Error, "gold card:") {
		t.Errorf("ledger: %+v", e)
	}
	if _, err := processTarget(t, s, "not an id", nil); err == nil {
		t.Error("invalid target ID accepted")
	}
}

// Without an LLM the heuristic writes the cards, metered as heuristic,
// keyed by model "heuristic", and reused on the next run.
func TestStageHeuristic(t *testing.T) {
	w := newWorld(t)
	meter := new(llm.Meter)
	s := &Stage{Store: w.st, Meter: meter}
	res, err := processTarget(t, s, idA, []SourceRef{refS, refT, refU})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != llm.HeuristicModel || res.Written != 3 || res.Unsummarizable != 1 {
		t.Errorf("result: %+v", res)
	}
	if k := res.Gold.StoreKind; k != "card:gold:heuristic:heuristic-v2" {
		t.Errorf("gold kind %q", k)
	}
	tallies := meter.Tallies()
	if len(tallies) != 1 || tallies[0].Model != llm.HeuristicModel || tallies[0].Calls != 3 {
		t.Errorf("meter: %+v", tallies)
	}

	// A stored card that no longer validates is written again.
	kind := record.CardKind(record.CardSource, llm.HeuristicModel, HeuristicPromptVersion)
	broken := *res.Sources[1].Card
	broken.Method = "no label"
	if _, err := kind.Put(t.Context(), w.st, "s2:s2T", &broken, nil); err != nil {
		t.Fatal(err)
	}
	res, err = processTarget(t, s, idA, []SourceRef{refS, refT, refU})
	if err != nil {
		t.Fatal(err)
	}
	if res.Written != 1 || res.Reused != 2 || res.Sources[1].Reused {
		t.Errorf("rerun: written %d reused %d", res.Written, res.Reused)
	}
}
