package dataset

import (
	"cmp"
	"fmt"
	"html/template"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/groundwork/curate/modelinput"
	"github.com/groundwork/curate/record"
)

// Report files.
const (
	ReportHTML = "report.html"
	ReportJSON = "report.json"
)

// Human-paper rates of the two labels LLM labelers over-use (recipe.md):
// a share over twice the rate is flagged as collapse.
const (
	bridgeRate    = 0.12
	synthesisRate = 0.05
	collapseRatio = 2
)

// ReportCount is one category of a distribution.
type ReportCount struct {
	Label string  `json:"label"`
	N     int     `json:"n"`
	Share float64 `json:"share"` // of the distribution's total
}

// ReportBin is one bin of a histogram, [Lo, Hi], counted per split.
type ReportBin struct {
	Lo    int `json:"lo"`
	Hi    int `json:"hi"`
	Train int `json:"train"`
	Test  int `json:"test"`
}

// ReportStats summarizes a quantity over the instances.
type ReportStats struct {
	Min    int     `json:"min"`
	Median int     `json:"median"`
	Mean   float64 `json:"mean"`
	Max    int     `json:"max"`
}

// ReportYear counts papers published in one year, per split.
type ReportYear struct {
	Year  int `json:"year"`
	Train int `json:"train"`
	Test  int `json:"test"`
}

// ReportSplitCount is one category counted per split.
type ReportSplitCount struct {
	Label string `json:"label"`
	Train int    `json:"train"`
	Test  int    `json:"test"`
}

// ReportHeader says what made the dataset: the provenance of its
// instances, each stage's distinct values joined by ", ".
type ReportHeader struct {
	PipelineVersion string             `json:"pipeline_version"`
	CreatedAt       string             `json:"created_at"`
	Models          record.StageValues `json:"models"`
	PromptVersions  record.StageValues `json:"prompt_versions"`
}

// ReportData holds every number of the report (report.json); report.html
// plots the same numbers.
type ReportData struct {
	Header  ReportHeader  `json:"header"`
	Counts  SplitCounts   `json:"counts"`
	Dropped []ReportCount `json:"dropped"` // targets left out, by reason
	// SourcesPerTarget is the number of sources kept per target, which is
	// also the number of input documents per instance.
	SourcesPerTarget      []ReportBin `json:"sources_per_target"`
	SourcesPerTargetStats ReportStats `json:"sources_per_target_stats"`
	// ReferencesPerTarget bins the targets' reference counts (bibliography
	// entries and Semantic Scholar edges, joined).
	ReferencesPerTarget      []ReportBin `json:"references_per_target"`
	ReferencesPerTargetStats ReportStats `json:"references_per_target_stats"`
	// ReferencesKept bins the percentage of a target's references kept as
	// sources, in steps of 10.
	ReferencesKept []ReportBin   `json:"references_kept_percent"`
	SourceLabels   []ReportCount `json:"source_labels"`
	TextLevels     []ReportCount `json:"source_text_levels"`
	InputTokens    []ReportBin   `json:"input_tokens"`
	InputTokStats  ReportStats   `json:"input_tokens_stats"`
	TokenEstimate  string        `json:"token_estimate"`
	Years          []ReportYear  `json:"target_years"`
	// SourceYears counts the sources of each split's instances by their
	// year (a source shared by several instances counts once for each).
	SourceYears   []ReportYear       `json:"source_years"`
	Domains       []ReportSplitCount `json:"domains"` // targets by domain, per split
	TestDomains   []ReportCount      `json:"test_domains"`
	Opportunity   []ReportCount      `json:"gold_opportunity"`
	Paradigm      []ReportCount      `json:"gold_paradigm"`
	Warnings      []string           `json:"warnings"`
	Contamination *Contamination     `json:"contamination,omitempty"`
	// Guards is what the guards against instructions planted in papers
	// found (guards.json); nil for a dataset without one.
	Guards *Guards `json:"guards,omitempty"`
}

// Report computes the report of a dataset and writes report.html (inline
// SVG plots, no script or external file) and report.json into outDir,
// creating it if needed. contamination may be nil.
func Report(instances []record.Instance, dropped []Dropped, contamination *Contamination, outDir string) (*ReportData, error) {
	return ReportGuards(instances, dropped, contamination, nil, outDir)
}

// ReportGuards is Report with what the guards against planted
// instructions found (ReadGuards), which report.json then carries.
func ReportGuards(instances []record.Instance, dropped []Dropped, contamination *Contamination, guards *Guards, outDir string) (*ReportData, error) {
	d := reportData(instances, dropped, contamination)
	d.Guards = guards
	return writeReport(d, outDir)
}

// writeReport writes a report's report.html and report.json into outDir.
func writeReport(d *ReportData, outDir string) (*ReportData, error) {
	page, err := reportHTML(d)
	if err != nil {
		return nil, fmt.Errorf("report %s: %w", outDir, err)
	}
	js, err := marshalJSON(d)
	if err != nil {
		return nil, fmt.Errorf("report %s: %w", outDir, err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("report %s: %w", outDir, err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{ReportJSON, js}, {ReportHTML, page}} {
		if err := writeFileAtomic(filepath.Join(outDir, f.name), f.data); err != nil {
			return nil, fmt.Errorf("report %s: %w", outDir, err)
		}
	}
	return d, nil
}

func reportData(ins []record.Instance, dropped []Dropped, c *Contamination) *ReportData {
	var a reportAcc
	for i := range ins {
		a.add(&ins[i])
	}
	return a.data(dropped, c)
}

// reportAcc gathers the report's figures one instance at a time, keeping
// a few numbers per instance, so a report of any size is made in one pass
// over instances that are never all in memory.
type reportAcc struct {
	guards                  *Guards
	prov                    provAcc
	counts                  SplitCounts
	nSources, tokens, nRefs []int
	nSplit, tSplit, rSplit  []string
	labels, levels          map[string]int
	nLabels, nLevels        int
	keptShare               map[int][2]int
	years, srcYears         map[int][2]int
	domainSplits            map[string][2]int
	domains, opp, par       map[string]int
	nTest, n                int
}

func (a *reportAcc) init() {
	if a.labels != nil {
		return
	}
	a.labels, a.levels = map[string]int{}, map[string]int{}
	a.keptShare, a.years, a.srcYears = map[int][2]int{}, map[int][2]int{}, map[int][2]int{}
	a.domainSplits = map[string][2]int{}
	a.domains, a.opp, a.par = map[string]int{}, map[string]int{}, map[string]int{}
}

func (a *reportAcc) add(in *record.Instance) {
	a.init()
	a.n++
	a.prov.add(in.Provenance)
	si := 0
	if in.Split == record.SplitTest {
		si = 1
		a.counts.Test++
	} else {
		a.counts.Train++
	}
	a.nSources, a.nSplit = append(a.nSources, len(in.Sources)), append(a.nSplit, in.Split)
	// The exports' estimate of the same text: one estimate in every output.
	a.tokens, a.tSplit = append(a.tokens, modelinput.EstimateTokens(in.Prompt)), append(a.tSplit, in.Split)
	a.nRefs, a.rSplit = append(a.nRefs, in.Target.NumReferences), append(a.rSplit, in.Split)
	for _, s := range in.Sources {
		for _, l := range s.Labels {
			a.labels[l]++
			a.nLabels++
		}
		a.levels[s.TextLevel]++
		a.nLevels++
		if s.Year > 0 {
			v := a.srcYears[s.Year]
			v[si]++
			a.srcYears[s.Year] = v
		}
	}
	ds := a.domainSplits[cmp.Or(in.Target.Domain, "(none)")]
	ds[si]++
	a.domainSplits[cmp.Or(in.Target.Domain, "(none)")] = ds
	if in.Target.NumReferences > 0 {
		p := min(100, 100*len(in.Sources)/in.Target.NumReferences) / 10 * 10
		v := a.keptShare[p]
		v[si]++
		a.keptShare[p] = v
	}
	if y, err := strconv.Atoi(strings.SplitN(in.Target.Published, "-", 2)[0]); err == nil {
		v := a.years[y]
		v[si]++
		a.years[y] = v
	}
	if si == 1 {
		a.domains[in.Target.Domain]++
		a.nTest++
	}
	a.opp[cmp.Or(in.Gold.Opportunity, "(none)")]++
	a.par[cmp.Or(in.Gold.Paradigm, "(none)")]++
}

// data is the report of the instances added.
func (a *reportAcc) data(dropped []Dropped, c *Contamination) *ReportData {
	a.init()
	prov := a.prov.summary()
	d := &ReportData{
		Header: ReportHeader{
			PipelineVersion: prov.PipelineVersion, CreatedAt: prov.CreatedAt,
			Models: prov.Models, PromptVersions: prov.PromptVersions,
		},
		Counts:        a.counts,
		TokenEstimate: fmt.Sprintf("one token per %d bytes, on the long side, as the exports estimate (no tokenizer is run)", modelinput.BytesPerToken),
		Contamination: c,
		Warnings:      []string{},
		Guards:        a.guards,
	}
	reasons := map[string]int{}
	for _, x := range dropped {
		reasons[x.Reason]++
	}
	d.Dropped = counts(reasons, nil, len(dropped))
	nSources, tokens, nRefs := a.nSources, a.tokens, a.nRefs
	nSplit, tSplit, rSplit := a.nSplit, a.tSplit, a.rSplit
	labels, levels, nLabels, nLevels := a.labels, a.levels, a.nLabels, a.nLevels
	keptShare, years, srcYears, domainSplits := a.keptShare, a.years, a.srcYears, a.domainSplits
	domains, opp, par, nTest := a.domains, a.opp, a.par, a.nTest
	n := a.n
	d.SourcesPerTarget = intBins(nSources, nSplit, 1)
	d.SourcesPerTargetStats = stats(nSources)
	d.InputTokens = intBins(tokens, tSplit, 0)
	d.InputTokStats = stats(tokens)
	d.ReferencesPerTarget = intBins(nRefs, rSplit, 0)
	d.ReferencesPerTargetStats = stats(nRefs)
	for _, p := range slices.Sorted(maps.Keys(keptShare)) {
		d.ReferencesKept = append(d.ReferencesKept, ReportBin{Lo: p, Hi: min(100, p+9), Train: keptShare[p][0], Test: keptShare[p][1]})
	}
	for _, y := range slices.Sorted(maps.Keys(years)) {
		d.Years = append(d.Years, ReportYear{Year: y, Train: years[y][0], Test: years[y][1]})
	}
	d.SourceYears = []ReportYear{}
	for _, y := range slices.Sorted(maps.Keys(srcYears)) {
		d.SourceYears = append(d.SourceYears, ReportYear{Year: y, Train: srcYears[y][0], Test: srcYears[y][1]})
	}
	d.Domains = []ReportSplitCount{}
	for _, l := range slices.Sorted(maps.Keys(domainSplits)) {
		d.Domains = append(d.Domains, ReportSplitCount{Label: l, Train: domainSplits[l][0], Test: domainSplits[l][1]})
	}
	// Largest domains first.
	slices.SortStableFunc(d.Domains, func(a, b ReportSplitCount) int { return cmp.Compare(b.Train+b.Test, a.Train+a.Test) })
	d.SourceLabels = counts(labels, record.Labels(), nLabels)
	d.TextLevels = counts(levels, levelOrder(levels), nLevels)
	d.TestDomains = counts(domains, nil, nTest)
	d.Opportunity = counts(opp, append(record.OpportunityLabels(), record.Other), n)
	d.Paradigm = counts(par, append(record.ParadigmLabels(), record.Other), n)
	for _, f := range []struct {
		dist  []ReportCount
		label string
		rate  float64
	}{{d.Opportunity, record.Bridge, bridgeRate}, {d.Paradigm, record.Synthesis, synthesisRate}} {
		for _, c := range f.dist {
			if c.Label == f.label && c.Share > collapseRatio*f.rate {
				d.Warnings = append(d.Warnings, fmt.Sprintf("%s is %.0f%% of gold cards (%d of %d), over %d times the ~%.0f%% of human papers: the labeler may be collapsing onto it",
					f.label, 100*c.Share, c.N, n, collapseRatio, 100*f.rate))
			}
		}
	}
	return d
}

// counts turns a histogram into ReportCounts: the labels of order first,
// zero included, in that order; the rest by count.
// levelOrder is the order of the text levels in the report: HTML full
// text and abstract always, PDF full text between them when a source has
// it (so a run without PDFs reports as before).
func levelOrder(levels map[string]int) []string {
	if levels[record.TextPDF] > 0 {
		return record.TextLevels()
	}
	return []string{record.TextFull, record.TextAbstract}
}

func counts(m map[string]int, order []string, total int) []ReportCount {
	out := []ReportCount{}
	add := func(l string, n int) {
		c := ReportCount{Label: l, N: n}
		if total > 0 {
			c.Share = float64(n) / float64(total)
		}
		out = append(out, c)
	}
	for _, l := range order {
		add(l, m[l])
	}
	for _, lc := range byCount(m) {
		if !slices.Contains(order, lc.label) {
			add(lc.label, lc.n)
		}
	}
	return out
}

// intBins bins values per split: width 1 when width is 1 (small counts),
// else a round width giving at most about 12 bins.
func intBins(vs []int, splits []string, width int) []ReportBin {
	if len(vs) == 0 {
		return []ReportBin{}
	}
	lo, hi := slices.Min(vs), slices.Max(vs)
	if width < 1 {
		width = max(1, int(niceStep(float64(hi-lo+1), 12)))
		lo = lo / width * width
	}
	n := (hi-lo)/width + 1
	bins := make([]ReportBin, n)
	for i := range bins {
		bins[i] = ReportBin{Lo: lo + i*width, Hi: lo + (i+1)*width - 1}
	}
	for i, v := range vs {
		b := &bins[(v-lo)/width]
		if splits[i] == record.SplitTest {
			b.Test++
		} else {
			b.Train++
		}
	}
	return bins
}

func stats(vs []int) ReportStats {
	if len(vs) == 0 {
		return ReportStats{}
	}
	s := slices.Sorted(slices.Values(vs))
	sum := 0
	for _, v := range s {
		sum += v
	}
	return ReportStats{Min: s[0], Median: s[len(s)/2], Mean: float64(sum) / float64(len(s)), Max: s[len(s)-1]}
}

type reportSection struct {
	Title   string
	Chart   template.HTML
	Caption string
}

const reportPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Groundwork dataset report</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2rem auto; max-width: 720px; padding: 0 1rem; color: #222; line-height: 1.4; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
.warn { background: #fdecea; border-left: 4px solid #e45756; padding: .5rem .8rem; }
p.caption { color: #555; font-size: .9rem; }
table { border-collapse: collapse; } td, th { padding: .2rem .8rem; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
td { overflow-wrap: anywhere; }
/* Charts keep their size, so their text stays readable: a screen narrower than the wide drawing shows the narrow one. */
.chart { overflow-x: auto; }
.chart svg { display: block; }
.narrow { display: none; }
@media (max-width: 720px) { .wide { display: none; } .narrow { display: block; } }
</style>
</head>
<body>
<h1>Groundwork dataset report</h1>
<table>
<tr><th>created</th><td>{{or .Data.Header.CreatedAt "-"}}</td></tr>
<tr><th>pipeline</th><td>curate {{or .Data.Header.PipelineVersion "-"}}</td></tr>
<tr><th>classify model</th><td>{{or .Data.Header.Models.Classify "-"}} (prompt {{or .Data.Header.PromptVersions.Classify "-"}})</td></tr>
<tr><th>summarize model</th><td>{{or .Data.Header.Models.Summarize "-"}} (prompt {{or .Data.Header.PromptVersions.Summarize "-"}})</td></tr>
<tr><th>model input</th><td>template {{or .Data.Header.PromptVersions.Dataset "-"}}</td></tr>
<tr><th>train</th><td>{{.Data.Counts.Train}} instances</td></tr>
<tr><th>test</th><td>{{.Data.Counts.Test}} instances</td></tr>
{{range .Data.Dropped}}<tr><th>targets dropped: {{.Label}}</th><td>{{.N}}</td></tr>
{{end}}{{with .Data.Contamination}}<tr><th>contamination policy</th><td>{{.Policy}}: {{len .Violations}} violations; dropped train {{.Dropped.Train}}, test {{.Dropped.Test}}</td></tr>
{{end}}</table>
{{range .Data.Warnings}}<p class="warn">{{.}}</p>
{{end}}{{range .Sections}}<section>
<h2>{{.Title}}</h2>
<div class="chart">{{.Chart}}</div>
<p class="caption">{{.Caption}}</p>
</section>
{{end}}<p class="caption">The same numbers are in report.json.</p>
</body>
</html>
`

func reportHTML(d *ReportData) ([]byte, error) {
	splits := []string{record.SplitTrain, record.SplitTest}
	colors := []string{colorTrain, colorTest}
	binBars := func(bins []ReportBin, pct bool) []chartBar {
		var out []chartBar
		for _, b := range bins {
			l := strconv.Itoa(b.Lo)
			if b.Hi != b.Lo {
				l += "–" + strconv.Itoa(b.Hi)
			}
			if pct {
				l += "%"
			}
			out = append(out, chartBar{label: l, values: []float64{float64(b.Train), float64(b.Test)}})
		}
		return out
	}
	yearBars := func(ys []ReportYear) []chartBar {
		var out []chartBar
		for _, y := range ys {
			out = append(out, chartBar{label: strconv.Itoa(y.Year), values: []float64{float64(y.Train), float64(y.Test)}})
		}
		return out
	}
	countBars := func(cs []ReportCount, flag string, rate float64) []chartBar {
		var out []chartBar
		for _, c := range cs {
			out = append(out, chartBar{label: c.Label, values: []float64{float64(c.N)}, flag: c.Label == flag && c.Share > collapseRatio*rate})
		}
		return out
	}
	total := func(cs []ReportCount) []float64 {
		t := 0
		for _, c := range cs {
			t += c.N
		}
		return []float64{float64(t)}
	}
	var domains []chartBar
	var dTotals [2]float64
	for _, c := range d.Domains {
		domains = append(domains, chartBar{label: c.Label, values: []float64{float64(c.Train), float64(c.Test)}})
		dTotals[0], dTotals[1] = dTotals[0]+float64(c.Train), dTotals[1]+float64(c.Test)
	}
	// Each chart is drawn twice, wide and narrow; the page shows the one
	// that fits the screen, so no text is ever scaled down.
	both := func(draw func(width int) string) template.HTML {
		return template.HTML(`<div class="wide">` + draw(chartWidth) + `</div><div class="narrow">` + draw(narrowWidth) + `</div>`)
	}
	col := func(title, x, y string, bars []chartBar) template.HTML {
		return both(func(w int) string {
			return columnChart(chart{title: title, xTitle: x, yTitle: y, series: splits, colors: colors, bars: bars, width: w})
		})
	}
	bar := func(c chart, totals []float64) template.HTML {
		return both(func(w int) string {
			c.width = w
			return barChart(c, totals)
		})
	}
	one := []string{colorTrain}
	ss, ts, rs := d.SourcesPerTargetStats, d.InputTokStats, d.ReferencesPerTargetStats
	sections := []reportSection{
		{"Sources kept per target (input documents per instance)", col("Sources per target", "sources kept (documents in the input)", "instances", binBars(d.SourcesPerTarget, false)),
			fmt.Sprintf("Instances by number of sources. Min %d, median %d, mean %.1f, max %d. Targets with fewer than %d were dropped.", ss.Min, ss.Median, ss.Mean, ss.Max, MinSources)},
		{"References per target", col("References per target", "references (bibliography entries and Semantic Scholar edges)", "targets", binBars(d.ReferencesPerTarget, false)),
			fmt.Sprintf("Targets by the number of references the classifier chose the sources from. Min %d, median %d, mean %.1f, max %d.", rs.Min, rs.Median, rs.Mean, rs.Max)},
		{"Share of references kept as sources", col("Share of references kept as sources", "references kept as sources (% of the target's references, bins of 10)", "targets", binBars(d.ReferencesKept, true)),
			"Targets by the percentage of their references kept as sources."},
		{"Source labels", bar(chart{title: "Source labels", xTitle: "sources with the label (a source may carry several labels)", colors: one, bars: countBars(d.SourceLabels, "", 0)}, total(d.SourceLabels)),
			"Why the classifier kept each source."},
		{"Source text level", bar(chart{title: "Source cards written from", xTitle: "sources", colors: one, bars: countBars(d.TextLevels, "", 0)}, total(d.TextLevels)),
			"full_text: the source's arXiv page; abstract: its Semantic Scholar abstract only."},
		{"Input tokens per instance", col("Input tokens per instance (estimated)", "prompt tokens", "instances", binBars(d.InputTokens, false)),
			fmt.Sprintf("Prompt length, %s. Min %d, median %d, mean %.0f, max %d.", d.TokenEstimate, ts.Min, ts.Median, ts.Mean, ts.Max)},
		{"Publication year of targets", col("Targets by arXiv v1 year", "year of the target's arXiv v1", "targets", yearBars(d.Years)),
			"The split follows the arXiv v1 date."},
		{"Publication year of sources", col("Sources by year", "year of the source (Semantic Scholar)", "sources (per instance)", yearBars(d.SourceYears)),
			"The sources of each split's instances; a source shared by several instances counts once for each. Sources without a year are left out."},
		{"Domains by split", bar(chart{title: "Target domains", xTitle: "targets (share of the split)", series: splits, colors: colors, bars: domains}, dTotals[:]),
			"Domain from the target's primary arXiv category. Sources carry no category in the dataset's rows, so their domains are not shown."},
		{"Opportunity labels of gold cards", bar(chart{title: "Gold opportunity", xTitle: "gold cards", colors: one, bars: countBars(d.Opportunity, record.Bridge, bridgeRate)}, total(d.Opportunity)),
			fmt.Sprintf("In human papers Bridge Opportunity is about %.0f%%; red means over %d times that.", 100*bridgeRate, collapseRatio)},
		{"Paradigm labels of gold cards", bar(chart{title: "Gold paradigm", xTitle: "gold cards", colors: one, bars: countBars(d.Paradigm, record.Synthesis, synthesisRate)}, total(d.Paradigm)),
			fmt.Sprintf("In human papers Synthesis / Unification is about %.0f%%; red means over %d times that.", 100*synthesisRate, collapseRatio)},
	}
	page, err := template.New("report").Parse(reportPage)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if err := page.Execute(&b, struct {
		Data     *ReportData
		Sections []reportSection
	}{d, sections}); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// writeFileAtomic replaces path with data through a synced temporary file.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
