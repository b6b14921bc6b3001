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
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, Legend)
	return err
}

// Legend explains the rows of WriteText's report.
const Legend = `
What the rows mean:
  freshness              share of the checked documents whose indexed copy has the live page's content now
  mean age               how long an indexed copy has been out of date (0 when fresh): since the first change the
                         index has not seen; exact with -truth, else estimated from each page's change rate
  fetched→STAGE          pipeline latency: from the fetch of a document's current content to that content being
                         parsed, clustered, exported and searchable (in search results), from /api/doc
  indexed_at−fetched_at  from a result's fetch to its latest write into the index. A new PageRank, new anchors or
                         duplicates re-export a document without a new fetch, so this grows with the time since
                         the fetch: it is not a pipeline latency and is larger than fetched→searchable
  server (/api/stats)    the deployment's own fetched→searchable over its recent window, for every fetch that
                         brought new content, not only the sample
`
