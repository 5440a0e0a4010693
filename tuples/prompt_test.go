package tuples_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/internal/httpx"
	"github.com/groundwork/curate/parse/latexml"
	"github.com/groundwork/curate/quote"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/sim"
	"github.com/groundwork/curate/sim/simtest"
	"github.com/groundwork/curate/summarize"
	"github.com/groundwork/curate/tuples"
)

// completerFunc is an llm.Completer of a function.
type completerFunc func(context.Context, llm.Request) (*llm.Response, error)

func (f completerFunc) Complete(ctx context.Context, r llm.Request) (*llm.Response, error) {
	return f(ctx, r)
}

func worldDoc(t *testing.T, i int) *record.Document {
	t.Helper()
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 25, Targets: 10})
	if err != nil {
		t.Fatal(err)
	}
	p := w.Target(i)
	doc, err := latexml.Parse(w.Page(&p, sim.HTMLArxiv), latexml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestPromptLayout: the tuple's request is the shared layout's: the
// system prompt with the tuple's rules, the shared schema, the target's
// paper block byte for byte as its gold card sends it (so the call reads
// it from the prompt cache), marked as shared, then the task.
func TestPromptLayout(t *testing.T) {
	doc := worldDoc(t, 1)
	var got, gold llm.Request
	stop := errors.New("stop")
	tuples.Extract(t.Context(), completerFunc(func(_ context.Context, r llm.Request) (*llm.Response, error) {
		got = r
		return nil, stop
	}), "m", tuples.Input{Key: "k", Doc: doc})
	summarize.Summarize(t.Context(), completerFunc(func(_ context.Context, r llm.Request) (*llm.Response, error) {
		gold = r
		return nil, stop
	}), summarize.Input{Key: "k", Doc: doc}, record.CardGold)
	if got.Paper == "" || got.Paper != gold.Paper || got.System != gold.System || got.Examples != gold.Examples || got.Schema != gold.Schema {
		t.Errorf("the tuple's prefix differs from the gold card's:\npaper %q\nvs    %q", got.Paper, gold.Paper)
	}
	if !got.PaperShared || got.Stage != tuples.Name || !strings.HasPrefix(got.User, "Task: write the idea tuple of the paper above.") {
		t.Errorf("request %+v", got)
	}
	v, err := tuples.PromptVersion()
	if err != nil || got.PromptVersion != v || v != "tuples-v1+papers-v2" {
		t.Errorf("prompt version %q (%q, %v)", got.PromptVersion, v, err)
	}
	for _, rule := range []string{"# Task: write the idea tuple", "self-contained", "character for character", `"idea"`} {
		if !strings.Contains(got.System, rule) {
			t.Errorf("the system prompt lacks %q", rule)
		}
	}
	if _, err := tuples.Extract(t.Context(), completerFunc(func(context.Context, llm.Request) (*llm.Response, error) { return nil, stop }),
		"m", tuples.Input{Key: "k", Doc: &record.Document{}}); !errors.Is(err, tuples.ErrNoText) {
		t.Errorf("no text: %v", err)
	}
}

// TestExtractSimulated asks the simulated model, over OpenAI's protocol
// with structured output, for a target's tuple: complete, every quote the
// paper's, recorded as the model's with the prompt's version.
func TestExtractSimulated(t *testing.T) {
	w, err := sim.NewWorld(sim.WorldConfig{Seed: 25, Targets: 10})
	if err != nil {
		t.Fatal(err)
	}
	// the diligent model that knows curate's prompts, the tuple's included
	srv := simtest.ServeOptions(t, sim.LLM, w, sim.Options{LLMAnswer: sim.CurateModel})
	cfg := llm.Config{BaseURL: srv.BaseURL(), Model: sim.Model, StructuredOutput: true}
	hc, err := httpx.New(httpx.Config{UserAgent: "curate-test", RetryMax: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond}, cfg.ServiceConfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.New(hc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		doc := worldDoc(t, i)
		r, err := tuples.Extract(t.Context(), c, sim.Model, tuples.Input{Key: doc.ID, Doc: doc})
		if err != nil {
			t.Fatal(err)
		}
		if !tuples.Complete(r) || r.Backend != record.TupleBackendLLM || r.Heuristic || r.PromptVersion != "tuples-v1+papers-v2" || r.Unverified != 0 || r.InputDigest == "" {
			t.Errorf("%s: %+v", doc.ID, r)
		}
		ver := quote.ForDocument(doc)
		for _, f := range record.TupleFields {
			for _, cl := range r.Idea.Claims(f) {
				if _, ok := ver.Find(cl.Quote); !ok {
					t.Errorf("%s %s: %q not in the paper", doc.ID, f, cl.Quote)
				}
			}
		}
	}
}

// TestValidator: an answer whose required fields keep no claim once held
// to the paper is sent back, the follow-up naming what failed; one that
// keeps a claim in each passes, whatever else it loses.
func TestValidator(t *testing.T) {
	doc := paper()
	good := sim.Answer("Title: "+*doc.Title+"\n\nText: the paper\n\nAbstract\n"+doc.Abstract+"\n\nTask: write the idea tuple of the paper above.", false, "")
	var calls []llm.Request
	answer := func(s string) completerFunc {
		return func(_ context.Context, r llm.Request) (*llm.Response, error) {
			calls = append(calls, r)
			if err := r.Validate(json.RawMessage(s)); err != nil {
				return nil, err
			}
			return &llm.Response{JSON: json.RawMessage(s), Model: "m"}, nil
		}
	}
	r, err := tuples.Extract(t.Context(), answer(good), "m", tuples.Input{Key: "k", Doc: doc})
	if err != nil || !tuples.Complete(r) {
		t.Fatalf("a good answer: %+v %v", r, err)
	}
	bad := sim.Answer("Title: "+*doc.Title+"\n\nText: the paper\n\nAbstract\n"+doc.Abstract+"\n\nTask: write the idea tuple of the paper above.", true, "x")
	for salt := 0; !strings.Contains(bad, "never wrote"); salt++ {
		bad = sim.Answer("Title: "+*doc.Title+"\n\nText: the paper\n\nAbstract\n"+doc.Abstract+"\n\nTask: write the idea tuple of the paper above.", true, string(rune('a'+salt)))
	}
	_, err = tuples.Extract(t.Context(), answer(bad), "m", tuples.Input{Key: "k", Doc: doc})
	if err == nil || !strings.Contains(err.Error(), "no claim of motivations, research_questions, methods holds") || !strings.Contains(err.Error(), "not in the paper's text") {
		t.Errorf("quotes the paper lacks: %v", err)
	}
}

// TestOffline: the heuristic backend's record says so and is complete on
// a paper that states its idea.
func TestOffline(t *testing.T) {
	r := tuples.Offline(tuples.Input{Key: "2503.00001", Doc: paper()})
	if !r.Heuristic || r.Backend != record.TupleBackendHeuristic || r.Model != tuples.HeuristicName || !tuples.Complete(r) || r.InputDigest == "" {
		t.Errorf("%+v", r)
	}
	if again := tuples.Offline(tuples.Input{Key: "2503.00001", Doc: paper()}); again.InputDigest != r.InputDigest {
		t.Error("the input digest is not stable")
	}
	changed := paper()
	changed.Abstract += " One more sentence of the abstract."
	if tuples.Offline(tuples.Input{Key: "2503.00001", Doc: changed}).InputDigest == r.InputDigest {
		t.Error("the input digest does not follow the paper")
	}
}
