// Package figure draws the freshness measurements with gonum.org/v1/plot:
// line plots and distribution functions, saved as SVG, PNG, JPEG or PDF.
// It is apart from package freshness so that users of the metrics do not
// link a plotting library.
package figure

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // png, jpg
	_ "gonum.org/v1/plot/vg/vgpdf" // pdf
	_ "gonum.org/v1/plot/vg/vgsvg" // svg

	"github.com/caffeine-go/caffeine/freshness"
)

// Line is one named line of a plot.
type Line struct {
	Name string
	X, Y []float64
}

// palette is the line colours, in order.
var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
}

// Lines returns a plot of the series as lines (with points when
// points is set); logX puts the x axis on a log scale (non-positive x
// are dropped).
func Lines(title, xLabel, yLabel string, logX, points bool, series ...Line) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	for i, s := range series {
		var xys plotter.XYs
		for j := range s.X {
			if logX && s.X[j] <= 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: s.X[j], Y: s.Y[j]})
		}
		if len(xys) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		c := palette[i%len(palette)]
		l.Color = c
		l.Width = vg.Points(1.5)
		p.Add(l)
		if points {
			sc.Color = c
			sc.Shape = draw.CircleGlyph{}
			sc.Radius = vg.Points(2.5)
			p.Add(sc)
			p.Legend.Add(s.Name, l, sc)
		} else {
			p.Legend.Add(s.Name, l)
		}
	}
	return p, nil
}

// CDF returns the empirical distribution function of vs as a Line: x
// the sorted values, y the share of values ≤ x.
func CDF(name string, vs []float64) Line {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	s := Line{Name: name}
	for i, v := range vs {
		s.X = append(s.X, v)
		s.Y = append(s.Y, float64(i+1)/float64(len(vs)))
	}
	return s
}

// Save writes the plots stacked vertically into one file; its
// extension picks the format: .svg, .png, .jpg, .pdf.
func Save(path string, plots ...*plot.Plot) error {
	if len(plots) == 0 {
		return fmt.Errorf("figure: no plot to save")
	}
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	w, h := 16*vg.Centimeter, vg.Length(len(plots))*10*vg.Centimeter
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return fmt.Errorf("figure: %s: %w (want .svg, .png, .jpg or .pdf)", path, err)
	}
	rows := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		rows[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadX: vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 2 * vg.Millimeter}
	canvases := plot.Align(rows, tiles, draw.New(c))
	for i, p := range plots {
		p.Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Probe writes the figures of a probe's report to path (format by
// extension): the distribution of fetch→stage latencies, and of the
// sampled documents' ages with their upper bounds.
func Probe(path string, r *freshness.Report) error {
	lat := make(map[string][]float64)
	var res, age, upper []float64
	for _, d := range r.Docs {
		if f := d.Stages.Fetched; !f.IsZero() {
			for _, s := range freshness.Stages {
				if t := d.Stages.At(s); !t.IsZero() {
					lat[s] = append(lat[s], max(t.Sub(f).Seconds(), 0))
				}
			}
		}
		if !d.IndexedAt.IsZero() && !d.FetchedAt.IsZero() {
			res = append(res, max(d.IndexedAt.Sub(d.FetchedAt).Seconds(), 0))
		}
		if d.Skipped == "" {
			age = append(age, d.Age)
			upper = append(upper, max(d.AgeUpper, d.Age))
		}
	}
	var ls []Line
	for _, s := range freshness.Stages {
		if len(lat[s]) > 0 {
			ls = append(ls, CDF("fetched→"+s, lat[s]))
		}
	}
	if len(res) > 0 {
		ls = append(ls, CDF("indexed_at − fetched_at", res))
	}
	p1, err := Lines("Crawl→searchable latency of sampled documents", "seconds", "share of documents", false, false, ls...)
	if err != nil {
		return err
	}
	p2, err := Lines(fmt.Sprintf("Age of sampled documents (freshness %.2f)", r.Freshness), "age, seconds", "share of documents", false, false,
		CDF("age ("+r.AgeEstimator+")", age), CDF("upper bound", upper))
	if err != nil {
		return err
	}
	return Save(path, p1, p2)
}
