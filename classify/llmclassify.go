package classify

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/client/llm/prompts"
	"github.com/groundwork/curate/injection"
	"github.com/groundwork/curate/paperprompt"
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

// Limits of the prompt's reference list and of the answer.
const (
	maxMentions     = 6   // mention sentences listed per reference
	maxMentionLen   = 500 // bytes of one listed mention
	maxTitleLen     = 300 // bytes of a title taken from a bibliography entry
	maxRationaleLen = 600 // characters: one sentence, not an essay
)

// The first answer limit, from the answer's shape: the JSON around the
// list, every reference's number, role, empty lists and a few words, and
// for the likely sources (papers have 3 to 8; a long list more) a
// rationale of one sentence and up to three quoted sentences. An answer
// cut at its limit is asked again with a larger one, up to the model's
// largest output; a reasoning model gets room for its reasoning on top
// (the model table says how much).
const (
	answerBase      = 128
	answerPerRef    = 25  // {"n":12,"role":"other","labels":[],"rationale":"…","quotes":[]}
	answerPerSource = 260 // a rationale of up to 600 characters and up to three quoted sentences
	answerSources   = 8
)

func answerTokens(refs int) int {
	return answerBase + answerPerRef*refs + answerPerSource*min(refs, max(answerSources, refs/5))
}

type promptRef struct {
	N        int
	Title    string
	Year     int
	S2       string
	Mentions []string
}

type promptData struct {
	N    int
	Refs []promptRef
}

// paperOf is the target as the paper block shows it: as the gold card's
// (the title the graph knows when the page has none).
func paperOf(doc *record.Document, g *record.Graph, budget int) paperprompt.Paper {
	title := ""
	if doc == nil || doc.Title == nil || strings.TrimSpace(*doc.Title) == "" {
		title = g.Meta.Title
	}
	return paperprompt.PaperOf(doc, title, "", false, budget)
}

// render builds the paper block (the target trimmed to budget tokens, the
// same block as the gold card's) and the task after it.
func render(p *prompts.Prompt, sh *paperprompt.Shared, doc *record.Document, g *record.Graph, budget int) (paperprompt.Block, string, error) {
	d := promptData{N: len(g.Edges)}
	refText := map[string]string{}
	if doc != nil {
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
		r.Title = paperprompt.Fence(r.Title)
		if e.Year != nil {
			r.Year = *e.Year
		}
		for _, c := range e.Contexts[:min(len(e.Contexts), maxMentions)] {
			r.Mentions = append(r.Mentions, paperprompt.Fence(clip(c, maxMentionLen)))
		}
		d.Refs = append(d.Refs, r)
	}
	block, err := sh.Block(paperOf(doc, g, budget))
	if err != nil {
		return paperprompt.Block{}, "", err
	}
	_, task, err := p.Render(d)
	if err != nil {
		return paperprompt.Block{}, "", err
	}
	return block, task, nil
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

// maxProblems bounds the per-reference problems one validation error lists.
const maxProblems = 12

// validateAnswer returns the validator for an answer about n references.
// It checks the answer's structure only, never the paper's text: every
// number from 1 to n answered exactly once, valid roles and labels,
// sources with a label and a one-sentence rationale, others without
// labels. Quotes are verified afterwards and dropped, not retried.
func validateAnswer(n int) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		a, err := paperprompt.Decode(raw)
		if err != nil {
			return err
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

func checkRef(k int, r *paperprompt.Reference) []string {
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
// strip (instruction-like text) are taken out of the prompt. A prompt past
// the model's context window is asked again with the paper trimmed by
// sections (references, back matter and appendices first), and the
// selections say so.
func (s *Stage) classifyLLM(ctx context.Context, doc *record.Document, g *record.Graph, keys []string,
	target, model string, p *prompts.Prompt, sh *paperprompt.Shared, strip []record.Instruction) (*record.Selections, error) {
	version := sh.VersionOf(p.Version)
	out := &record.Selections{
		TargetID:      target,
		Model:         model,
		PromptVersion: version,
		Selections:    make([]record.Selection, len(g.Edges)),
	}
	if len(g.Edges) == 0 {
		return out, nil // nothing to ask
	}
	pdoc, pedges := injection.StripDocument(doc, g.Edges, strip)
	pg := *g
	pg.Edges = pedges
	validate := validateAnswer(len(g.Edges))
	budget := s.budget()
	var resp *llm.Response
	for try := 0; ; try++ {
		block, task, err := render(p, sh, pdoc, &pg, budget)
		if err != nil {
			return nil, err
		}
		// The gold card reads the same paper block: it is shared.
		req := sh.Request(Name, version, block, true, task, answerTokens(len(g.Edges)), validate)
		if c, ok := s.LLM.(jsonCompleter); ok {
			resp, err = c.CompleteJSON(ctx, req, validate)
		} else {
			resp, err = s.LLM.Complete(ctx, req)
		}
		var ce *llm.ContextWindowError
		if errors.As(err, &ce) && try < paperprompt.MaxWindowTries {
			if next := paperprompt.FitBudget(budget, block.Trimmed.Tokens, ce); next < min(budget, block.Trimmed.Tokens) {
				s.log().Warn("classify: the prompt does not fit the model's context window; trimming the paper", "target", target, "budget", budget, "now", next)
				budget = next
				out.ContextTrim = contextTrimNote(ce, budget)
				continue
			}
		}
		if err != nil {
			return nil, err
		}
		break
	}
	a, err := paperprompt.Decode(resp.JSON)
	if err != nil {
		return nil, fmt.Errorf("decode the validated answer: %w", err)
	}
	// The validator has passed this answer: every number once, in range.
	byN := make(map[int]*paperprompt.Reference, len(a.References))
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
			PromptVersion: version,
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

// contextTrimNote says in the record why the paper was shortened.
func contextTrimNote(ce *llm.ContextWindowError, budget int) string {
	w := "the model's context window"
	if ce.Window > 0 {
		w = fmt.Sprintf("the model's context window of %d tokens", ce.Window)
	}
	return fmt.Sprintf("the paper was trimmed by sections to %d tokens to fit %s", budget, w)
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

// SampleRequest is the request of a made-up target with refs references
// and a paper of about paperTokens tokens, as the stage would send it: for
// curate models to show what goes to a model.
func SampleRequest(refs, paperTokens int) (llm.Request, error) {
	p, err := DefaultPrompt()
	if err != nil {
		return llm.Request{}, err
	}
	sh, err := paperprompt.Load()
	if err != nil {
		return llm.Request{}, err
	}
	title := "A sample paper"
	para := "A paragraph of the sample paper, standing for its text. "
	doc := &record.Document{Title: &title, Abstract: "The sample paper's abstract.", Source: record.SourceArxiv,
		Sections: []record.Section{{ID: "S1", Number: "1", Heading: "Introduction", Level: 1,
			Paragraphs: []string{strings.Repeat(para, max(paperTokens*4/len(para), 1))}}}}
	g := &record.Graph{}
	for i := range refs {
		t := fmt.Sprintf("Reference %d of the sample paper", i+1)
		g.Edges = append(g.Edges, record.Edge{Title: &t, Contexts: []string{fmt.Sprintf("A sentence that cites reference %d.", i+1)}})
	}
	block, task, err := render(p, sh, doc, g, DefaultBudget)
	if err != nil {
		return llm.Request{}, err
	}
	return sh.Request(Name, sh.VersionOf(p.Version), block, true, task, answerTokens(refs), validateAnswer(refs)), nil
}
