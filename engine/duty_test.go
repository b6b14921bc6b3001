package engine

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

// sharedEngines opens n engines, with no crawler, worker or feeder, on one
// shared Badger table (as search processes on one Bigtable table), and a
// DB of another process on it.
func sharedEngines(t *testing.T, n int, gc time.Duration) ([]*Engine, *percolator.DB) {
	t.Helper()
	ctx := context.Background()
	st := openShared(t, t.TempDir())
	base := percolatortest.Shared(st.Store)
	t.Cleanup(func() { base.Close() })
	var es []*Engine
	for range n {
		// Each engine closes its store: give it a view that does not
		// close the table.
		e, err := Open(ctx, Config{Dir: t.TempDir(), Store: noClose{base}, Table: "t", NoFeeder: true, GCInterval: gc, GCGrace: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		es = append(es, e)
	}
	other, err := percolator.Open(ctx, noClose{base}, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return es, other
}

type noClose struct{ percolator.Store }

func (noClose) Close() error { return nil }

// runEngine runs e until the returned func stops it.
func runEngine(t *testing.T, e *Engine) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// TestGCOneHolder: of three engines on a shared table, one makes GC
// passes; when it stops, another takes over.
func TestGCOneHolder(t *testing.T) {
	es, _ := sharedEngines(t, 3, 20*time.Millisecond)
	var stops []func()
	for _, e := range es {
		stops = append(stops, runEngine(t, e))
	}
	collecting := func(skip int) (who []int) {
		for i, e := range es {
			if i != skip && e.gcPasses.Load() > 0 {
				who = append(who, i)
			}
		}
		return who
	}
	time.Sleep(2 * time.Second)
	who := collecting(-1)
	if len(who) != 1 {
		t.Fatalf("engines %v made GC passes, want exactly one", who)
	}
	stops[who[0]]()
	for _, e := range es {
		e.gcPasses.Store(0)
	}
	// The lease goes at once with a clean stop; a standby looks every
	// LockTTL/2 (5 s), and makes its first pass a GC interval later.
	time.Sleep(7 * time.Second)
	if next := collecting(who[0]); len(next) != 1 {
		t.Fatalf("after engine %d stopped, engines %v made GC passes, want exactly one", who[0], next)
	}
}

// TestPublishedPageCounts: on a shared table, the engine that holds the
// duty counts the pages and publishes the counts; another engine's Stats
// reads them instead of scanning every page.
func TestPublishedPageCounts(t *testing.T) {
	ctx := context.Background()
	es, other := sharedEngines(t, 2, -1)
	holder, reader := es[0], es[1]
	runEngine(t, holder)
	deadline := time.Now().Add(10 * time.Second)
	for !holder.duty.Held() {
		if time.Now().After(deadline) {
			t.Fatal("the running engine never took its duty")
		}
		time.Sleep(10 * time.Millisecond)
	}
	fetch := func(n int) {
		t.Helper()
		// As a crawler does, the other process says it changed pages.
		err := other.Update(ctx, func(tx *percolator.Tx) error {
			tx.Set(webtable.StatsRow, webtable.StatsChanged, []byte(strconv.FormatInt(time.Now().UnixMilli(), 10)))
			return tx.Set("http/example.com/p"+strconv.Itoa(n), webtable.FetchedAt, []byte("1"))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	pages := func(e *Engine) int {
		t.Helper()
		e.computeMu.Lock()
		defer e.computeMu.Unlock()
		e.lastCounts = nil // as if statsMaxReuse passed
		c, err := e.counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c.pages
	}
	fetch(1)
	if n := pages(holder); n != 1 {
		t.Fatalf("holder counts %d pages, want 1", n)
	}
	fetch(2)
	if n := pages(reader); n != 1 {
		t.Errorf("reader counts %d pages, want the 1 published (not a scan of its own)", n)
	}
	if n := pages(holder); n != 2 {
		t.Fatalf("holder counts %d pages, want 2", n)
	}
	if n := pages(reader); n != 2 {
		t.Errorf("reader counts %d pages after the holder published 2", n)
	}

	// Nothing changed since: the holder's count stands, without a scan,
	// once it began ClockSkew after the last mark.
	time.Sleep(holder.DB.ClockSkew() + 100*time.Millisecond)
	pages(holder)
	holder.computeMu.Lock()
	at := holder.held.at
	holder.computeMu.Unlock()
	if n := pages(holder); n != 2 {
		t.Fatalf("holder counts %d pages, want 2", n)
	}
	if holder.held.at != at {
		t.Errorf("holder counted the pages again with nothing changed")
	}
	// A page committed without the mark (a process that does not say)
	// is not seen until one does.
	err := other.Update(ctx, func(tx *percolator.Tx) error {
		return tx.Set("http/example.com/p3", webtable.FetchedAt, []byte("1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := pages(holder); n != 2 {
		t.Errorf("holder counts %d pages with no mark since its count, want the 2 counted", n)
	}
	fetch(4)
	if n := pages(holder); n != 4 {
		t.Errorf("holder counts %d pages after a mark, want 4", n)
	}
}
