package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/serving/feed"
	"github.com/caffeine-go/caffeine/web"
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
// A Stats that says the engine is busy is computed again before its time
// once the engine may have turned idle (turnedIdle), so that Idle shows
// within a second of the last work rather than up to statsMaxTTL after.
func (e *Engine) Stats(ctx context.Context) (*web.Stats, error) {
	called := time.Now()
	if s := e.cachedStats(); s != nil && (s.Idle || !e.turnedIdle(ctx)) {
		return s, nil
	}
	e.computeMu.Lock()
	defer e.computeMu.Unlock()
	if s, at := e.cachedStatsAt(); s != nil && at.After(called) {
		return s, nil // computed while this call waited
	}
	began := time.Now()
	work := e.work()
	s, err := e.computeStats(ctx)
	if err != nil {
		return nil, err
	}

	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	e.statsKeep = min(max(statsTTL, statsIdle*time.Since(began)), statsMaxTTL)
	e.statsWork = work
	loaded, applied := e.progress()
	crawling := e.Crawler != nil && !e.crawlerDone()
	stale := e.lastCounts != nil && e.lastCounts.stale
	quiet := !stale && (s.Due == 0 || !crawling) && s.PendingNotifications <= s.FailedNotifications && s.ExportQueue == 0 && e.crawlerQuiet()
	s.Idle = e.holdIdle(quiet, loaded, applied)
	e.stats, e.statsAt = s, time.Now()
	c := *s
	return &c, nil
}

// cachedStats returns a copy of the last Stats while it is fresh, else nil.
func (e *Engine) cachedStats() *web.Stats {
	s, _ := e.cachedStatsAt()
	return s
}

// cachedStatsAt returns a copy of the last Stats while it is fresh, else
// nil, and when it was computed.
func (e *Engine) cachedStatsAt() (*web.Stats, time.Time) {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	if e.stats == nil || time.Since(e.statsAt) >= e.statsKeep {
		return nil, time.Time{}
	}
	s := *e.stats
	return &s, e.statsAt
}

// turnedIdle reports whether the engine may have turned idle since the
// cached Stats, which says it is busy, was computed: this process worked
// since (or was quiet and waited out idleHold), nothing runs or waits in
// it now, and a look at the table as WaitIdle's says idle. Its looks are
// spaced as WaitIdle's are (statsIdle times what the last took, 50 ms at
// least), so a busy engine polled often pays at most a tenth of a core
// for them; one that does nothing itself (another process of the table
// works) does not look before the cached Stats expires.
func (e *Engine) turnedIdle(ctx context.Context) bool {
	if e.Worker != nil && e.Worker.Inflight() > 0 || !e.feederStill() || !e.crawlerQuiet() {
		return false
	}
	work := e.work()
	e.statsMu.Lock()
	now := time.Now()
	holding := e.idleSince.ok && e.idleSince.at.Add(idleHold).After(e.statsAt)
	if now.Before(e.nextLook) || work == e.statsWork && !holding {
		e.statsMu.Unlock()
		return false
	}
	e.nextLook = now.Add(50 * time.Millisecond) // no other caller looks meanwhile
	e.statsMu.Unlock()
	idle, err := e.idle(ctx)
	e.statsMu.Lock()
	e.nextLook = time.Now().Add(max(50*time.Millisecond, statsIdle*time.Since(now)))
	e.statsMu.Unlock()
	return err == nil && idle
}

// work counts what this process has done: pages fetched, queue entries
// applied, observer runs.
func (e *Engine) work() int64 {
	fetched, applied := e.progress()
	n := fetched + applied
	if e.Worker != nil {
		for _, o := range e.Worker.Stats() {
			n += o.Runs
		}
	}
	return n
}

// tableCounts are the parts of Stats read from the table and the index.
type tableCounts struct {
	pageCounts
	noteCounts
	exportQueue, indexed int
	at                   time.Time // when these were read (the page and notification counts may be older)
}

// noteCounts are the counts that read every pending notification.
type noteCounts struct {
	pending map[string]int
	total   int
	failed  []percolator.Failure
	at      time.Time
	took    time.Duration
}

// pageCounts are the counts that read every page and frontier row.
type pageCounts struct {
	pages, frontier, due int
	nextDue              int64 // the earliest due time after the scan, Unix ms; 0 if none
	at                   time.Time
	took                 time.Duration
	// stale: this process committed since the scan, so due may be out of
	// date, or the notification counts are reused (Stats is not Idle on
	// it).
	stale bool
	// staged: the scan began while the worker staged (pagesStill).
	staged bool
	// dueAt and dueTook: when the last count of the due rows alone
	// (countDue) began and what it took; it is made again only pagesIdle
	// times as long after.
	dueAt   time.Time
	dueTook time.Duration
}

// statsMaxReuse bounds how long table counts are reused while nothing
// changes: commits of other processes (which Watch does not see) show
// within it.
const statsMaxReuse = time.Minute

// pagesIdle: while the table changes, the page and frontier counts are
// made again only pagesIdle times as long after their scan began as it
// took, so that the scan takes a thirtieth of its wall time at most however
// big the table (a million-page frontier made it a tenth of a bulk crawl's
// CPU at 30,000 pages; and capped at ten minutes, the scan of a million
// pages, three minutes of a core, took 12-20% of a million-page bulk
// crawl's CPU); but afresh once nothing else is left to do. The other
// counts are read at every Stats.
const pagesIdle = 29

// counts returns the table counts, reading the table only when this
// process committed something since the last look, a frontier page has
// become due, or statsMaxReuse passed: an idle engine does not scan its
// table every few seconds. The caller holds computeMu.
func (e *Engine) counts(ctx context.Context) (*tableCounts, error) {
	select {
	case <-e.changed:
		e.pagesDirty = true
	default:
	}
	now := time.Now()
	last := e.lastCounts
	if last != nil && !e.pagesDirty && now.Sub(last.at) < statsMaxReuse && (last.nextDue == 0 || now.UnixMilli() < last.nextDue) {
		return last, nil
	}
	c := &tableCounts{at: now}
	// Below the feeder's floor every entry is applied: the scan need not
	// read their dead versions, minutes of them between two GC passes.
	q := e.queue()
	var floor uint64
	if e.Feeder != nil {
		floor = e.Feeder.Floor()
	}
	err := e.DB.View(ctx, func(tx *percolator.Tx) error {
		c.exportQueue = 0
		for b := range q.Buckets() {
			err := tx.Scan(ctx, q.From(b, floor), q.BucketEnd(b), webtable.ExportDoc, func(string, string, []byte) bool {
				c.exportQueue++
				return true
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c.indexed, err = e.Index.Count(); err != nil {
		return nil, err
	}
	// While the worker has tasks in flight, nothing is idle: the
	// notification counts, a read of every pending notification (1.6
	// million of them, 5.5% of the CPU, in a million-page bulk load read
	// at every Stats), are made again only pagesIdle times as long after
	// they began as they took, as the page counts are.
	busy := e.Worker != nil && e.Worker.Inflight() > 0
	notesReused := last != nil && busy && now.Sub(last.noteCounts.at) < pagesIdle*last.noteCounts.took
	if notesReused {
		c.noteCounts = last.noteCounts
	} else if c.noteCounts, err = e.notifications(ctx); err != nil {
		return nil, err
	}
	// Once the rest looks quiet, the page counts are made afresh, so that
	// Idle need not wait out their reuse.
	quiet := c.total <= len(c.failed) && c.exportQueue == 0 && e.crawlerQuiet() && !busy
	still := e.pagesStill()
	switch {
	case last != nil && still && last.pageCounts.staged:
		c.pageCounts = last.pageCounts // the pages as they are
		if pc := c.pageCounts; pc.nextDue != 0 && now.UnixMilli() >= pc.nextDue && now.Sub(pc.dueAt) >= pagesIdle*pc.dueTook {
			// A row came due: only the due rows are read again.
			if c.pageCounts, err = e.countDue(ctx, pc); err != nil {
				return nil, err
			}
		}
	case last != nil && !quiet && now.Sub(last.pageCounts.at) < pagesIdle*last.pageCounts.took:
		c.pageCounts = last.pageCounts
		c.stale = true
	default:
		dirty := e.pagesDirty
		e.pagesDirty = false
		if c.pageCounts, err = e.pageCounts(ctx, now, dirty); err != nil {
			return nil, err
		}
		c.pageCounts.staged = still
	}
	// Reused notification counts may be out of date too.
	c.stale = c.stale || notesReused
	e.lastCounts = c
	return c, nil
}

// pagesStill reports whether the pages stay as they are: while the
// worker stages a Bulk engine's first crawl, the crawler hands out no
// page. Their count (a scan of every page: three to four and a half
// minutes of CPU at a million pages) is then made once; when a frontier
// row comes due, only the rows due are read again (countDue); a recrawl
// request applied meanwhile (crawl.Options.RecrawlDir) moves due rows
// the count shows once the stages are over.
func (e *Engine) pagesStill() bool {
	return e.Indexing() && e.Worker != nil && e.Worker.Staging() && e.stages != nil
}

// countDue returns pc with the frontier's due rows counted again:
// scanFrontier up to the first row not due yet. It reads as many rows as
// are due, where countPages reads every page and every frontier row.
func (e *Engine) countDue(ctx context.Context, pc pageCounts) (pageCounts, error) {
	pc.dueAt = time.Now()
	err := e.DB.View(ctx, func(tx *percolator.Tx) error {
		_, err := scanFrontier(ctx, tx, pc.dueAt.UnixMilli(), true, &pc)
		return err
	})
	pc.dueTook = time.Since(pc.dueAt)
	return pc, err
}

// scanFrontier sets c.due and c.nextDue (the first due time after nowMs,
// 0 if none) from the frontier's rows, which are in time order, and
// returns the rows it read: all of them, or with untilNext those due and
// the first one not due.
func scanFrontier(ctx context.Context, tx *percolator.Tx, nowMs int64, untilNext bool, c *pageCounts) (rows int, err error) {
	c.due, c.nextDue = 0, 0
	spread, err := webtable.Spread(ctx, tx.DB())
	if err != nil {
		return 0, err
	}
	for b := range max(spread, 1) { // each bucket in time order
		first := int64(0) // the bucket's first row not due
		err = tx.Scan(ctx, webtable.DueIn(spread, b, webtable.DuePrefix), webtable.DueBucketEnd(spread, b), webtable.DuePage, func(row, _ string, _ []byte) bool {
			rows++
			t, _, ok := webtable.ParseDueRow(row)
			switch {
			case !ok:
			case t <= nowMs:
				c.due++
			case first == 0:
				first = t
				return !untilNext
			}
			return true
		})
		if err != nil {
			return rows, err
		}
		if first != 0 && (c.nextDue == 0 || first < c.nextDue) {
			c.nextDue = first
		}
	}
	return rows, nil
}

// pageCounts returns the page and frontier counts. Counting reads every
// page, so on a table other processes share only the holder of the
// engine's duty (Engine.duty) counts, and publishes its counts in the
// table (webtable.StatsRow); the others read them there, and count the
// due rows again (countDue: only the rows due) if one became due since or
// they committed since their last count (dirty: their crawler may have
// added some), and then mark the table changed (markChanged). Until
// counts are published, each counts for itself. The holder, and an
// engine alone on its table, count again only after a change: a commit
// of their own, or (shared) a webtable.StatsChanged mark from ClockSkew
// before their last count or later; else their last count stands, with
// the rows that came due since counted again. An idle deployment does
// not read its pages.
func (e *Engine) pageCounts(ctx context.Context, now time.Time, dirty bool) (pageCounts, error) {
	_, alone := e.store.(percolator.ExclusiveStore)
	if !alone && !e.duty.Held() {
		e.held = nil
		if dirty {
			e.markChanged(ctx, now)
		}
		pc, ok, err := e.publishedCounts(ctx)
		if err != nil || !ok {
			if err != nil {
				e.log.Warn("stats: read published page counts", "err", err)
			}
			return e.countPages(ctx)
		}
		if dirty || pc.nextDue != 0 && now.UnixMilli() >= pc.nextDue {
			return e.countDue(ctx, pc)
		}
		return pc, nil
	}
	if prev := e.held; prev != nil && !dirty {
		// Nothing changed since the holder counted: its count stands,
		// but for the rows that came due.
		var changed int64 // alone, no other process changes the table
		if !alone {
			var err error
			if changed, err = e.changedAt(ctx); err != nil {
				return pageCounts{}, err
			}
		}
		// Another process's mark is in its clock: marks up to ClockSkew
		// before the count may be of commits after it.
		if changed < prev.at.Add(-e.DB.ClockSkew()).UnixMilli() {
			if prev.nextDue != 0 && now.UnixMilli() >= prev.nextDue {
				pc, err := e.countDue(ctx, *prev)
				if err == nil {
					e.held = &pc
				}
				return pc, err
			}
			return *prev, nil
		}
	}
	pc, err := e.countPages(ctx)
	if err != nil {
		return pc, err
	}
	e.held = &pc
	if alone {
		return pc, nil
	}
	if err := e.publishCounts(ctx, pc); err != nil && ctx.Err() == nil {
		e.log.Warn("stats: publish page counts", "err", err)
	}
	return pc, nil
}

// markChangedEvery bounds how often a process marks the table changed
// (markChanged) while it commits.
const markChangedEvery = 5 * time.Second

// markChanged tells the holder of the engine's duty that this process
// committed since it last said so, so that the holder counts the pages
// again (webtable.StatsChanged); at most every markChangedEvery: a
// commit meanwhile is marked at a later Stats. The caller holds
// computeMu.
func (e *Engine) markChanged(ctx context.Context, now time.Time) {
	if now.Sub(e.marked) < markChangedEvery {
		e.pagesDirty = true // mark it at a later count
		return
	}
	e.marked = now
	err := e.DB.Update(ctx, func(tx *percolator.Tx) error {
		return tx.Set(webtable.StatsRow, webtable.StatsChanged, strconv.AppendInt(nil, now.UnixMilli(), 10))
	})
	// The commit is the mark's own: it must not be marked again.
	select {
	case <-e.changed:
	default:
	}
	if err != nil && ctx.Err() == nil {
		e.log.Warn("stats: mark the table changed", "err", err)
	}
}

// changedAt returns when another process last marked the table changed
// (markChanged), Unix ms; 0 if none did.
func (e *Engine) changedAt(ctx context.Context) (int64, error) {
	var v []byte
	err := e.DB.View(ctx, func(tx *percolator.Tx) error {
		var err error
		v, err = tx.Get(ctx, webtable.StatsRow, webtable.StatsChanged)
		return err
	})
	if err != nil || v == nil {
		return 0, err
	}
	ms, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("engine: %s of %q: %w", webtable.StatsChanged, webtable.StatsRow, err)
	}
	return ms, nil
}

// publishedStats is the JSON of webtable.StatsPages.
type publishedStats struct {
	Pages    int   `json:"pages"`
	Frontier int   `json:"frontier"`
	Due      int   `json:"due"`
	NextDue  int64 `json:"next_due,omitempty"` // Unix ms
	At       int64 `json:"at"`                 // when the count began, Unix ms
	TookMs   int64 `json:"took_ms"`
}

// publishCounts writes pc where the other processes read it.
func (e *Engine) publishCounts(ctx context.Context, pc pageCounts) error {
	v, err := json.Marshal(publishedStats{Pages: pc.pages, Frontier: pc.frontier, Due: pc.due, NextDue: pc.nextDue,
		At: pc.at.UnixMilli(), TookMs: pc.took.Milliseconds()})
	if err != nil {
		return err
	}
	err = e.DB.Update(ctx, func(tx *percolator.Tx) error {
		return tx.Set(webtable.StatsRow, webtable.StatsPages, v)
	})
	// The commit is this process's own: it must not make the next Stats
	// count again (counts).
	select {
	case <-e.changed:
	default:
	}
	return err
}

// publishedCounts reads the counts the duty's holder published; ok is
// false if none are.
func (e *Engine) publishedCounts(ctx context.Context) (pc pageCounts, ok bool, err error) {
	var v []byte
	err = e.DB.View(ctx, func(tx *percolator.Tx) error {
		v, err = tx.Get(ctx, webtable.StatsRow, webtable.StatsPages)
		return err
	})
	if err != nil || v == nil {
		return pc, false, err
	}
	var p publishedStats
	if err := json.Unmarshal(v, &p); err != nil {
		return pc, false, fmt.Errorf("engine: %s of %q: %w", webtable.StatsPages, webtable.StatsRow, err)
	}
	return pageCounts{pages: p.Pages, frontier: p.Frontier, due: p.Due, nextDue: p.NextDue,
		at: time.UnixMilli(p.At), took: time.Duration(p.TookMs) * time.Millisecond}, true, nil
}

// countPages counts the pages and the frontier rows, due and not.
func (e *Engine) countPages(ctx context.Context) (pageCounts, error) {
	c := pageCounts{at: time.Now()}
	nowMs := c.at.UnixMilli()
	err := e.DB.View(ctx, func(tx *percolator.Tx) error {
		err := tx.Scan(ctx, "", "", webtable.FetchedAt, func(row, _ string, _ []byte) bool {
			if !strings.HasPrefix(row, "!") {
				c.pages++
			}
			return true
		})
		if err != nil {
			return err
		}
		c.frontier, err = scanFrontier(ctx, tx, nowMs, false, &c)
		return err
	})
	c.took = time.Since(c.at)
	return c, err
}

func (e *Engine) computeStats(ctx context.Context) (*web.Stats, error) {
	c, err := e.counts(ctx)
	if err != nil {
		return nil, err
	}
	s := &web.Stats{
		Time: time.Now().UTC(), Crawling: e.Crawler != nil && !e.crawlerDone(), BulkCrawl: !e.Indexing(), BulkStage: e.bulkStage(), Observers: []web.ObserverCount{},
		Pages: c.pages, Frontier: c.frontier, Due: c.due, ExportQueue: c.exportQueue, Indexed: c.indexed,
		PendingNotifications: c.total, FailedNotifications: len(c.failed),
	}
	byObserver := make(map[string]int)
	for _, f := range c.failed {
		byObserver[f.Observer]++
	}
	if e.Worker != nil {
		for _, o := range e.Worker.Stats() {
			s.Observers = append(s.Observers, web.ObserverCount{
				Name: o.Name, Column: o.Column, Pending: c.pending[o.Column], Failed: byObserver[o.Name],
				Runs: o.Runs, Commits: o.Commits, Conflicts: o.Conflicts, RunTimeS: o.RunTime.Seconds(),
			})
		}
	}
	s.Latency = e.Index.Latency()
	s.IndexName, s.Feeder = e.cfg.IndexName, "none"
	if e.Feeder != nil {
		s.IndexName, s.Feeder, s.FeederHolder = e.Feeder.Name(), e.Feeder.State().String(), e.Feeder.Holder()
		s.IndexState = e.Feeder.IndexState()
	}
	if s.IndexName == "" {
		s.IndexName = feed.DefaultIndexName
	}
	return s, nil
}

// notifications counts the pending notifications per column and in all,
// and the parked failures.
func (e *Engine) notifications(ctx context.Context) (noteCounts, error) {
	c := noteCounts{at: time.Now()}
	var err error
	if c.pending, err = e.DB.Pending(ctx); err != nil {
		return c, err
	}
	if c.failed, err = e.DB.Failed(ctx); err != nil {
		return c, err
	}
	for _, n := range c.pending {
		c.total += n
	}
	c.took = time.Since(c.at)
	return c, nil
}

// bulkStage says which stage of Config.Stages the worker drains, while
// it does: "N/M: observer, observer".
func (e *Engine) bulkStage() string {
	if !e.pagesStill() {
		return ""
	}
	i := e.Worker.Stage()
	if i >= len(e.stages) {
		return ""
	}
	return fmt.Sprintf("%d/%d: %s", i+1, len(e.stages), strings.Join(e.stages[i].Observers, ", "))
}
