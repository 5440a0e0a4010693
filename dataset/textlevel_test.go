package dataset

import (
	"slices"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

// TestTextLevelShares: the report's "Source text level" chart and the
// dataset card give the share of each text level, PDF full text among
// them when some source has it and not otherwise.
func TestTextLevelShares(t *testing.T) {
	withLevels := func(levels ...string) []record.Instance {
		in := record.Instance{InstanceID: "i1", Split: record.SplitTrain, Target: record.InstanceTarget{Published: "2025-01-01"}}
		for i, l := range levels {
			in.Sources = append(in.Sources, record.InstanceSource{DocNumber: i + 1, TextLevel: l})
		}
		return []record.Instance{in}
	}
	tests := []struct {
		name   string
		ins    []record.Instance
		labels []string
		ns     []int
		card   string
	}{
		{"html and abstract", withLevels(record.TextFull, record.TextFull, record.TextAbstract, record.TextFull),
			[]string{record.TextFull, record.TextAbstract}, []int{3, 1},
			"Source cards written from (`sources.text_level`): the arXiv HTML full text 3 (75.0%), the abstract alone 1 (25.0%).\n\n"},
		{"with PDFs", withLevels(record.TextPDF, record.TextFull, record.TextAbstract, record.TextPDF, record.TextPDF),
			[]string{record.TextFull, record.TextPDF, record.TextAbstract}, []int{1, 3, 1},
			"Source cards written from (`sources.text_level`): the arXiv HTML full text 1 (20.0%), the open-access PDF's full text (GROBID) 3 (60.0%), the abstract alone 1 (20.0%).\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := reportData(tt.ins, nil, nil)
			var labels []string
			var ns []int
			for _, c := range d.TextLevels {
				labels, ns = append(labels, c.Label), append(ns, c.N)
			}
			if strings.Join(labels, ",") != strings.Join(tt.labels, ",") || !slices.Equal(ns, tt.ns) {
				t.Errorf("chart: %v %v, want %v %v", labels, ns, tt.labels, tt.ns)
			}
			page, err := reportHTML(d)
			if err != nil {
				t.Fatal(err)
			}
			if has := strings.Contains(string(page), record.TextPDF); has != (len(tt.labels) == 3) {
				t.Errorf("report mentions %s: %v", record.TextPDF, has)
			}
			levels := map[string]int{}
			for _, in := range tt.ins {
				for _, s := range in.Sources {
					levels[s.TextLevel]++
				}
			}
			if got := textLevelText(levels); got != tt.card {
				t.Errorf("card line:\n got %q\nwant %q", got, tt.card)
			}
		})
	}
	if textLevelText(nil) != "" {
		t.Error("a dataset without sources gets a text-level line")
	}
}
