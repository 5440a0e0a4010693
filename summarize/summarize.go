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
	"github.com/groundwork/curate/injection"
	"github.com/groundwork/curate/record"
)

// Name is the summarize stage's name in the ledger and in LLM usage.
const Name = "summarize"

// maxAnswerTokens bounds a card answer; a card is a few hundred tokens,
// the rest is room for a reasoning model's thinking.
const maxAnswerTokens = 4096

// ErrNoText means a paper has neither body text nor an abstract, so no
// card can be written from it.
var ErrNoText = errors.New("no text to summarize: neither body text nor an abstract")

//go:embed prompts/*.prompt
var promptFS embed.FS

// goldAnswer and sourceAnswer are the model's answers; their schemas ask
// for every field, non-empty. They are byte for byte the literals they
// replaced, so cache keys did not change (TestCardSchemasUnchanged).
type goldAnswer struct {
	ProblemGap  string `json:"problem_gap"`
	CoreClaim   string `json:"core_claim"`
	Method      string `json:"method"`
	Inspiration string `json:"inspiration"`
}

type sourceAnswer struct {
	goldAnswer
	Results   string `json:"results"`
	Takeaways string `json:"takeaways"`
}

var (
	goldSchema   = llm.MustSchemaFor[goldAnswer]("gold_card", llm.NonEmptyStrings())
	sourceSchema = llm.MustSchemaFor[sourceAnswer]("source_card", llm.NonEmptyStrings())
)

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
}

// abstract returns the paper's abstract: the page's own, else the given
// one, else an "Abstract." paragraph at the head of the page (pages whose
// abstract is not marked up as one).
func (in Input) abstract() string {
	if in.Doc != nil && strings.TrimSpace(in.Doc.Abstract) != "" {
		return strings.TrimSpace(in.Doc.Abstract)
	}
	if a := strings.TrimSpace(in.Abstract); a != "" {
		return a
	}
	if in.Doc != nil {
		for _, p := range in.Doc.Preamble {
			p = strings.TrimSpace(p)
			if len(p) > len("abstract") && strings.EqualFold(p[:len("abstract")], "abstract") {
				return strings.TrimLeft(p[len("abstract"):], ".: \u2014-")
			}
		}
	}
	return ""
}

func (in Input) title() string {
	if t := strings.TrimSpace(in.Title); t != "" {
		return t
	}
	if in.Doc != nil && in.Doc.Title != nil {
		return strings.TrimSpace(*in.Doc.Title)
	}
	return ""
}

// hasBody reports whether the Document has text beyond its abstract.
func hasBody(doc *record.Document) bool {
	if doc == nil {
		return false
	}
	for _, p := range doc.Preamble {
		if strings.TrimSpace(p) != "" {
			return true
		}
	}
	var text func(ss []record.Section) bool
	text = func(ss []record.Section) bool {
		for _, s := range ss {
			if nonEmpty(s.Paragraphs) > 0 || text(s.Sections) {
				return true
			}
		}
		return false
	}
	return text(doc.Sections)
}

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

// text renders the paper for the prompt.
func (in Input) text() (text, level string, truncated bool, err error) {
	level = in.Level()
	switch level {
	case "":
		return "", "", false, ErrNoText
	case record.TextFull, record.TextPDF:
		t := trimText(in.abstract(), in.Doc, in.Budget)
		return t.Text, level, t.Truncated, nil
	}
	t := trimText(in.abstract(), nil, in.Budget)
	return t.Text, level, t.Truncated, nil
}

func loadPrompt(kind string) (*prompts.Prompt, error) {
	if err := checkKind(kind); err != nil {
		return nil, err
	}
	return prompts.Load(promptFS, "prompts/"+kind+".prompt")
}

// PromptVersion returns the version of the embedded prompt that writes
// cards of kind (CardGold or CardSource).
func PromptVersion(kind string) (string, error) {
	p, err := loadPrompt(kind)
	if err != nil {
		return "", err
	}
	return p.Version, nil
}

func schemaFor(kind string) *llm.Schema {
	if kind == record.CardSource {
		return sourceSchema
	}
	return goldSchema
}

// validator is the answer check handed to the LLM layer: an answer that
// fails it is sent back with the reason.
func validator(kind string) func(json.RawMessage) error {
	return func(doc json.RawMessage) error {
		var c record.Card
		if err := json.Unmarshal(doc, &c); err != nil {
			return err
		}
		_, _, err := check(&c, kind)
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
	p, err := loadPrompt(kind)
	if err != nil {
		return nil, fmt.Errorf("summarize %s card of %s: %w", kind, paper.Key, err)
	}
	text, level, truncated, err := paper.text()
	if err != nil {
		return nil, fmt.Errorf("summarize %s card of %s: %w", kind, paper.Key, err)
	}
	if paper.Doc != nil {
		// Sentences that address a model are taken out; the rest is data
		// between the prompt's <paper> delimiters.
		text = injection.Strip(text, injection.ScanDocument(paper.Doc, nil))
	}
	system, user, err := p.Render(map[string]any{
		"Title":     injection.Fence(cmp.Or(paper.title(), "(untitled)")),
		"TextLevel": level,
		"Truncated": truncated,
		"Text":      injection.Fence(text),
	})
	if err != nil {
		return nil, fmt.Errorf("summarize %s card of %s: %w", kind, paper.Key, err)
	}
	resp, err := c.Complete(ctx, llm.Request{
		Stage:         Name,
		PromptVersion: p.Version,
		System:        system,
		User:          user,
		Schema:        schemaFor(kind),
		Validate:      validator(kind),
		MaxTokens:     maxAnswerTokens,
	})
	if err != nil {
		return nil, fmt.Errorf("summarize %s card of %s: %w", kind, paper.Key, err)
	}
	var card record.Card
	if err := json.Unmarshal(resp.JSON, &card); err != nil {
		return nil, fmt.Errorf("summarize %s card of %s: %w", kind, paper.Key, err)
	}
	if err := finish(&card, kind, cmp.Or(model, resp.Model), p.Version); err != nil {
		return nil, fmt.Errorf("summarize %s card of %s: %w", kind, paper.Key, err)
	}
	return &card, nil
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
