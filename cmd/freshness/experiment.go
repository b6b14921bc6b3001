package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/caffeine-go/caffeine/freshness/experiment"
)

// experimentFlags registers the experiment's flags (besides the fixture's
// and -duration, -data, -seed).
func experimentFlags(fs *flag.FlagSet) func() (experimentConfig, error) {
	var (
		rate    = fs.Float64("crawl-rate", 50, "with -experiment: crawl budget, pages fetched per second")
		rates   = fs.String("rates", "", "with -experiment: comma-separated crawl budgets to sweep (pages/s); overrides -crawl-rate")
		settle  = fs.Duration("settle", 0, "with -experiment: measured crawl before the window (default: one pass over the pages, at most 1m)")
		minI    = fs.Duration("min-interval", 5*time.Second, "with -experiment: crawler's shortest revisit interval (also the first of a page without Last-Modified)")
		lead    = fs.Duration("lead", 5*time.Minute, "with -experiment: how long the fixture's pages have been changing when the initial crawl begins")
		maxI    = fs.Duration("max-interval", 10*time.Minute, "with -experiment: crawler's longest revisit interval")
		conv    = fs.Duration("converge", 30*time.Minute, "with -experiment: longest wait, once the initial crawl is searchable, for the incremental chain to be idle before the measured crawl (0: no wait)")
		align   = fs.Bool("align", true, "with -experiment: start each mode's measured crawl as late after its initial crawl as the slowest mode's")
		jsonOut = fs.Bool("experiment-json", false, "with -experiment: print every result as JSON before the summary line")
	)
	return func() (experimentConfig, error) {
		c := experimentConfig{
			opt: experiment.Options{CrawlRate: *rate, Settle: *settle, MinInterval: *minI, MaxInterval: *maxI, InitialInterval: *minI, Lead: *lead,
				Converge: *conv, NoAlign: !*align},
			rates: []float64{*rate},
			json:  *jsonOut,
		}
		if *rates != "" {
			c.rates = nil
			for _, f := range strings.Split(*rates, ",") {
				r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil || r <= 0 {
					return c, fmt.Errorf("%w: -rates %q", errUsage, *rates)
				}
				c.rates = append(c.rates, r)
			}
		}
		if *conv == 0 {
			c.opt.Converge = -1
		}
		if *rate <= 0 {
			return c, fmt.Errorf("%w: -crawl-rate %v", errUsage, *rate)
		}
		return c, nil
	}
}

// experimentConfig is what the command line says of the experiment.
type experimentConfig struct {
	opt   experiment.Options
	rates []float64 // crawl budgets, one run of both modes each
	json  bool      // print the results as JSON too
}

// runExperiment runs both modes at each crawl rate, prints a table of the
// results and ends with the summary line of the last rate.
func runExperiment(ctx context.Context, c experimentConfig, stdout io.Writer, plotPath string) error {
	o := c.opt
	type pair struct{ inc, batch *experiment.Result }
	var pairs []pair
	for _, r := range c.rates {
		o.CrawlRate = r
		res, err := experiment.Run(ctx, o, experiment.Incremental, experiment.Batch)
		if err != nil {
			return err
		}
		pairs = append(pairs, pair{res[0], res[1]})
	}

	if c.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		for _, p := range pairs {
			if err := enc.Encode([]*experiment.Result{p.inc, p.batch}); err != nil {
				return err
			}
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tpages\tbudget_pps\tfetched_pps\tlate_s\t%repo/min\tchanges\tupdates\tp50_s\tp90_s\tp99_s\tfreshness\tmean_age_s\tbatches\tbatch_s\t")
	for _, p := range pairs {
		for _, r := range []*experiment.Result{p.inc, p.batch} {
			batch := "-\t-"
			if r.Mode == experiment.Batch {
				batch = fmt.Sprintf("%d\t%.2f", r.Batches, r.BatchTime.Mean)
			}
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.2f\t%.1f\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.2f\t%s\t\n",
				r.Mode, r.Pages, r.CrawlRate, r.FetchRate, r.Late, 100*r.FetchRate*60/float64(r.Pages), r.Changes,
				r.Latency.Count, r.Latency.P50, r.Latency.P90, r.Latency.P99, r.Average.Freshness, r.Average.MeanAge.Seconds(), batch)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if plotPath != "" {
		var rs []*experiment.Result
		for _, p := range pairs {
			rs = append(rs, p.inc, p.batch)
		}
		if err := experiment.Plot(plotPath, rs); err != nil {
			return err
		}
	}
	last := pairs[len(pairs)-1]
	_, err := fmt.Fprintln(stdout, experiment.Line(last.inc, last.batch))
	return err
}
