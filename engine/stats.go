package engine

import (
	"context"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

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
