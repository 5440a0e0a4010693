package record

// The fields of an idea tuple, InnoEval's six, in their order.
const (
	TupleSummary              = "summary"
	TupleMotivations          = "motivations"
	TupleResearchQuestions    = "research_questions"
	TupleMethods              = "methods"
	TupleExperimentalSettings = "experimental_settings"
	TupleExpectedResults      = "expected_results"
)

// TupleFields are the fields of an idea tuple in order.
var TupleFields = []string{TupleSummary, TupleMotivations, TupleResearchQuestions, TupleMethods, TupleExperimentalSettings, TupleExpectedResults}

// TupleRequired reports whether an idea must state at least one claim in
// field: summary, experimental settings and expected results are
// optional, as a less mature idea has none (InnoEval).
func TupleRequired(field string) bool {
	return field == TupleMotivations || field == TupleResearchQuestions || field == TupleMethods
}

// Claim is one atomic, self-contained claim of an idea, with the passage
// of the paper that states it, verbatim.
type Claim struct {
	Claim string `json:"claim" parquet:"claim"`
	Quote string `json:"quote" parquet:"quote"`
}

// MethodClaim is one atomic component of an idea's method, with its
// procedural steps (each a claim of its own, quoted too).
type MethodClaim struct {
	Claim string  `json:"claim" parquet:"claim"`
	Quote string  `json:"quote" parquet:"quote"`
	Steps []Claim `json:"steps,omitempty" parquet:"steps,list"`
}

// IdeaTuple is a paper's research idea as a six-tuple of claims
// (InnoEval): a one-sentence summary (TL;DR), the motivations, the
// research questions, the method's components, the experimental settings
// and the expected results.
type IdeaTuple struct {
	Summary              []Claim       `json:"summary" parquet:"summary,list"` // at most one
	Motivations          []Claim       `json:"motivations" parquet:"motivations,list"`
	ResearchQuestions    []Claim       `json:"research_questions" parquet:"research_questions,list"`
	Methods              []MethodClaim `json:"methods" parquet:"methods,list"`
	ExperimentalSettings []Claim       `json:"experimental_settings" parquet:"experimental_settings,list"`
	ExpectedResults      []Claim       `json:"expected_results" parquet:"expected_results,list"`
}

// Claims returns the claims of field, a method's steps left out ("" for
// a field that is none).
func (t IdeaTuple) Claims(field string) []Claim {
	switch field {
	case TupleSummary:
		return t.Summary
	case TupleMotivations:
		return t.Motivations
	case TupleResearchQuestions:
		return t.ResearchQuestions
	case TupleMethods:
		out := make([]Claim, len(t.Methods))
		for i, m := range t.Methods {
			out[i] = Claim{Claim: m.Claim, Quote: m.Quote}
		}
		return out
	case TupleExperimentalSettings:
		return t.ExperimentalSettings
	case TupleExpectedResults:
		return t.ExpectedResults
	}
	return nil
}

// Missing returns the required fields without a claim.
func (t IdeaTuple) Missing() []string {
	var out []string
	for _, f := range TupleFields {
		if TupleRequired(f) && len(t.Claims(f)) == 0 {
			out = append(out, f)
		}
	}
	return out
}

// Backends of an idea tuple (IdeaTuples.Backend).
const (
	TupleBackendLLM       = "llm"
	TupleBackendHeuristic = "heuristic"
)

// Why a claim was dropped (TupleDrop.Why).
const (
	// DropUnverified: the quote is not in the paper, verbatim.
	DropUnverified = "unverified_quote"
	// DropNotSelfContained: the claim leans on the paper to be understood
	// (its figures, sections or citations; a term of the paper's own it
	// does not explain; a pronoun with nothing to refer to).
	DropNotSelfContained = "not_self_contained"
	// DropNotAtomic: the claim states several things (more than one
	// sentence, or too long for one claim).
	DropNotAtomic = "not_atomic"
	// DropExtra: a second summary (the summary is one sentence).
	DropExtra = "extra"
)

// TupleDrop is one claim an idea tuple lost, and why.
type TupleDrop struct {
	Field string `json:"field"`
	Claim string `json:"claim"`
	Why   string `json:"why"`
	// Detail says what failed ("refers to Table 2", "RAG is not
	// explained").
	Detail string `json:"detail,omitempty"`
}

// IdeaTuples is a target's idea tuple as stored (kind IdeaTupleSets):
// the verified claims, what was dropped, and how it was made.
type IdeaTuples struct {
	Target string    `json:"target"` // versionless arXiv ID
	Idea   IdeaTuple `json:"idea"`
	// Backend made it (TupleBackendLLM or TupleBackendHeuristic); a
	// heuristic tuple is sentences of the paper picked by cue words, not
	// a model's reading, and says so.
	Backend   string `json:"backend"`
	Heuristic bool   `json:"heuristic,omitempty"`
	Model     string `json:"model,omitempty"`
	// PromptVersion and InputDigest say what it was made from, so it is
	// made again when either changes.
	PromptVersion string `json:"prompt_version,omitempty"`
	InputDigest   string `json:"input_digest"`
	// Dropped are the claims that failed verification; Unverified,
	// NotSelfContained and NotAtomic count them by why.
	Dropped          []TupleDrop `json:"dropped,omitempty"`
	Unverified       int         `json:"unverified"`
	NotSelfContained int         `json:"not_self_contained"`
	NotAtomic        int         `json:"not_atomic"`
	// Missing are the required fields left without a claim: an
	// incomplete tuple, which an export leaves out.
	Missing []string `json:"missing,omitempty"`
}

// IdeaTupleSets are targets' idea tuples, under the target's versionless
// arXiv ID.
var IdeaTupleSets = KindOf[IdeaTuples]("idea-tuple")

// FieldIdea is the name of a target's idea in every dataset instance (an
// Idea) and in the exports that carry it.
const FieldIdea = "idea"

// Idea is a target's idea as a dataset instance holds it (field
// FieldIdea): the six-tuple of verified claims, what made it, and how
// many claims verification dropped, by why. The claims dropped one by one
// and the input digest stay in the stored IdeaTuples.
type Idea struct {
	IdeaTuple
	// Backend made it (TupleBackendLLM or TupleBackendHeuristic: a
	// heuristic idea is sentences of the paper picked by cue words).
	Backend          string `json:"backend" parquet:"backend"`
	Model            string `json:"model" parquet:"model"`
	Unverified       int    `json:"unverified" parquet:"unverified"`
	NotSelfContained int    `json:"not_self_contained" parquet:"not_self_contained"`
	NotAtomic        int    `json:"not_atomic" parquet:"not_atomic"`
}

// Column is r as a dataset instance holds it.
func (r *IdeaTuples) Column() Idea {
	return Idea{IdeaTuple: r.Idea, Backend: r.Backend, Model: r.Model,
		Unverified: r.Unverified, NotSelfContained: r.NotSelfContained, NotAtomic: r.NotAtomic}
}
