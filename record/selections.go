package record

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Selections is what the classify stage stores for a target (kind
// "selections"): exactly one Selection per edge of the target's Graph, in
// edge order.
type Selections struct {
	TargetID      string `json:"target_id"`
	Model         string `json:"model"`
	PromptVersion string `json:"prompt_version"`
	// ServedBy is the model name the endpoint reported, which may be more
	// specific than Model ("gpt-4o-mini-2024-07-18").
	ServedBy string `json:"served_by,omitempty"`
	// InputDigest hashes what the selections were made from (document,
	// edges, prompt file, budget); a stored record with another digest is
	// redone.
	InputDigest string      `json:"input_digest"`
	Selections  []Selection `json:"selections"`
	Sources     int         `json:"sources"`
	QuotesKept  int         `json:"quotes_kept"`
	// QuotesDropped counts quotes of sources that did not occur in the
	// target's text (or were too short to be evidence).
	QuotesDropped int `json:"quotes_dropped"`
	// QuotesNotCiting counts quotes of sources that occur in the target's
	// text but in no sentence citing the reference they were given for:
	// dropped too, since they support nothing about that reference.
	QuotesNotCiting int `json:"quotes_not_citing,omitempty"`
	// Unquoted lists the ref keys of sources left without a verified
	// quote citing them: they keep their role, flagged here.
	Unquoted []string `json:"unquoted_sources,omitempty"`
	// InvalidAnswers counts the model's answers that failed validation and
	// were asked again; Attempts is all answers requested (0: none, as for
	// the heuristic or a target without references).
	InvalidAnswers int   `json:"invalid_answers"`
	Attempts       int   `json:"attempts"`
	Usage          Usage `json:"usage"`
	// CachedAnswer says the model's answer came from the LLM cache.
	CachedAnswer bool `json:"cached_answer,omitempty"`
	// ContextTrim says the paper was trimmed further than its budget to
	// fit the model's context window, and to what.
	ContextTrim string    `json:"context_trim,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	// Suspect lists why the selections look implausible (the classify
	// stage's Plausibility), or that the target's text addresses a model;
	// a suspect target is held back unless asked for by name.
	Suspect []string `json:"suspect,omitempty"`
	// Instructions are the sentences of the target's text that address a
	// model (package injection): the target is suspect, and they were
	// taken out of the prompt when a model was asked.
	Instructions []Instruction `json:"instruction_like_text,omitempty"`
	// NotClassified says no classification was made: the target's text
	// addresses a model and suspects were not asked for, so no model read
	// it. Selections is then empty.
	NotClassified bool `json:"not_classified,omitempty"`
}

// Instruction is a sentence of a paper that addresses a model rather than
// its reader, and where it stands.
type Instruction struct {
	Where string `json:"where"` // "abstract", "section 3 (Method), paragraph 2", …
	// Rule names why it counts (package injection's rules).
	Rule string `json:"rule"`
	// Sentence is the sentence as it stands in the text.
	Sentence string `json:"sentence"`
}

// maxInstructionShown bounds the characters of a sentence String shows.
const maxInstructionShown = 120

func (in Instruction) String() string {
	s := strings.Join(strings.Fields(in.Sentence), " ")
	if r := []rune(s); len(r) > maxInstructionShown {
		s = string(r[:maxInstructionShown]) + "…"
	}
	return fmt.Sprintf("%s (%s): %q", in.Where, in.Rule, s)
}

// Count fills Sources and Unquoted from the selections.
func (s *Selections) Count() {
	s.Sources, s.Unquoted = 0, nil
	for _, sel := range s.Selections {
		if sel.Role == RoleSource {
			s.Sources++
			if len(sel.Quotes) == 0 {
				s.Unquoted = append(s.Unquoted, sel.RefKey)
			}
		}
	}
}

// ClassifyFailure is what the classify stage stores (kind
// "classify-failure") when a target could not be classified: the reason
// and, for an unusable model answer, the answer as the model gave it.
type ClassifyFailure struct {
	TargetID      string    `json:"target_id"`
	Model         string    `json:"model"`
	PromptVersion string    `json:"prompt_version"`
	Reason        string    `json:"reason"`
	Raw           string    `json:"raw,omitempty"`
	Attempts      int       `json:"attempts,omitempty"`
	At            time.Time `json:"at"`
}

// RefKeys returns the ref_key of each edge, in order, unique within the
// target: the bibliography key when the edge has one ("bib.bib12"), else
// "s2:" and the Semantic Scholar paper ID, else "edge:N" with N the edge's
// 1-based position in the Graph (the number the prompt gives it). A key
// already taken by an earlier edge (S2 listing a paper twice) falls back to
// the position, with ".2", ".3", … appended in the unlikely case that is
// taken too.
func RefKeys(edges []Edge) []string {
	keys := make([]string, len(edges))
	used := make(map[string]bool, len(edges))
	for i, e := range edges {
		k := ""
		switch {
		case e.RefKey != nil && *e.RefKey != "":
			k = *e.RefKey
		case e.S2PaperID != nil && *e.S2PaperID != "":
			k = "s2:" + *e.S2PaperID
		}
		if k == "" || used[k] {
			k = "edge:" + strconv.Itoa(i+1)
			for j := 2; used[k]; j++ {
				k = "edge:" + strconv.Itoa(i+1) + "." + strconv.Itoa(j)
			}
		}
		used[k] = true
		keys[i] = k
	}
	return keys
}
