package dataset

import (
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
	// Eleven charts, each drawn wide and narrow.
	if n := strings.Count(string(page), "<svg "); n != 22 {
		t.Errorf("%d <svg> charts, want 22", n)
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

var sampleReport = flag.String("sample-report", "", "write the report of a large synthetic dataset into this directory (make report-screenshots)")

// sampleInstances are n synthetic instances with wide distributions:
// many bins, long labels, many domains and years, so that the report's
// charts are seen at their busiest.
func sampleInstances(n int) []record.Instance {
	r := rand.New(rand.NewPCG(1, 2))
	domains := []string{"Computation and Language", "Machine Learning", "Computer Vision", "Robotics", "Quantum Physics",
		"Astrophysics", "Economics", "Quantitative Biology", "Statistics", "Mathematics", "Condensed Matter", "Signal Processing"}
	opps, pars := record.OpportunityLabels(), record.ParadigmLabels()
	out := make([]record.Instance, n)
	for i := range out {
		split := record.SplitTrain
		year := 2015 + r.IntN(11)
		if r.IntN(5) == 0 {
			split, year = record.SplitTest, 2026
		}
		nSrc := 3 + r.IntN(28)
		refs := nSrc + r.IntN(400)
		in := record.Instance{
			InstanceID: fmt.Sprintf("i%05d", i), Split: split, NumIdeas: 3,
			Target: record.InstanceTarget{Published: fmt.Sprintf("%d-03-01", year), Domain: domains[r.IntN(len(domains))], NumReferences: refs},
			Prompt: strings.Repeat("x", 2000+r.IntN(90_000)),
			Gold:   record.Card{Opportunity: opps[r.IntN(len(opps))], Paradigm: pars[r.IntN(len(pars))]},
			Provenance: record.Provenance{PipelineVersion: "0.1.0-dev", CreatedAt: "2026-03-01T00:00:00Z",
				Models:         record.StageValues{Classify: "claude-sonnet-4-6", Summarize: "claude-sonnet-4-6, gpt-5.4-mini"},
				PromptVersions: record.StageValues{Classify: "classify-v3", Summarize: "summarize-v4", Dataset: "model-input-v2"}},
		}
		for j := range nSrc {
			level := record.TextFull
			if r.IntN(3) == 0 {
				level = record.TextAbstract
			}
			labels := record.Labels()
			in.Sources = append(in.Sources, record.InstanceSource{DocNumber: j + 1, Year: 1990 + r.IntN(37), TextLevel: level,
				Labels: labels[:1+r.IntN(len(labels))]})
		}
		out[i] = in
	}
	return out
}

// TestSampleReport writes the busiest report there is for a person (or a
// headless browser) to look at; it runs only with -sample-report.
func TestSampleReport(t *testing.T) {
	if *sampleReport == "" {
		t.Skip("give -sample-report DIR to write the sample report")
	}
	if _, err := Report(sampleInstances(2000), []Dropped{{TargetID: "x", Reason: DropFewSources}}, nil, *sampleReport); err != nil {
		t.Fatal(err)
	}
}

// TestReportNumbers: the header names the models and the creation time;
// references per target, source years and domains are counted per split.
func TestReportNumbers(t *testing.T) {
	ins := sampleInstances(300)
	d := reportData(ins, nil, nil)
	if d.Header.Models.Summarize != "claude-sonnet-4-6, gpt-5.4-mini" || d.Header.CreatedAt != "2026-03-01T00:00:00Z" || d.Header.PromptVersions.Dataset != "model-input-v2" {
		t.Errorf("header %+v", d.Header)
	}
	var refs, srcYears, domains [2]int
	for _, b := range d.ReferencesPerTarget {
		refs[0], refs[1] = refs[0]+b.Train, refs[1]+b.Test
	}
	for _, y := range d.SourceYears {
		srcYears[0], srcYears[1] = srcYears[0]+y.Train, srcYears[1]+y.Test
	}
	for _, c := range d.Domains {
		domains[0], domains[1] = domains[0]+c.Train, domains[1]+c.Test
	}
	var wantSrc [2]int
	for _, in := range ins {
		i := 0
		if in.Split == record.SplitTest {
			i = 1
		}
		wantSrc[i] += len(in.Sources)
	}
	want := [2]int{d.Counts.Train, d.Counts.Test}
	if refs != want || domains != want || srcYears != wantSrc {
		t.Errorf("references per target %v, domains %v, source years %v; want %v, %v, %v", refs, domains, srcYears, want, want, wantSrc)
	}
	page, err := reportHTML(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"<th>created</th><td>2026-03-01T00:00:00Z</td>", "claude-sonnet-4-6, gpt-5.4-mini (prompt summarize-v4)", "References per target", "Sources by year", "Target domains"} {
		if !strings.Contains(string(page), s) {
			t.Errorf("report.html lacks %q", s)
		}
	}
}

var (
	svgText  = regexp.MustCompile(`<text x="([0-9.]+)" y="([0-9.]+)"([^>]*)>([^<]*)</text>`)
	tickText = regexp.MustCompile(`<text x="[0-9.]+" y="[0-9.]+" text-anchor="end" dy="4" fill="#555">([^<]*)</text>`)
)

// TestChartsReadable: count axes have whole-number ticks and a title;
// x labels never overlap, however many bins and however long their
// labels, at both drawing widths.
func TestChartsReadable(t *testing.T) {
	bars := func(n int, label func(int) string, v func(int) float64) []chartBar {
		var out []chartBar
		for i := range n {
			out = append(out, chartBar{label: label(i), values: []float64{v(i), v(i + 1)}})
		}
		return out
	}
	cases := map[string][]chartBar{
		"few small counts": bars(3, func(i int) string { return strconv.Itoa(i) }, func(i int) float64 { return float64(i % 3) }),
		"many bins":        bars(40, func(i int) string { return strconv.Itoa(1990 + i) }, func(i int) float64 { return float64(i * 7) }),
		"long labels":      bars(14, func(i int) string { return fmt.Sprintf("%d–%d", i*2000, i*2000+1999) }, func(i int) float64 { return 3 }),
		"one bar":          bars(1, func(int) string { return "2026" }, func(int) float64 { return 1 }),
	}
	for name, bs := range cases {
		for _, w := range []int{chartWidth, narrowWidth} {
			svg := columnChart(chart{title: name, xTitle: "the x axis", yTitle: "instances", series: []string{"train", "test"}, colors: []string{colorTrain, colorTest}, bars: bs, width: w})
			for _, m := range tickText.FindAllStringSubmatch(svg, -1) {
				if _, err := strconv.Atoi(m[1]); err != nil {
					t.Errorf("%s at %d: tick %q is not a whole number", name, w, m[1])
				}
			}
			if !strings.Contains(svg, `rotate(-90 16`) || !strings.Contains(svg, ">instances</text>") || !strings.Contains(svg, ">the x axis</text>") {
				t.Errorf("%s at %d: an axis title is missing", name, w)
			}
			// The x labels: text of a bar's label, level or rotated.
			labels := map[string]bool{}
			for _, b := range bs {
				labels[b.label] = true
			}
			var xs []float64
			var widths []float64
			rotated := false
			for _, m := range svgText.FindAllStringSubmatch(svg, -1) {
				if !labels[m[4]] || strings.Contains(m[3], "font-size") || strings.Contains(m[3], `dy="4"`) {
					continue
				}
				x, _ := strconv.ParseFloat(m[1], 64)
				xs, widths = append(xs, x), append(widths, textWidth(m[4]))
				rotated = rotated || strings.Contains(m[3], "rotate(-45")
			}
			if len(xs) == 0 {
				t.Errorf("%s at %d: no x labels", name, w)
			}
			for i := 1; i < len(xs); i++ {
				gap := xs[i] - xs[i-1]
				need := (widths[i] + widths[i-1]) / 2
				if rotated {
					need = rotatedGap
				}
				if gap < need {
					t.Errorf("%s at %d: labels %d and %d are %.1fpx apart, need %.1f (rotated %v)", name, w, i-1, i, gap, need, rotated)
				}
			}
		}
	}
}

// TestOneTokenEstimate: the report's prompt lengths and an export's are
// the same estimate of the same text (the report said chars/4 where the
// exports said bytes/3: 34% apart).
func TestOneTokenEstimate(t *testing.T) {
	r := mustBuild(t, corpus(), fixedOptions())
	d := reportData(r.Instances, nil, nil)
	longest := 0
	for _, in := range r.Instances {
		longest = max(longest, TokenEstimate{}.Count(in.Prompt))
	}
	if d.InputTokStats.Max != longest {
		t.Errorf("report: longest prompt %v tokens; the exports' estimate of it: %d", d.InputTokStats.Max, longest)
	}
	ins, splits := assign(r.Instances, SplitAll, -1)
	rows, err := exportRows(ins, splits, FormatTRLGRPO, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l := measure(rows, TokenEstimate{}); l.Prompt-TemplateOverhead != longest {
		t.Errorf("export: longest prompt %d tokens (with the chat template's %d), report %d", l.Prompt, TemplateOverhead, longest)
	}
	if !strings.Contains(d.TokenEstimate, "3 bytes") {
		t.Errorf("the report says its estimate is %q", d.TokenEstimate)
	}
}
