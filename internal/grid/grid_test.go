package grid

import (
	"reflect"
	"testing"
)

func TestGrid(t *testing.T) {
	type cell struct {
		text       string
		cols, rows int
	}
	rows := [][]cell{
		{{"Method", 1, 2}, {"Score", 2, 1}},
		{{"A", 1, 1}, {"B", 1, 1}},
		{{"Engine", 1, 1}, {"0.9", 1, 3}, {"0.8", 1, 1}},
		{{"X", 1, 1}},
		{},
	}
	var g Grid
	var got [][]string
	for _, cs := range rows {
		r := g.Row()
		for _, c := range cs {
			r.Cell(c.text, c.cols, c.rows)
		}
		got = append(got, r.End())
	}
	want := [][]string{
		{"Method", "Score", "Score"},
		{"Method", "A", "B"},
		{"Engine", "0.9", "0.8"},
		{"X", "0.9"},
		nil, // a span from above is placed only after a cell of the row's own or another span left of it
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows:\n got %q\nwant %q", got, want)
	}
}

func TestEmptyRow(t *testing.T) {
	var g Grid
	if cells := g.Row().End(); cells != nil {
		t.Errorf("empty row = %q, want nil", cells)
	}
}
