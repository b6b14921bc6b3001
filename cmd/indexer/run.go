package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/caffeine-go/caffeine/internal/httpserver"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/promstats"
	"github.com/caffeine-go/caffeine/percolator/storeflag"
)

// runWorker runs the observers until ctx is done or, with untilIdle, until
// nothing is left to do: indexer run.
func runWorker(ctx context.Context, db *percolator.DB, obs []percolator.Observer, opt percolator.WorkerOptions, untilIdle bool, metricsAddr string) error {
	m := promstats.NewMetrics()
	if metricsAddr != "" {
		reg := prometheus.NewRegistry()
		reg.MustRegister(m)
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv := httpserver.New(mux, httpserver.Options{})
		go func() {
			if err := srv.ListenAndServe(metricsAddr); err != nil && !errors.Is(err, http.ErrServerClosed) {
				slog.Error("metrics server", "err", err)
			}
		}()
		defer srv.Close()
	}
	opt.Metrics = m
	w, err := percolator.NewWorker(db, opt, obs...)
	if err != nil {
		return err
	}
	began := time.Now()
	stopProgress := logProgress(w, progressEvery)
	if untilIdle {
		w.Start()
		err = w.WaitIdle(ctx)
		w.Close()
	} else {
		// Until ctx is done, or the worker stops on a dead table.
		err = w.Run(ctx)
	}
	stopProgress()
	if err != nil {
		return err
	}
	for _, s := range w.Stats() {
		slog.Info("observer", "name", s.Name, "runs", s.Runs, "commits", s.Commits, "conflicts", s.Conflicts, "failures", s.Failures, "parked", s.Parked)
	}
	slog.Info("indexer stopped", "after", time.Since(began).Round(time.Millisecond), "observers", len(obs))
	storeflag.LogCalls(slog.Default(), db.Store())
	return nil
}

// progressEvery is how often a running indexer logs what it did and what
// is pending.
const progressEvery = 30 * time.Second

// logProgress logs, every period until the returned stop is called, the
// runs, commits and conflicts of the worker's observers since the last
// line and the notifications its last full scan found pending, by
// observer.
func logProgress(w *percolator.Worker, period time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(period)
		defer t.Stop()
		var last percolator.ObserverStats // totals at the last line
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			var now percolator.ObserverStats
			pending := make([]any, 0, 8)
			for _, s := range w.Stats() {
				now.Runs, now.Commits, now.Conflicts = now.Runs+s.Runs, now.Commits+s.Commits, now.Conflicts+s.Conflicts
				if s.Pending > 0 {
					pending = append(pending, s.Name, s.Pending)
				}
			}
			slog.Info("indexer progress", "runs", now.Runs-last.Runs, "commits", now.Commits-last.Commits,
				"conflicts", now.Conflicts-last.Conflicts, slog.Group("pending", pending...))
			last = now
		}
	}()
	return func() { close(done); <-finished }
}
