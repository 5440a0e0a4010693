package record

import "iter"

// CardField describes one text field of a Card. The list of fields is
// kept here once; code that walks a card's text (trimming, validation,
// leak checks, gates) walks Card.Fields or Card.IdeaFields.
type CardField struct {
	Name string // the field's JSON and Parquet name
	// Axis is the taxonomy axis whose label opens the field
	// (AxisOpportunity for problem_gap, AxisParadigm for method), or "".
	Axis string
	// Idea is true for the four fields every idea has: gold cards,
	// teacher ideas and a model's generated ideas. Results and Takeaways
	// are on source cards only.
	Idea bool
}

// CardFields returns the text fields of a card, in the order cards are
// written.
func CardFields() []CardField {
	return []CardField{
		{Name: "problem_gap", Axis: AxisOpportunity, Idea: true},
		{Name: "core_claim", Idea: true},
		{Name: "method", Axis: AxisParadigm, Idea: true},
		{Name: "inspiration", Idea: true},
		{Name: "results"},
		{Name: "takeaways"},
	}
}

// IdeaFieldNames returns the names of the four idea fields, in order.
func IdeaFieldNames() []string {
	var out []string
	for _, f := range CardFields() {
		if f.Idea {
			out = append(out, f.Name)
		}
	}
	return out
}

// field returns a pointer to the value of the text field named name.
func (c *Card) field(name string) *string {
	switch name {
	case "problem_gap":
		return &c.ProblemGap
	case "core_claim":
		return &c.CoreClaim
	case "method":
		return &c.Method
	case "inspiration":
		return &c.Inspiration
	case "results":
		return &c.Results
	case "takeaways":
		return &c.Takeaways
	}
	panic("record: no card field " + name)
}

// Fields yields each text field of c with a pointer to its value, in
// CardFields order: read through it, or write.
func (c *Card) Fields() iter.Seq2[CardField, *string] {
	return func(yield func(CardField, *string) bool) {
		for _, f := range CardFields() {
			if !yield(f, c.field(f.Name)) {
				return
			}
		}
	}
}

// IdeaFields yields the four idea fields of c (CardField.Idea) with
// pointers to their values.
func (c *Card) IdeaFields() iter.Seq2[CardField, *string] {
	return func(yield func(CardField, *string) bool) {
		for f, v := range c.Fields() {
			if f.Idea && !yield(f, v) {
				return
			}
		}
	}
}
