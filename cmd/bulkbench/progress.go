package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/engine"
	"github.com/caffeine-go/caffeine/percolator"
)

// reportProgress prints a line to w every interval until the returned
// function is called: the time since began, the pages fetched and the
// Bleve documents written, the worker's backlog, the notifications
// pending (as the worker's last pass over them saw), the resident set
// (anonymous and file-backed) and its peak so far, and each observer's runs so far, busiest
// first. A long run (the million-page fixture) shows what limits it as it
// goes, not only once idle. An interval of 0 prints nothing.
func reportProgress(e *engine.Engine, began time.Time, interval time.Duration, w io.Writer) (stop func()) {
	if interval <= 0 || w == nil {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				fmt.Fprintln(w, progressLine(e, time.Since(began)))
			}
		}
	}()
	return func() { close(quit); <-done }
}

func progressLine(e *engine.Engine, elapsed time.Duration) string {
	anon, file := residentSet()
	fetched := e.Crawler.Stats().Fetched
	var b strings.Builder
	stats := e.Worker.Stats()
	var pending int64
	for _, o := range stats {
		pending += o.Pending
	}
	fmt.Fprintf(&b, "bulkbench: %4.0f s  fetched %d (%.0f/s)  applied %d  backlog %d  pending %d  rss %.0f+%.0f MB (peak %.0f)  runs",
		elapsed.Seconds(), fetched, float64(fetched)/elapsed.Seconds(), e.Feeder.Applied(), e.Worker.Backlog(), pending, anon, file, peakResident())
	slices.SortFunc(stats, func(a, b percolator.ObserverStats) int { return int(b.Runs - a.Runs) })
	for _, o := range stats {
		if o.Runs > 0 {
			fmt.Fprintf(&b, " %s %d", o.Name, o.Runs)
		}
	}
	return b.String()
}
