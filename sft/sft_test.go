package sft

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/gate"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sft/tokenizer"
)

func generate(t *testing.T, instances []record.Instance, o Options) *Result {
	t.Helper()
	r, err := Generate(context.Background(), instances, o)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return r
}

func rejectsByID(r *Result) map[string]Reject {
	m := map[string]Reject{}
	for _, rj := range r.Rejects {
		m[rj.InstanceID] = rj
	}
	return m
}

// Every row of the heuristic teacher passes the gate, opens differently
// and is the instance's own model input.
func TestHeuristicTeacher(t *testing.T) {
	_, instances := buildDataset(t, 8, 3)
	for _, noThink := range []bool{false, true} {
		r := generate(t, instances, Options{Teacher: Heuristic{}, NoThink: noThink, ValSize: 2})
		if len(r.Rows) != 8 || len(r.Rejects) != 0 {
			t.Fatalf("no-think %v: %d rows, rejects %+v", noThink, len(r.Rows), r.Rejects)
		}
		prompts := map[string]string{}
		for _, in := range instances {
			prompts[in.InstanceID] = in.Prompt
		}
		openings := map[string]bool{}
		for _, row := range r.Rows {
			if row.Prompt != prompts[row.InstanceID] {
				t.Errorf("%s: the row's prompt is not the instance's model input", row.InstanceID)
			}
			cards, err := gate.Check(row.Response, 3)
			if err != nil {
				t.Errorf("%s: %v", row.InstanceID, err)
			}
			if len(cards) != 3 || row.Teacher != llm.HeuristicModel || row.Cards[0].Model != llm.HeuristicModel {
				t.Errorf("%s: %d cards, teacher %q", row.InstanceID, len(cards), row.Teacher)
			}
			think, _, _ := gate.Split(row.Response)
			if noThink != (think == "") {
				t.Errorf("no-think %v: think block %.60q", noThink, think)
			}
			if !noThink && !strings.HasPrefix(think, row.Opening) {
				t.Errorf("%s: the trace does not begin with its opening %q", row.InstanceID, row.Opening)
			}
			openings[row.Opening] = true
		}
		rep := r.Report
		if rep.Gate.PassRate != 1 || rep.Gate.Checked != 8 || rep.Rows[SplitValidation] != 2 {
			t.Errorf("report %+v", rep)
		}
		if !noThink && (rep.Openings.Distinct != 8 || len(openings) != 8) {
			t.Errorf("openings: %d distinct reported, %d seen, want 8", rep.Openings.Distinct, len(openings))
		}
		if rep.Teacher != "heuristic" || rep.PromptVersions.Ideas != HeuristicVersion || rep.PromptVersions.ModelInput != "model-input-v2" {
			t.Errorf("report names %+v", rep)
		}
	}
}

func TestTemplatePoolDistinct(t *testing.T) {
	seen := map[string]bool{}
	for i := range templatePoolSize() {
		k := normOpening(templateOpening(i))
		if seen[k] {
			t.Fatalf("opening %d repeats: %q", i, templateOpening(i))
		}
		seen[k] = true
	}
	// Consecutive openings differ in their first words too.
	if strings.Fields(templateOpening(0))[0] == strings.Fields(templateOpening(1))[0] {
		t.Errorf("openings 0 and 1 start alike: %q, %q", templateOpening(0), templateOpening(1))
	}
	o, err := Heuristic{}.Openings(context.Background(), 3, []string{templateOpening(0), templateOpening(2)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range o.Sentences {
		if s == templateOpening(0) || s == templateOpening(2) {
			t.Errorf("a used opening came back: %q", s)
		}
	}
}

// The teacher gets exactly the stored model input as its user turn, and
// the gold card reaches no request.
func TestTeacherSeesModelInputOnly(t *testing.T) {
	_, instances := buildDataset(t, 4, 3)
	f := newFakeLLM(t)
	teacher, meter := f.teacher(t, openStore(t))
	r := generate(t, instances, Options{Teacher: teacher, Meter: meter, ValSize: 1})
	if len(r.Rows) != 4 {
		t.Fatalf("%d rows, rejects %+v", len(r.Rows), r.Rejects)
	}
	seen := map[string]bool{}
	for _, q := range f.all() {
		if strings.Contains(q.Raw, goldMarker) {
			t.Errorf("a %s request carries the gold card", q.Stage)
		}
		if q.Stage != StageIdeas {
			continue
		}
		id := ""
		for _, in := range instances {
			if q.User == in.Prompt {
				id = in.InstanceID
			}
		}
		if id == "" {
			t.Errorf("an ideas request's user turn is not an instance's stored prompt: %.80q", q.User)
		}
		seen[id] = true
	}
	if len(seen) != 4 {
		t.Errorf("ideas asked for %d instances, want 4", len(seen))
	}
	for _, row := range r.Rows {
		if row.Teacher != "teacher-1" || row.Cards[0].Opportunity != "Bridge Opportunity" ||
			!strings.HasPrefix(row.Cards[0].ProblemGap, "[Bridge Opportunity] ") {
			t.Errorf("row %s: teacher %q, card %+v (labels canonical?)", row.InstanceID, row.Teacher, row.Cards[0])
		}
		if row.TeacherUsage.TotalTokens != 2400 || row.Cached {
			t.Errorf("row %s: usage %+v cached %v", row.InstanceID, row.TeacherUsage, row.Cached)
		}
	}
	// One openings call covers 4 instances.
	if n := f.calls(StageOpenings); n != 1 {
		t.Errorf("%d openings calls, want 1", n)
	}
}

// Bad answers are sent back once with the reason, then rejected with it.
func TestGateRetryThenReject(t *testing.T) {
	_, instances := buildDataset(t, 6, 3)
	ids := make([]string, len(instances))
	for i, in := range instances {
		ids[i] = in.InstanceID
	}
	slices.Sort(ids)
	// Instance 0: K-1 cards twice. 1: a bad label, then good. 2: not JSON
	// twice. 3: a label of the wrong axis twice. 4: a trace that misses
	// its opening twice. 5: a trace with a tag, then good.
	bad := map[string]func(attempt int) string{
		ids[0]: func(int) string { return goodAnswer(2, "x") },
		ids[1]: func(a int) string {
			if a == 1 {
				return strings.Replace(goodAnswer(3, "y"), "[bridge opportunity]", "[Great Idea]", 1)
			}
			return ""
		},
		ids[2]: func(int) string { return "I would rather describe my ideas in prose." },
		ids[3]: func(int) string {
			return strings.ReplaceAll(goodAnswer(3, "z"), "[Synthesis / Unification]", "[Evidence Gap]")
		},
	}
	f := newFakeLLM(t)
	f.ideas = func(user string, attempt int) string {
		if b := bad[instanceOf(instances, user)]; b != nil {
			return b(attempt)
		}
		return ""
	}
	f.trace = func(user string, attempt int, opening string) string {
		switch instanceOf(instances, user) {
		case ids[4]:
			return "Let me start somewhere else entirely. " + words(user, 80)
		case ids[5]:
			if attempt == 1 && !strings.Contains(user, "previous attempt was rejected") {
				return opening + " " + words(user, 80) + " </think>"
			}
		}
		return ""
	}
	teacher, meter := f.teacher(t, openStore(t))
	r := generate(t, instances, Options{Teacher: teacher, Meter: meter})
	rejects := rejectsByID(r)
	want := map[string]string{ids[0]: gate.ReasonWrongCount, ids[2]: gate.ReasonNotJSON, ids[3]: gate.ReasonWrongAxis, ids[4]: ReasonTraceInvalid}
	if len(rejects) != len(want) {
		t.Errorf("rejects %+v, want %v", r.Rejects, want)
	}
	for id, reason := range want {
		rj := rejects[id]
		if rj.Reason != reason || rj.Attempts != 2 || rj.Detail == "" || rj.Raw == "" {
			t.Errorf("%s: reject %+v, want %s after 2 attempts with detail and raw answer", id, rj, reason)
		}
	}
	// Exactly two ideas calls for each instance whose first answer failed.
	perID := map[string]int{}
	for _, q := range f.all() {
		if q.Stage == StageIdeas {
			perID[instanceOf(instances, q.User)]++
			if q.Messages > 3 && !strings.Contains(q.Raw, "could not be used") {
				t.Errorf("a follow-up without the reason")
			}
		}
	}
	for i, id := range ids {
		if want := map[int]int{0: 2, 1: 2, 2: 2, 3: 2}[i]; want > 0 && perID[id] != want || want == 0 && perID[id] != 1 {
			t.Errorf("instance %d: %d ideas calls", i, perID[id])
		}
	}
	rep := r.Report
	if rep.Rows[SplitTrain]+rep.Rows[SplitValidation] != 2 || rep.Gate.Checked != 5 || rep.Gate.Passed != 2 || rep.Gate.FirstAttempt != 1 {
		t.Errorf("gate stats %+v rows %v", rep.Gate, rep.Rows)
	}
	if rep.Rejects[gate.ReasonWrongCount] != 1 || rep.Rejects[ReasonTraceInvalid] != 1 {
		t.Errorf("rejects by reason %v", rep.Rejects)
	}
	for _, row := range r.Rows {
		if row.InstanceID == ids[1] && row.Attempts != 2 {
			t.Errorf("the retried instance records %d attempts", row.Attempts)
		}
	}
}

// A re-run with nothing changed asks the endpoint nothing: answers come
// from the cache, rejects from the store's memory of them.
func TestRerunCostsNothing(t *testing.T) {
	_, instances := buildDataset(t, 5, 3)
	f := newFakeLLM(t)
	f.ideas = func(user string, _ int) string {
		if instanceOf(instances, user) == instances[0].InstanceID {
			return "no json here"
		}
		return ""
	}
	st := openStore(t)
	teacher, meter := f.teacher(t, st)
	first := generate(t, instances, Options{Teacher: teacher, Meter: meter})
	calls := f.calls("")
	if calls == 0 || len(first.Rows) != 4 || len(first.Rejects) != 1 {
		t.Fatalf("first run: %d calls, %d rows, %d rejects", calls, len(first.Rows), len(first.Rejects))
	}
	teacher2, meter2 := f.teacher(t, st)
	second := generate(t, instances, Options{Teacher: teacher2, Meter: meter2})
	if n := f.calls(""); n != calls {
		t.Errorf("the re-run made %d calls, want 0", n-calls)
	}
	if !slices.EqualFunc(first.Rows, second.Rows, func(a, b Row) bool { return a.Response == b.Response && a.Split == b.Split }) {
		t.Error("the re-run wrote other rows")
	}
	if len(second.Rejects) != 1 || second.Rejects[0].Reason != gate.ReasonNotJSON {
		t.Errorf("re-run rejects %+v", second.Rejects)
	}
	for _, row := range second.Rows {
		if !row.Cached {
			t.Errorf("row %s not from the cache", row.InstanceID)
		}
	}
	for _, u := range second.Report.Usage {
		if u.Calls != 0 || u.InputTokens != 0 || u.CachedCalls == 0 {
			t.Errorf("re-run usage %+v", u)
		}
	}
	// --retry-rejects asks again for the remembered reject only.
	teacher3, meter3 := f.teacher(t, st)
	teacher3.retry = true
	generate(t, instances, Options{Teacher: teacher3, Meter: meter3})
	if n := f.calls("") - calls; n != 2 {
		t.Errorf("retrying rejects made %d calls, want 2 (the answer and its follow-up)", n)
	}
}

// --budget stops starting calls once the run has spent it; a re-run
// with more budget continues, the answers so far free from the cache.
func TestBudget(t *testing.T) {
	_, instances := buildDataset(t, 6, 3)
	f := newFakeLLM(t)
	st := openStore(t)
	teacher, meter := f.teacher(t, st)
	// 1000 input + 200 output tokens a call at $1/$5 per million = $0.002.
	prices := llm.Prices{"teacher-1": {Input: 1, Output: 5}}
	r := generate(t, instances, Options{Teacher: teacher, Meter: meter, Prices: prices, Budget: 0.005, Workers: 1, NoThink: true})
	if n := f.calls(""); n != 3 {
		t.Errorf("%d calls, want 3 (the third one crosses $0.005)", n)
	}
	if len(r.Skipped) != 3 || len(r.Rows) != 3 || r.Stopped || r.Report.Skipped != 3 {
		t.Errorf("skipped %v, %d rows, stopped %v", r.Skipped, len(r.Rows), r.Stopped)
	}
	if r.Report.Cost == nil || *r.Report.Cost < 0.005 || *r.Report.Cost > 0.0061 {
		t.Errorf("cost %v", r.Report.Cost)
	}
	teacher, meter = f.teacher(t, st)
	r = generate(t, instances, Options{Teacher: teacher, Meter: meter, Prices: prices, Budget: 0.0061, Workers: 1, NoThink: true})
	if n := f.calls(""); n != 6 || len(r.Rows) != 6 || len(r.Skipped) != 0 {
		t.Errorf("resumed: %d calls in all, %d rows, skipped %v", n, len(r.Rows), r.Skipped)
	}
	if *r.Report.Saved < 0.0059 {
		t.Errorf("saved %v, want the first run's three calls", *r.Report.Saved)
	}
}

// Stop works like a spent budget, and the Result says so.
func TestStop(t *testing.T) {
	_, instances := buildDataset(t, 3, 3)
	stop := make(chan struct{})
	close(stop)
	r := generate(t, instances, Options{Teacher: Heuristic{}, Stop: stop})
	if !r.Stopped || len(r.Skipped) != 3 {
		t.Errorf("stopped %v, skipped %v", r.Stopped, r.Skipped)
	}
}

func TestOpeningsUnique(t *testing.T) {
	_, instances := buildDataset(t, 45, 3)
	f := newFakeLLM(t)
	f.openings = func(n, call int) []string {
		if call != 2 {
			return nil
		}
		// The second batch repeats an opening of the first (in other
		// case and punctuation): it must be sent back.
		out := make([]string, n)
		for i := range out {
			out[i] = "Fresh opening " + strings.Repeat("again ", i) + "for the second batch, I suppose."
		}
		out[n-1] = "OPENING NUMBER 3 of this run - I want to see what these papers leave open"
		return out
	}
	teacher, meter := f.teacher(t, openStore(t))
	r := generate(t, instances, Options{Teacher: teacher, Meter: meter, Limit: 45})
	if len(r.Rows) != 45 {
		t.Fatalf("%d rows, rejects %+v", len(r.Rows), r.Rejects)
	}
	if r.Report.Openings.Distinct != 45 || r.Report.Openings.Rows != 45 {
		t.Errorf("openings %+v", r.Report.Openings)
	}
	// 3 batches of 20, one of them asked twice.
	if n := f.calls(StageOpenings); n != 4 {
		t.Errorf("%d openings calls, want 4", n)
	}
	shown := false
	for _, q := range f.all() {
		if q.Stage == StageOpenings && strings.Contains(q.User, "Already used (40 so far)") {
			shown = strings.Contains(q.User, "- Opening number 20 of this run")
		}
	}
	if !shown {
		t.Error("the third batch does not show the 40 used openings")
	}
	seen := map[string]bool{}
	for _, row := range r.Rows {
		k := normOpening(row.Opening)
		if seen[k] {
			t.Errorf("opening %q used twice", row.Opening)
		}
		seen[k] = true
	}
}

func TestLengthFilter(t *testing.T) {
	_, instances := buildDataset(t, 4, 3)
	tok, err := tokenizer.Load("tokenizer/testdata/bpe-tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		counter Counter
	}{{"estimate", nil}, {"tokenizer", tok}} {
		t.Run(c.name, func(t *testing.T) {
			all := generate(t, instances, Options{Teacher: Heuristic{}, Counter: c.counter, MaxTokens: -1})
			var lengths []int
			for _, row := range all.Rows {
				want := Estimate{}.Count(row.Prompt) + Estimate{}.Count(row.Response) + TemplateOverhead
				if c.counter != nil {
					want = tok.Count(row.Prompt) + tok.Count(row.Response) + TemplateOverhead
				}
				if row.Tokens != want {
					t.Errorf("%s: %d tokens, want %d", row.InstanceID, row.Tokens, want)
				}
				lengths = append(lengths, row.Tokens)
			}
			slices.Sort(lengths)
			limit := lengths[1] // keeps the two shortest
			r := generate(t, instances, Options{Teacher: Heuristic{}, Counter: c.counter, MaxTokens: limit})
			if len(r.Rows) != 2 || r.Report.Rejects[ReasonTooLong] != 2 || r.Report.Length.Dropped != 2 {
				t.Errorf("limit %d: %d rows, rejects %v", limit, len(r.Rows), r.Report.Rejects)
			}
			for _, rj := range r.Rejects {
				if rj.Stage != "length" || rj.Tokens <= limit {
					t.Errorf("reject %+v", rj)
				}
			}
			for _, row := range r.Rows {
				if row.Tokens > limit {
					t.Errorf("kept a row of %d tokens over %d", row.Tokens, limit)
				}
			}
		})
	}
	// The byte-level tokenizer of the test counts more tokens than the
	// estimate (it has few merges): the two really differ.
	if tok.Count(instances[0].Prompt) <= (Estimate{}).Count(instances[0].Prompt) {
		t.Error("the test tokenizer counts no more than the estimate")
	}
}

func TestValidationSplitDeterministic(t *testing.T) {
	_, instances := buildDataset(t, 10, 3)
	val := func(r *Result) []string {
		var ids []string
		for _, row := range r.Rows {
			if row.Split == SplitValidation {
				ids = append(ids, row.InstanceID)
			}
		}
		return ids
	}
	base := val(generate(t, instances, Options{Teacher: Heuristic{}, ValSize: 3}))
	if len(base) != 3 {
		t.Fatalf("validation %v, want 3 rows", base)
	}
	shuffled := slices.Clone(instances)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, o := range []Options{
		{Teacher: Heuristic{}, ValSize: 3},
		{Teacher: Heuristic{}, ValSize: 3, NoThink: true},
		{Teacher: Heuristic{}, ValSize: 3, NumIdeas: 2},
	} {
		if got := val(generate(t, shuffled, o)); !slices.Equal(got, base) {
			t.Errorf("options %+v: validation %v, want %v", o, got, base)
		}
	}
	// At most half the rows; none when asked.
	if got := val(generate(t, instances, Options{Teacher: Heuristic{}, ValSize: 100})); len(got) != 5 {
		t.Errorf("val-size 100 of 10 rows: %d validation rows, want 5", len(got))
	}
	if got := val(generate(t, instances, Options{Teacher: Heuristic{}, ValSize: -1})); len(got) != 0 {
		t.Errorf("val-size -1: %d validation rows", len(got))
	}
	// Growing the corpus keeps the held-out IDs that still rank lowest.
	more := append(slices.Clone(instances[:5]), instances[5:]...)
	if got := val(generate(t, more[:8], Options{Teacher: Heuristic{}, ValSize: 3})); len(got) != 3 {
		t.Errorf("%v", got)
	}
}

// Another K than the dataset's re-renders the model input with the same
// template.
func TestOtherK(t *testing.T) {
	_, instances := buildDataset(t, 2, 3)
	r := generate(t, instances, Options{Teacher: Heuristic{}, NumIdeas: 2})
	for _, row := range r.Rows {
		if !strings.Contains(row.Prompt, "Propose 2 new research ideas") || row.NumIdeas != 2 {
			t.Errorf("%s: prompt %.120q", row.InstanceID, row.Prompt)
		}
		if _, err := gate.Check(row.Response, 2); err != nil {
			t.Error(err)
		}
	}
	// An instance built with another template version cannot be
	// re-rendered faithfully.
	old := slices.Clone(instances)
	old[0].Provenance.PromptVersions.Dataset = "model-input-v0"
	if _, err := Generate(context.Background(), old, Options{Teacher: Heuristic{}, NumIdeas: 2}); err == nil || !strings.Contains(err.Error(), "model-input-v0") {
		t.Errorf("Generate = %v, want a template version error", err)
	}
}

// Only the chosen dataset splits feed the SFT data.
func TestSplitsAndLimit(t *testing.T) {
	_, instances := buildDataset(t, 4, 3)
	instances[0].Split = record.SplitTest
	r := generate(t, instances, Options{Teacher: Heuristic{}})
	if r.Report.Instances != 3 {
		t.Errorf("%d instances, want the 3 train ones", r.Report.Instances)
	}
	r = generate(t, instances, Options{Teacher: Heuristic{}, Splits: []string{"train", "test"}, Limit: 2})
	if r.Report.Instances != 2 {
		t.Errorf("limit 2: %d instances", r.Report.Instances)
	}
}

// An endpoint that refuses the request stops the run instead of
// rejecting every instance.
func TestAPIErrorStops(t *testing.T) {
	_, instances := buildDataset(t, 2, 3)
	_, err := Generate(context.Background(), instances, Options{Teacher: failing{&llm.APIError{Stage: StageIdeas, Status: 401, Message: "bad key"}}})
	var ae *llm.APIError
	if !errors.As(err, &ae) {
		t.Errorf("Generate = %v, want the APIError", err)
	}
	r := generate(t, instances, Options{Teacher: failing{errors.New("connection reset")}})
	if len(r.Rejects) != 2 || r.Rejects[0].Reason != ReasonTeacherError {
		t.Errorf("rejects %+v", r.Rejects)
	}
}

type failing struct{ err error }

func (f failing) Model() string                  { return "failing" }
func (f failing) PromptVersions() PromptVersions { return PromptVersions{} }
func (f failing) Ideas(context.Context, *Input) (*Ideas, error) {
	return nil, f.err
}
func (f failing) Openings(context.Context, int, []string) (*Openings, error) { return nil, f.err }
func (f failing) Trace(context.Context, *Input, []record.Card, string, string) (*Trace, error) {
	return nil, f.err
}
