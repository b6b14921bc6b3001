package engine

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/web"
	"github.com/caffeine-go/caffeine/webtable"
)

// The Engine is the backend of the web UI (web.Backend).

// Search runs a query on the serving index.
func (e *Engine) Search(ctx context.Context, q serving.Query) (*serving.Results, error) {
	return e.Index.Search(ctx, q)
}

// Doc returns what the table and the index know of a URL.
func (e *Engine) Doc(ctx context.Context, url string) (*serving.DocInfo, error) {
	return serving.LookupDoc(ctx, e.DB, e.Index, url)
}

// Top returns the top pages, of one host if host is not empty.
func (e *Engine) Top(ctx context.Context, host string, n int) (*serving.Top, error) {
	return e.Index.Top(ctx, host, n)
}

// History returns the status page's time series, oldest first.
func (e *Engine) History() []serving.Sample {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	return slices.Clone(e.samples)
}

// statsTTL is how long a computed Stats is served again, at least:
// computing it scans the pages, the frontier and the notify group. On a
// big table that takes seconds, so a Stats is served again for statsIdle
// times as long as it took to compute, which keeps the status page, the
// sampler and whoever polls Stats to a tenth of a core at most, but for
// statsMaxTTL at most (on a busy machine the computation's wall time is
// mostly waiting).
const (
	statsTTL    = 250 * time.Millisecond
	statsIdle   = 9
	statsMaxTTL = 30 * time.Second
)

// idleHold is how long the idle condition must hold, with nothing fetched
// or applied meanwhile, before Stats reports idle: one look at the table
// is not a snapshot, so a notification moved from a row not yet scanned to
// one already scanned could hide (Apache Fluo's wait does the same).
const idleHold = 300 * time.Millisecond

// Stats returns the deployment's status.
func (e *Engine) Stats(ctx context.Context) (*serving.Stats, error) {
	if s := e.cachedStats(); s != nil {
		return s, nil
	}
	e.computeMu.Lock()
	defer e.computeMu.Unlock()
	if s := e.cachedStats(); s != nil {
		return s, nil // computed while this call waited
	}
	began := time.Now()
	s, err := e.computeStats(ctx)
	if err != nil {
		return nil, err
	}

	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	e.statsKeep = min(max(statsTTL, statsIdle*time.Since(began)), statsMaxTTL)
	var loaded, applied int64
	if e.Crawler != nil {
		loaded = e.Crawler.Stats().Fetched
	}
	if e.Feeder != nil {
		applied = e.Feeder.Applied()
	}
	crawling := e.Crawler != nil && !e.crawlerDone()
	quiet := (s.Due == 0 || !crawling) && s.PendingNotifications <= s.FailedNotifications && s.ExportQueue == 0 && e.crawlerQuiet()
	s.Idle = e.holdIdle(quiet, loaded, applied)
	e.stats, e.statsAt = s, time.Now()
	c := *s
	return &c, nil
}

// holdIdle reports whether the engine has been quiet for idleHold with
// nothing fetched or applied meanwhile, given that it is quiet now. The
// caller holds statsMu.
func (e *Engine) holdIdle(quiet bool, loaded, applied int64) bool {
	is := &e.idleSince
	switch {
	case !quiet:
		is.ok = false
	case !is.ok || is.loaded != loaded || is.applied != applied:
		is.ok, is.at, is.loaded, is.applied = true, time.Now(), loaded, applied
	}
	return is.ok && time.Since(is.at) >= idleHold
}

// idle is Stats().Idle computed afresh, without the counts Stats gathers
// for the status page (a scan of every page): WaitIdle's look.
func (e *Engine) idle(ctx context.Context) (bool, error) {
	var loaded, applied int64
	if e.Crawler != nil {
		loaded = e.Crawler.Stats().Fetched
	}
	if e.Feeder != nil {
		applied = e.Feeder.Applied()
	}
	quiet, err := e.quiet(ctx)
	if err != nil {
		return false, err
	}
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	return e.holdIdle(quiet, loaded, applied), nil
}

// quiet reports whether no work is left: nothing due for a running
// crawler and no fetch under way, no notification pending but parked
// failures, an empty export queue.
func (e *Engine) quiet(ctx context.Context) (bool, error) {
	if !e.crawlerQuiet() {
		return false, nil
	}
	_, total, failed, err := e.notifications(ctx)
	if err != nil {
		return false, err
	}
	if total > len(failed) {
		return false, nil
	}
	crawling := e.Crawler != nil && !e.crawlerDone()
	nowMs := time.Now().UnixMilli()
	found := false
	err = e.DB.View(ctx, func(tx *percolator.Tx) error {
		err := tx.Scan(ctx, webtable.ExportPrefix, webtable.ExportPrefix+"\xff", webtable.ExportDoc, func(string, string, []byte) bool {
			found = true
			return false
		})
		if err != nil || found || !crawling {
			return err
		}
		// The frontier is in time order: the first entry tells.
		return tx.Scan(ctx, webtable.DuePrefix, webtable.DuePrefix+"\xff", webtable.DuePage, func(row, _ string, _ []byte) bool {
			t, _, ok := webtable.ParseDueRow(row)
			found = ok && t <= nowMs
			return false
		})
	})
	return !found, err
}

// cachedStats returns a copy of the last Stats while it is fresh, else nil.
func (e *Engine) cachedStats() *serving.Stats {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	if e.stats == nil || time.Since(e.statsAt) >= e.statsKeep {
		return nil
	}
	s := *e.stats
	return &s
}

// crawlerQuiet reports whether no fetch is under way.
func (e *Engine) crawlerQuiet() bool {
	return e.Crawler == nil || e.crawlerDone() || e.Crawler.Stats().InFlight == 0
}

func (e *Engine) crawlerDone() bool {
	select {
	case <-e.crawlDone:
		return true
	default:
		return false
	}
}

func (e *Engine) computeStats(ctx context.Context) (*serving.Stats, error) {
	now := time.Now()
	s := &serving.Stats{Time: now.UTC(), Crawling: e.Crawler != nil && !e.crawlerDone(), Observers: []serving.ObserverCount{}}
	nowMs := now.UnixMilli()
	err := e.DB.View(ctx, func(tx *percolator.Tx) error {
		err := tx.Scan(ctx, "", "", webtable.FetchedAt, func(row, _ string, _ []byte) bool {
			if !strings.HasPrefix(row, "!") {
				s.Pages++
			}
			return true
		})
		if err != nil {
			return err
		}
		err = tx.Scan(ctx, webtable.DuePrefix, webtable.DuePrefix+"\xff", webtable.DuePage, func(row, _ string, _ []byte) bool {
			s.Frontier++
			if t, _, ok := webtable.ParseDueRow(row); ok && t <= nowMs {
				s.Due++
			}
			return true
		})
		if err != nil {
			return err
		}
		return tx.Scan(ctx, webtable.ExportPrefix, webtable.ExportPrefix+"\xff", webtable.ExportDoc, func(string, string, []byte) bool {
			s.ExportQueue++
			return true
		})
	})
	if err != nil {
		return nil, err
	}
	if s.Indexed, err = e.Index.Count(); err != nil {
		return nil, err
	}
	pending, total, failed, err := e.notifications(ctx)
	if err != nil {
		return nil, err
	}
	s.PendingNotifications, s.FailedNotifications = total, len(failed)
	byObserver := make(map[string]int)
	for _, f := range failed {
		byObserver[f.Observer]++
	}
	if e.Worker != nil {
		for _, o := range e.Worker.Stats() {
			s.Observers = append(s.Observers, serving.ObserverCount{
				Name: o.Name, Column: o.Column, Pending: pending[o.Column], Failed: byObserver[o.Name],
				Runs: o.Runs, Commits: o.Commits, Conflicts: o.Conflicts, RunTimeS: o.RunTime.Seconds(),
			})
		}
	}
	s.Latency = e.Index.Latency()
	return s, nil
}

// notifications returns the pending notifications per column and in all,
// and the parked failures.
func (e *Engine) notifications(ctx context.Context) (pending map[string]int, total int, failed []percolator.Failure, err error) {
	if pending, err = e.DB.Pending(ctx); err != nil {
		return nil, 0, nil, err
	}
	if failed, err = e.DB.Failed(ctx); err != nil {
		return nil, 0, nil, err
	}
	for _, n := range pending {
		total += n
	}
	return pending, total, failed, nil
}

// sample appends a point to the time series.
func (e *Engine) sample(ctx context.Context) {
	s, err := e.Stats(ctx)
	if err != nil {
		return
	}
	var fetched, loaded int64
	if e.Crawler != nil {
		fetched = e.Crawler.Stats().Fetched
	}
	if e.Feeder != nil {
		loaded = e.Feeder.Applied()
	}
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	now := time.Now()
	p := serving.Sample{Time: now.UTC(), Pages: s.Pages, Indexed: s.Indexed, Pending: s.PendingNotifications,
		LatencyP50: s.Latency.P50, LatencyP90: s.Latency.P90, LatencyP99: s.Latency.P99}
	if ls := e.lastSamp; !ls.at.IsZero() {
		dt := now.Sub(ls.at).Seconds()
		p.Fetched = float64(max(fetched-ls.fetched, 0)) / dt
		p.Exported = float64(max(loaded-ls.loaded, 0)) / dt
	}
	e.lastSamp.at, e.lastSamp.fetched, e.lastSamp.loaded = now, fetched, loaded
	const keep = 720
	if len(e.samples) == keep {
		e.samples = slices.Delete(e.samples, 0, 1)
	}
	e.samples = append(e.samples, p)
}

// collector exports the deployment's status as Prometheus metrics.
type collector struct{ e *Engine }

var (
	descPages    = prometheus.NewDesc("caffeine_pages", "Page rows fetched at least once.", nil, nil)
	descIndexed  = prometheus.NewDesc("caffeine_indexed_documents", "Documents in the serving index.", nil, nil)
	descFrontier = prometheus.NewDesc("caffeine_frontier_urls", "URLs in the frontier.", nil, nil)
	descQueue    = prometheus.NewDesc("caffeine_export_queue", "Export queue entries not yet applied.", nil, nil)
	descLatency  = prometheus.NewDesc("caffeine_crawl_to_searchable_seconds", "Crawl to searchable latency over the recent window.", []string{"quantile"}, nil)
	descFetched  = prometheus.NewDesc("caffeine_crawler_fetched_total", "Pages fetched by this process.", nil, nil)
	descApplied  = prometheus.NewDesc("caffeine_index_applied_total", "Export queue entries applied by this process.", nil, nil)
)

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPages, descIndexed, descFrontier, descQueue, descLatency, descFetched, descApplied} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.e.Stats(ctx)
	if err != nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descPages, float64(s.Pages))
	gauge(descIndexed, float64(s.Indexed))
	gauge(descFrontier, float64(s.Frontier))
	gauge(descQueue, float64(s.ExportQueue))
	gauge(descLatency, s.Latency.P50, "0.5")
	gauge(descLatency, s.Latency.P90, "0.9")
	gauge(descLatency, s.Latency.P99, "0.99")
	if c.e.Crawler != nil {
		ch <- prometheus.MustNewConstMetric(descFetched, prometheus.CounterValue, float64(c.e.Crawler.Stats().Fetched))
	}
	if c.e.Feeder != nil {
		ch <- prometheus.MustNewConstMetric(descApplied, prometheus.CounterValue, float64(c.e.Feeder.Applied()))
	}
}

var _ web.Backend = (*Engine)(nil)
