package web

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNiceStep(t *testing.T) {
	cases := map[float64]float64{0: 0.25, -1: 0.25, math.NaN(): 0.25, 1: 1, 1.2: 2, 2.2: 2.5, 3: 5, 7: 10, 0.3: 0.5, 1200: 2000, 2500: 2500}
	for in, want := range cases {
		if got := niceStep(in); math.Abs(got-want) > 1e-9 {
			t.Errorf("niceStep(%v) = %v, want %v", in, got, want)
		}
	}
}

func TestChartGeometry(t *testing.T) {
	var samples []Sample
	for i := range 1000 {
		v := float64(i % 17)
		if i == 500 {
			v = math.NaN() // a bad sample must not break the chart
		}
		samples = append(samples, Sample{Time: testNow.Add(time.Duration(i-999) * time.Second), Fetched: v, Exported: -v})
	}
	c := newChart("t", samples, testNow, number,
		seriesDef{"a", func(s Sample) float64 { return s.Fetched }},
		seriesDef{"b", func(s Sample) float64 { return s.Exported }})
	if c.Empty || len(c.Series) != 2 {
		t.Fatalf("chart %+v", c)
	}
	for _, s := range c.Series {
		pts := strings.Fields(s.Points)
		if len(pts) != maxChartPoints {
			t.Errorf("%s: %d points, want %d", s.Name, len(pts), maxChartPoints)
		}
		lastX := -1.0
		for _, p := range pts {
			xs, ys, ok := strings.Cut(p, ",")
			x, err1 := strconv.ParseFloat(xs, 64)
			y, err2 := strconv.ParseFloat(ys, 64)
			if !ok || err1 != nil || err2 != nil {
				t.Fatalf("%s: point %q", s.Name, p)
			}
			if x < plotLeft || x > plotRight || y < plotTop || y > plotBottom || x < lastX {
				t.Fatalf("%s: point %v,%v outside the plot or out of order", s.Name, x, y)
			}
			lastX = x
		}
	}
	if got := c.YTicks[len(c.YTicks)-1].Label; got != "20" {
		t.Errorf("top tick %q, want 20", got)
	}
	if c.XTicks[0].Label != "16 minutes ago" || c.XTicks[len(c.XTicks)-1].Label != "now" {
		t.Errorf("x ticks %+v", c.XTicks)
	}

	// A short series: ticks within ten seconds say how long ago.
	short := []Sample{{Time: testNow.Add(-9 * time.Second), Pages: 1}, {Time: testNow, Pages: 2}}
	c = newChart("t", short, testNow, number, seriesDef{"p", func(s Sample) float64 { return float64(s.Pages) }})
	var labels []string
	for _, tk := range c.XTicks {
		labels = append(labels, tk.Label)
	}
	if labels[0] != "9 seconds ago" || labels[len(labels)-1] != "now" || slices.Contains(labels[:len(labels)-1], "now") {
		t.Errorf("short series' x ticks %q: want seconds ago, then now once", labels)
	}

	for _, n := range []int{0, 1} {
		if c := newChart("t", samples[:n], testNow, number, seriesDef{"a", func(s Sample) float64 { return 1 }}); !c.Empty {
			t.Errorf("%d samples: not empty", n)
		}
	}
	same := []Sample{{Time: testNow}, {Time: testNow}}
	if c := newChart("t", same, testNow, number, seriesDef{"a", func(s Sample) float64 { return 1 }}); !c.Empty {
		t.Error("samples at one instant: not empty")
	}
	zero := []Sample{{Time: testNow.Add(-time.Minute)}, {Time: testNow}}
	if c := newChart("t", zero, testNow, number, seriesDef{"a", func(s Sample) float64 { return 0 }}); c.Empty || len(c.YTicks) < 2 {
		t.Errorf("all zero: %+v", c)
	}
}
