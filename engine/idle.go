package engine

import (
	"context"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// WaitIdle returns when the engine is idle (Stats.Idle, looked at afresh
// without the rest of Stats) or ctx is done. A look reads every pending
// notification, so the wait between looks is statsIdle times what the
// last one took (at least 50 ms, at most 1 s): waiting takes a tenth of a
// core at most, however big the backlog. After the first quiet look, the
// next comes once idleHold is over.
func (e *Engine) WaitIdle(ctx context.Context) error {
	for {
		began := time.Now()
		idle, err := e.idle(ctx)
		if err != nil {
			return err
		}
		if idle {
			return nil
		}
		wait := min(max(50*time.Millisecond, statsIdle*time.Since(began)), time.Second)
		if e.holding() {
			wait = min(wait, idleHold)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// idleHold is how long the idle condition must hold, with nothing fetched
// or applied meanwhile, before Stats reports idle: one look at the table
// is not a snapshot, so a notification moved from a row not yet scanned to
// one already scanned could hide (Apache Fluo's wait does the same).
const idleHold = 300 * time.Millisecond

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

// holding reports whether the last look was quiet and idleHold is not over.
func (e *Engine) holding() bool {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	return e.idleSince.ok && time.Since(e.idleSince.at) < idleHold
}

// idle is Stats().Idle computed afresh, without the counts Stats gathers
// for the status page (a scan of every page): WaitIdle's look.
func (e *Engine) idle(ctx context.Context) (bool, error) {
	loaded, applied := e.progress()
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
	if !e.crawlerQuiet() || !e.workerStill() || !e.feederStill() {
		return false, nil
	}
	n, err := e.notifications(ctx)
	if err != nil {
		return false, err
	}
	if n.total > len(n.failed) {
		return false, nil
	}
	crawling := e.Crawler != nil && !e.crawlerDone()
	nowMs := time.Now().UnixMilli()
	found := false
	err = e.DB.View(ctx, func(tx *percolator.Tx) error {
		err := tx.Scan(ctx, e.queue().Prefix, e.queue().End(), webtable.ExportDoc, func(string, string, []byte) bool {
			found = true
			return false
		})
		if err != nil || found || !crawling {
			return err
		}
		// Each bucket of the frontier is in time order: its first entry
		// tells.
		spread := e.spread
		for b := range max(spread, 1) {
			err := tx.Scan(ctx, webtable.DueIn(spread, b, webtable.DuePrefix), webtable.DueBucketEnd(spread, b), webtable.DuePage, func(row, _ string, _ []byte) bool {
				t, _, ok := webtable.ParseDueRow(row)
				found = ok && t <= nowMs
				return false
			})
			if err != nil || found {
				return err
			}
		}
		return nil
	})
	return !found, err
}

// feederStill reports whether the feeder's last look at the export queue
// found nothing: while it applies a backlog (after a bulk crawl, the
// re-exports with anchors), quiet need not read the queue's dead entries
// to learn that it is not empty.
func (e *Engine) feederStill() bool {
	return e.Feeder == nil || (e.Feeder.Queued() == 0 && e.Feeder.Held() == 0)
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

// workerStill reports whether the worker runs no observer now and ran
// none since the last call: only then need quiet read every pending
// notification (during a bulk crawl's backlog that read was a twentieth
// of the CPU, WaitIdle's look after look).
func (e *Engine) workerStill() bool {
	if e.Worker == nil {
		return true
	}
	if e.Worker.Inflight() > 0 {
		return false
	}
	var runs int64
	for _, o := range e.Worker.Stats() {
		runs += o.Runs
	}
	return e.workerRuns.Swap(runs) == runs
}
