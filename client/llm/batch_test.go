package llm

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/store"
)

// batchWorld is a simulated OpenAI and Anthropic, and clients for them.
type batchWorld struct {
	s *sim.Servers
}

func newBatchWorld(t *testing.T, opt sim.Options) *batchWorld {
	t.Helper()
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 5, Targets: 2})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.Start(w, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &batchWorld{s: s}
}

func (bw *batchWorld) client(t testing.TB, provider string, st *store.Store) *Client {
	t.Helper()
	cfg := Config{Provider: provider, Model: "gpt-sim", StructuredOutput: true, Store: st, APIKey: "sk-sim-test-123456"}
	cfg.BaseURL = bw.s.URL(sim.LLM)
	if provider == ProviderAnthropic {
		cfg.BaseURL, cfg.Model = bw.s.URL(sim.Anthropic), "claude-sonnet-4-6"
	}
	hc, err := httpx.New(httpx.Config{UserAgent: "t", RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond}, cfg.ServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(hc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func batcher(t testing.TB, c *Client, st *store.Store, cfg BatchConfig) *Batcher {
	t.Helper()
	cfg.Store = st
	cfg.PollInterval = cmpOr(cfg.PollInterval, time.Millisecond)
	b, err := NewBatcher(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func cmpOr(a, b time.Duration) time.Duration {
	if a != 0 {
		return a
	}
	return b
}

// cardRequest is a request the simulated model answers with a card.
func cardRequest(i int) Request {
	return Request{
		Stage: "summarize", PromptVersion: "gold-v1", MaxTokens: 800, Schema: goldSchemaForTest,
		System: "You write idea cards.",
		User:   fmt.Sprintf("Title: Paper%d: a method for problem %d\nWrite the idea card of this paper.", i, i),
	}
}

// completeAll asks for every request until all are answered, flushing
// and waiting between passes as a stage runner would; it returns the
// passes it took.
func completeAll(t *testing.T, b *Batcher, reqs []Request) ([]*Response, int) {
	return completeAllOr(t, b, reqs, false)
}

// completeAllOr is completeAll that takes an answer invalid after all
// follow-ups as a Response with no JSON and its attempts.
func completeAllOr(t *testing.T, b *Batcher, reqs []Request, allowInvalid bool) ([]*Response, int) {
	t.Helper()
	out := make([]*Response, len(reqs))
	for pass := 1; pass <= 10; pass++ {
		left := 0
		for i, r := range reqs {
			if out[i] != nil {
				continue
			}
			resp, err := b.Complete(t.Context(), r)
			var ie *InvalidError
			switch {
			case errors.Is(err, ErrPending):
				left++
			case errors.As(err, &ie) && allowInvalid:
				out[i] = &Response{Attempts: ie.Attempts}
			case err != nil:
				t.Fatalf("request %d: %v", i, err)
			default:
				out[i] = resp
			}
		}
		if left == 0 {
			return out, pass
		}
		if err := b.Flush(t.Context()); err != nil && !errors.Is(err, ErrQueueFull) {
			t.Fatal(err) // a full queue waits for the batches, as a run does
		}
		if err := b.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("requests still pending after 10 passes")
	return nil, 0
}

func TestBatchLifecycle(t *testing.T) {
	for _, provider := range []string{ProviderOpenAI, ProviderAnthropic} {
		t.Run(provider, func(t *testing.T) {
			bw := newBatchWorld(t, sim.Options{StrictOpenAI: true})
			st := openStore(t, t.TempDir())
			c := bw.client(t, provider, st)
			b := batcher(t, c, st, BatchConfig{MaxRequests: 2})
			reqs := make([]Request, 5)
			for i := range reqs {
				reqs[i] = cardRequest(i)
			}
			resps, passes := completeAll(t, b, reqs)
			if passes != 2 {
				t.Errorf("took %d passes, want 2 (queue, then collect)", passes)
			}
			for i, r := range resps {
				if len(r.JSON) == 0 || r.Attempts != 1 {
					t.Errorf("response %d: %+v", i, r)
				}
			}
			name := map[string]string{ProviderOpenAI: sim.LLM, ProviderAnthropic: sim.Anthropic}[provider]
			bs := bw.s.BatchStats(name)
			if bs.Batches != 3 || bs.Lines != 5 {
				t.Errorf("batch stats %+v, want 5 lines in 3 batches of at most 2", bs)
			}
			for id, n := range bs.Submissions {
				if n != 1 {
					t.Errorf("%s submitted %d times", id, n)
				}
			}
			ta := c.Meter().Tallies()[0]
			if ta.Calls != 5 || ta.BatchCalls != 5 || ta.Batch.TotalTokens != ta.Spent.TotalTokens || ta.Spent.TotalTokens == 0 {
				t.Errorf("tally %+v", ta)
			}
			prices := Prices{c.Model(): {Input: 1, Output: 1}}
			full, _ := prices.Cost(c.Model(), ta.Spent)
			if got, _ := prices.TallyCost(ta); got != full/2 {
				t.Errorf("batch cost %v, want half of %v", got, full)
			}
			// Answers are cached: asking again costs nothing, in this process
			// or a plain client's.
			if r, err := c.Complete(t.Context(), reqs[0]); err != nil || !r.Cached {
				t.Errorf("sync client after the batch: %v, %+v", err, r)
			}
			if pend, _ := PendingBatches(t.Context(), st); len(pend) != 0 {
				t.Errorf("pending batches left: %+v", pend)
			}
		})
	}
}

// TestBatchFaults: errored and expired lines are submitted again, invalid
// answers get their follow-up in the next batch, and nothing the provider
// answered is submitted twice.
func TestBatchFaults(t *testing.T) {
	for _, provider := range []string{ProviderOpenAI, ProviderAnthropic} {
		t.Run(provider, func(t *testing.T) {
			name := map[string]string{ProviderOpenAI: sim.LLM, ProviderAnthropic: sim.Anthropic}[provider]
			bw := newBatchWorld(t, sim.Options{Faults: map[string]sim.Faults{name: {PLineErrored: 0.2, PLineExpired: 0.2, PInvalid: 0.2}}})
			st := openStore(t, t.TempDir())
			c := bw.client(t, provider, st)
			b := batcher(t, c, st, BatchConfig{})
			reqs := make([]Request, 30)
			for i := range reqs {
				reqs[i] = cardRequest(i)
			}
			resps, passes := completeAllOr(t, b, reqs, true)
			if passes < 3 {
				t.Errorf("took %d passes; the faults should have needed more than 2", passes)
			}
			followUps := 0
			for _, r := range resps {
				followUps += r.Attempts - 1
			}
			bs := bw.s.BatchStats(name)
			resubmitted := 0
			for _, n := range bs.Submissions {
				resubmitted += n - 1
			}
			if followUps == 0 || resubmitted == 0 {
				t.Errorf("follow-ups %d, resubmissions %d: the faults did not show", followUps, resubmitted)
			}
			// Every line beyond the 30 first asks is a follow-up or a
			// resubmission of an errored or expired line, never of an answer.
			if bs.Lines != 30+followUps+resubmitted {
				t.Errorf("%d lines for 30 requests, %d follow-ups, %d resubmissions", bs.Lines, followUps, resubmitted)
			}
		})
	}
}

// TestBatchResume: a process that exits with a batch pending leaves it to
// the next one, which collects it and submits nothing again — also when
// the first stopped between creating the batch and recording its id.
func TestBatchResume(t *testing.T) {
	for _, provider := range []string{ProviderOpenAI, ProviderAnthropic} {
		for _, crash := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/crash=%v", provider, crash), func(t *testing.T) {
				name := map[string]string{ProviderOpenAI: sim.LLM, ProviderAnthropic: sim.Anthropic}[provider]
				bw := newBatchWorld(t, sim.Options{})
				dir := t.TempDir()
				reqs := []Request{cardRequest(1), cardRequest(2), cardRequest(3)}

				st1, err := store.Open(t.Context(), dir)
				if err != nil {
					t.Fatal(err)
				}
				b1 := batcher(t, bw.client(t, provider, st1), st1, BatchConfig{})
				for _, r := range reqs {
					if _, err := b1.Complete(t.Context(), r); !errors.Is(err, ErrPending) {
						t.Fatalf("first ask: %v", err)
					}
				}
				if err := b1.Flush(t.Context()); err != nil {
					t.Fatal(err)
				}
				if crash {
					// The provider has the batch; the ledger never heard back.
					bs, _ := st1.Batches(t.Context())
					bt := bs[0]
					bt.Remote, bt.State = "", BatchSubmitting
					st1.PutBatch(t.Context(), bt)
					rows, _ := st1.BatchRequestsOf(t.Context(), bt.ID)
					for i := range rows {
						rows[i].State = BatchSubmitting
					}
					st1.PutBatchRequests(t.Context(), rows)
				}
				st1.Close() // the process exits with the batch pending

				st2 := openStore(t, dir)
				c2 := bw.client(t, provider, st2)
				b2 := batcher(t, c2, st2, BatchConfig{})
				pend, err := PendingBatches(t.Context(), st2)
				if err != nil || len(pend) != 1 || pend[0].Requests != 3 {
					t.Fatalf("pending batches %+v, %v", pend, err)
				}
				resps, _ := completeAll(t, b2, reqs)
				for i, r := range resps {
					if r == nil || len(r.JSON) == 0 {
						t.Errorf("request %d unanswered", i)
					}
				}
				bs := bw.s.BatchStats(name)
				if bs.Batches != 1 || bs.Lines != 3 {
					t.Errorf("batch stats %+v: the resumed process submitted again", bs)
				}
			})
		}
	}
}

// TestBatchNeverSubmitted: a submission recorded but never made (the
// process died before asking) is found missing and queued again.
func TestBatchNeverSubmitted(t *testing.T) {
	bw := newBatchWorld(t, sim.Options{})
	st := openStore(t, t.TempDir())
	c := bw.client(t, ProviderOpenAI, st)
	req := cardRequest(7)
	key := CacheKey(c.Model(), req)
	st.PutBatch(t.Context(), store.Batch{ID: "cb-lost", Provider: ProviderOpenAI, Model: c.Model(), State: BatchSubmitting, Requests: 1, Created: time.Now()})
	st.PutBatchRequests(t.Context(), []store.BatchRequest{{Key: key, CustomID: customID(key, 0), Stage: "summarize", Batch: "cb-lost", State: BatchSubmitting}})
	b := batcher(t, c, st, BatchConfig{})
	resps, _ := completeAll(t, b, []Request{req})
	if resps[0] == nil || bw.s.BatchStats(sim.LLM).Batches != 1 {
		t.Errorf("response %v, batches %d", resps[0], bw.s.BatchStats(sim.LLM).Batches)
	}
}

// TestBatchBudget: a submission that would pass the budget is not made.
func TestBatchBudget(t *testing.T) {
	bw := newBatchWorld(t, sim.Options{})
	st := openStore(t, t.TempDir())
	c := bw.client(t, ProviderOpenAI, st)
	b := batcher(t, c, st, BatchConfig{Budget: Budget{MaxUSD: 0.0001, Prices: Prices{c.Model(): {Input: 10, Output: 30}}}})
	for i := range 3 {
		b.Complete(t.Context(), cardRequest(i))
	}
	if err := b.Flush(t.Context()); !errors.Is(err, ErrBudget) {
		t.Errorf("Flush = %v, want ErrBudget", err)
	}
	if n := bw.s.BatchStats(sim.LLM).Batches; n != 0 || b.Queued() != 3 {
		t.Errorf("%d batches submitted, %d queued", n, b.Queued())
	}
}

// TestBatchFailedValidation: a batch the provider refuses at validation
// is recorded with the reason, and its requests fail by name without
// being submitted again, in this run or the next.
func TestBatchFailedValidation(t *testing.T) {
	bw := newBatchWorld(t, sim.Options{Faults: map[string]sim.Faults{sim.LLM: {PBatchFailed: 1}}})
	st := openStore(t, t.TempDir())
	c := bw.client(t, ProviderOpenAI, st)
	b := batcher(t, c, st, BatchConfig{})
	req := cardRequest(1)
	b.Complete(t.Context(), req)
	b.Flush(t.Context())
	if err := b.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		b := batcher(t, c, st, BatchConfig{}) // a later run: its own Batcher
		_, err := b.Complete(t.Context(), req)
		var re *BatchRejectedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "could not be validated") || b.Queued() != 0 {
			t.Errorf("run %d: %v, %d queued; want the rejection named and nothing queued", run, err, b.Queued())
		}
		b.Flush(t.Context())
	}
	if n := bw.s.BatchStats(sim.LLM).Lines; n != 1 {
		t.Errorf("%d lines submitted, want the one", n)
	}
}

// TestBatchBudgetPartial: a Flush submits what the budget takes and keeps
// the rest queued; requests submitted and not answered yet count against
// the budget until their answers are metered.
func TestBatchBudgetPartial(t *testing.T) {
	bw := newBatchWorld(t, sim.Options{})
	st := openStore(t, t.TempDir())
	c := bw.client(t, ProviderOpenAI, st)
	// Each request is estimated at 800 completion tokens: $0.004 at the
	// batch price; the budget takes two of them, not three.
	b := batcher(t, c, st, BatchConfig{Budget: Budget{MaxUSD: 0.0099, Prices: Prices{c.Model(): {Input: 0, Output: 10}}}})
	for i := range 3 {
		b.Complete(t.Context(), cardRequest(i))
	}
	if err := b.Flush(t.Context()); !errors.Is(err, ErrBudget) {
		t.Fatalf("Flush = %v, want ErrBudget", err)
	}
	if bs := bw.s.BatchStats(sim.LLM); bs.Lines != 2 || b.Queued() != 1 {
		t.Fatalf("%d lines submitted, %d queued; want 2 and 1", bs.Lines, b.Queued())
	}
	// Submitted but unanswered: they still count.
	b.Complete(t.Context(), cardRequest(3))
	if err := b.Flush(t.Context()); !errors.Is(err, ErrBudget) || bw.s.BatchStats(sim.LLM).Lines != 2 {
		t.Fatalf("second Flush = %v, %d lines: the outstanding requests were not counted", err, bw.s.BatchStats(sim.LLM).Lines)
	}
	if err := b.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := b.Complete(t.Context(), cardRequest(i)); err != nil {
			t.Fatalf("request %d after its batch: %v", i, err)
		}
	}
	// Their real cost (a few hundred output tokens) is less than the
	// estimate: the two queued requests fit now.
	spent, _ := Prices{c.Model(): {Input: 0, Output: 10}}.TallyCost(c.Meter().Tallies()[0])
	if err := b.Flush(t.Context()); err != nil || bw.s.BatchStats(sim.LLM).Lines != 4 {
		t.Errorf("Flush after the answers ($%.5f spent) = %v, %d lines; want the last two submitted", spent, err, bw.s.BatchStats(sim.LLM).Lines)
	}
}

// TestBatchSchemaRefused: a batch line the endpoint refuses for its
// structured output is not resubmitted as it was: the schema falls back
// to an instruction, as in sync mode, and the next batch answers it.
func TestBatchSchemaRefused(t *testing.T) {
	bw := newBatchWorld(t, sim.Options{StrictOpenAI: true})
	st := openStore(t, t.TempDir())
	c := bw.client(t, ProviderOpenAI, st)
	c.cfg.Dialect = DialectCompatible // the full schema, minLength and all: strict mode refuses it
	b := batcher(t, c, st, BatchConfig{})
	resps, passes := completeAll(t, b, []Request{cardRequest(1), cardRequest(2)})
	if passes != 3 || resps[0] == nil || len(resps[0].JSON) == 0 {
		t.Errorf("%d passes, response %+v; want 3 (refused, resubmitted as an instruction, collected)", passes, resps[0])
	}
	if bs := bw.s.BatchStats(sim.LLM); bs.Lines != 4 {
		t.Errorf("%d lines submitted, want 4", bs.Lines)
	}
}

// TestBatchFlushBytes: the queue is submitted as soon as it holds
// FlushBytes of requests, so a run never holds more in memory.
func TestBatchFlushBytes(t *testing.T) {
	bw := newBatchWorld(t, sim.Options{})
	st := openStore(t, t.TempDir())
	c := bw.client(t, ProviderOpenAI, st)
	b := batcher(t, c, st, BatchConfig{FlushBytes: 1500})
	for i := range 7 {
		b.Complete(t.Context(), cardRequest(i)) // about 600 bytes a line
	}
	bs := bw.s.BatchStats(sim.LLM)
	if bs.Batches < 2 || b.Queued() >= 3 || bs.Lines+b.Queued() != 7 {
		t.Errorf("%d batches of %d lines submitted, %d queued; want the queue flushed at 1.5 KB", bs.Batches, bs.Lines, b.Queued())
	}
}

// TestBatchResultsGone: a batch whose results the provider no longer
// keeps (a resume weeks later) has its requests submitted again.
func TestBatchResultsGone(t *testing.T) {
	for _, provider := range []string{ProviderOpenAI, ProviderAnthropic} {
		t.Run(provider, func(t *testing.T) {
			name := map[string]string{ProviderOpenAI: sim.LLM, ProviderAnthropic: sim.Anthropic}[provider]
			bw := newBatchWorld(t, sim.Options{})
			st := openStore(t, t.TempDir())
			c := bw.client(t, provider, st)
			b := batcher(t, c, st, BatchConfig{})
			reqs := []Request{cardRequest(1), cardRequest(2)}
			for _, r := range reqs {
				b.Complete(t.Context(), r)
			}
			if err := b.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			bs, _ := st.Batches(t.Context())
			for range 10 { // the batch ends, its results are not collected yet
				if s, err := b.api.status(t.Context(), bs[0].Remote, bs[0].Info); err != nil || s.ended {
					break
				}
			}
			bw.s.DropBatchResults(name)
			resps, _ := completeAll(t, b, reqs)
			if resps[0] == nil || resps[1] == nil {
				t.Fatal("unanswered")
			}
			if got := bw.s.BatchStats(name); got.Batches != 2 || got.Lines != 4 {
				t.Errorf("batch stats %+v, want the two requests submitted again in a second batch", got)
			}
		})
	}
}

// TestBatchPollFailures: while the provider's status endpoint fails
// (5xx, resets, 429s past every retry), polling reports it and the batch
// stays pending: nothing is failed, dropped or submitted again; once the
// endpoint answers, the answers are collected from the one batch.
func TestBatchPollFailures(t *testing.T) {
	for _, provider := range []string{ProviderOpenAI, ProviderAnthropic} {
		for _, fault := range []sim.Fault{sim.InternalError, sim.ResetConnection, sim.TooManyRequests} {
			t.Run(fmt.Sprintf("%s/%d/%v", provider, fault.Status, fault.Reset), func(t *testing.T) {
				name := map[string]string{ProviderOpenAI: sim.LLM, ProviderAnthropic: sim.Anthropic}[provider]
				bw := newBatchWorld(t, sim.Options{})
				st := openStore(t, t.TempDir())
				b := batcher(t, bw.client(t, provider, st), st, BatchConfig{})
				reqs := []Request{cardRequest(1), cardRequest(2)}
				for _, r := range reqs {
					if _, err := b.Complete(t.Context(), r); !errors.Is(err, ErrPending) {
						t.Fatalf("before submission: %v, want ErrPending", err)
					}
				}
				if err := b.Flush(t.Context()); err != nil {
					t.Fatal(err)
				}
				bs, err := st.Batches(t.Context())
				if err != nil || len(bs) != 1 {
					t.Fatalf("batches %+v, %v", bs, err)
				}
				status := map[string]string{ProviderOpenAI: "/v1/batches/", ProviderAnthropic: "/v1/messages/batches/"}[provider] + bs[0].Remote
				svc := bw.s.Service(name)
				svc.Script(status, fault, sim.Forever)
				if _, err := b.Poll(t.Context()); err == nil {
					t.Error("a poll the provider never answered reported no error")
				}
				for i, r := range reqs {
					if _, err := b.Complete(t.Context(), r); !errors.Is(err, ErrPending) {
						t.Errorf("request %d while the status fails: %v, want ErrPending", i, err)
					}
				}
				if len(svc.CallsTo(status)) == 0 {
					t.Fatal("the status endpoint was never asked")
				}
				svc.Unscript(status)
				resps, _ := completeAll(t, b, reqs)
				if resps[0] == nil || resps[1] == nil {
					t.Fatal("unanswered")
				}
				if got := bw.s.BatchStats(name); got.Batches != 1 || got.Lines != 2 {
					t.Errorf("batch stats %+v, want the one batch of two lines", got)
				}
			})
		}
	}
}

// TestBatchQueueLimit: with MaxEnqueuedTokens, a submission never takes
// the model's pending batches past the limit (the ledger counts earlier
// runs' batches too); what does not fit waits, queued, and goes once the
// earlier batches end.
func TestBatchQueueLimit(t *testing.T) {
	bw := newBatchWorld(t, sim.Options{})
	st := openStore(t, t.TempDir())
	c := bw.client(t, ProviderOpenAI, st)
	// One request alone tells its estimate.
	probe := batcher(t, c, st, BatchConfig{})
	completeAll(t, probe, []Request{cardRequest(0)})
	bs, err := st.Batches(t.Context())
	if err != nil || len(bs) != 1 || bs[0].InputTokens <= 0 {
		t.Fatalf("probe batches %+v, %v", bs, err)
	}
	per := bs[0].InputTokens
	limit := 2*per + per/2 // two requests of this size, not three

	reqs := make([]Request, 5)
	for i := range reqs {
		reqs[i] = cardRequest(i + 1)
	}
	// An earlier run left a batch pending.
	first := batcher(t, c, st, BatchConfig{MaxEnqueuedTokens: limit})
	for _, r := range reqs[:2] {
		first.Complete(t.Context(), r)
	}
	if err := first.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The next run's queue waits for it.
	b := batcher(t, c, st, BatchConfig{MaxEnqueuedTokens: limit})
	for _, r := range reqs[2:] {
		b.Complete(t.Context(), r)
	}
	if err := b.Flush(t.Context()); !errors.Is(err, ErrQueueFull) || b.Queued() != 3 {
		t.Fatalf("flush beside a full queue: %v, %d queued; want ErrQueueFull and all 3 queued", err, b.Queued())
	}
	resps, _ := completeAll(t, b, reqs)
	for i, r := range resps {
		if r == nil {
			t.Fatalf("request %d unanswered", i)
		}
	}
	bs, _ = st.Batches(t.Context())
	if len(bs) != 1+3 { // the probe, the earlier run's, then 2 and 1
		t.Errorf("%d batches, want 4", len(bs))
	}
	for _, bt := range bs {
		if bt.InputTokens > limit {
			t.Errorf("batch %s holds %d input tokens, over the limit %d", bt.ID, bt.InputTokens, limit)
		}
	}
	if got := bw.s.BatchStats(sim.LLM); got.Lines != 6 {
		t.Errorf("%d lines for 6 requests", got.Lines)
	}
}

// TestBatchResultsStreamed: a batch's results are read line by line past
// the body cap of the HTTP layer (which caps every other answer): the
// answers of a results file several times the cap are all collected.
func TestBatchResultsStreamed(t *testing.T) {
	for _, provider := range []string{ProviderOpenAI, ProviderAnthropic} {
		t.Run(provider, func(t *testing.T) {
			bw := newBatchWorld(t, sim.Options{})
			st := openStore(t, t.TempDir())
			c := bw.client(t, provider, st)
			const limit = 16 << 10
			hc, err := httpx.New(httpx.Config{UserAgent: "t", MaxBody: limit, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond}, c.cfg.ServiceConfig())
			if err != nil {
				t.Fatal(err)
			}
			if c, err = New(hc, c.cfg); err != nil {
				t.Fatal(err)
			}
			b := batcher(t, c, st, BatchConfig{})
			reqs := make([]Request, 60) // about 1 KB of results each
			for i := range reqs {
				reqs[i] = cardRequest(i)
			}
			resps, _ := completeAll(t, b, reqs)
			for i, r := range resps {
				if r == nil || len(r.JSON) == 0 {
					t.Fatalf("request %d unanswered", i)
				}
			}
			if got := bw.s.BatchStats(map[string]string{ProviderOpenAI: sim.LLM, ProviderAnthropic: sim.Anthropic}[provider]); got.Lines != len(reqs) {
				t.Errorf("%d lines submitted for %d requests", got.Lines, len(reqs))
			}
		})
	}
}

// TestEachLine: results lines are read whatever the stream's size, a line
// over the cap is reported once by its head and skipped.
func TestEachLine(t *testing.T) {
	long := `{"custom_id":"req-7","result":"` + strings.Repeat("x", 300<<10) + `"}`
	in := "\n" + `{"custom_id":"req-1"}` + "\n\n" + long + "\n" + `{"custom_id":"req-2"}` + "\n" + `{"custom_id":"req-3"}`
	var lines, heads []string
	err := eachLine(strings.NewReader(in), 100<<10, func(l []byte) error {
		lines = append(lines, string(l))
		return nil
	}, func(head []byte) error {
		heads = append(heads, headCustomID(head))
		return nil
	})
	if err != nil || strings.Join(lines, ",") != `{"custom_id":"req-1"},{"custom_id":"req-2"},{"custom_id":"req-3"}` || strings.Join(heads, ",") != "req-7" {
		t.Errorf("lines %q, heads %q, err %v", lines, heads, err)
	}
}
