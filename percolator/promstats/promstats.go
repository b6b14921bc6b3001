package percolator

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics exports per-observer counters of the workers it watches as
// Prometheus metrics. It reads the workers' counters at scrape time, so it
// adds nothing to the observer path. Register it with a registry:
//
//	m := percolator.NewMetrics()
//	reg.MustRegister(m)
//	w, _ := percolator.NewWorker(db, percolator.WorkerOptions{Metrics: m}, obs...)
type Metrics struct {
	mu      sync.Mutex // guards workers
	workers []*Worker

	runs, commits, nothing, conflicts, failures, parked, runSeconds, pending, inflight *prometheus.Desc
}

// NewMetrics returns an empty collector.
func NewMetrics() *Metrics {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("percolator_observer_"+name, help, labels, nil)
	}
	return &Metrics{
		runs:       d("runs_total", "Observer transactions that ran the observer.", "observer"),
		commits:    d("commits_total", "Observer runs that committed.", "observer"),
		nothing:    d("acknowledged_total", "Notifications found already acknowledged.", "observer"),
		conflicts:  d("conflicts_total", "Observer runs that lost to another transaction.", "observer"),
		failures:   d("failures_total", "Observer runs that returned an error or panicked.", "observer"),
		parked:     d("parked_total", "Notifications parked as failed.", "observer"),
		runSeconds: d("run_seconds_total", "Time spent in observer transactions.", "observer"),
		pending:    d("pending", "Notifications waiting, as of the last full count.", "observer"),
		inflight:   d("inflight", "Observer tasks dispatched and not finished, per worker."),
	}
}

func (m *Metrics) watch(w *Worker) {
	m.mu.Lock()
	m.workers = append(m.workers, w)
	m.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.runs, m.commits, m.nothing, m.conflicts, m.failures, m.parked, m.runSeconds, m.pending, m.inflight} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	workers := append([]*Worker(nil), m.workers...)
	m.mu.Unlock()
	sums := make(map[string]ObserverStats)
	var inflight int64
	for _, w := range workers {
		inflight += w.inflight.Load()
		for _, s := range w.Stats() {
			t := sums[s.Name]
			t.Runs += s.Runs
			t.Commits += s.Commits
			t.Nothing += s.Nothing
			t.Conflicts += s.Conflicts
			t.Failures += s.Failures
			t.Parked += s.Parked
			t.Pending = max(t.Pending, s.Pending)
			t.RunTime += s.RunTime
			sums[s.Name] = t
		}
	}
	for name, s := range sums {
		c := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, name)
		}
		c(m.runs, float64(s.Runs))
		c(m.commits, float64(s.Commits))
		c(m.nothing, float64(s.Nothing))
		c(m.conflicts, float64(s.Conflicts))
		c(m.failures, float64(s.Failures))
		c(m.parked, float64(s.Parked))
		c(m.runSeconds, s.RunTime.Seconds())
		ch <- prometheus.MustNewConstMetric(m.pending, prometheus.GaugeValue, float64(s.Pending), name)
	}
	ch <- prometheus.MustNewConstMetric(m.inflight, prometheus.GaugeValue, float64(inflight))
}
