package web

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Charts are drawn on the server as inline SVG: no script, no external
// asset, and they print. Geometry is in viewBox units; CSS scales them.
const (
	chartW, chartH = 640.0, 220.0
	plotLeft       = 64.0
	plotRight      = chartW - 16
	plotTop        = 12.0
	plotBottom     = chartH - 28
	maxChartPoints = 320 // longer histories are thinned to this many samples
	yTickCount     = 4
	xTickCount     = 4
)

// chart is one line chart, ready for the template.
type chart struct {
	Title  string
	W, H   float64
	Left   float64
	Right  float64
	Top    float64
	Bottom float64
	Series []chartSeries
	YTicks []chartTick
	XTicks []chartTick
	Empty  bool // fewer than two samples: the template says so instead
}

// chartSeries is one line.
type chartSeries struct {
	Name   string
	Class  string // s0, s1, s2: the stylesheet's colours
	Color  string // the same colour as an attribute, for when CSS is off
	Points string // SVG polyline points
	Last   string // the latest value, formatted
}

// chartTick is an axis tick: a grid line at Pos with its label.
type chartTick struct {
	Pos    float64
	Label  string
	Anchor string // text-anchor of an x label: the end ones stay inside
}

// seriesDef picks one value out of each sample.
type seriesDef struct {
	Name  string
	Value func(Sample) float64
}

var seriesColors = []string{"#2563eb", "#dc2626", "#059669"}

// newChart draws the series over samples (oldest first). format labels the
// y axis and the latest values; now labels the time axis ("5 minutes ago").
func newChart(title string, samples []Sample, now time.Time, format func(float64) string, defs ...seriesDef) chart {
	c := chart{Title: title, W: chartW, H: chartH, Left: plotLeft, Right: plotRight, Top: plotTop, Bottom: plotBottom}
	samples = thin(samples, maxChartPoints)
	if len(samples) < 2 || !samples[len(samples)-1].Time.After(samples[0].Time) {
		c.Empty = true
		for i, d := range defs {
			c.Series = append(c.Series, chartSeries{Name: d.Name, Class: "s" + strconv.Itoa(i), Color: seriesColors[i%len(seriesColors)]})
		}
		return c
	}
	t0, t1 := samples[0].Time, samples[len(samples)-1].Time
	xOf := func(t time.Time) float64 {
		return plotLeft + float64(t.Sub(t0))/float64(t1.Sub(t0))*(plotRight-plotLeft)
	}

	top := 0.0
	for _, d := range defs {
		for _, sm := range samples {
			top = max(top, finite(d.Value(sm)))
		}
	}
	step := niceStep(top / yTickCount)
	top = max(math.Ceil(top/step), 1) * step
	yOf := func(v float64) float64 {
		v = min(max(finite(v), 0), top)
		return plotBottom - v/top*(plotBottom-plotTop)
	}
	for v := 0.0; v <= top+step/2; v += step {
		c.YTicks = append(c.YTicks, chartTick{Pos: round1(yOf(v)), Label: format(v)})
	}
	for i := range xTickCount {
		t := t0.Add(time.Duration(float64(t1.Sub(t0)) * float64(i) / (xTickCount - 1)))
		label := ago(now, t)
		if label == "just now" {
			// A short series (a small site's crawl) puts several ticks
			// within ten seconds: each says how long ago, as seconds.
			label = "now"
			if d := now.Sub(t).Round(time.Second); d >= time.Second {
				label = span(d) + " ago"
			}
		}
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case xTickCount - 1:
			anchor = "end"
		}
		c.XTicks = append(c.XTicks, chartTick{Pos: round1(xOf(t)), Label: label, Anchor: anchor})
	}

	for i, d := range defs {
		var pts strings.Builder
		for j, sm := range samples {
			if j > 0 {
				pts.WriteByte(' ')
			}
			pts.WriteString(strconv.FormatFloat(round1(xOf(sm.Time)), 'f', -1, 64))
			pts.WriteByte(',')
			pts.WriteString(strconv.FormatFloat(round1(yOf(d.Value(sm))), 'f', -1, 64))
		}
		c.Series = append(c.Series, chartSeries{
			Name:   d.Name,
			Class:  "s" + strconv.Itoa(i),
			Color:  seriesColors[i%len(seriesColors)],
			Points: pts.String(),
			Last:   format(finite(d.Value(samples[len(samples)-1]))),
		})
	}
	return c
}

// thin keeps at most n samples, evenly spaced, always the first and last.
func thin(s []Sample, n int) []Sample {
	if len(s) <= n {
		return s
	}
	out := make([]Sample, 0, n)
	for i := range n {
		out = append(out, s[i*(len(s)-1)/(n-1)])
	}
	return out
}

// niceStep rounds x up to 1, 2, 2.5 or 5 times a power of ten; at least a
// small positive step, so an all-zero series still has an axis.
func niceStep(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 1.0 / yTickCount
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if x <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// finite maps NaN and ±Inf to 0, so one bad sample cannot break a chart.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }
