package sft

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/client/llm/prompts"
	"github.com/groundwork/curate/gate"
	"github.com/groundwork/curate/record"
	"github.com/groundwork/curate/store"
)

//go:embed prompts/*.prompt
var promptFS embed.FS

// Defaults of LLMTeacher.
const (
	DefaultTemperature = 0.7
	// ideasMaxTokens leaves a reasoning model room to think before the
	// cards (about 400 tokens each).
	ideasMaxTokens = 8192
	// traceMaxTokens fits the paper's traces (2,800 tokens on average)
	// with room to spare.
	traceMaxTokens    = 12000
	openingsMaxTokens = 4096
	// usedShown caps the used openings shown to the teacher; all of them
	// are checked.
	usedShown = 200
)

// LLMTeacher is a Teacher backed by an LLM through the LLM layer (cache,
// limits, accounting). An answer that fails its check is sent back once
// with the reason, as many times as the client's follow-ups allow
// (curate sft sets one).
type LLMTeacher struct {
	llm         llm.Completer
	openingsLLM llm.Completer
	model       string
	temperature float64
	store       *store.Store
	retry       bool
	log         *slog.Logger

	ideas, openings, trace *prompts.Prompt
}

// LLMConfig configures NewLLMTeacher.
type LLMConfig struct {
	// Model names the teacher on rows; default the completer's Model().
	Model string
	// Temperature of every call (default DefaultTemperature; negative
	// sends 0).
	Temperature float64
	// Store, when set, remembers rejected answers (KindReject) so a
	// re-run does not ask again; RetryRejects asks again anyway.
	Store        *store.Store
	RetryRejects bool
	Logger       *slog.Logger
	// Openings, when set, answers the openings calls instead of the
	// teacher's completer: each asks for sentences unlike the ones before
	// it, so they cannot wait for a batch one after the other (in batch
	// mode this is the synchronous client; the ideas and traces go in
	// batches).
	Openings llm.Completer
}

var (
	_ Teacher = (*LLMTeacher)(nil)

	// openingsSchema is byte for byte the literal it replaced, so cache
	// keys did not change (TestOpeningsSchemaUnchanged).
	openingsSchema = llm.MustSchemaFor[openingsAnswer]("openings")
)

// openingsAnswer is the model's answer to the openings prompt.
type openingsAnswer struct {
	Openings []string `json:"openings"`
}

// NewLLMTeacher returns a teacher that asks c.
func NewLLMTeacher(c llm.Completer, cfg LLMConfig) (*LLMTeacher, error) {
	t := &LLMTeacher{llm: c, openingsLLM: cmp.Or[llm.Completer](cfg.Openings, c), model: cfg.Model, temperature: cfg.Temperature,
		store: cfg.Store, retry: cfg.RetryRejects, log: cfg.Logger}
	if t.model == "" {
		if m, ok := c.(interface{ Model() string }); ok {
			t.model = m.Model()
		}
	}
	if t.model == "" {
		return nil, errors.New("new sft teacher: no model name")
	}
	switch {
	case t.temperature == 0:
		t.temperature = DefaultTemperature
	case t.temperature < 0:
		t.temperature = 0
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	for _, p := range []struct {
		name string
		dst  **prompts.Prompt
	}{{"ideas", &t.ideas}, {"openings", &t.openings}, {"trace", &t.trace}} {
		var err error
		if *p.dst, err = prompts.Load(promptFS, "prompts/"+p.name+".prompt"); err != nil {
			return nil, fmt.Errorf("new sft teacher: %w", err)
		}
	}
	return t, nil
}

// Model returns the teacher's model name.
func (t *LLMTeacher) Model() string { return t.model }

// PromptVersions returns the versions of the embedded prompts.
func (t *LLMTeacher) PromptVersions() PromptVersions {
	return PromptVersions{Ideas: t.ideas.Version, Openings: t.openings.Version, Trace: t.trace.Version}
}

// Ideas sends the model input verbatim as the user turn, with the
// teacher's instructions as the system prompt, and checks the answer with
// the gate's answer check. Labels are written in their canonical spelling.
func (t *LLMTeacher) Ideas(ctx context.Context, in *Input) (*Ideas, error) {
	system, _, err := t.ideas.Render(map[string]any{"Input": in.Prompt})
	if err != nil {
		return nil, fmt.Errorf("sft ideas for %s: %w", in.InstanceID, err)
	}
	var last error // the validator's verdict on the latest answer
	req := llm.Request{
		Stage: StageIdeas, PromptVersion: t.ideas.Version,
		System: system, User: in.Prompt,
		Temperature: t.temperature, MaxTokens: ideasMaxTokens,
		Validate: func(doc json.RawMessage) error {
			_, last = gate.CheckAnswer(string(doc), in.NumIdeas)
			return last
		},
	}
	resp, err := t.complete(ctx, req, func(ie *llm.InvalidError) string {
		if last != nil && strings.HasSuffix(ie.Reason, last.Error()) {
			return gate.ReasonOf(last)
		}
		if strings.Contains(ie.Reason, "not valid JSON") || strings.Contains(ie.Reason, "not JSON") {
			return gate.ReasonNotJSON
		}
		return ReasonTeacherInvalid
	})
	if err != nil {
		return nil, fmt.Errorf("sft ideas for %s: %w", in.InstanceID, err)
	}
	cards, err := gate.CheckAnswer(string(resp.JSON), in.NumIdeas)
	if err != nil { // the validator passed it: only a changed gate gets here
		return nil, fmt.Errorf("sft ideas for %s: %w", in.InstanceID, err)
	}
	for i := range cards {
		canonical(&cards[i])
		cards[i].Model, cards[i].PromptVersion = t.model, t.ideas.Version
	}
	return &Ideas{Cards: cards, Call: callOf(resp)}, nil
}

// canonical rewrites the labels of a card that passed the gate in their
// canonical spelling, so training targets spell each label one way.
func canonical(c *record.Card) {
	if _, rest, err := record.ParseCardLabel(c.ProblemGap, record.AxisOpportunity); err == nil {
		c.ProblemGap = "[" + c.Opportunity + "] " + rest
	}
	if _, rest, err := record.ParseCardLabel(c.Method, record.AxisParadigm); err == nil {
		c.Method = "[" + c.Paradigm + "] " + rest
	}
	c.CoreClaim, c.Inspiration = strings.TrimSpace(c.CoreClaim), strings.TrimSpace(c.Inspiration)
}

// Openings asks for n new sentences, showing the most recent used ones
// and checking against all of them.
func (t *LLMTeacher) Openings(ctx context.Context, n int, used []string) (*Openings, error) {
	seen := make(map[string]bool, len(used))
	for _, u := range used {
		seen[normOpening(u)] = true
	}
	shown := used[max(0, len(used)-usedShown):]
	system, user, err := t.openings.Render(map[string]any{"N": n, "Used": shown, "UsedTotal": len(used)})
	if err != nil {
		return nil, fmt.Errorf("sft openings: %w", err)
	}
	req := llm.Request{
		Stage: StageOpenings, PromptVersion: t.openings.Version,
		System: system, User: user, Schema: openingsSchema,
		// Openings are wanted varied whatever the temperature of the
		// content calls.
		Temperature: max(t.temperature, 0.9), MaxTokens: openingsMaxTokens,
		Validate: func(doc json.RawMessage) error {
			_, err := parseOpenings(doc, n, seen)
			return err
		},
	}
	resp, err := t.completeWith(ctx, t.openingsLLM, req, func(*llm.InvalidError) string { return ReasonOpening })
	if err != nil {
		return nil, fmt.Errorf("sft openings: %w", err)
	}
	out, err := parseOpenings(resp.JSON, n, seen)
	if err != nil {
		return nil, fmt.Errorf("sft openings: %w", err)
	}
	return &Openings{Sentences: out, Call: callOf(resp)}, nil
}

// parseOpenings checks an openings answer: n single sentences of 4 to 40
// words, distinct from each other and from seen.
func parseOpenings(doc json.RawMessage, n int, seen map[string]bool) ([]string, error) {
	var a openingsAnswer
	if err := json.Unmarshal(doc, &a); err != nil {
		return nil, err
	}
	if len(a.Openings) != n {
		return nil, fmt.Errorf("%d openings, want exactly %d", len(a.Openings), n)
	}
	mine := map[string]bool{}
	out := make([]string, n)
	for i, s := range a.Openings {
		s = strings.Join(strings.Fields(s), " ")
		k := normOpening(s)
		switch w := len(strings.Fields(s)); {
		case w < 4 || w > 40:
			return nil, fmt.Errorf("opening %d has %d words, want 6 to 30", i+1, w)
		case gate.HasTag(s):
			return nil, fmt.Errorf("opening %d contains a tag", i+1)
		case seen[k]:
			return nil, fmt.Errorf("opening %d %q was already used", i+1, s)
		case mine[k]:
			return nil, fmt.Errorf("opening %d %q repeats an earlier one in the list", i+1, s)
		}
		mine[k] = true
		out[i] = s
	}
	return out, nil
}

// Trace asks for the hindsight trace: the system prompt is the static
// instructions (the same for every trace, so the provider's prompt cache
// serves it), the user turn the model input, the cards and the opening.
func (t *LLMTeacher) Trace(ctx context.Context, in *Input, cards []record.Card, opening, feedback string) (*Trace, error) {
	answer, err := gate.Answer(cards)
	if err != nil {
		return nil, fmt.Errorf("sft trace for %s: %w", in.InstanceID, err)
	}
	system, user, err := t.trace.Render(map[string]any{
		"Opening": opening, "NumIdeas": in.NumIdeas, "Input": in.Prompt,
		"Answer": strings.TrimSpace(answer), "Feedback": feedback,
	})
	if err != nil {
		return nil, fmt.Errorf("sft trace for %s: %w", in.InstanceID, err)
	}
	resp, err := t.complete(ctx, llm.Request{
		Stage: StageTrace, PromptVersion: t.trace.Version,
		System: system, User: user, Temperature: t.temperature, MaxTokens: traceMaxTokens,
	}, func(*llm.InvalidError) string { return ReasonTeacherInvalid })
	if err != nil {
		return nil, fmt.Errorf("sft trace for %s: %w", in.InstanceID, err)
	}
	return &Trace{Text: strings.TrimSpace(resp.Text), Call: callOf(resp)}, nil
}

// complete sends req, answering from the reject memo when the same
// request was rejected before. An unusable answer becomes a *RejectError
// with the reason reason gives it, and is remembered.
func (t *LLMTeacher) complete(ctx context.Context, req llm.Request, reason func(*llm.InvalidError) string) (*llm.Response, error) {
	return t.completeWith(ctx, t.llm, req, reason)
}

func (t *LLMTeacher) completeWith(ctx context.Context, c llm.Completer, req llm.Request, reason func(*llm.InvalidError) string) (*llm.Response, error) {
	item := "sft-reject:" + llm.CacheKey(t.model, req)
	if t.store != nil && !t.retry {
		m, _, err := record.SFTRejects.Get(ctx, t.store, item)
		switch {
		case err == nil:
			return nil, &RejectError{Stage: m.Stage, Reason: m.Reason, Detail: m.Detail, Attempts: m.Attempts, Raw: m.Raw}
		case !errors.Is(err, store.ErrNotFound):
			t.log.Warn("sft: reading a remembered reject failed; asking the teacher", "stage", req.Stage, "err", err)
		}
	}
	resp, err := c.Complete(ctx, req)
	var ie *llm.InvalidError
	if !errors.As(err, &ie) {
		return resp, err
	}
	m := record.SFTReject{Stage: req.Stage, Reason: reason(ie), Detail: ie.Reason, Attempts: ie.Attempts, Raw: ie.Raw, Model: t.model, At: time.Now().UTC()}
	if t.store != nil {
		if _, perr := record.SFTRejects.Put(ctx, t.store, item, &m, map[string]string{"stage": req.Stage, "reason": m.Reason}); perr != nil {
			t.log.Warn("sft: remembering a reject failed", "stage", req.Stage, "err", perr)
		}
	}
	return nil, &RejectError{Stage: m.Stage, Reason: m.Reason, Detail: m.Detail, Attempts: m.Attempts, Raw: m.Raw}
}

func callOf(r *llm.Response) Call {
	return Call{Usage: r.Usage, Cached: r.Cached, Attempts: cmp.Or(r.Attempts, 1)}
}
