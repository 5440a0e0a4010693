package dataset

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/groundwork/curate/record"
)

func TestReport(t *testing.T) {
	targets := corpus()
	for i := range 8 {
		tg := makeTarget("2402.0010"+string(rune('0'+i)), "2024-02-01", "cs.CL", 3+i%3)
		tg.Gold.Opportunity, tg.Gold.Paradigm = record.Bridge, record.Synthesis
		targets = append(targets, tg)
	}
	targets = append(targets, makeTarget("2402.00200", "2024-02-01", "cs.CL", 2)) // dropped
	r := mustBuild(t, targets, fixedOptions())
	dir := filepath.Join(t.TempDir(), "report")
	d, err := Report(r.Instances, r.Dropped, r.Contamination, dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Counts != (SplitCounts{Train: 11, Test: 2}) || len(d.Dropped) != 1 || d.Dropped[0].Label != DropFewSources {
		t.Errorf("counts %+v dropped %+v", d.Counts, d.Dropped)
	}
	if len(d.Warnings) != 2 {
		t.Errorf("warnings %q, want Bridge and Synthesis collapse", d.Warnings)
	}
	if len(d.Opportunity) != 8 || d.Opportunity[4].Label != record.Bridge || d.Opportunity[4].N != 8 {
		t.Errorf("opportunity %+v", d.Opportunity)
	}
	total := 0
	for _, b := range d.SourcesPerTarget {
		total += b.Train + b.Test
	}
	if total != 13 || d.SourcesPerTargetStats.Min != 3 || d.InputTokStats.Min <= 0 {
		t.Errorf("sources per target %+v %+v", d.SourcesPerTarget, d.SourcesPerTargetStats)
	}

	page, err := os.ReadFile(filepath.Join(dir, ReportHTML))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), "<svg "); n != 9 {
		t.Errorf("%d <svg> charts, want 9", n)
	}
	// Each chart is well-formed XML (a browser would otherwise not draw it).
	for _, chunk := range strings.Split(string(page), "<svg ")[1:] {
		svg := "<svg " + chunk[:strings.Index(chunk, "</svg>")+len("</svg>")]
		dec := xml.NewDecoder(strings.NewReader(svg))
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("chart is not valid XML: %v\n%s", err, svg)
			}
		}
	}
	var back ReportData
	b, _ := os.ReadFile(filepath.Join(dir, ReportJSON))
	if err := json.Unmarshal(b, &back); err != nil || back.Counts != d.Counts {
		t.Errorf("report.json: %v %+v", err, back.Counts)
	}

	// An empty dataset still gets a report.
	if _, err := Report(nil, nil, nil, filepath.Join(t.TempDir(), "empty")); err != nil {
		t.Errorf("empty report: %v", err)
	}
}
