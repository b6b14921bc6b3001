package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/caffeine-go/caffeine/engine"
	"github.com/caffeine-go/caffeine/internal/termline"
)

// progress shows the deployment's state on the status line of w (on a
// terminal) every interval, and logs once each time everything becomes
// idle (nothing due, nothing pending, the export queue applied), until ctx
// is done.
func progress(ctx context.Context, e *engine.Engine, w *termline.Writer, log *slog.Logger, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	defer w.Status("")
	wasIdle := false
	var lastFetched int64
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s, err := e.Stats(ctx)
		if err != nil {
			continue
		}
		var fetched int64
		if e.Crawler != nil {
			fetched = e.Crawler.Stats().Fetched
		}
		now := time.Now()
		rate := float64(fetched-lastFetched) / now.Sub(last).Seconds()
		lastFetched, last = fetched, now
		feed := ""
		switch s.Feeder {
		case "feeding", "standby": // standby: another process feeds the index
			feed = "  " + s.Feeder + " " + s.IndexName
			if s.IndexState == "backfilling" { // a replica registered lately
				feed += " (backfilling)"
			}
		}
		if s.BulkCrawl {
			feed += "  bulk: indexing once the crawl is over"
		}
		if s.BulkStage != "" {
			feed += "  bulk: indexing stage " + s.BulkStage
		}
		w.Status(fmt.Sprintf("%d pages  %.1f/s  %d searchable  %d pending  %d to index  p50 %s%s",
			s.Pages, rate, s.Indexed, s.PendingNotifications, s.ExportQueue, seconds(s.Latency.P50), feed))
		if s.Idle && !wasIdle {
			log.Info("idle: everything fetched is searchable", "pages", s.Pages, "searchable", s.Indexed,
				"p50_s", round(s.Latency.P50), "p90_s", round(s.Latency.P90), "p99_s", round(s.Latency.P99))
		}
		wasIdle = s.Idle
	}
}

func seconds(s float64) string {
	if s == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fs", s)
}

func round(s float64) float64 { return float64(int64(s*1000+0.5)) / 1000 }
