package gate

import (
	"bytes"
	"encoding/json"

	"github.com/groundwork/curate/record"
)

// SpecVersion names the rules Spec describes; bump it when they change, so
// a reward file generated from an older spec is told apart.
const SpecVersion = "gate-v1"

// Spec is the gate's rules as data, for implementations of the gate in
// other languages (the Python reward of reward/groundwork_reward.py is
// generated with it): the completion's tags, the answer's fields, which
// field opens with a label of which axis, and each axis's labels. The
// matching rules (first think block, first answer block after it, labels
// folded for case, runs of spaces and spaces around "/", a second label
// found in bracketed spans of 1 to SecondLabelMaxRunes characters) are
// the ones Check applies; an agreement test holds the Python to them.
type Spec struct {
	Version     string `json:"version"`
	ThinkOpen   string `json:"think_open"`
	ThinkClose  string `json:"think_close"`
	AnswerOpen  string `json:"answer_open"`
	AnswerClose string `json:"answer_close"`
	// Fields are the keys every card must have, non-empty strings, in the
	// order the gate checks them.
	Fields []string `json:"fields"`
	// LabelFields are the fields that open with a label, in the order the
	// gate checks them, and the axis of each.
	LabelFields []LabelField `json:"label_fields"`
	// Axes maps an axis to its labels, in the taxonomy's order.
	Axes map[string][]string `json:"axes"`
	// Other is the out-of-taxonomy label, valid on either axis.
	Other string `json:"other"`
	// SecondLabelMaxRunes bounds the bracketed spans searched for a second
	// label after the first.
	SecondLabelMaxRunes int `json:"second_label_max_runes"`
	// Reasons are the failure reasons, in the order the gate checks them.
	Reasons []string `json:"reasons"`
}

// secondLabelMaxRunes is the longest bracketed span record.ParseCardLabel
// reads as a possible second label; TestSecondLabelBound pins it.
const secondLabelMaxRunes = 60

// LabelField is a field that opens with a label of Axis.
type LabelField struct {
	Field string `json:"field"`
	Axis  string `json:"axis"`
}

// GetSpec returns the gate's rules.
func GetSpec() Spec {
	return Spec{
		Version:   SpecVersion,
		ThinkOpen: thinkOpen, ThinkClose: thinkClose, AnswerOpen: answerOpen, AnswerClose: answerClose,
		Fields:      record.IdeaFieldNames(),
		LabelFields: labelFields(),
		Axes: map[string][]string{
			record.AxisOpportunity: record.OpportunityLabels(),
			record.AxisParadigm:    record.ParadigmLabels(),
		},
		Other:               record.Other,
		SecondLabelMaxRunes: secondLabelMaxRunes,
		Reasons:             Reasons(),
	}
}

// SpecJSON returns GetSpec as indented JSON (keys in a fixed order), the
// form generated files embed.
func SpecJSON() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<think>", not "\u003cthink\u003e"
	enc.SetIndent("", "  ")
	if err := enc.Encode(GetSpec()); err != nil {
		panic(err) // strings and ints only
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// labelFields lists the idea fields that open with a label.
func labelFields() []LabelField {
	var out []LabelField
	for _, f := range record.CardFields() {
		if f.Idea && f.Axis != "" {
			out = append(out, LabelField{f.Name, f.Axis})
		}
	}
	return out
}
