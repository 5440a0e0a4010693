// Package tuples extracts a target's research idea as an InnoEval-style
// six-tuple — a one-sentence summary, the motivations, the research
// questions, the method's components with their steps, the experimental
// settings and the expected results — each a list of atomic,
// self-contained claims with the passage of the paper that states them.
//
// Whatever made a tuple (a model's answer, or the heuristic backend that
// works offline), Verify holds it to the paper: every quote must occur in
// the paper's own prose verbatim (by the rule classify's quotes follow,
// package quote), and every claim must stand on its own (no "Table 2",
// no "[12]", no term of the paper's own left unexplained, one statement
// only); a claim that fails is dropped and counted, never repaired.
//
// Extract asks a model for the tuple with the prompt every paper task
// shares (package paperprompt: one system prompt and answer schema, the
// target's paper block as its classify and gold-card calls send it, then
// the task), so the call reads the paper from the provider's prompt
// cache; Offline makes one with the heuristic backend.
//
// Stage is the tuples stage, a row of the stage table: one call per
// target after summarize, stored, reused while nothing changed, and the
// field `idea` of every dataset instance.
package tuples

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/groundwork/curate/quote"
	"github.com/groundwork/curate/record"
)

// Decode reads an idea tuple of an answer that passed the shared answer
// schema (paperprompt.Schema, whose "idea" is the tuple's: every string
// non-empty, at most one summary, a claim in each required field).
func Decode(doc json.RawMessage) (record.IdeaTuple, error) {
	var t record.IdeaTuple
	if err := json.Unmarshal(doc, &t); err != nil {
		return record.IdeaTuple{}, fmt.Errorf("decode the idea tuple: %w", err)
	}
	return t, nil
}

// Verify holds t to the paper doc: a claim whose quote is not in the
// paper's prose verbatim, or that does not stand on its own (see
// SelfContained and Atomic), is dropped and reported; a kept claim's
// quote becomes the paper's own text of it. A method dropped takes its
// steps with it; a step dropped leaves its method. Only the first summary
// counts, and a claim repeated in a field counts once.
func Verify(doc *record.Document, t record.IdeaTuple) (record.IdeaTuple, []record.TupleDrop) {
	v := verifier{ver: quote.ForDocument(doc), terms: TermsOf(doc)}
	var out record.IdeaTuple
	out.Summary = v.claims(record.TupleSummary, t.Summary)
	if len(out.Summary) > 1 {
		for _, c := range out.Summary[1:] {
			v.drop(record.TupleSummary, c.Claim, record.DropExtra, "the summary is one sentence")
		}
		out.Summary = out.Summary[:1]
	}
	out.Motivations = v.claims(record.TupleMotivations, t.Motivations)
	out.ResearchQuestions = v.claims(record.TupleResearchQuestions, t.ResearchQuestions)
	out.Methods = []record.MethodClaim{}
	seen := map[string]bool{}
	for _, m := range t.Methods {
		c, ok := v.claim(record.TupleMethods, record.Claim{Claim: m.Claim, Quote: m.Quote})
		if !ok || seen[c.Claim] {
			continue
		}
		seen[c.Claim] = true
		kept := record.MethodClaim{Claim: c.Claim, Quote: c.Quote}
		if len(m.Steps) > 0 {
			kept.Steps = v.claims(record.TupleMethods, m.Steps)
			if len(kept.Steps) == 0 {
				kept.Steps = nil
			}
		}
		out.Methods = append(out.Methods, kept)
	}
	out.ExperimentalSettings = v.claims(record.TupleExperimentalSettings, t.ExperimentalSettings)
	out.ExpectedResults = v.claims(record.TupleExpectedResults, t.ExpectedResults)
	return out, v.drops
}

type verifier struct {
	ver   *quote.Verifier
	terms Terms
	drops []record.TupleDrop
}

func (v *verifier) drop(field, claim, why, detail string) {
	v.drops = append(v.drops, record.TupleDrop{Field: field, Claim: claim, Why: why, Detail: detail})
}

// claims verifies a field's claims, in order, each once.
func (v *verifier) claims(field string, cs []record.Claim) []record.Claim {
	out := []record.Claim{}
	seen := map[string]bool{}
	for _, c := range cs {
		if k, ok := v.claim(field, c); ok && !seen[k.Claim] {
			seen[k.Claim] = true
			out = append(out, k)
		}
	}
	return out
}

// claim verifies one claim.
func (v *verifier) claim(field string, c record.Claim) (record.Claim, bool) {
	c.Claim = strings.Join(strings.Fields(c.Claim), " ")
	if why, ok := Atomic(c.Claim); !ok {
		v.drop(field, c.Claim, record.DropNotAtomic, why)
		return c, false
	}
	span, ok := v.ver.Find(c.Quote)
	if !ok {
		detail := "the quote is not in the paper's text"
		if len(strings.Fields(c.Quote)) < quote.MinWords {
			detail = fmt.Sprintf("the quote is under %d words", quote.MinWords)
		}
		v.drop(field, c.Claim, record.DropUnverified, detail)
		return c, false
	}
	if why, ok := SelfContained(c.Claim, v.terms); !ok {
		v.drop(field, c.Claim, record.DropNotSelfContained, why)
		return c, false
	}
	c.Quote = span
	return c, true
}

// Made says how a tuple was made, for its stored record.
type Made struct {
	Backend       string // record.TupleBackendLLM or record.TupleBackendHeuristic
	Model         string
	PromptVersion string
	InputDigest   string
}

// Build verifies t against doc and returns the stored record of target's
// tuple: the kept claims, the dropped ones counted by why, and the
// required fields left empty.
func Build(target string, doc *record.Document, t record.IdeaTuple, m Made) record.IdeaTuples {
	kept, drops := Verify(doc, t)
	r := record.IdeaTuples{
		Target: target, Idea: kept, Backend: m.Backend, Heuristic: m.Backend == record.TupleBackendHeuristic,
		Model: m.Model, PromptVersion: m.PromptVersion, InputDigest: m.InputDigest,
		Dropped: drops, Missing: kept.Missing(),
	}
	for _, d := range drops {
		switch d.Why {
		case record.DropUnverified:
			r.Unverified++
		case record.DropNotSelfContained:
			r.NotSelfContained++
		case record.DropNotAtomic:
			r.NotAtomic++
		}
	}
	return r
}

// InputDigest identifies what a target's tuple is made from: the paper's
// text and what makes the tuple (the backend, the model, the prompt's
// version), so the stage makes it again when any changes and reuses it
// otherwise.
func InputDigest(doc *record.Document, m Made) string {
	h := sha256.New()
	fmt.Fprintf(h, "tuples\x00%s\x00%s\x00%s\x00", m.Backend, m.Model, m.PromptVersion)
	if doc != nil {
		b, _ := json.Marshal(struct {
			Title    *string
			Abstract string
			Sections []record.Section
			Tables   []record.Table
			Mentions []record.Mention
		}{doc.Title, doc.Abstract, doc.Sections, doc.Tables, doc.Mentions})
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Complete reports whether a stored tuple has a claim in every required
// field: what an export takes.
func Complete(r record.IdeaTuples) bool { return len(r.Idea.Missing()) == 0 }
