// Package promstats exports the counters of percolator workers as
// Prometheus metrics, so that package percolator itself does not depend on
// Prometheus.
package promstats

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caffeine-go/caffeine/percolator"
)

// Metrics exports per-observer counters of the workers it watches as
// Prometheus metrics. It reads the workers' counters (Worker.Stats and
// Worker.Inflight) at scrape time, so it adds nothing to the observer path.
// Register it with a registry and pass it to the workers:
//
//	m := promstats.NewMetrics()
//	reg.MustRegister(m)
//	w, _ := percolator.NewWorker(db, percolator.WorkerOptions{Metrics: m}, obs...)
//
// It is safe for concurrent use.
type Metrics struct {
	mu      sync.Mutex // guards workers
	workers []*percolator.Worker

	runs, commits, empty, nothing, conflicts, failures, parked, runSeconds, pending, inflight, members *prometheus.Desc
}

// NewMetrics returns an empty collector.
func NewMetrics() *Metrics {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("percolator_observer_"+name, help, labels, nil)
	}
	return &Metrics{
		runs:       d("runs_total", "Observer transactions that ran the observer.", "observer"),
		commits:    d("commits_total", "Observer runs that committed.", "observer"),
		empty:      d("empty_total", "Runs of a weak observer that wrote nothing, so had nothing to commit.", "observer"),
		nothing:    d("acknowledged_total", "Notifications found already acknowledged.", "observer"),
		conflicts:  d("conflicts_total", "Observer runs that lost to another transaction.", "observer"),
		failures:   d("failures_total", "Observer runs that returned an error or panicked.", "observer"),
		parked:     d("parked_total", "Notifications parked as failed.", "observer"),
		runSeconds: d("run_seconds_total", "Time spent in observer transactions.", "observer"),
		pending:    d("pending", "Notifications waiting, as of the last full count.", "observer"),
		inflight:   d("inflight", "Observer tasks dispatched and not finished, per worker."),
		members: prometheus.NewDesc("percolator_scan_members",
			"Live workers sharing the table's notification scans, this process's included (1 on an exclusive store).", nil, nil),
	}
}

// Watch adds w to the workers whose counters m exports. NewWorker calls it
// for the Metrics of its options. A nil m watches nothing.
func (m *Metrics) Watch(w *percolator.Worker) {
	if m == nil {
		return // a nil *Metrics in WorkerOptions watches nothing
	}
	m.mu.Lock()
	m.workers = append(m.workers, w)
	m.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.runs, m.commits, m.empty, m.nothing, m.conflicts, m.failures, m.parked, m.runSeconds, m.pending, m.inflight, m.members} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	workers := append([]*percolator.Worker(nil), m.workers...)
	m.mu.Unlock()
	sums := make(map[string]percolator.ObserverStats)
	var inflight int64
	members := 0
	for _, w := range workers {
		inflight += w.Inflight()
		members = max(members, w.Members())
		for _, s := range w.Stats() {
			t := sums[s.Name]
			t.Add(s)
			t.Pending = max(t.Pending, s.Pending)
			sums[s.Name] = t
		}
	}
	for name, s := range sums {
		c := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, name)
		}
		c(m.runs, float64(s.Runs))
		c(m.commits, float64(s.Commits))
		c(m.empty, float64(s.Empty))
		c(m.nothing, float64(s.Nothing))
		c(m.conflicts, float64(s.Conflicts))
		c(m.failures, float64(s.Failures))
		c(m.parked, float64(s.Parked))
		c(m.runSeconds, s.RunTime.Seconds())
		ch <- prometheus.MustNewConstMetric(m.pending, prometheus.GaugeValue, float64(s.Pending), name)
	}
	ch <- prometheus.MustNewConstMetric(m.inflight, prometheus.GaugeValue, float64(inflight))
	if len(workers) > 0 {
		ch <- prometheus.MustNewConstMetric(m.members, prometheus.GaugeValue, float64(members))
	}
}
