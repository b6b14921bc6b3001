package engine

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// statsEngine opens an engine with no crawler, worker or feeder, and
// returns it with functions that commit a page, an export queue entry
// (work left: the engine is not quiet) or its deletion, and return the
// page counts as Stats would read them.
func statsEngine(t *testing.T) (e *Engine, fetch func(int), queue func(bool), pages func() (int, bool)) {
	ctx := context.Background()
	e, err := Open(ctx, Config{Dir: t.TempDir(), NoFeeder: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	commit := func(fn func(tx *percolator.Tx) error) {
		t.Helper()
		if err := e.DB.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
		e.computeMu.Lock()
		defer e.computeMu.Unlock()
		for !e.pagesDirty {
			select {
			case <-e.changed: // what counts would see
				e.pagesDirty = true
			case <-time.After(5 * time.Second):
				t.Fatal("the commit was not seen")
			}
		}
	}
	fetch = func(n int) {
		commit(func(tx *percolator.Tx) error {
			return tx.Set("http/example.com/p"+strconv.Itoa(n), webtable.FetchedAt, []byte("1"))
		})
	}
	entry := e.queue().Row(1, "http/example.com/p0")
	queue = func(put bool) {
		commit(func(tx *percolator.Tx) error {
			if put {
				return tx.Set(entry, webtable.ExportDoc, []byte("{}"))
			}
			return tx.Delete(entry, webtable.ExportDoc)
		})
	}
	pages = func() (int, bool) {
		t.Helper()
		e.computeMu.Lock()
		defer e.computeMu.Unlock()
		c, err := e.counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c.pages, c.stale
	}
	return e, fetch, queue, pages
}

// While work is left, the counts that read every page are made again only
// pagesIdle times as long after a scan as it took, however much the table
// changes meanwhile; once nothing is left, afresh.
func TestPageCountsReuse(t *testing.T) {
	e, fetch, queue, pages := statsEngine(t)
	if n, stale := pages(); n != 0 || stale {
		t.Fatalf("empty table: %d pages (stale %v)", n, stale)
	}
	// A scan that took long: its counts stand for pagesIdle times that.
	queue(true)
	e.lastCounts.pageCounts.took = time.Hour
	fetch(1)
	if n, stale := pages(); n != 0 || !stale {
		t.Errorf("after a commit, within the reuse: %d pages (stale %v), want 0 reused, stale", n, stale)
	}
	// However long, ten minutes later they stand.
	e.lastCounts.pageCounts.at = time.Now().Add(-10 * time.Minute)
	if n, stale := pages(); n != 0 || !stale {
		t.Errorf("ten minutes after a scan of an hour: %d pages (stale %v), want 0 reused, stale", n, stale)
	}
	// Past pagesIdle times the scan they are made again.
	e.lastCounts.pageCounts.at = time.Now().Add(-pagesIdle * time.Hour)
	if n, stale := pages(); n != 1 || stale {
		t.Errorf("past pagesIdle times the scan: %d pages (stale %v), want 1, fresh", n, stale)
	}
	// A quick scan is made again at the next look after a commit (one that
	// took a microsecond stood for 29: a commit and a look took less).
	e.lastCounts.pageCounts.took = 0
	fetch(2)
	if n, stale := pages(); n != 2 || stale {
		t.Errorf("after a quick scan and a commit: %d pages (stale %v), want 2, fresh", n, stale)
	}
	// Nothing committed: the last counts stand.
	if n, stale := pages(); n != 2 || stale {
		t.Errorf("nothing committed: %d pages (stale %v)", n, stale)
	}
	// Nothing left to do: afresh, however long the last scan took.
	e.lastCounts.pageCounts.took = time.Hour
	fetch(3)
	if n, stale := pages(); n != 2 || !stale {
		t.Errorf("work left: %d pages (stale %v), want 2 reused, stale", n, stale)
	}
	queue(false)
	if n, stale := pages(); n != 3 || stale {
		t.Errorf("nothing left: %d pages (stale %v), want 3, fresh", n, stale)
	}
}

// With nothing committed, the page counts stand however old they are:
// an idle engine does not read every page on a timer.
func TestPageCountsWithoutChange(t *testing.T) {
	e, fetch, _, pages := statsEngine(t)
	fetch(1)
	if n, _ := pages(); n != 1 {
		t.Fatalf("%d pages, want 1", n)
	}
	at := e.lastCounts.pageCounts.at
	for range 3 {
		e.lastCounts.at = time.Now().Add(-2 * statsMaxReuse) // the counts are read again
		if n, _ := pages(); n != 1 {
			t.Fatalf("%d pages, want 1", n)
		}
	}
	if got := e.lastCounts.pageCounts.at; !got.Equal(at) {
		t.Errorf("the pages were counted again at %v with nothing committed since %v", got, at)
	}
	fetch(2)
	if n, _ := pages(); n != 2 {
		t.Errorf("after a commit: %d pages, want 2", n)
	}
}

// Stats turns Idle soon after the last work, even when its last page
// count took long.
func TestIdleAfterSlowCounts(t *testing.T) {
	e, fetch, queue, _ := statsEngine(t)
	idle := func() bool {
		t.Helper()
		e.statsMu.Lock()
		e.stats = nil
		e.statsMu.Unlock()
		s, err := e.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s.Idle
	}
	queue(true)
	if idle() {
		t.Fatal("idle with an export queued")
	}
	e.computeMu.Lock()
	e.lastCounts.pageCounts.took = time.Hour
	e.computeMu.Unlock()
	fetch(1)
	queue(false)
	deadline := time.Now().Add(10 * time.Second)
	for !idle() {
		if time.Now().After(deadline) {
			t.Fatal("not idle 10 s after the last work")
		}
		time.Sleep(idleHold / 4)
	}
}

// While the worker has tasks in flight, the counts that read every
// pending notification are made again only pagesIdle times as long after
// they began as they took, and Stats is not Idle on them; once nothing
// runs, afresh.
func TestNotificationCountsReuse(t *testing.T) {
	e, ctx, release, _ := heldEngine(t)
	counts := func() (int, bool) {
		t.Helper()
		e.computeMu.Lock()
		defer e.computeMu.Unlock()
		e.pagesDirty = true // as after a commit of this process's
		if e.lastCounts != nil {
			e.lastCounts.pageCounts.took = 0 // the page counts afresh
		}
		c, err := e.counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c.total, c.stale
	}
	notify := func(row string, inflight int64) {
		t.Helper()
		if err := e.DB.Notify(ctx, row, webtable.DocDirty); err != nil {
			t.Fatal(err)
		}
		for e.Worker.Inflight() < inflight && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
	}

	notify("r1", 1)
	if n, stale := counts(); n != 1 || stale {
		t.Fatalf("one notification, its run in flight: %d pending (stale %v), want 1, fresh", n, stale)
	}
	// Counts that took long stand for pagesIdle times that while work runs.
	e.lastCounts.noteCounts.took = time.Hour
	notify("r2", 2)
	if n, stale := counts(); n != 1 || !stale {
		t.Errorf("within the reuse, runs in flight: %d pending (stale %v), want 1 reused, stale", n, stale)
	}
	e.lastCounts.noteCounts.at = time.Now().Add(-pagesIdle * time.Hour)
	if n, stale := counts(); n != 2 || stale {
		t.Errorf("past pagesIdle times the count: %d pending (stale %v), want 2, fresh", n, stale)
	}
	// Nothing in flight: afresh, however long the last count took.
	e.lastCounts.noteCounts.took = time.Hour
	close(release)
	for e.Worker.Inflight() > 0 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if n, stale := counts(); n != 0 || stale {
		t.Errorf("nothing in flight: %d pending (stale %v), want 0, fresh", n, stale)
	}
}
