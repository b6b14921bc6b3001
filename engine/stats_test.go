package engine

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// The counts that read every page are made again only statsIdle times as
// long after a scan as it took, however much the table changes meanwhile;
// Stats is not Idle on reused ones, which may miss pages become due.
func TestPageCountsReuse(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Config{Dir: t.TempDir(), NoFeeder: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	fetch := func(n int) {
		t.Helper()
		err := e.DB.Update(ctx, func(tx *percolator.Tx) error {
			return tx.Set("http/example.com/p"+strconv.Itoa(n), webtable.FetchedAt, []byte("1"))
		})
		if err != nil {
			t.Fatal(err)
		}
		for !e.pagesDirty {
			select {
			case <-e.changed: // what counts would see
				e.pagesDirty = true
			case <-time.After(5 * time.Second):
				t.Fatal("the commit was not seen")
			}
		}
	}
	pages := func() (int, bool) {
		t.Helper()
		e.computeMu.Lock()
		defer e.computeMu.Unlock()
		c, err := e.counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c.pages, c.stale
	}
	if n, stale := pages(); n != 0 || stale {
		t.Fatalf("empty table: %d pages (stale %v)", n, stale)
	}
	// A scan that took long: its counts stand for statsIdle times that.
	e.lastCounts.pageCounts.took = time.Hour
	fetch(1)
	if n, stale := pages(); n != 0 || !stale {
		t.Errorf("after a commit, within the reuse: %d pages (stale %v), want 0 reused, stale", n, stale)
	}
	if s, err := e.computeStats(ctx); err != nil || s.Pages != 0 {
		t.Fatalf("Stats: %v pages, %v", s, err)
	}
	// Past pagesMaxReuse it is made again.
	e.lastCounts.pageCounts.at = time.Now().Add(-pagesMaxReuse)
	if n, stale := pages(); n != 1 || stale {
		t.Errorf("past pagesMaxReuse: %d pages (stale %v), want 1, fresh", n, stale)
	}
	// A quick scan is made again at the next look after a commit.
	e.lastCounts.pageCounts.took = time.Microsecond
	fetch(2)
	if n, stale := pages(); n != 2 || stale {
		t.Errorf("after a quick scan and a commit: %d pages (stale %v), want 2, fresh", n, stale)
	}
	// Nothing committed: the last counts stand.
	if n, stale := pages(); n != 2 || stale {
		t.Errorf("nothing committed: %d pages (stale %v)", n, stale)
	}
}

// Stats is not Idle while its page counts are reused after a commit.
func TestStaleCountsNotIdle(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Config{Dir: t.TempDir(), NoFeeder: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	idle := func() bool {
		t.Helper()
		e.statsMu.Lock()
		e.stats = nil
		e.statsMu.Unlock()
		s, err := e.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s.Idle
	}
	deadline := time.Now().Add(10 * time.Second)
	for !idle() {
		if time.Now().After(deadline) {
			t.Fatal("an empty engine never idle")
		}
		time.Sleep(idleHold / 4)
	}
	e.computeMu.Lock()
	e.lastCounts.pageCounts.took = time.Hour
	e.pagesDirty = true
	e.computeMu.Unlock()
	if idle() {
		t.Error("idle on page counts reused after a commit")
	}
}
