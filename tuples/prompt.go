package tuples

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

// Name is the stage's name in requests, the LLM cache and usage tables.
const Name = "tuples"

// maxAnswerTokens is an idea tuple's first answer limit: some twenty
// claims with their quotes. An answer cut at its limit is asked again
// with a larger one (the LLM layer).
const maxAnswerTokens = 3072

// ErrNoText means a paper has neither body text nor an abstract, so no
// tuple can be extracted from it.
var ErrNoText = errors.New("no text to extract an idea tuple from: neither body text nor an abstract")

//go:embed prompts/tuples.prompt
var promptFS embed.FS

func loadPrompt() (*prompts.Prompt, error) { return prompts.Load(promptFS, "prompts/tuples.prompt") }

// Input is the target a tuple is extracted from. Give it what the
// target's gold card is given (summarize.Input: title, abstract, text
// level, budget): the paper block is then the one the target's classify
// and gold-card calls send, and the tuple's call reads it from the
// provider's prompt cache.
type Input struct {
	// Key names the target in errors and records (its store item).
	Key      string
	Title    string
	Abstract string // used when Doc is nil or has no abstract of its own
	// Doc is the parsed paper; the quotes are verified in it.
	Doc *record.Document
	// AbstractOnly restricts the block to the abstract, as for a target
	// whose body is not to be read.
	AbstractOnly bool
	// Budget is the tokens of text the paper block may hold
	// (paperprompt.DefaultBudget when 0).
	Budget int
}

func (in Input) paper() paperprompt.Paper {
	return paperprompt.PaperOf(in.Doc, in.Title, in.Abstract, in.AbstractOnly, cmp.Or(in.Budget, paperprompt.DefaultBudget))
}

// PromptVersion returns the version of the prompt a tuple is asked with:
// the task's and the shared paper prompt's.
func PromptVersion() (string, error) {
	p, err := loadPrompt()
	if err != nil {
		return "", err
	}
	sh, err := paperprompt.Load()
	if err != nil {
		return "", err
	}
	return sh.VersionOf(p.Version), nil
}

// Extract asks the model, through c, for the idea tuple of in: the shared
// system prompt and schema, the target's paper block, then the task. The
// answer is held to the paper (Build): a claim whose quote is not the
// paper's, or that does not stand on its own, is dropped and counted. An
// answer whose required fields all lose their claims is asked again once
// (the LLM layer's follow-up says which failed); what remains of the last
// one is recorded, incomplete when it is. A paper past the model's context
// window is asked again with its block trimmed by sections.
func Extract(ctx context.Context, c llm.Completer, model string, in Input) (record.IdeaTuples, error) {
	fail := func(err error) (record.IdeaTuples, error) {
		return record.IdeaTuples{}, fmt.Errorf("idea tuple of %s: %w", in.Key, err)
	}
	p, err := loadPrompt()
	if err != nil {
		return fail(err)
	}
	sh, err := paperprompt.Load()
	if err != nil {
		return fail(err)
	}
	paper := in.paper()
	if strings.TrimSpace(paper.Abstract) == "" && !paperprompt.HasBody(in.Doc) {
		return fail(ErrNoText)
	}
	_, task, err := p.Render(nil)
	if err != nil {
		return fail(err)
	}
	version := sh.VersionOf(p.Version)
	var resp *llm.Response
	for try := 0; ; try++ {
		block, err := sh.Block(paper)
		if err != nil {
			return fail(err)
		}
		req := sh.Request(Name, version, block, true, task, maxAnswerTokens, validator(in.Doc))
		resp, err = c.Complete(ctx, req)
		var ce *llm.ContextWindowError
		if errors.As(err, &ce) && try < paperprompt.MaxWindowTries {
			if next := paperprompt.FitBudget(paper.Budget, block.Trimmed.Tokens, ce); next < min(paper.Budget, block.Trimmed.Tokens) {
				paper.Budget = next
				continue
			}
		}
		if err != nil {
			return fail(err)
		}
		break
	}
	raw, err := paperprompt.IdeaJSON(resp.JSON)
	if err != nil {
		return fail(err)
	}
	t, err := Decode(raw)
	if err != nil {
		return fail(err)
	}
	m := Made{Backend: record.TupleBackendLLM, Model: cmp.Or(resp.Model, model), PromptVersion: version}
	m.InputDigest = InputDigest(in.Doc, m)
	return Build(in.Key, in.Doc, t, m), nil
}

// validator is the answer check handed to the LLM layer: the answer must
// hold an idea tuple, and one whose required fields keep a claim once
// held to the paper; otherwise the follow-up says what failed.
func validator(doc *record.Document) func(json.RawMessage) error {
	return func(answer json.RawMessage) error {
		raw, err := paperprompt.IdeaJSON(answer)
		if err != nil {
			return err
		}
		t, err := Decode(raw)
		if err != nil {
			return err
		}
		kept, drops := Verify(doc, t)
		missing := kept.Missing()
		if len(missing) == 0 {
			return nil
		}
		var why []string
		for _, d := range drops {
			for _, f := range missing {
				if d.Field == f && len(why) < 6 {
					why = append(why, fmt.Sprintf("%s %q: %s", d.Field, d.Claim, d.Detail))
				}
			}
		}
		return fmt.Errorf("no claim of %s holds: every claim must be atomic and self-contained and quote the paper word for word (%s)",
			strings.Join(missing, ", "), strings.Join(why, "; "))
	}
}

// Offline extracts the tuple of in with the heuristic backend, without a
// model: sentences of the paper picked by cue words, said to be heuristic
// in the record.
func Offline(in Input) record.IdeaTuples {
	m := Made{Backend: record.TupleBackendHeuristic, Model: HeuristicName}
	m.InputDigest = InputDigest(in.Doc, m)
	return Build(in.Key, in.Doc, Heuristic(in.Doc), m)
}
