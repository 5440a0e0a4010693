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

	"github.com/groundwork/curate/record"
)

// Report files.
const (
	ReportHTML = "report.html"
	ReportJSON = "report.json"
)

// charsPerToken estimates tokens from characters: about four characters
// of English per token for the common BPE tokenizers. No tokenizer is
// run, so the token counts are estimates.
const charsPerToken = 4

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

// ReportYear counts targets published in one year, per split.
type ReportYear struct {
	Year  int `json:"year"`
	Train int `json:"train"`
	Test  int `json:"test"`
}

// ReportData holds every number of the report (report.json); report.html
// plots the same numbers.
type ReportData struct {
	Counts  SplitCounts   `json:"counts"`
	Dropped []ReportCount `json:"dropped"` // targets left out, by reason
	// SourcesPerTarget is the number of sources kept per target, which is
	// also the number of input documents per instance.
	SourcesPerTarget      []ReportBin `json:"sources_per_target"`
	SourcesPerTargetStats ReportStats `json:"sources_per_target_stats"`
	// ReferencesKept bins the percentage of a target's references kept as
	// sources, in steps of 10.
	ReferencesKept []ReportBin    `json:"references_kept_percent"`
	SourceLabels   []ReportCount  `json:"source_labels"`
	TextLevels     []ReportCount  `json:"source_text_levels"`
	InputTokens    []ReportBin    `json:"input_tokens"`
	InputTokStats  ReportStats    `json:"input_tokens_stats"`
	TokenEstimate  string         `json:"token_estimate"`
	Years          []ReportYear   `json:"target_years"`
	TestDomains    []ReportCount  `json:"test_domains"`
	Opportunity    []ReportCount  `json:"gold_opportunity"`
	Paradigm       []ReportCount  `json:"gold_paradigm"`
	Warnings       []string       `json:"warnings"`
	Contamination  *Contamination `json:"contamination,omitempty"`
}

// Report computes the report of a dataset and writes report.html (inline
// SVG plots, no script or external file) and report.json into outDir,
// creating it if needed. contamination may be nil.
func Report(instances []record.Instance, dropped []Dropped, contamination *Contamination, outDir string) (*ReportData, error) {
	d := reportData(instances, dropped, contamination)
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
	d := &ReportData{
		Counts:        countSplits(ins),
		TokenEstimate: fmt.Sprintf("tokens ~ characters / %d (no tokenizer is run)", charsPerToken),
		Contamination: c,
		Warnings:      []string{},
	}
	reasons := map[string]int{}
	for _, x := range dropped {
		reasons[x.Reason]++
	}
	d.Dropped = counts(reasons, nil, len(dropped))

	var nSources, tokens []int
	var nSplit, tSplit []string
	labels, levels := map[string]int{}, map[string]int{}
	nLabels, nLevels := 0, 0
	keptShare := map[int][2]int{}
	years := map[int][2]int{}
	domains, opp, par := map[string]int{}, map[string]int{}, map[string]int{}
	nTest := 0
	for _, in := range ins {
		si := 0
		if in.Split == record.SplitTest {
			si = 1
		}
		nSources, nSplit = append(nSources, len(in.Sources)), append(nSplit, in.Split)
		tokens, tSplit = append(tokens, (len(in.Prompt)+charsPerToken-1)/charsPerToken), append(tSplit, in.Split)
		for _, s := range in.Sources {
			for _, l := range s.Labels {
				labels[l]++
				nLabels++
			}
			levels[s.TextLevel]++
			nLevels++
		}
		if in.Target.NumReferences > 0 {
			p := min(100, 100*len(in.Sources)/in.Target.NumReferences) / 10 * 10
			v := keptShare[p]
			v[si]++
			keptShare[p] = v
		}
		if y, err := strconv.Atoi(strings.SplitN(in.Target.Published, "-", 2)[0]); err == nil {
			v := years[y]
			v[si]++
			years[y] = v
		}
		if si == 1 {
			domains[in.Target.Domain]++
			nTest++
		}
		opp[cmp.Or(in.Gold.Opportunity, "(none)")]++
		par[cmp.Or(in.Gold.Paradigm, "(none)")]++
	}
	d.SourcesPerTarget = intBins(nSources, nSplit, 1)
	d.SourcesPerTargetStats = stats(nSources)
	d.InputTokens = intBins(tokens, tSplit, 0)
	d.InputTokStats = stats(tokens)
	for _, p := range slices.Sorted(maps.Keys(keptShare)) {
		d.ReferencesKept = append(d.ReferencesKept, ReportBin{Lo: p, Hi: min(100, p+9), Train: keptShare[p][0], Test: keptShare[p][1]})
	}
	for _, y := range slices.Sorted(maps.Keys(years)) {
		d.Years = append(d.Years, ReportYear{Year: y, Train: years[y][0], Test: years[y][1]})
	}
	d.SourceLabels = counts(labels, record.Labels(), nLabels)
	d.TextLevels = counts(levels, []string{record.TextFull, record.TextAbstract}, nLevels)
	d.TestDomains = counts(domains, nil, nTest)
	d.Opportunity = counts(opp, append(record.OpportunityLabels(), record.Other), len(ins))
	d.Paradigm = counts(par, append(record.ParadigmLabels(), record.Other), len(ins))
	for _, f := range []struct {
		dist  []ReportCount
		label string
		rate  float64
	}{{d.Opportunity, record.Bridge, bridgeRate}, {d.Paradigm, record.Synthesis, synthesisRate}} {
		for _, c := range f.dist {
			if c.Label == f.label && c.Share > collapseRatio*f.rate {
				d.Warnings = append(d.Warnings, fmt.Sprintf("%s is %.0f%% of gold cards (%d of %d), over %d times the ~%.0f%% of human papers: the labeler may be collapsing onto it",
					f.label, 100*c.Share, c.N, len(ins), collapseRatio, 100*f.rate))
			}
		}
	}
	return d
}

// counts turns a histogram into ReportCounts: the labels of order first,
// zero included, in that order; the rest by count.
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
<title>Groundwork dataset report</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2rem auto; max-width: 760px; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
.warn { background: #fdecea; border-left: 4px solid #e45756; padding: .5rem .8rem; }
p.caption { color: #555; font-size: .9rem; }
table { border-collapse: collapse; } td, th { padding: .2rem .8rem; border-bottom: 1px solid #ddd; text-align: left; }
</style>
</head>
<body>
<h1>Groundwork dataset report</h1>
<table>
<tr><th>train</th><td>{{.Data.Counts.Train}}</td></tr>
<tr><th>test</th><td>{{.Data.Counts.Test}}</td></tr>
{{range .Data.Dropped}}<tr><th>dropped: {{.Label}}</th><td>{{.N}}</td></tr>
{{end}}{{with .Data.Contamination}}<tr><th>contamination policy</th><td>{{.Policy}}: {{len .Violations}} violations; dropped train {{.Dropped.Train}}, test {{.Dropped.Test}}</td></tr>
{{end}}</table>
{{range .Data.Warnings}}<p class="warn">{{.}}</p>
{{end}}{{range .Sections}}<section>
<h2>{{.Title}}</h2>
{{.Chart}}
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
				l += "-" + strconv.Itoa(b.Hi)
			}
			if pct {
				l += "%"
			}
			out = append(out, chartBar{label: l, values: []float64{float64(b.Train), float64(b.Test)}})
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
	var years []chartBar
	for _, y := range d.Years {
		years = append(years, chartBar{label: strconv.Itoa(y.Year), values: []float64{float64(y.Train), float64(y.Test)}})
	}
	total := func(cs []ReportCount) float64 {
		t := 0
		for _, c := range cs {
			t += c.N
		}
		return float64(t)
	}
	ss, ts := d.SourcesPerTargetStats, d.InputTokStats
	sections := []reportSection{
		{"Sources kept per target (input documents per instance)", template.HTML(columnChart("Sources per target", splits, colors, binBars(d.SourcesPerTarget, false))),
			fmt.Sprintf("Instances by number of sources. Min %d, median %d, mean %.1f, max %d. Targets with fewer than %d were dropped.", ss.Min, ss.Median, ss.Mean, ss.Max, MinSources)},
		{"Share of references kept as sources", template.HTML(columnChart("References kept (%)", splits, colors, binBars(d.ReferencesKept, true))),
			"Sources as a percentage of the target's references, in bins of 10."},
		{"Source labels", template.HTML(barChart("Source labels", countBars(d.SourceLabels, "", 0), total(d.SourceLabels))),
			"A source may carry several labels."},
		{"Source text level", template.HTML(barChart("Source cards written from", countBars(d.TextLevels, "", 0), total(d.TextLevels))),
			"full_text: the source's arXiv page; abstract: its Semantic Scholar abstract only."},
		{"Input tokens per instance", template.HTML(columnChart("Input tokens (estimated)", splits, colors, binBars(d.InputTokens, false))),
			fmt.Sprintf("Prompt length, %s. Min %d, median %d, mean %.0f, max %d.", d.TokenEstimate, ts.Min, ts.Median, ts.Mean, ts.Max)},
		{"Publication year of targets", template.HTML(columnChart("Targets by arXiv v1 year", splits, colors, years)),
			"The split follows the arXiv v1 date."},
		{"Test split domains", template.HTML(barChart("Test domains", countBars(d.TestDomains, "", 0), total(d.TestDomains))),
			"Domain from the primary arXiv category."},
		{"Opportunity labels of gold cards", template.HTML(barChart("Gold opportunity", countBars(d.Opportunity, record.Bridge, bridgeRate), total(d.Opportunity))),
			fmt.Sprintf("In human papers Bridge Opportunity is about %.0f%%; red means over %d times that.", 100*bridgeRate, collapseRatio)},
		{"Paradigm labels of gold cards", template.HTML(barChart("Gold paradigm", countBars(d.Paradigm, record.Synthesis, synthesisRate), total(d.Paradigm))),
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
