package web

import (
	"net/http"
	"strconv"
)

// statusRefresh is the status page's reload interval in seconds.
const statusRefresh = 5

// statusData is the data of status.html.
type statusData struct {
	page
	S       *Stats
	Charts  []chart
	Samples int
	Paused  bool // ?refresh=0
}

func (s *Server) stats(r *http.Request) (*Stats, error) {
	ctx, cancel := s.queryContext(r)
	defer cancel()
	st, err := s.b.Stats(ctx)
	if err == nil && st == nil {
		err = errNilResult
	}
	if err != nil {
		return nil, s.backendError(ctx, r, err)
	}
	return st, nil
}

func (s *Server) statusPage(w http.ResponseWriter, r *http.Request) error {
	st, err := s.stats(r)
	if err != nil {
		return err
	}
	hist := s.b.History()
	now := s.opt.Now()
	rate := func(v float64) string { return number(v) + "/s" }
	count := func(v float64) string { return number(v) }
	d := statusData{
		page:    page{Title: "Status", Nav: "status", Refresh: statusRefresh},
		S:       st,
		Samples: len(hist),
		Paused:  r.URL.Query().Get("refresh") == "0",
		Charts: []chart{
			// Two charts, each on its own scale: re-exports after a
			// PageRank pass index far more documents per second than the
			// crawler fetches, and would flatten the fetch rate.
			newChart("Fetched per second", hist, now, rate,
				seriesDef{"fetched/s", func(s Sample) float64 { return s.Fetched }}),
			newChart("Indexed per second", hist, now, rate,
				seriesDef{"indexed/s", func(s Sample) float64 { return s.Exported }}),
			newChart("Crawl → searchable latency", hist, now, seconds,
				seriesDef{"p50", func(s Sample) float64 { return s.LatencyP50 }},
				seriesDef{"p90", func(s Sample) float64 { return s.LatencyP90 }},
				seriesDef{"p99", func(s Sample) float64 { return s.LatencyP99 }}),
			newChart("Pages and documents", hist, now, count,
				seriesDef{"pages", func(s Sample) float64 { return float64(s.Pages) }},
				seriesDef{"indexed", func(s Sample) float64 { return float64(s.Indexed) }}),
			// Pending notifications on their own scale: a backlog of a
			// few hundred beside thousands of pages is a flat line, and
			// a crawl's thousands would flatten the pages.
			newChart("Pending notifications", hist, now, count,
				seriesDef{"pending", func(s Sample) float64 { return float64(s.Pending) }}),
		},
	}
	// A chart of one line keeps the colour the line had beside the others.
	recolor(&d.Charts[1], 1)
	recolor(&d.Charts[4], 2)
	if d.Paused {
		d.Refresh = 0
	}
	return s.render(w, http.StatusOK, "status.html", d)
}

// recolor gives the one line of c the colour of series i.
func recolor(c *chart, i int) {
	if len(c.Series) == 1 {
		c.Series[0].Class, c.Series[0].Color = "s"+strconv.Itoa(i), seriesColors[i]
	}
}

func (s *Server) apiStats(w http.ResponseWriter, r *http.Request) error {
	st, err := s.stats(r)
	if err != nil {
		return err
	}
	out := *st
	out.Observers = nonNil(out.Observers)
	writeJSON(w, http.StatusOK, out)
	return nil
}
