package summarize

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/client/llm/prompts"
	"github.com/groundwork/curate/paperprompt"
	"github.com/groundwork/curate/record"
)

// Name is the summarize stage's name in the ledger and in LLM usage.
const Name = "summarize"

// maxAnswerTokens is a card answer's first limit: a card is a few
// hundred tokens. A reasoning model gets room for its reasoning on top
// (the model table says how much), and an answer cut at its limit is
// asked again with a larger one.
const maxAnswerTokens = 1536

// ErrNoText means a paper has neither body text nor an abstract, so no
// card can be written from it.
var ErrNoText = errors.New("no text to summarize: neither body text nor an abstract")

//go:embed prompts/*.prompt
var promptFS embed.FS

// Input is the paper a card is written from.
type Input struct {
	// Key names the paper in errors and logs (its store item).
	Key      string
	Title    string
	Abstract string // used when Doc is nil or has no abstract of its own
	// Doc is the parsed paper; nil when only the abstract is known.
	Doc *record.Document
	// TextLevel TextAbstract restricts the card to the abstract even when
	// Doc is set; "" or TextFull use the body when there is one.
	TextLevel string
	// Budget is the token budget of the paper text in the prompt
	// (DefaultBudget when 0).
	Budget int
	// Version is the arXiv version of the text (Doc's), recorded on the
	// card; 0 when unknown (an abstract, a page that does not say).
	Version int
}

// paper is in as the paper block shows it.
func (in Input) paper() paperprompt.Paper {
	return paperprompt.PaperOf(in.Doc, in.Title, in.Abstract, in.TextLevel == record.TextAbstract, in.Budget)
}

// abstract returns the paper's abstract (see paperprompt.AbstractOf).
func (in Input) abstract() string { return paperprompt.AbstractOf(in.Doc, in.Abstract) }

func (in Input) title() string { return in.paper().Title }

// hasBody reports whether the Document has text beyond its abstract.
func hasBody(doc *record.Document) bool { return paperprompt.HasBody(doc) }

// Level returns the text level a card of in is written at: TextFull when
// the Document has body text and the input is not restricted to the
// abstract (TextPDF when the Document was made from a PDF), TextAbstract
// when there is an abstract, "" when there is nothing.
func (in Input) Level() string {
	if in.TextLevel != record.TextAbstract && hasBody(in.Doc) {
		if in.Doc.Source == record.SourcePDF {
			return record.TextPDF
		}
		return record.TextFull
	}
	if in.abstract() != "" {
		return record.TextAbstract
	}
	return ""
}

func loadPrompt(kind string) (*prompts.Prompt, error) {
	if err := checkKind(kind); err != nil {
		return nil, err
	}
	return prompts.Load(promptFS, "prompts/"+kind+".prompt")
}

// PromptVersion returns the version of the embedded prompts that write
// cards of kind (CardGold or CardSource): the task's and the shared
// paper prompt's.
func PromptVersion(kind string) (string, error) {
	p, err := loadPrompt(kind)
	if err != nil {
		return "", err
	}
	sh, err := paperprompt.Load()
	if err != nil {
		return "", err
	}
	return sh.VersionOf(p.Version), nil
}

// validator is the answer check handed to the LLM layer: an answer that
// fails it is sent back with the reason.
func validator(kind string) func(json.RawMessage) error {
	return func(doc json.RawMessage) error {
		card, err := paperprompt.CardJSON(doc)
		if err != nil {
			return err
		}
		var c record.Card
		if err := json.Unmarshal(card, &c); err != nil {
			return err
		}
		_, _, err = check(&c, kind)
		return err
	}
}

// Summarize writes the card of kind (CardGold or CardSource) for paper with
// c, or with the heuristic backend when c is nil. The answer is validated
// (see Validate) and an invalid one sent back with the reason, as many
// times as c allows; what stays invalid comes back as an error wrapping
// the *llm.InvalidError with the raw answer. The card records the model
// (c's Model() when it has one, else the model the server named) and the
// prompt version.
func Summarize(ctx context.Context, c llm.Completer, paper Input, kind string) (*record.Card, error) {
	if c == nil {
		return Heuristic(paper, kind)
	}
	model := ""
	if m, ok := c.(interface{ Model() string }); ok {
		model = m.Model()
	}
	return summarizeLLM(ctx, c, model, paper, kind)
}

func summarizeLLM(ctx context.Context, c llm.Completer, model string, paper Input, kind string) (*record.Card, error) {
	card, _, err := summarizeTrimmed(ctx, c, model, paper, kind)
	return card, err
}

// summarizeTrimmed is summarizeLLM that also says when the paper had to be
// trimmed to fit the model's context window (the note, for the record).
func summarizeTrimmed(ctx context.Context, c llm.Completer, model string, paper Input, kind string) (*record.Card, string, error) {
	fail := func(err error) (*record.Card, string, error) {
		return nil, "", fmt.Errorf("summarize %s card of %s: %w", kind, paper.Key, err)
	}
	p, err := loadPrompt(kind)
	if err != nil {
		return fail(err)
	}
	sh, err := paperprompt.Load()
	if err != nil {
		return fail(err)
	}
	if paper.Level() == "" {
		return fail(ErrNoText)
	}
	_, task, err := p.Render(nil)
	if err != nil {
		return fail(err)
	}
	in := paper.paper()
	in.Budget = cmp.Or(in.Budget, DefaultBudget)
	note := ""
	var resp *llm.Response
	for try := 0; ; try++ {
		block, err := sh.Block(in)
		if err != nil {
			return fail(err)
		}
		// A target's paper block is the one its classify call sent: the
		// gold card reads it from the prompt cache.
		req := sh.Request(Name, sh.VersionOf(p.Version), block, kind == record.CardGold, task, maxAnswerTokens, validator(kind))
		resp, err = c.Complete(ctx, req)
		var ce *llm.ContextWindowError
		if errors.As(err, &ce) && try < paperprompt.MaxWindowTries {
			if next := paperprompt.FitBudget(in.Budget, block.Trimmed.Tokens, ce); next < min(in.Budget, block.Trimmed.Tokens) {
				in.Budget = next
				note = fmt.Sprintf("the paper was trimmed by sections to %d tokens to fit the model's context window", next)
				continue
			}
		}
		if err != nil {
			return fail(err)
		}
		break
	}
	cardJSON, err := paperprompt.CardJSON(resp.JSON)
	if err != nil {
		return fail(err)
	}
	var card record.Card
	if err := json.Unmarshal(cardJSON, &card); err != nil {
		return fail(err)
	}
	if err := finish(&card, kind, cmp.Or(model, resp.Model), sh.VersionOf(p.Version)); err != nil {
		return fail(err)
	}
	return &card, note, nil
}

// finish validates card's text, writes its labels in their canonical
// spelling, fills Opportunity and Paradigm and records model and version.
func finish(card *record.Card, kind, model, version string) error {
	for _, v := range card.Fields() {
		*v = strings.TrimSpace(*v)
	}
	opp, par, err := check(card, kind)
	if err != nil {
		return err
	}
	_, gap, _ := record.ParseCardLabel(card.ProblemGap, record.AxisOpportunity)
	_, how, _ := record.ParseCardLabel(card.Method, record.AxisParadigm)
	card.ProblemGap = "[" + opp + "] " + gap
	card.Method = "[" + par + "] " + how
	card.Opportunity, card.Paradigm = opp, par
	card.Model, card.PromptVersion = model, version
	return nil
}

// DefaultBudget is the token budget of a paper's text in a card prompt
// when none is given: the paper block's, shared with classify.
const DefaultBudget = paperprompt.DefaultBudget

// Trimmed is a paper's text cut to a token budget.
type Trimmed = paperprompt.Trimmed

// Trim renders doc's abstract and sections as plain text within budget
// tokens, as the card prompts show them (see paperprompt.Trim).
func Trim(doc *record.Document, budget int) Trimmed { return paperprompt.Trim(doc, budget) }
