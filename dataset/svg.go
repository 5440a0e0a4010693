package dataset

import (
	"fmt"
	"html"
	"math"
	"strings"
	"unicode/utf8"
)

// Hand-written SVG charts: a few bar charts do not need a plotting
// library, and plain SVG opens in every browser with no script.

const (
	colorTrain = "#4c78a8"
	colorTest  = "#f58518"
	colorFlag  = "#e45756"
	svgFont    = `font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"`
	// chartWidth and narrowWidth are the widths charts are drawn at: the
	// report shows the narrow drawing on small screens, so that no text is
	// scaled down.
	chartWidth  = 680
	narrowWidth = 360
	// charW is the width of one character of the 12px axis text, on the
	// wide side (digits and capitals of the sans-serif fonts measure 6.5
	// to 7.5px), so that text measured with it never overlaps.
	charW = 7.5
	// rotatedGap is the least distance between two labels rotated by 45°
	// (about the text height divided by sin 45°).
	rotatedGap = 18
)

// chartBar is one bar (or group of bars, one per series) of a chart.
type chartBar struct {
	label  string
	values []float64
	flag   bool // drawn in colorFlag
}

// chart is what a chart shows: its bars and what its axes count.
type chart struct {
	title  string
	xTitle string // what the categories or bins are
	yTitle string // what the bars count
	series []string
	colors []string
	bars   []chartBar
	width  int // 0: chartWidth
}

func (c chart) w() int {
	if c.width > 0 {
		return c.width
	}
	return chartWidth
}

// niceStep returns a round axis step (1, 2 or 5 times a power of ten)
// that splits max into at most n intervals.
func niceStep(max float64, n int) float64 {
	if max <= 0 {
		return 1
	}
	raw := max / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// countStep is niceStep for an axis of counts: a whole number, so that no
// tick reads 0.5 of a paper.
func countStep(max float64, n int) float64 { return math.Max(1, math.Round(niceStep(max, n))) }

func fmtNum(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

func textWidth(s string) float64 { return float64(utf8.RuneCountInString(s)) * charW }

// wrap breaks s into lines of at most width pixels of axis text.
func wrap(s string, width float64) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && textWidth(line+" "+w) > width {
			lines, line = append(lines, line), w
			continue
		}
		line = strings.TrimSpace(line + " " + w)
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// header draws a chart's title and, with several series, its legend:
// beside the title when both fit the width, else under it. It returns
// the height the two take.
func header(b *strings.Builder, title string, series, colors []string, w int) int {
	fmt.Fprintf(b, `<text x="8" y="20" font-size="15" font-weight="600">%s</text>`, html.EscapeString(title))
	if len(series) < 2 {
		return 30
	}
	legendW := 0.0
	for _, s := range series {
		legendW += textWidth(s) + 28
	}
	// 15px bold is about 1.25 times as wide as the 12px axis text.
	if 8+1.25*textWidth(title)+16+legendW <= float64(w) {
		legend(b, series, colors, w-8, 9)
		return 30
	}
	legend(b, series, colors, w-8, 30)
	return 50
}

// legend draws the series' swatches, the last ending at x, their top at y.
func legend(b *strings.Builder, series, colors []string, x, y int) {
	if len(series) < 2 {
		return
	}
	for s := len(series) - 1; s >= 0; s-- {
		x -= int(textWidth(series[s])) + 28
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`, x, y, colors[s%len(colors)], x+16, y+10, html.EscapeString(series[s]))
	}
}

// labelLayout decides how the x labels of slots of width slot are drawn:
// level when the longest fits its slot, else rotated by 45°, showing
// every step-th label so that rotated labels stay rotatedGap apart. It
// returns the height the labels take.
func labelLayout(bars []chartBar, slot float64) (rotate bool, step int, height float64) {
	longest := 0.0
	for _, b := range bars {
		longest = math.Max(longest, textWidth(b.label))
	}
	if longest+6 <= slot {
		return false, 1, 22
	}
	step = max(1, int(math.Ceil(rotatedGap/slot)))
	return true, step, longest*math.Sqrt2/2 + 14
}

// columnChart draws vertical bars, grouped by series, with a count axis
// of whole numbers, axis titles and x labels that never overlap.
func columnChart(c chart) string {
	const (
		left, right       = 62, 12
		plotH             = 220
		valueFont, tickDy = 10, 4
	)
	w := c.w()
	plotW := float64(w - left - right)
	slot := plotW / float64(max(1, len(c.bars)))
	rotate, step, labelH := labelLayout(c.bars, slot)
	xTitle := wrap(c.xTitle, plotW)
	var hb strings.Builder
	top := header(&hb, c.title, c.series, c.colors, w) + 14
	h := top + plotH + int(math.Ceil(labelH)) + 16*len(xTitle) + 20
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s" %s font-size="12">`, w, h, w, h, html.EscapeString(c.title), svgFont)
	b.WriteString(hb.String())
	maxV := 0.0
	for _, bar := range c.bars {
		for _, v := range bar.values {
			maxV = math.Max(maxV, v)
		}
	}
	stepV := countStep(maxV, 5)
	topV := math.Max(stepV, math.Ceil(maxV/stepV)*stepV)
	y := func(v float64) float64 { return float64(top) + plotH*(1-v/topV) }
	for v := 0.0; v <= topV+stepV/2; v += stepV {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, left, w-right, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dy="%d" fill="#555">%s</text>`, left-6, y(v), tickDy, fmtNum(v))
	}
	// The y title, rotated, centred on the plot.
	cy := float64(top) + plotH/2
	fmt.Fprintf(&b, `<text x="16" y="%.1f" text-anchor="middle" transform="rotate(-90 16 %.1f)" fill="#333">%s</text>`, cy, cy, html.EscapeString(c.yTitle))
	if len(c.bars) == 0 {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#888">no data</text>`, float64(left)+plotW/2, float64(top)+plotH/2)
	}
	ns := max(1, len(c.series))
	bw := math.Min(48, slot*0.8/float64(ns))
	// Counts are printed over the bars only when every one fits its bar:
	// a few numbers here and there would read as the only ones.
	showValues := true
	for _, bar := range c.bars {
		for _, v := range bar.values {
			if v > 0 && float64(len(fmtNum(v)))*valueFont*0.62 > bw+2 {
				showValues = false
			}
		}
	}
	for i, bar := range c.bars {
		x0 := float64(left) + slot*float64(i) + (slot-bw*float64(ns))/2
		for s, v := range bar.values {
			color := c.colors[s%len(c.colors)]
			if bar.flag {
				color = colorFlag
			}
			x := x0 + bw*float64(s)
			name := bar.label
			if len(c.series) > 1 {
				name = c.series[s] + " " + bar.label
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`,
				x, y(v), bw, math.Max(0, float64(top)+plotH-y(v)), color, html.EscapeString(name), fmtNum(v))
			if v > 0 && showValues {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="%d" fill="#333">%s</text>`, x+bw/2, y(v)-3, valueFont, fmtNum(v))
			}
		}
		if i%step != 0 {
			continue
		}
		cx := float64(left) + slot*(float64(i)+0.5)
		if rotate {
			ly := float64(top) + plotH + 10
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end" transform="rotate(-45 %.1f %.1f)" fill="#333">%s</text>`, cx, ly, cx, ly, html.EscapeString(bar.label))
		} else {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#333">%s</text>`, cx, float64(top)+plotH+16, html.EscapeString(bar.label))
		}
	}
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#333"/>`, left, w-right, float64(top)+plotH, float64(top)+plotH)
	ty := float64(top) + plotH + math.Ceil(labelH) + 14
	for i, line := range xTitle {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#333">%s</text>`, float64(left)+plotW/2, ty+16*float64(i), html.EscapeString(line))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// barChart draws horizontal bars with their labels on the left (above
// the bars in a narrow drawing, where the left would leave no room), for
// categories with long names, one bar per series in each row; after each
// bar its count and, with totals (one per series), its share of the
// series' total. c.xTitle says what the bars count.
func barChart(c chart, totals []float64) string {
	const (
		right     = 100
		barH, gap = 14, 10
	)
	w := c.w()
	var hb strings.Builder
	top := header(&hb, c.title, c.series, c.colors, w) + 18
	longest := 0.0
	for _, bar := range c.bars {
		longest = math.Max(longest, textWidth(bar.label))
	}
	left := int(math.Max(120, longest+16))
	above := left > w*2/5 // labels go above their bars
	labelH := 0
	if above {
		left, labelH = 8, 16
	}
	ns := max(1, len(c.series))
	rowH := labelH + barH*ns + gap
	xTitle := wrap(c.xTitle, float64(w-left-8))
	h := top + rowH*max(1, len(c.bars)) + 16*len(xTitle) + 14
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s" %s font-size="12">`, w, h, w, h, html.EscapeString(c.title), svgFont)
	b.WriteString(hb.String())
	maxV := 0.0
	for _, bar := range c.bars {
		for _, v := range bar.values {
			maxV = math.Max(maxV, v)
		}
	}
	if len(c.bars) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#888">no data</text>`, left, top+16)
	}
	plotW := float64(w - left - right)
	for i, bar := range c.bars {
		y0 := top + rowH*i
		if above {
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#333">%s</text>`, left, y0+12, html.EscapeString(bar.label))
		} else {
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" fill="#333">%s</text>`, left-8, float64(y0)+float64(barH*ns)/2+4, html.EscapeString(bar.label))
		}
		for s, v := range bar.values {
			y := y0 + labelH + barH*s
			bw := 0.0
			if maxV > 0 {
				bw = plotW * v / maxV
			}
			color := c.colors[s%len(c.colors)]
			if bar.flag {
				color = colorFlag
			}
			text := fmtNum(v)
			if s < len(totals) && totals[s] > 0 {
				text += fmt.Sprintf(" (%.0f%%)", 100*v/totals[s])
			}
			name := bar.label
			if len(c.series) > 1 {
				name = c.series[s] + " " + bar.label
			}
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s</title></rect>`, left, y+1, bw, barH-2, color, html.EscapeString(name), text)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" fill="#333">%s</text>`, float64(left)+bw+6, y+barH-3, text)
		}
	}
	end := top + rowH*max(1, len(c.bars))
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>`, left, left, top-4, end-gap+4)
	for i, line := range xTitle {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#333">%s</text>`, left, end+12+16*i, html.EscapeString(line))
	}
	b.WriteString(`</svg>`)
	return b.String()
}
