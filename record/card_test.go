package record

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The field list names every text field of Card, by its JSON name, in
// the struct's order, and the iterators reach each field's own value.
func TestCardFields(t *testing.T) {
	typ := reflect.TypeFor[Card]()
	var text []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "opportunity", "paradigm", "model", "prompt_version": // labels and provenance, not text
		default:
			text = append(text, name)
		}
	}
	var names []string
	for _, f := range CardFields() {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, text) {
		t.Errorf("CardFields %q, Card's text fields %q", names, text)
	}

	var c Card
	for f, v := range c.Fields() {
		*v = "value of " + f.Name
	}
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if m[n] != "value of "+n {
			t.Errorf("field %s holds %q after writing through Fields", n, m[n])
		}
	}
	var ideas []string
	for f, v := range c.IdeaFields() {
		if *v != "value of "+f.Name {
			t.Errorf("IdeaFields: %s reads %q", f.Name, *v)
		}
		ideas = append(ideas, f.Name)
	}
	if want := []string{"problem_gap", "core_claim", "method", "inspiration"}; !slices.Equal(ideas, want) || !slices.Equal(IdeaFieldNames(), want) {
		t.Errorf("idea fields %q and %q, want %q", ideas, IdeaFieldNames(), want)
	}
	for f := range c.Fields() {
		if (f.Name == "problem_gap") != (f.Axis == AxisOpportunity) || (f.Name == "method") != (f.Axis == AxisParadigm) {
			t.Errorf("field %s on axis %q", f.Name, f.Axis)
		}
	}
}
