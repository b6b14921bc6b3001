package main

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/caffeine-go/caffeine/freshness"
	"github.com/caffeine-go/caffeine/internal/termline"
)

// progressEvery is how often, off a terminal, a progress line is logged
// while documents are checked.
var progressEvery = 10 * time.Second

// probeProgress shows how far a probe has got: on a terminal a status line
// redrawn at every step, elsewhere a log line when the sample is drawn
// and then every progressEvery.
func probeProgress(w *termline.Writer, log *slog.Logger, delay time.Duration) func(freshness.ProbeProgress) {
	var (
		mu      sync.Mutex
		started time.Time // of the live checks
		logged  time.Time
	)
	return func(p freshness.ProbeProgress) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if p.Sampled == 0 {
			w.Status(fmt.Sprintf("searching: %d of %d queries, %d documents found", p.QueriesDone, p.Queries, p.Candidates))
			return
		}
		if started.IsZero() {
			started, logged = now, now
			log.Info("checking a sample of indexed documents against the live pages", "sample", p.Sampled,
				"found", p.Candidates, "queries", p.Queries, "delay_per_host", delay)
		}
		left := "-"
		if p.Checked > 0 {
			per := now.Sub(started) / time.Duration(p.Checked)
			left = (per * time.Duration(p.Sampled-p.Checked)).Round(time.Second).String()
		}
		w.Status(fmt.Sprintf("checked %d of %d  %d fresh  %d stale  %d skipped  about %s left", p.Checked, p.Sampled, p.Fresh, p.Stale, p.Skipped, left))
		if !w.TTY && p.Checked > 0 && (now.Sub(logged) >= progressEvery || p.Checked == p.Sampled) {
			logged = now
			log.Info("progress", "checked", p.Checked, "of", p.Sampled, "fresh", p.Fresh, "stale", p.Stale, "skipped", p.Skipped, "left", left)
		}
	}
}
