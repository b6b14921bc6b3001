package percolator_test

import (
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// Concurrent callers get unique timestamps, each caller's strictly
// increasing, also when the oracle must refill its range constantly.
func TestOracleConcurrent(t *testing.T) {
	for _, window := range []uint64{7, 1 << 20} {
		db := openDB(t, percolator.Options{OracleWindow: window})
		const callers, each = 64, 2000
		got := make([][]uint64, callers)
		var wg sync.WaitGroup
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					ts, err := db.Oracle().Next(bg)
					if err != nil {
						t.Error(err)
						return
					}
					got[i] = append(got[i], ts)
				}
			}()
		}
		wg.Wait()
		seen := make(map[uint64]bool, callers*each)
		for i, seq := range got {
			for j, ts := range seq {
				if j > 0 && ts <= seq[j-1] {
					t.Fatalf("window %d: caller %d got %d after %d", window, i, ts, seq[j-1])
				}
				if seen[ts] {
					t.Fatalf("window %d: timestamp %d handed out twice", window, ts)
				}
				seen[ts] = true
			}
		}
	}
}

// Timestamps say when they were taken, also when few are taken: the oracle
// once handed out its reserved range one by one, so a quiet table's
// timestamps fell minutes behind the clock.
func TestOracleFollowsClock(t *testing.T) {
	skipShared(t, "the local oracle's clock")
	db := openDB(t, percolator.Options{})
	for range 60 {
		before := time.Now().Truncate(time.Millisecond)
		ts, err := db.Oracle().Next(bg)
		if err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		// The oracle's clock is refreshed every millisecond; allow for
		// a busy machine's late ticks.
		if got := percolator.TimeFromTs(ts); got.Before(before.Add(-50*time.Millisecond)) || got.After(after) {
			t.Fatalf("timestamp taken between %v and %v says %v", before, after, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// An oracle nobody asks stops its millisecond clock, and the first
// timestamp after that is still current: the asker reads the time itself.
func TestOracleClockSleeps(t *testing.T) {
	skipShared(t, "the local oracle's clock")
	db := openDB(t, percolator.Options{})
	o := db.Oracle()
	for range 5 {
		deadline := time.Now().Add(10 * time.Second)
		for !percolator.OracleAsleep(o) {
			if time.Now().After(deadline) {
				t.Fatal("the oracle's clock still ticks 10 s after the last timestamp")
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // let the sleeping clock fall behind
		before := time.Now().Truncate(time.Millisecond)
		ts, err := o.Next(bg)
		if err != nil {
			t.Fatal(err)
		}
		if got := percolator.TimeFromTs(ts); got.Before(before) {
			t.Fatalf("first timestamp after the clock slept says %v, taken after %v", got, before)
		}
		if percolator.OracleAsleep(o) {
			t.Fatal("the clock sleeps after a timestamp was taken")
		}
	}
}

// After a restart, timestamps continue above everything handed out before,
// even though the old range was not used up.
func TestOracleRestart(t *testing.T) {
	dir := t.TempDir()
	var last uint64
	for run := range 3 {
		st := openStore(t, dir)
		db, err := percolator.Open(bg, st, percolator.Options{OracleWindow: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		for range 100 {
			ts, err := db.Oracle().Next(bg)
			if err != nil {
				t.Fatal(err)
			}
			if ts <= last {
				t.Fatalf("run %d: %d after %d", run, ts, last)
			}
			last = ts
		}
		db.Close()
		st.Close()
	}
}

func BenchmarkOracle(b *testing.B) {
	db := openDB(b, percolator.Options{})
	b.SetParallelism(32) // 64 callers on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.Oracle().Next(bg); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ts/s")
}
