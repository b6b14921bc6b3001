package engine

import (
	"context"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/serving/feed"
	"github.com/caffeine-go/caffeine/web"
)

// process is one process's connection to a shared store: its engine
// closes it, the store stays open for the others.
type process struct{ percolator.Store }

func (process) Close() error { return nil }

// TestEnginesOnSharedTable: two engines on one table that no process holds
// exclusively (as Cloud Bigtable), both serving the index "main": one
// feeds, the other stands by and says who feeds, and takes over when the
// first closes.
func TestEnginesOnSharedTable(t *testing.T) {
	st, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	shared := percolatortest.Shared(st)
	type running struct {
		e    *Engine
		stop func()
	}
	start := func() running {
		e, err := Open(context.Background(), Config{Dir: t.TempDir(), Store: process{shared}, Table: "shared", GCInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx) }()
		stop := func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run = %v", err)
			}
			if err := e.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
		}
		t.Cleanup(func() {
			if ctx.Err() == nil {
				stop()
			}
		})
		return running{e, stop}
	}
	stats := func(e *Engine) *web.Stats {
		t.Helper()
		e.computeMu.Lock() // as Stats, which the sampler calls meanwhile
		defer e.computeMu.Unlock()
		s, err := e.computeStats(context.Background()) // not the cached one
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}

	a := start()
	wait("the first engine to feed", func() bool { return stats(a.e).Feeder == "feeding" })
	b := start()
	wait("the second engine to stand by", func() bool { return stats(b.e).FeederHolder != "" })
	if s := stats(b.e); s.Feeder != "standby" || s.IndexName != feed.DefaultIndexName {
		t.Fatalf("the second engine: feeder %q, index %q", s.Feeder, s.IndexName)
	}
	if s := stats(a.e); s.Feeder != "feeding" {
		t.Fatalf("the first engine's feeder is %q once the second started", s.Feeder)
	}
	if a, b := feeding(t, a.e), feeding(t, b.e); a != 1 || b != 0 {
		t.Fatalf("caffeine_feeder_feeding = %v and %v, want 1 and 0", a, b)
	}
	a.stop()
	wait("the second engine to take over", func() bool { return stats(b.e).Feeder == "feeding" })
	if v := feeding(t, b.e); v != 1 {
		t.Fatalf("caffeine_feeder_feeding = %v after the takeover", v)
	}
}

// feeding returns e's caffeine_feeder_feeding{index="main"}.
func feeding(t *testing.T, e *Engine) float64 {
	t.Helper()
	mfs, err := e.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "caffeine_feeder_feeding" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "index" && l.GetValue() == feed.DefaultIndexName {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatal("no caffeine_feeder_feeding{index=\"main\"}")
	return 0
}

// TestEnginesReplicas: engines of two index names on one shared table
// feed at once (replicas); the name registered second says it backfills
// until GC has passed its registration, and is live then.
func TestEnginesReplicas(t *testing.T) {
	st, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	shared := percolatortest.Shared(st)
	var es []*Engine
	for _, name := range []string{"main", "r2"} {
		e, err := Open(context.Background(), Config{Dir: t.TempDir(), Store: process{shared}, Table: "shared", IndexName: name,
			GCInterval: 50 * time.Millisecond, GCGrace: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run = %v", err)
			}
			e.Close()
		})
		es = append(es, e)
	}
	if _, err := Open(context.Background(), Config{Dir: t.TempDir(), Store: process{shared}, Table: "shared", IndexName: "No/Good"}); err == nil {
		t.Fatal("an engine opened with a bad index name")
	}
	stats := func(e *Engine) *web.Stats {
		t.Helper()
		e.computeMu.Lock() // as Stats, which the sampler calls meanwhile
		defer e.computeMu.Unlock()
		s, err := e.computeStats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	backfilled := false
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		a, b := stats(es[0]), stats(es[1])
		if a.Feeder == "feeding" && b.Feeder == "feeding" && a.IndexState == "live" {
			switch b.IndexState {
			case "backfilling":
				backfilled = true
			case "live":
				if !backfilled {
					t.Fatal("r2 was never backfilling")
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("main is %s %q, r2 %s %q", a.Feeder, a.IndexState, b.Feeder, b.IndexState)
		}
	}
}
