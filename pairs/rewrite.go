package pairs

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/groundwork/curate/client/llm"
	"github.com/groundwork/curate/client/llm/prompts"
)

// Summary is a paper's idea-only summary, in the idea card's fields the
// judge compares (the inspiration, which names the sources, is left out).
type Summary struct {
	ProblemGap string `json:"problem_gap" parquet:"problem_gap"`
	CoreClaim  string `json:"core_claim" parquet:"core_claim"`
	Method     string `json:"method" parquet:"method"`
}

func (s Summary) fields() [3][2]string {
	return [3][2]string{{"problem_gap", s.ProblemGap}, {"core_claim", s.CoreClaim}, {"method", s.Method}}
}

// StageName is the stage the rewrite's LLM usage is counted under.
const StageName = "pairs"

// HeuristicVersion is the version of the heuristic rewrite's rules.
const HeuristicVersion = "pairs-rewrite-heuristic-v1"

var (
	digit = regexp.MustCompile(`\p{Nd}`)
	// resultWords state what a paper found or how well it did.
	resultWords = regexp.MustCompile(`(?i)\b(outperform\w*|state[- ]of[- ]the[- ]art|sota|surpass\w*|beat|beats|achiev\w*|accuracy|f1|bleu|rouge|percent|percentage|speed-?ups?|(we|our (results|experiments|analysis|evaluation)) (show|shows|find|finds|found|demonstrate|demonstrates|observe|confirm|report)\w*|results? (show|demonstrate|indicate|suggest|reveal)\w*|experiments? (show|demonstrate|reveal|confirm)\w*|significant(ly)? (better|higher|lower|improv\w*|gains?)|improv\w* (by|over)|gains? of|reduc\w* .{0,20}\bby)\b`)
	wordRe      = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}'’-]*`)
)

// titleStop are the title words that name nothing: a summary may use
// them.
var titleStop = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true, "for": true, "to": true, "in": true,
	"on": true, "at": true, "by": true, "with": true, "from": true, "into": true, "via": true, "is": true, "are": true,
	"be": true, "can": true, "do": true, "does": true, "how": true, "what": true, "when": true, "why": true, "we": true,
	"our": true, "its": true, "their": true, "as": true, "not": true, "all": true, "you": true, "your": true,
	"towards": true, "toward": true, "through": true, "beyond": true, "using": true, "without": true, "about": true,
}

// TitleTerms are the words of a title that a summary must not repeat:
// the name before a colon ("Toolformer: …"), coined or capitalized tokens
// (inner capitals, all capitals, letters with digits: "LoRA", "BERT",
// "GPT-4"), and every run of four consecutive words, which would quote the
// title. They come lower-cased; runs are joined by one space.
func TitleTerms(title string) []string {
	var terms []string
	seen := map[string]bool{}
	add := func(t string) {
		if t = strings.ToLower(t); t != "" && !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	if name, _, ok := strings.Cut(title, ":"); ok {
		for _, w := range wordRe.FindAllString(name, -1) {
			if !titleStop[strings.ToLower(w)] && len([]rune(w)) >= 3 {
				add(w)
			}
		}
	}
	words := wordRe.FindAllString(title, -1)
	for _, w := range words {
		if coined(w) {
			add(w)
		}
	}
	for i := 0; i+4 <= len(words); i++ {
		add(strings.Join(words[i:i+4], " "))
	}
	return terms
}

// coined reports whether a word reads as a name: a capital after a
// letter ("LoRA", "BERT"; not the "R" of title-cased "Low-Rank"), or
// letters mixed with digits ("GPT-4").
func coined(w string) bool {
	rs := []rune(w)
	letters, digits, innerUpper := 0, 0, false
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r):
			letters++
			if i > 0 && unicode.IsUpper(r) && unicode.IsLetter(rs[i-1]) {
				innerUpper = true
			}
		case unicode.IsDigit(r):
			digits++
		}
	}
	return letters > 0 && (innerUpper || digits > 0)
}

// CheckSummary rejects a summary that would let a judge see more than the
// idea: an empty field, a number (any digit), a statement of results or
// metrics (resultWords), or one of the title's TitleTerms. The error
// names every problem, in words a model can act on.
func CheckSummary(s Summary, title string) error {
	var errs []error
	terms := TitleTerms(title)
	for _, f := range s.fields() {
		name, text := f[0], strings.TrimSpace(f[1])
		if text == "" {
			errs = append(errs, fmt.Errorf("%s is empty", name))
			continue
		}
		if m := digit.FindString(text); m != "" {
			errs = append(errs, fmt.Errorf("%s contains a number (%q): reveal no numbers, results or metrics", name, m))
		}
		if m := resultWords.FindString(text); m != "" {
			errs = append(errs, fmt.Errorf("%s states a result (%q): describe the idea, not what it achieved", name, m))
		}
		norm := " " + strings.ToLower(strings.Join(wordRe.FindAllString(text, -1), " ")) + " "
		for _, t := range terms {
			if strings.Contains(norm, " "+t+" ") {
				errs = append(errs, fmt.Errorf("%s repeats the title's %q: do not name the paper, its method or its title", name, t))
			}
		}
	}
	return errors.Join(errs...)
}

// Rewrite is a paper's idea-only summary and what wrote it.
type Rewrite struct {
	Summary       Summary `json:"summary"`
	Model         string  `json:"model"` // the LLM, or llm.HeuristicModel
	PromptVersion string  `json:"prompt_version"`
}

// Rewriter writes idea-only summaries.
type Rewriter interface {
	Rewrite(ctx context.Context, p *Paper) (Rewrite, error)
}

// ErrRejected wraps a summary that fails CheckSummary.
var ErrRejected = errors.New("the idea-only summary leaks more than the idea")

// Heuristic rewrites without a model: the gold card's problem_gap,
// core_claim and method, each without its sentences that hold a number,
// a result or a title term. It is deterministic and says so
// (llm.HeuristicModel); a field left empty fails the check.
type Heuristic struct{}

// Rewrite implements Rewriter.
func (Heuristic) Rewrite(_ context.Context, p *Paper) (Rewrite, error) {
	if p.Gold == nil {
		return Rewrite{}, errors.New("no gold card")
	}
	clean := func(text string) string {
		var keep []string
		for _, s := range sentences(text) {
			if CheckSummary(Summary{s, s, s}, p.Title) == nil {
				keep = append(keep, s)
			}
		}
		return strings.Join(keep, " ")
	}
	gap, claim, method := p.Gold.ProblemGap, p.Gold.CoreClaim, p.Gold.Method
	// The bracketed label opening a field is the card's, not the paper's:
	// keep it before the cleaned text.
	label := func(s string) (string, string) {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "[") {
			if i := strings.IndexByte(s, ']'); i > 0 {
				return s[:i+1] + " ", s[i+1:]
			}
		}
		return "", s
	}
	gl, gt := label(gap)
	ml, mt := label(method)
	sum := Summary{ProblemGap: join(gl, clean(gt)), CoreClaim: clean(claim), Method: join(ml, clean(mt))}
	rw := Rewrite{Summary: sum, Model: llm.HeuristicModel, PromptVersion: HeuristicVersion}
	if err := CheckSummary(sum, p.Title); err != nil {
		return rw, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	return rw, nil
}

func join(label, text string) string {
	if text == "" {
		return ""
	}
	return label + text
}

// sentences splits text after ".", "!" or "?" followed by a space.
func sentences(text string) []string {
	var out []string
	start := 0
	rs := []rune(text)
	for i, r := range rs {
		if (r == '.' || r == '!' || r == '?') && (i+1 == len(rs) || unicode.IsSpace(rs[i+1])) {
			if s := strings.TrimSpace(string(rs[start : i+1])); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(string(rs[start:])); s != "" {
		out = append(out, s)
	}
	return out
}

//go:embed prompts/rewrite.prompt
var promptFS embed.FS

// PromptVersion returns the version of the embedded rewrite prompt.
func PromptVersion() (string, error) {
	p, err := prompts.Load(promptFS, "prompts/rewrite.prompt")
	if err != nil {
		return "", err
	}
	return p.Version, nil
}

// summarySchema asks for a Summary with every field non-empty. It is byte
// for byte the literal it replaced, so cache keys did not change
// (TestSummarySchemaUnchanged).
var summarySchema = llm.MustSchemaFor[Summary]("idea_summary", llm.NonEmptyStrings())

// LLM rewrites with a model through package llm: the client caches each
// answer in the store (a rerun asks nothing) and sends an answer that
// fails CheckSummary back with the problems, up to its follow-up limit.
type LLM struct {
	Client llm.Completer
	Model  string
}

// Rewrite implements Rewriter.
func (r LLM) Rewrite(ctx context.Context, p *Paper) (Rewrite, error) {
	if p.Gold == nil {
		return Rewrite{}, errors.New("no gold card")
	}
	pr, err := prompts.Load(promptFS, "prompts/rewrite.prompt")
	if err != nil {
		return Rewrite{}, err
	}
	system, user, err := pr.Render(map[string]any{
		"Title": p.Title, "Abstract": p.Abstract,
		"ProblemGap": p.Gold.ProblemGap, "CoreClaim": p.Gold.CoreClaim, "Method": p.Gold.Method,
	})
	if err != nil {
		return Rewrite{}, err
	}
	validate := func(raw json.RawMessage) error {
		var s Summary
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		return CheckSummary(s, p.Title)
	}
	resp, err := r.Client.Complete(ctx, llm.Request{
		Stage: StageName, PromptVersion: pr.Version, System: system, User: user,
		Schema: summarySchema, Validate: validate, MaxTokens: 800,
	})
	var ie *llm.InvalidError
	if errors.As(err, &ie) {
		return Rewrite{Model: r.Model, PromptVersion: pr.Version}, fmt.Errorf("%w: %s", ErrRejected, ie.Reason)
	}
	if err != nil {
		return Rewrite{}, fmt.Errorf("rewrite %s: %w", p.ArxivID, err)
	}
	var s Summary
	if err := json.Unmarshal(resp.JSON, &s); err != nil {
		return Rewrite{}, fmt.Errorf("rewrite %s: %w", p.ArxivID, err)
	}
	model := r.Model
	if model == "" {
		model = resp.Model
	}
	return Rewrite{Summary: s, Model: model, PromptVersion: pr.Version}, nil
}
