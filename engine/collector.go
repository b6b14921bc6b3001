package engine

import (
	"context"
	"time"

	"github.com/caffeine-go/caffeine/serving/feed"
	"github.com/prometheus/client_golang/prometheus"
)

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
	descFeeding  = prometheus.NewDesc("caffeine_feeder_feeding", "1 if this process feeds its serving index, 0 if it stands by (another process holds the index's feeder lease).", []string{"index"}, nil)
)

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPages, descIndexed, descFrontier, descQueue, descLatency, descFetched, descApplied, descFeeding} {
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
		feeding := 0.0
		if c.e.Feeder.State() == feed.FeederFeeding {
			feeding = 1
		}
		gauge(descFeeding, feeding, c.e.Feeder.Name())
	}
}
