// Package paperprompt is what every LLM call about a paper shares, laid
// out for the providers' prompt caches: one system prompt for all the
// paper tasks (classifying references, the idea card, the source card)
// with their one answer schema, then the paper's text as one delimited
// block, then the task. A target's classify call and its gold-card call
// are the same up to the end of the paper, so the second reads the paper
// from the cache; every call reads the system prompt from it. The paper's
// text is trimmed by sections here, the same way for every task
// (references, back matter and appendices first), so that the calls
// about one paper send one block.
//
// Classify and summarize both use it; neither imports the other.
package paperprompt

import (
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/client/llm/prompts"
	"github.com/groundwork/curate/injection"
	"github.com/groundwork/curate/record"
)

//go:embed prompts/papers.prompt prompts/examples.txt
var files embed.FS

// Shared is the rendered system prompt, the worked examples that
// lengthen it for a model whose least cacheable prefix it falls short of,
// and the paper block's template.
type Shared struct {
	// Version is the shared prompt's version: part of the prompt version
	// every paper task records (see VersionOf).
	Version  string
	System   string
	Examples string
	prompt   *prompts.Prompt
}

// Load parses the embedded shared prompt and renders its system part.
func Load() (*Shared, error) {
	p, err := prompts.Load(files, "prompts/papers.prompt")
	if err != nil {
		return nil, fmt.Errorf("paper prompt: %w", err)
	}
	system, _, err := p.Render(blockData{Labels: record.Labels(), Title: "-", Level: "-", Text: "-"})
	if err != nil {
		return nil, fmt.Errorf("paper prompt: %w", err)
	}
	ex, err := files.ReadFile("prompts/examples.txt")
	if err != nil {
		return nil, fmt.Errorf("paper prompt: %w", err)
	}
	return &Shared{Version: p.Version, System: system, Examples: string(ex), prompt: p}, nil
}

// VersionOf is the prompt version a task records: its own template's
// and the shared prompt's, so that a change of either re-asks the model.
func (s *Shared) VersionOf(task string) string { return task + "+" + s.Version }

// Digest identifies the shared prompt's file, for input digests.
func (s *Shared) Digest() string { return s.prompt.Digest }

type blockData struct {
	Labels             []string
	Title, Level, Text string
}

// Paper is a paper as the block shows it.
type Paper struct {
	Title    string
	Abstract string
	// Doc is the parsed paper; nil when only the abstract is known.
	Doc *record.Document
	// Level is the text the block holds: record.TextFull, TextPDF (the
	// body of Doc) or TextAbstract (the abstract alone).
	Level string
	// Budget is the tokens of text the block may hold (DefaultBudget
	// when 0).
	Budget int
}

// PaperOf is a paper as the block shows it: its title (the given one,
// else the page's), its abstract (the page's, else the given one, else an
// "Abstract." paragraph at the head of the page, for pages whose abstract
// is not marked up as one) and its text level (the body when doc has one
// and abstractOnly is not set, else the abstract). The calls about one
// paper build it the same way, so that they send the same block.
func PaperOf(doc *record.Document, title, abstract string, abstractOnly bool, budget int) Paper {
	p := Paper{Doc: doc, Title: strings.TrimSpace(title), Budget: budget, Level: record.TextAbstract}
	if p.Title == "" && doc != nil && doc.Title != nil {
		p.Title = strings.TrimSpace(*doc.Title)
	}
	p.Abstract = AbstractOf(doc, abstract)
	if !abstractOnly && HasBody(doc) {
		p.Level = record.TextFull
		if doc.Source == record.SourcePDF {
			p.Level = record.TextPDF
		}
	}
	return p
}

// AbstractOf returns a paper's abstract: the page's own, else the given
// one, else an "Abstract." paragraph at the head of the page.
func AbstractOf(doc *record.Document, given string) string {
	if doc != nil && strings.TrimSpace(doc.Abstract) != "" {
		return strings.TrimSpace(doc.Abstract)
	}
	if a := strings.TrimSpace(given); a != "" {
		return a
	}
	if doc != nil {
		for _, p := range doc.Preamble {
			p = strings.TrimSpace(p)
			if len(p) > len("abstract") && strings.EqualFold(p[:len("abstract")], "abstract") {
				return strings.TrimLeft(p[len("abstract"):], ".: \u2014-")
			}
		}
	}
	return ""
}

// Block is a rendered paper block.
type Block struct {
	Text    string // "<paper>…</paper>"
	Trimmed Trimmed
}

// Block renders p's block: its title, what text it holds, and the text
// trimmed to the budget by section priority, with the sentences that
// address a model taken out and fenced so that the paper cannot close the
// block early (package injection's rules, the same for every task).
func (s *Shared) Block(p Paper) (Block, error) {
	var t Trimmed
	if p.Level == record.TextAbstract || p.Doc == nil {
		t = TrimText(p.Abstract, nil, p.Budget)
	} else {
		t = TrimText(p.Abstract, p.Doc, p.Budget)
	}
	level := "the abstract only"
	switch p.Level {
	case record.TextFull:
		level = "the paper"
	case record.TextPDF:
		level = "the paper, from its PDF"
	}
	if t.Truncated && p.Level != record.TextAbstract {
		level += ", trimmed to fit (the sections named at the end were left out)"
	}
	text := t.Text
	if p.Doc != nil {
		text = injection.Strip(text, injection.ScanDocument(p.Doc, nil))
	}
	_, user, err := s.prompt.Render(blockData{Labels: record.Labels(), Title: Fence(cmp.Or(p.Title, "(untitled)")), Level: level, Text: Fence(text)})
	if err != nil {
		return Block{}, fmt.Errorf("paper prompt: %w", err)
	}
	return Block{Text: user, Trimmed: t}, nil
}

// Request returns the request of a task about a paper: the shared system
// prompt and examples, the paper block, and the task after them. shared
// says another call reads the same block (a target's two calls).
func (s *Shared) Request(stage, version string, block Block, shared bool, task string, maxTokens int, validate func(json.RawMessage) error) llm.Request {
	return llm.Request{
		Stage: stage, PromptVersion: version,
		System: s.System, Examples: s.Examples,
		Paper: block.Text, PaperShared: shared,
		User: task, Schema: Schema, MaxTokens: maxTokens, Validate: validate,
	}
}

// Fence makes paper text safe to put between the prompts' delimiters: a
// paper cannot close the block early, nor open a references list
// (injection.Fence, the one rule).
func Fence(s string) string { return injection.Fence(s) }

// delimiters matches the prompts' own delimiters, to count them.
var delimiters = regexp.MustCompile(`(?i)<\s*(/?)\s*(paper|references)`)

// Delimiters reports how many of the prompts' delimiters s holds.
func Delimiters(s string) int { return len(delimiters.FindAllString(s, -1)) }

// MaxWindowTries bounds how often a task trims its paper to fit a
// model's context window.
const MaxWindowTries = 3

// FitBudget is the paper budget after a prompt holding used tokens of
// the paper did not fit the model's context window: what the window
// leaves when the endpoint said how much, less a margin, else two thirds
// of it. The paper is then trimmed by sections as always, its references,
// back matter and appendices first.
func FitBudget(budget, used int, ce *llm.ContextWindowError) int {
	used = max(min(used, budget), 1)
	next := used * 2 / 3
	if ce.Window > 0 && ce.Prompt > ce.Window {
		next = min(next, used-(ce.Prompt-ce.Window)-ce.Window/20)
	}
	// Never below the abstract's room: a window that cannot hold the rest
	// of the prompt beside it is refused again, and the task fails.
	return max(next, minPaperBudget)
}

// minPaperBudget is the least a paper is trimmed to for a window.
const minPaperBudget = 256
