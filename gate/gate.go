// Package gate is the schema gate of recipe.md "SFT hindsight traces": the
// check a completion must pass to become a training row, and the same check
// a trainer's reward applies to a rollout before any judge is called.
//
// A completion passes when it has a <think>…</think> block followed by an
// <answer>…</answer> block, the answer is a JSON array of exactly K
// objects, every object has the four string fields problem_gap,
// core_claim, method and inspiration non-empty, and problem_gap and method
// open with exactly one bracketed label of their own axis of the taxonomy
// (or [Other]). The labels are summarize's: ParseLabel decides what a
// valid label is, so the gate, the summarize stage and the model input
// agree on one taxonomy.
//
// The check is deliberately no stricter than that: text outside the two
// blocks, a second answer block after the first, and keys beyond the four
// are ignored, as the reward ignores them.
package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/groundwork/curate/record"
)

// Reasons a completion fails the gate, in the order the gate checks them.
const (
	ReasonMissingThink  = "missing_think"  // no <think>…</think> block
	ReasonMissingAnswer = "missing_answer" // no <answer>…</answer> block after the think block
	ReasonNotJSON       = "not_json"       // the answer is not a JSON array of objects
	ReasonWrongCount    = "wrong_count"    // the array does not hold exactly K cards
	ReasonEmptyField    = "empty_field"    // a card lacks a field, or it is empty or not a string
	ReasonBadLabel      = "bad_label"      // problem_gap or method lacks a valid label of its axis
	ReasonWrongAxis     = "wrong_axis"     // problem_gap or method opens with the other axis's label
)

// Reasons returns every reason in the order the gate checks them (a new
// slice each call), for reports that list them all.
func Reasons() []string {
	return []string{ReasonMissingThink, ReasonMissingAnswer, ReasonNotJSON, ReasonWrongCount,
		ReasonEmptyField, ReasonBadLabel, ReasonWrongAxis}
}

// Error is why a completion fails the gate.
type Error struct {
	Reason string // one of the Reason constants
	Card   int    // 1-based card the problem is in; 0 when it is not about one card
	Field  string // the field the problem is in, if any
	Detail string // what is wrong, in words a model can act on
}

func (e *Error) Error() string {
	where := ""
	if e.Card > 0 {
		where = fmt.Sprintf("card %d: ", e.Card)
	}
	return "gate: " + e.Reason + ": " + where + e.Detail
}

// ReasonOf returns the gate reason of err, or "" when err is not (or does
// not wrap) an *Error.
func ReasonOf(err error) string {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.Reason
	}
	return ""
}

// Tags of the completion format.
const (
	thinkOpen, thinkClose   = "<think>", "</think>"
	answerOpen, answerClose = "<answer>", "</answer>"
)

// Split returns the contents of a completion's think block and of the
// first answer block after it, or an *Error saying which is missing.
func Split(completion string) (think, answer string, err error) {
	i := strings.Index(completion, thinkOpen)
	if i < 0 {
		return "", "", &Error{Reason: ReasonMissingThink, Detail: "the completion has no <think> block"}
	}
	rest := completion[i+len(thinkOpen):]
	j := strings.Index(rest, thinkClose)
	if j < 0 {
		return "", "", &Error{Reason: ReasonMissingThink, Detail: "the <think> block is never closed with </think>"}
	}
	think, rest = rest[:j], rest[j+len(thinkClose):]
	k := strings.Index(rest, answerOpen)
	if k < 0 {
		return "", "", &Error{Reason: ReasonMissingAnswer, Detail: "no <answer> block follows the think block"}
	}
	rest = rest[k+len(answerOpen):]
	l := strings.Index(rest, answerClose)
	if l < 0 {
		return "", "", &Error{Reason: ReasonMissingAnswer, Detail: "the <answer> block is never closed with </answer>"}
	}
	return strings.TrimSpace(think), strings.TrimSpace(rest[:l]), nil
}

// Check applies the gate to a completion that must hold k cards and
// returns them, their labels in Opportunity and Paradigm in canonical
// spelling (Model and PromptVersion are left empty). A failure is an
// *Error naming the first problem found.
func Check(completion string, k int) ([]record.Card, error) {
	_, answer, err := Split(completion)
	if err != nil {
		return nil, err
	}
	return CheckAnswer(answer, k)
}

// CheckAnswer applies the part of the gate that concerns the answer: the
// body of the <answer> block (the JSON array) must hold k valid cards.
func CheckAnswer(answer string, k int) ([]record.Card, error) {
	if k < 1 {
		return nil, fmt.Errorf("gate: want at least 1 card, got k = %d", k)
	}
	if !strings.HasPrefix(strings.TrimSpace(answer), "[") {
		return nil, &Error{Reason: ReasonNotJSON, Detail: "the answer is not a JSON array of cards: " + clip(strings.TrimSpace(answer), 40)}
	}
	dec := json.NewDecoder(strings.NewReader(answer))
	var items []json.RawMessage
	if err := dec.Decode(&items); err != nil {
		return nil, &Error{Reason: ReasonNotJSON, Detail: "the answer is not a JSON array: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &Error{Reason: ReasonNotJSON, Detail: "the answer has text after its JSON array"}
	}
	if len(items) != k {
		return nil, &Error{Reason: ReasonWrongCount, Detail: fmt.Sprintf("the answer has %d cards, want exactly %d", len(items), k)}
	}
	cards := make([]record.Card, len(items))
	for i, raw := range items {
		c, err := checkCard(raw)
		if err != nil {
			err.Card = i + 1
			return nil, err
		}
		cards[i] = c
	}
	return cards, nil
}

func checkCard(raw json.RawMessage) (record.Card, *Error) {
	var obj map[string]json.RawMessage
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || json.Unmarshal(raw, &obj) != nil {
		return record.Card{}, &Error{Reason: ReasonNotJSON, Detail: "the card is not a JSON object"}
	}
	var c record.Card
	for f, v := range c.IdeaFields() {
		raw, ok := obj[f.Name]
		if !ok {
			return record.Card{}, &Error{Reason: ReasonEmptyField, Field: f.Name, Detail: f.Name + " is missing"}
		}
		if json.Unmarshal(raw, v) != nil {
			return record.Card{}, &Error{Reason: ReasonEmptyField, Field: f.Name, Detail: f.Name + " is not a string"}
		}
		if strings.TrimSpace(*v) == "" {
			return record.Card{}, &Error{Reason: ReasonEmptyField, Field: f.Name, Detail: f.Name + " is empty"}
		}
	}
	for f, v := range c.IdeaFields() {
		if f.Axis == "" {
			continue
		}
		other := record.AxisParadigm
		if f.Axis == record.AxisParadigm {
			other = record.AxisOpportunity
		}
		l, err := label(*v, f.Name, f.Axis, other)
		if err != nil {
			return record.Card{}, err
		}
		if f.Axis == record.AxisOpportunity {
			c.Opportunity = l
		} else {
			c.Paradigm = l
		}
	}
	return c, nil
}

// label parses the label that opens a field on axis. A label that parses
// on the other axis instead is a wrong-axis label, told apart from a label
// that is no label at all, because the two mistakes teach different
// things.
func label(text, field, axis, other string) (string, *Error) {
	l, _, err := record.ParseCardLabel(text, axis)
	if err == nil {
		return l, nil
	}
	if ol, _, oerr := record.ParseCardLabel(text, other); oerr == nil && ol != record.Other {
		return "", &Error{Reason: ReasonWrongAxis, Field: field, Detail: err.Error()}
	}
	return "", &Error{Reason: ReasonBadLabel, Field: field, Detail: err.Error()}
}

// answerCard is a card as the answer writes it: the four idea fields, in
// record.CardFields order (TestAnswerCardFields holds the two together).
type answerCard struct {
	ProblemGap  string `json:"problem_gap"`
	CoreClaim   string `json:"core_claim"`
	Method      string `json:"method"`
	Inspiration string `json:"inspiration"`
}

// Answer renders cards as the body of an <answer> block: a JSON array of
// objects with the four fields, indented, HTML characters unescaped so the
// text reads as written. It ends with a newline.
func Answer(cards []record.Card) (string, error) {
	out := make([]answerCard, len(cards))
	for i, c := range cards {
		out[i] = answerCard{c.ProblemGap, c.CoreClaim, c.Method, c.Inspiration}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return "", fmt.Errorf("gate: render answer: %w", err)
	}
	return b.String(), nil
}

// Format builds a completion from a thinking trace (empty for the no-think
// variant, which keeps an empty block) and the cards. It is the format
// Check reads and dataset.Export writes for its one-card rows.
func Format(think string, cards []record.Card) (string, error) {
	answer, err := Answer(cards)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(thinkOpen + "\n")
	if t := strings.TrimSpace(think); t != "" {
		b.WriteString(t + "\n")
	}
	b.WriteString(thinkClose + "\n" + answerOpen + "\n" + answer + answerClose)
	return b.String(), nil
}

// HasTag reports whether text contains one of the completion format's
// tags, which a thinking trace must not: it would end its block early.
func HasTag(text string) bool {
	for _, t := range []string{thinkOpen, thinkClose, answerOpen, answerClose} {
		if strings.Contains(text, t) {
			return true
		}
	}
	return false
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…", string(r[:n]))
}
