package freshness

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteText writes the report as a text table: the sample, freshness and
// age, then the latency distributions.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "server\t%s\t(%s)\n", r.Server, r.Time.UTC().Format(time.RFC3339))
	fmt.Fprintf(tw, "sample\t%d of %d documents found by %d queries\n", r.Sampled, r.Candidates, len(r.Queries))
	fmt.Fprintf(tw, "checked\t%d\t(%d skipped: robots.txt or refetch failed)\n", r.Checked, r.Skipped)
	fmt.Fprintf(tw, "freshness\t%.3f\t(%d fresh, %d stale, %d of them with newer content not yet searchable)\n", r.Freshness, r.Fresh, r.Stale, r.Pending)
	fmt.Fprintf(tw, "mean age\t%.3f s\t(%s; upper bound %.3f s; stale documents %.3f s)\n", r.MeanAge, r.AgeEstimator, r.MeanAgeUpper, r.MeanStaleAge)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "latency\tcount\tmean_s\tp50_s\tp90_s\tp99_s\tmax_s")
	row := func(name string, d Distribution) {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", name, d.Count, d.Mean, d.P50, d.P90, d.P99, d.Max)
	}
	for _, s := range Stages {
		row("fetched→"+s, r.Latency[s])
	}
	row("indexed_at−fetched_at", r.ResultLatency)
	if d := r.ServerLatency; d != nil {
		fmt.Fprintf(tw, "server (/api/stats)\t%d\t-\t%.3f\t%.3f\t%.3f\t-\n", d.Count, d.P50, d.P90, d.P99)
	}
	return tw.Flush()
}
