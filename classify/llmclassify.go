package classify

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/client/llm/prompts"
	"github.com/groundwork/curate/injection"
	"github.com/groundwork/curate/record"
)

//go:embed prompts/*.prompt
var promptFS embed.FS

const promptFile = "prompts/classify.prompt"

// DefaultPrompt returns the embedded classify prompt; its version is what
// the LLM backend records on every selection.
func DefaultPrompt() (*prompts.Prompt, error) {
	p, err := prompts.Load(promptFS, promptFile)
	if err != nil {
		return nil, fmt.Errorf("classify prompt: %w", err)
	}
	return p, nil
}

// answerSchema is the shape of the model's answer, derived from answer:
// every property required and no other allowed, as strict structured
// output demands; ranges and cross-field rules are checked by
// validateAnswer. It is byte for byte the literal it replaced, so cache
// keys did not change (TestAnswerSchemaUnchanged).
var answerSchema = llm.MustSchemaFor[answer]("reference_classification",
	llm.At("references[].n", llm.Type("integer")),
	llm.At("references[].role", llm.Enum(record.RoleSource, record.RoleOther)),
	llm.At("references[].labels[]", llm.Enum(record.Labels()...)))

// Limits of the prompt's reference list and of the answer.
const (
	maxMentions     = 6    // mention sentences listed per reference
	maxMentionLen   = 500  // bytes of one listed mention
	maxTitleLen     = 300  // bytes of a title taken from a bibliography entry
	maxRationaleLen = 600  // characters: one sentence, not an essay
	answerBase      = 1024 // max_tokens: a base plus a share per reference
	answerPerRef    = 64
	answerMax       = 16384
	schemaMargin    = 64 // tokens for chat-template overhead around the prompt
)

type promptRef struct {
	N        int
	Title    string
	Year     int
	S2       string
	Mentions []string
}

type promptData struct {
	Labels   []string
	N        int
	Title    string
	Abstract string
	Body     string
	Trimmed  bool
	Refs     []promptRef
}

// delimiters matches the prompt's own delimiters inside paper text, which
// fence rewrites so that a paper cannot close the data block early.
var delimiters = regexp.MustCompile(`(?i)<\s*(/?)\s*(paper|references)`)

// fence makes paper text safe to put between the prompt's delimiters.
func fence(s string) string { return delimiters.ReplaceAllString(s, "‹$1$2") }

// render builds the system and user prompts within the token budget.
func render(p *prompts.Prompt, doc *record.Document, g *record.Graph, budget int) (system, user string, err error) {
	d := promptData{Labels: record.Labels(), N: len(g.Edges)}
	refText := map[string]string{}
	if doc != nil {
		if doc.Title != nil {
			d.Title = fence(*doc.Title)
		}
		d.Abstract = fence(doc.Abstract)
		for _, r := range doc.References {
			refText[r.Key] = r.Text
		}
	}
	for i, e := range g.Edges {
		r := promptRef{N: i + 1, S2: s2Line(&e)}
		switch {
		case e.Title != nil && *e.Title != "":
			r.Title = *e.Title
		case e.RefKey != nil && refText[*e.RefKey] != "":
			r.Title = clip(refText[*e.RefKey], maxTitleLen)
		default:
			r.Title = "(no title)"
		}
		r.Title = fence(r.Title)
		if e.Year != nil {
			r.Year = *e.Year
		}
		for _, c := range e.Contexts[:min(len(e.Contexts), maxMentions)] {
			r.Mentions = append(r.Mentions, fence(clip(c, maxMentionLen)))
		}
		d.Refs = append(d.Refs, r)
	}

	// The body gets what the rest of the prompt leaves of the budget.
	system, user, err = p.Render(d)
	if err != nil {
		return "", "", err
	}
	fixed := tokens(system) + tokens(user) + tokens(string(answerSchema.JSON())) + schemaMargin
	b := newBody(doc, sectionMap(doc))
	d.Body, d.Trimmed = b.render(max(budget-fixed, 0))
	d.Body = fence(d.Body)
	return p.Render(d)
}

// s2Line states Semantic Scholar's evidence about an edge.
func s2Line(e *record.Edge) string {
	if e.S2PaperID == nil && len(e.Intents) == 0 && !e.IsInfluential {
		return "no citation data"
	}
	intents := "none"
	if len(e.Intents) > 0 {
		intents = strings.Join(e.Intents, ", ")
	}
	infl := "no"
	if e.IsInfluential {
		infl = "yes"
	}
	return "intents " + intents + "; influential " + infl
}

// answer is the model's JSON answer.
type answer struct {
	References []answerRef `json:"references"`
}

type answerRef struct {
	N         float64  `json:"n"` // a float, so that 3.0 decodes; validateAnswer checks it is whole
	Role      string   `json:"role"`
	Labels    []string `json:"labels"`
	Rationale string   `json:"rationale"`
	Quotes    []string `json:"quotes"`
}

// maxProblems bounds the per-reference problems one validation error lists.
const maxProblems = 12

// validateAnswer returns the validator for an answer about n references.
// It checks the answer's structure only, never the paper's text: every
// number from 1 to n answered exactly once, valid roles and labels,
// sources with a label and a one-sentence rationale, others without
// labels. Quotes are verified afterwards and dropped, not retried.
func validateAnswer(n int) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		var a answer
		if err := json.Unmarshal(raw, &a); err != nil {
			return fmt.Errorf("decode the answer: %w", err)
		}
		var (
			unknown, dup []int
			problems     []string
			seen         = make(map[int]bool, n)
		)
		for _, r := range a.References {
			switch {
			case r.N != math.Trunc(r.N):
				problems = append(problems, fmt.Sprintf("reference number %g is not a whole number", r.N))
				continue
			case r.N < 1 || r.N > float64(n):
				unknown = append(unknown, int(r.N))
				continue
			}
			k := int(r.N)
			if seen[k] {
				dup = append(dup, k)
				continue
			}
			seen[k] = true
			problems = append(problems, checkRef(k, &r)...)
		}
		var missing []int
		for k := 1; k <= n; k++ {
			if !seen[k] {
				missing = append(missing, k)
			}
		}
		var msgs []string
		if len(unknown) > 0 {
			msgs = append(msgs, fmt.Sprintf("unknown reference numbers %s (the references are numbered 1 to %d)", ranges(unknown), n))
		}
		if len(dup) > 0 {
			msgs = append(msgs, "reference numbers answered more than once: "+ranges(dup))
		}
		if len(missing) > 0 {
			msgs = append(msgs, "reference numbers not answered: "+ranges(missing))
		}
		if len(problems) > maxProblems {
			problems = append(problems[:maxProblems], fmt.Sprintf("and %d more problems", len(problems)-maxProblems))
		}
		msgs = append(msgs, problems...)
		if len(msgs) > 0 {
			return errors.New(strings.Join(msgs, "; "))
		}
		return nil
	}
}

func checkRef(k int, r *answerRef) []string {
	var out []string
	for _, l := range r.Labels {
		if !slices.Contains(record.Labels(), l) {
			out = append(out, fmt.Sprintf("reference %d: label %q is not one of %s", k, l, strings.Join(record.Labels(), ", ")))
		}
	}
	switch r.Role {
	case record.RoleSource:
		if len(r.Labels) == 0 {
			out = append(out, fmt.Sprintf("reference %d is a source without labels", k))
		}
		switch rat := strings.TrimSpace(r.Rationale); {
		case rat == "":
			out = append(out, fmt.Sprintf("reference %d is a source without a rationale", k))
		case len([]rune(rat)) > maxRationaleLen:
			out = append(out, fmt.Sprintf("reference %d: the rationale must be one sentence, not %d characters", k, len([]rune(rat))))
		}
	case record.RoleOther:
		if len(r.Labels) > 0 {
			out = append(out, fmt.Sprintf("reference %d is other but has labels (only sources have labels)", k))
		}
	default:
		out = append(out, fmt.Sprintf("reference %d: role %q is not source or other", k, r.Role))
	}
	return out
}

// ranges formats sorted-or-not numbers compactly: "3, 5-9, 12".
func ranges(ns []int) string {
	ns = slices.Clone(ns)
	slices.Sort(ns)
	ns = slices.Compact(ns)
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, strconv.Itoa(ns[i]))
		case j == i+1:
			parts = append(parts, strconv.Itoa(ns[i]), strconv.Itoa(ns[j]))
		default:
			parts = append(parts, strconv.Itoa(ns[i])+"-"+strconv.Itoa(ns[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// jsonCompleter is the part of *llm.Client beyond llm.Completer.
type jsonCompleter interface {
	CompleteJSON(ctx context.Context, req llm.Request, validate func(json.RawMessage) error) (*llm.Response, error)
}

// classifyLLM asks the model once for all edges and turns the validated
// answer into selections, keeping only quotes that occur in the target in
// a sentence citing the reference they are given for. The sentences of
// strip (instruction-like text) are taken out of the prompt.
func (s *Stage) classifyLLM(ctx context.Context, doc *record.Document, g *record.Graph, keys []string,
	target, model string, p *prompts.Prompt, strip []record.Instruction) (*record.Selections, error) {
	out := &record.Selections{
		TargetID:      target,
		Model:         model,
		PromptVersion: p.Version,
		Selections:    make([]record.Selection, len(g.Edges)),
	}
	if len(g.Edges) == 0 {
		return out, nil // nothing to ask
	}
	pdoc, pedges := injection.StripDocument(doc, g.Edges, strip)
	pg := *g
	pg.Edges = pedges
	system, user, err := render(p, pdoc, &pg, s.budget())
	if err != nil {
		return nil, err
	}
	req := llm.Request{
		Stage:         Name,
		PromptVersion: p.Version,
		System:        system,
		User:          user,
		Schema:        answerSchema,
		MaxTokens:     min(answerBase+answerPerRef*len(g.Edges), answerMax),
	}
	validate := validateAnswer(len(g.Edges))
	var resp *llm.Response
	if c, ok := s.LLM.(jsonCompleter); ok {
		resp, err = c.CompleteJSON(ctx, req, validate)
	} else {
		req.Validate = validate
		resp, err = s.LLM.Complete(ctx, req)
	}
	if err != nil {
		return nil, err
	}
	var a answer
	if err := json.Unmarshal(resp.JSON, &a); err != nil {
		return nil, fmt.Errorf("decode the validated answer: %w", err)
	}
	// The validator has passed this answer: every number once, in range.
	byN := make(map[int]*answerRef, len(a.References))
	for i := range a.References {
		byN[int(a.References[i].N)] = &a.References[i]
	}
	ver, citing := NewVerifier(doc), citingSentences(doc, g.Edges)
	for i := range g.Edges {
		r := byN[i+1]
		if r == nil {
			return nil, fmt.Errorf("answer has no reference %d although it passed validation", i+1)
		}
		sel := record.Selection{
			TargetID:      target,
			RefKey:        keys[i],
			Role:          r.Role,
			Rationale:     strings.TrimSpace(r.Rationale),
			Model:         model,
			PromptVersion: p.Version,
		}
		if r.Role == record.RoleSource {
			for _, l := range record.Labels() { // canonical order, no repeats
				if slices.Contains(r.Labels, l) {
					sel.Labels = append(sel.Labels, l)
				}
			}
			for _, q := range r.Quotes {
				span, ok := ver.Find(q)
				switch {
				case !ok:
					out.QuotesDropped++
				case !cites(q, citing[i]):
					out.QuotesNotCiting++
				case !slices.Contains(sel.Quotes, span):
					sel.Quotes = append(sel.Quotes, span)
					out.QuotesKept++
				}
			}
		}
		out.Selections[i] = sel
	}
	out.Count()
	out.ServedBy = resp.Model
	out.Attempts = resp.Attempts
	out.InvalidAnswers = max(resp.Attempts-1, 0)
	out.Usage = resp.Usage
	out.CachedAnswer = resp.Cached
	if out.QuotesDropped > 0 {
		s.log().Info("classify: dropped quotes not found in the paper", "target", target, "dropped", out.QuotesDropped, "kept", out.QuotesKept)
	}
	if out.QuotesNotCiting > 0 {
		s.log().Info("classify: dropped quotes that cite no reference they were given for", "target", target, "dropped", out.QuotesNotCiting, "kept", out.QuotesKept)
	}
	if out.Sources > maxSources {
		s.log().Warn("classify: more sources than papers usually have", "target", target, "sources", out.Sources, "references", len(g.Edges))
	}
	return out, nil
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
