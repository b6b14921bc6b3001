package experiment

import (
	"fmt"
	"slices"

	"gonum.org/v1/plot"

	"github.com/caffeine-go/caffeine/freshness/figure"
)

// Plot writes the experiment's figures to path (format by extension):
// median and p90 crawl→searchable latency against the crawl rate for each
// mode (when there are several rates), the latency distribution and the
// mean age over the window of each mode (of the last rate).
func Plot(path string, rs []*Result) error {
	byMode := map[string][]*Result{}
	var modes []string
	for _, r := range rs {
		if byMode[r.Mode] == nil {
			modes = append(modes, r.Mode)
		}
		byMode[r.Mode] = append(byMode[r.Mode], r)
	}
	var plots []*plot.Plot
	if len(byMode[modes[0]]) > 1 {
		var ls []figure.Line
		for _, m := range modes {
			p50 := figure.Line{Name: m + " p50"}
			p90 := figure.Line{Name: m + " p90"}
			ms := slices.Clone(byMode[m])
			slices.SortFunc(ms, func(a, b *Result) int { return int(a.CrawlRate - b.CrawlRate) })
			for _, r := range ms {
				pct := 100 * r.FetchRate * 60 / float64(r.Pages)
				p50.X, p50.Y = append(p50.X, pct), append(p50.Y, r.Latency.P50)
				p90.X, p90.Y = append(p90.X, pct), append(p90.Y, r.Latency.P90)
			}
			ls = append(ls, p50, p90)
		}
		p, err := figure.Lines("Crawl→searchable latency vs crawl rate", "crawl rate, % of repository per minute", "seconds", false, true, ls...)
		if err != nil {
			return err
		}
		plots = append(plots, p)
	}
	var cdfs, ages []figure.Line
	for _, m := range modes {
		r := byMode[m][len(byMode[m])-1]
		cdfs = append(cdfs, figure.CDF(fmt.Sprintf("%s (p50 %.3g s)", m, r.Latency.P50), r.Latencies))
		age := figure.Line{Name: fmt.Sprintf("%s (mean %.3g s)", m, r.Average.MeanAge.Seconds())}
		for _, s := range r.Series {
			age.X = append(age.X, s.Time.Sub(r.From).Seconds())
			age.Y = append(age.Y, s.MeanAge.Seconds())
		}
		ages = append(ages, age)
	}
	p, err := figure.Lines("Crawl→searchable latency", "seconds (log scale)", "share of updates", true, false, cdfs...)
	if err != nil {
		return err
	}
	plots = append(plots, p)
	p, err = figure.Lines("Mean age of indexed documents", "seconds into the window", "age, seconds", false, false, ages...)
	if err != nil {
		return err
	}
	plots = append(plots, p)
	return figure.Save(path, plots...)
}
