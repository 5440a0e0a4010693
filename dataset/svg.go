package dataset

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Hand-written SVG charts: a few bar charts do not need a plotting
// library, and plain SVG opens in every browser with no script.

const (
	colorTrain = "#4c78a8"
	colorTest  = "#f58518"
	colorFlag  = "#e45756"
	svgFont    = `font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"`
)

// chartBar is one bar (or group of bars, one per series) of a chart.
type chartBar struct {
	label  string
	values []float64
	flag   bool // drawn in colorFlag
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

func fmtNum(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

// columnChart draws vertical bars, grouped by series, with a y axis.
func columnChart(title string, series, colors []string, bars []chartBar) string {
	const (
		w, h                 = 680, 300
		left, right, top, bt = 56, 16, 36, 64
	)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s" %s font-size="12">`, w, h, w, h, html.EscapeString(title), svgFont)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="15" font-weight="600">%s</text>`, left, html.EscapeString(title))
	maxV := 0.0
	for _, c := range bars {
		for _, v := range c.values {
			maxV = math.Max(maxV, v)
		}
	}
	step := niceStep(maxV, 5)
	top2 := math.Max(step, math.Ceil(maxV/step)*step)
	plotW, plotH := float64(w-left-right), float64(h-top-bt)
	y := func(v float64) float64 { return float64(top) + plotH*(1-v/top2) }
	for v := 0.0; v <= top2+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, left, w-right, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dy="4" fill="#555">%s</text>`, left-6, y(v), fmtNum(v))
	}
	if len(bars) == 0 {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#888">no data</text>`, float64(left)+plotW/2, float64(top)+plotH/2)
	}
	ns := max(1, len(series))
	slot := plotW / float64(max(1, len(bars)))
	bw := math.Min(48, slot*0.8/float64(ns))
	rotate := slot < 44
	for i, c := range bars {
		x0 := float64(left) + slot*float64(i) + (slot-bw*float64(ns))/2
		for s, v := range c.values {
			color := colors[s%len(colors)]
			if c.flag {
				color = colorFlag
			}
			x := x0 + bw*float64(s)
			name := c.label
			if len(series) > 1 {
				name = series[s] + " " + c.label
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`,
				x, y(v), bw, math.Max(0, float64(top)+plotH-y(v)), color, html.EscapeString(name), fmtNum(v))
			if v > 0 && bw >= 14 {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10" fill="#333">%s</text>`, x+bw/2, y(v)-3, fmtNum(v))
			}
		}
		cx := float64(left) + slot*(float64(i)+0.5)
		ly := float64(top) + plotH + 16
		if rotate {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end" transform="rotate(-45 %.1f %.1f)" fill="#333">%s</text>`, cx, ly, cx, ly, html.EscapeString(c.label))
		} else {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#333">%s</text>`, cx, ly, html.EscapeString(c.label))
		}
	}
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#333"/>`, left, w-right, float64(top)+plotH, float64(top)+plotH)
	if len(series) > 1 {
		for s, name := range series {
			x := w - right - 90*(len(series)-s)
			fmt.Fprintf(&b, `<rect x="%d" y="10" width="12" height="12" fill="%s"/><text x="%d" y="20">%s</text>`, x, colors[s%len(colors)], x+16, html.EscapeString(name))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// barChart draws horizontal bars with their labels on the left, for
// categories with long names; share, when set, is printed after the count.
func barChart(title string, bars []chartBar, total float64) string {
	const (
		w, rowH, left, right, top = 680, 24, 200, 110, 36
	)
	h := top + rowH*max(1, len(bars)) + 12
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s" %s font-size="12">`, w, h, w, h, html.EscapeString(title), svgFont)
	fmt.Fprintf(&b, `<text x="8" y="20" font-size="15" font-weight="600">%s</text>`, html.EscapeString(title))
	maxV := 0.0
	for _, c := range bars {
		maxV = math.Max(maxV, c.values[0])
	}
	if len(bars) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#888">no data</text>`, left, top+16)
	}
	plotW := float64(w - left - right)
	for i, c := range bars {
		v := c.values[0]
		y := top + rowH*i
		bw := 0.0
		if maxV > 0 {
			bw = plotW * v / maxV
		}
		color := colorTrain
		if c.flag {
			color = colorFlag
		}
		text := fmtNum(v)
		if total > 0 {
			text += fmt.Sprintf(" (%.0f%%)", 100*v/total)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#333">%s</text>`, left-8, y+15, html.EscapeString(c.label))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s</title></rect>`, left, y+3, bw, rowH-6, color, html.EscapeString(c.label), text)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#333">%s</text>`, float64(left)+bw+6, y+15, text)
	}
	b.WriteString(`</svg>`)
	return b.String()
}
