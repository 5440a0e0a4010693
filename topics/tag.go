package topics

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/client/llm/prompts"
	"github.com/groundwork/curate/record"
)

// StageName is the stage name of the tag requests: LLM usage is summed
// under it.
const StageName = "topics"

// HeuristicTagVersion is the prompt version recorded on heuristic tags.
const HeuristicTagVersion = "topics-tag-heuristic-v1"

// Bounds of a tag.
const (
	maxTagWords = 10
	maxTagBytes = 100
	// maxTagTerms is how many shared terms a heuristic tag joins.
	maxTagTerms = 3
)

//go:embed prompts/tag.prompt
var promptFS embed.FS

// tagAnswer is the model's answer. Its schema is byte for byte the
// literal it replaced, so cache keys did not change
// (TestTagSchemaUnchanged).
type tagAnswer struct {
	Tag string `json:"tag"`
}

var tagSchema = llm.MustSchemaFor[tagAnswer]("topic_tag", llm.At("tag", llm.MinLength(1), llm.MaxLength(maxTagBytes)))

// TagInput is what a tag is written from.
type TagInput struct {
	Category   string
	Supporting []string // titles of the supporting papers
	Background []string // titles of the background papers
}

// Tag is a topic's tag with what wrote it.
type Tag struct {
	Text          string
	Model         string // the LLM's name, or llm.HeuristicModel
	PromptVersion string
	// Fallback says why a heuristic tag stands in for the LLM's ("" when
	// the LLM wrote it or none was asked).
	Fallback string
}

// TagPromptVersion returns the version of the embedded tag prompt.
func TagPromptVersion() (string, error) {
	p, err := prompts.Load(promptFS, "prompts/tag.prompt")
	if err != nil {
		return "", err
	}
	return p.Version, nil
}

// WriteTag returns the tag of a topic: written by c (model names it) when
// c is set and model is not llm.HeuristicModel, else by HeuristicTag. The
// LLM client caches answers by prompt version and content, so a rerun asks
// nothing. An answer that stays invalid after the client's follow-ups
// falls back to the heuristic tag, with the reason in Tag.Fallback; any
// other LLM error (the endpoint refusing the key, a network failure) is
// returned.
func WriteTag(ctx context.Context, c llm.Completer, model string, in TagInput) (Tag, error) {
	if c == nil || llm.IsHeuristic(model) {
		return Tag{Text: HeuristicTag(in), Model: llm.HeuristicModel, PromptVersion: HeuristicTagVersion}, nil
	}
	p, err := prompts.Load(promptFS, "prompts/tag.prompt")
	if err != nil {
		return Tag{}, fmt.Errorf("tag topic: %w", err)
	}
	system, user, err := p.Render(in)
	if err != nil {
		return Tag{}, fmt.Errorf("tag topic: %w", err)
	}
	resp, err := c.Complete(ctx, llm.Request{
		Stage: StageName, PromptVersion: p.Version, System: system, User: user,
		Schema: tagSchema, Validate: validateTag, MaxTokens: 200,
	})
	var ie *llm.InvalidError
	if errors.As(err, &ie) {
		return Tag{Text: HeuristicTag(in), Model: llm.HeuristicModel, PromptVersion: HeuristicTagVersion,
			Fallback: "the model's answers stayed invalid: " + ie.Reason}, nil
	}
	if err != nil {
		return Tag{}, fmt.Errorf("tag topic: %w", err)
	}
	var a tagAnswer
	if err := json.Unmarshal(resp.JSON, &a); err != nil {
		return Tag{}, fmt.Errorf("tag topic: %w", err)
	}
	return Tag{Text: cleanTag(a.Tag), Model: cmp.Or(model, resp.Model), PromptVersion: p.Version}, nil
}

// cleanTag trims a tag and its trailing period and collapses its spaces.
func cleanTag(s string) string {
	return strings.TrimRight(strings.Join(strings.Fields(s), " "), ".")
}

// validateTag rejects a tag that is empty, on several lines, or longer
// than maxTagWords words or maxTagBytes bytes.
func validateTag(doc json.RawMessage) error {
	var a tagAnswer
	if err := json.Unmarshal(doc, &a); err != nil {
		return err
	}
	t := strings.TrimSpace(a.Tag)
	switch n := len(strings.Fields(t)); {
	case t == "" || cleanTag(t) == "":
		return errors.New("the tag is empty")
	case strings.ContainsAny(t, "\r\n"):
		return errors.New("the tag spans several lines: give one line")
	case n > maxTagWords || len(t) > maxTagBytes:
		return fmt.Errorf("the tag has %d words and %d bytes: give at most %d words", n, len(t), maxTagWords)
	}
	return nil
}

// tagStopword reports whether w says nothing about a topic: English
// function words and the generic words of paper titles.
func tagStopword(w string) bool {
	switch w {
	case "a", "an", "the", "and", "or", "of", "for", "to", "in", "on", "at", "by", "with", "from",
		"into", "onto", "over", "under", "between", "as", "via", "using", "use", "based", "toward",
		"towards", "beyond", "without", "within", "through", "about", "against", "across", "is", "are",
		"be", "can", "do", "does", "not", "no", "when", "what", "why", "how", "which", "who", "should",
		"we", "our", "it", "its", "their", "this", "that", "these", "those", "vs", "versus", "all",
		"new", "novel", "approach", "approaches", "method", "methods", "study", "studies", "analysis",
		"framework", "paper", "revisited", "case", "more", "less", "say", "only", "one", "two",
		"per", "level", "large", "scale", "improving", "rethinking":
		return true
	}
	return false
}

// titleWords returns the words of a title, folded as citegraph folds
// titles (accents and LaTeX removed, lower case), with "" standing for
// each stop-word, short word (under three letters) or number, so that
// bigrams never span one.
func titleWords(title string) []string {
	ws := strings.Fields(record.NormalizeTitle(title))
	for i, w := range ws {
		if tagStopword(w) || utf8.RuneCountInString(w) < 3 || strings.IndexFunc(w, unicode.IsLetter) < 0 {
			ws[i] = ""
		}
	}
	return ws
}

// HeuristicTag names a topic from the terms its titles share. The terms
// are the words of the supporting and background titles (stop-words,
// words under three letters and numbers left out; see tagStopword) and
// the pairs of adjacent such words. A term's count is the number of
// titles it occurs in; terms in two titles or more are ranked by score
// (the count, doubled for a pair: a pair is the more specific name), then
// by count, then alphabetically, and up to three are taken, skipping a
// term that shares a word with one already taken. They are title-cased and joined by ", ".
// With no shared term the tag is the category followed by the first
// three content words of the alphabetically first supporting title
// ("Untitled topic" when there is neither). The result depends only on
// the sets of titles.
func HeuristicTag(in TagInput) string {
	titles := append(slices.Clone(in.Supporting), in.Background...)
	slices.Sort(titles)
	titles = slices.Compact(titles)
	count := map[string]int{}
	for _, t := range titles {
		seen := map[string]bool{}
		ws := titleWords(t)
		for i, w := range ws {
			if w == "" {
				continue
			}
			seen[w] = true
			if i+1 < len(ws) && ws[i+1] != "" {
				seen[w+" "+ws[i+1]] = true
			}
		}
		for term := range seen {
			count[term]++
		}
	}
	var terms []string
	for t, n := range count {
		if n >= 2 {
			terms = append(terms, t)
		}
	}
	// A pair shared by n titles names a topic as well as a word shared by
	// 2n: "epidemic thresholds" in 3 titles beats "epidemic" in 4.
	score := func(t string) int { return count[t] * (1 + strings.Count(t, " ")) }
	slices.SortFunc(terms, func(a, b string) int {
		if c := cmp.Compare(score(b), score(a)); c != 0 {
			return c
		}
		if c := cmp.Compare(count[b], count[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	var chosen []string
	used := map[string]bool{}
	for _, t := range terms {
		ws := strings.Fields(t)
		if slices.ContainsFunc(ws, func(w string) bool { return used[w] }) {
			continue
		}
		for _, w := range ws {
			used[w] = true
		}
		chosen = append(chosen, titleCase(t))
		if len(chosen) == maxTagTerms {
			break
		}
	}
	if len(chosen) > 0 {
		return strings.Join(chosen, ", ")
	}
	var first []string
	if len(in.Supporting) > 0 {
		sup := slices.Clone(in.Supporting)
		slices.Sort(sup)
		for _, w := range titleWords(sup[0]) {
			if w != "" && len(first) < 3 {
				first = append(first, w)
			}
		}
	}
	if tag := strings.TrimSpace(in.Category + " " + titleCase(strings.Join(first, " "))); tag != "" {
		return tag
	}
	return "Untitled topic"
}

func titleCase(s string) string {
	ws := strings.Fields(s)
	for i, w := range ws {
		r, n := utf8.DecodeRuneInString(w)
		ws[i] = string(unicode.ToUpper(r)) + w[n:]
	}
	return strings.Join(ws, " ")
}
