package promstats_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/percolator/promstats"
)

// The collector exports what the workers it watches counted, summed over
// workers, under the names dashboards use.
func TestMetrics(t *testing.T) {
	ctx := context.Background()
	db, _ := percolatortest.Open(t, percolator.Options{Weak: []string{"c"}})

	m := promstats.NewMetrics()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	// The observer writes on rows a and c only: a weak observer's run that
	// writes nothing commits nothing.
	obs := percolator.Observer{Name: "o", Column: "c", Run: func(_ context.Context, tx *percolator.Tx, row, _ string) error {
		if row == "b" {
			return nil
		}
		return tx.Set(row, "d:out", []byte("x"))
	}}
	// A second worker that never starts: its counters stay zero, and the
	// collector sums over both. (Two running workers of one process could
	// both run a notification, which would make the counts vary.)
	if _, err := percolator.NewWorker(db, percolator.WorkerOptions{Metrics: m}, obs); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"a", "b", "c"} {
		if err := db.Notify(ctx, row, "c"); err != nil {
			t.Fatal(err)
		}
	}
	w, err := percolator.NewWorker(db, percolator.WorkerOptions{Metrics: m}, obs)
	if err != nil {
		t.Fatal(err)
	}
	w.Start()
	t.Cleanup(w.Close)
	if err := w.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]float64)
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			v := mt.GetCounter().GetValue() + mt.GetGauge().GetValue()
			got[mf.GetName()] += v
		}
	}
	// Each notification ran once.
	for name, want := range map[string]float64{
		"percolator_observer_runs_total":     3,
		"percolator_observer_commits_total":  2,
		"percolator_observer_empty_total":    1,
		"percolator_observer_failures_total": 0,
		"percolator_observer_inflight":       0,
		"percolator_scan_members":            1, // an exclusive store: this process alone
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (exported %v), want %v", name, v, ok, want)
		}
	}
}
