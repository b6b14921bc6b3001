package percolator_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// GC never changes what a read at or above the safe point sees; reads below
// it fail with ErrTooOld instead of returning collected data. Nor does
// AdvanceSafePoint, GC without the pass.
func TestGCKeepsSnapshots(t *testing.T) {
	t.Run("gc", func(t *testing.T) {
		st := testKeepsSnapshots(t, func(db *percolator.DB) (percolator.GCStats, error) { return db.GC(bg) })
		if st.Cells == 0 {
			t.Fatal("GC collected nothing")
		}
	})
	t.Run("advance", func(t *testing.T) {
		testKeepsSnapshots(t, func(db *percolator.DB) (percolator.GCStats, error) {
			safe, err := db.AdvanceSafePoint(bg)
			return percolator.GCStats{SafePoint: safe}, err
		})
	})
}

// testKeepsSnapshots checks that collect (a GC pass, or less) changes no
// read at or above the safe point it returns. It returns what two calls
// of collect did (the columns of both, the second's safe point).
func testKeepsSnapshots(t *testing.T, collect func(*percolator.DB) (percolator.GCStats, error)) percolator.GCStats {
	db := openDB(t, percolator.Options{GCGrace: time.Nanosecond, InlineMax: 4})
	type snap struct {
		ts   uint64
		want map[string]string
	}
	var snaps []snap
	state := map[string]string{}
	write := func(i int) {
		row := fmt.Sprintf("r%d", i%5)
		if i%7 == 6 {
			tx, _ := db.Begin(bg)
			tx.Delete(row, "c")
			if err := tx.Commit(bg); err != nil {
				t.Fatal(err)
			}
			delete(state, row)
		} else {
			v := fmt.Sprintf("value-%03d", i) // longer than InlineMax: data cells too
			set(t, db, row, "c", v)
			state[row] = v
		}
		ts, _ := db.Oracle().Next(bg)
		cp := map[string]string{}
		for k, v := range state {
			cp[k] = v
		}
		snaps = append(snaps, snap{ts, cp})
	}
	for i := range 60 {
		write(i)
	}
	// The safe point is at most the wall clock less the grace period, and
	// timestamps are wall-clock milliseconds: let the clock pass the writes
	// above, or on a fast machine GC finds them all too young.
	time.Sleep(3 * time.Millisecond)
	// A transaction that started before GC keeps its snapshot, and so do
	// the snapshots taken after it.
	old, _ := db.Begin(bg)
	defer old.Rollback()
	oldWant := snaps[len(snaps)-1].want
	for i := 60; i < 90; i++ {
		write(i)
	}

	// Two passes: on a shared store a pass moves the safe point only up
	// to the candidate of the pass before it.
	first, err := collect(db)
	if err != nil {
		t.Fatal(err)
	}
	st, err := collect(db)
	if err != nil {
		t.Fatal(err)
	}
	st.Cells += first.Cells
	if st.SafePoint > old.StartTs() {
		t.Fatalf("safe point %d passed a running transaction at %d", st.SafePoint, old.StartTs())
	}
	if st.SafePoint <= snaps[0].ts {
		t.Fatalf("safe point %d did not pass the first write's snapshot at %d", st.SafePoint, snaps[0].ts)
	}
	for r := range 5 {
		row := fmt.Sprintf("r%d", r)
		v, err := old.Get(bg, row, "c")
		if err != nil || string(v) != oldWant[row] {
			t.Fatalf("running txn read %s = %q, %v; want %q", row, v, err, oldWant[row])
		}
	}
	checked, refused := 0, 0
	for _, s := range snaps {
		err := db.ViewAt(bg, s.ts, func(tx *percolator.Tx) error {
			for r := range 5 {
				row := fmt.Sprintf("r%d", r)
				v, err := tx.Get(bg, row, "c")
				if err != nil {
					return err
				}
				if w, ok := s.want[row]; string(v) != w || (v != nil) != ok {
					return fmt.Errorf("at %d: %s = %q, want %q", s.ts, row, v, w)
				}
			}
			return nil
		})
		switch {
		case s.ts < st.SafePoint:
			if !errors.Is(err, percolator.ErrTooOld) {
				t.Fatalf("read at %d below safe point %d: %v, want ErrTooOld", s.ts, st.SafePoint, err)
			}
			refused++
		case err != nil:
			t.Fatal(err)
		default:
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no snapshot above the safe point was checked")
	}
	t.Logf("safe point %d: %d snapshots unchanged, %d refused, %d columns collected", st.SafePoint, checked, refused, st.Cells)
	return st
}

// discardSpy is a Badger store that records the last Discard.
type discardSpy struct {
	*badger.Store
	got uint64
}

func (s *discardSpy) Discard(safeTs uint64) {
	s.got = safeTs
	s.Store.Discard(safeTs)
}

// AdvanceSafePoint hands the safe point it moves to to a Discarder store.
func TestAdvanceSafePointDiscards(t *testing.T) {
	st := &discardSpy{Store: openStore(t, t.TempDir())}
	db := percolatortest.OpenOn(t, st, percolator.Options{GCGrace: time.Nanosecond})
	set(t, db, "r", "c", "one")
	set(t, db, "r", "c", "two")
	time.Sleep(3 * time.Millisecond) // timestamps are wall-clock ms: let the writes age
	safe, err := db.AdvanceSafePoint(bg)
	if err != nil {
		t.Fatal(err)
	}
	if safe == 0 || st.got != safe || db.SafePoint() != safe {
		t.Fatalf("AdvanceSafePoint = %d; the store was told %d, the DB's safe point is %d", safe, st.got, db.SafePoint())
	}
	if v, _ := get(t, db, "r", "c"); v != "two" {
		t.Fatalf("r:c = %q after AdvanceSafePoint, want two", v)
	}
}

// Rewriting one row forever does not grow the repository without bound.
func TestGCBoundsDisk(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	db, st := percolatortest.Open(t, percolator.Options{GCGrace: time.Nanosecond})
	val := make([]byte, 2048) // beyond inlining and Badger's value threshold
	var peak int64
	for i := 0; i < n; i++ {
		val[0], val[1] = byte(i), byte(i>>8)
		if err := db.Update(bg, func(tx *percolator.Tx) error {
			return tx.Set("hot", "body", val)
		}); err != nil {
			t.Fatal(err)
		}
		if (i+1)%(n/5) == 0 {
			if _, err := db.GC(bg); err != nil {
				t.Fatal(err)
			}
			lsm, vlog := st.Size()
			peak = max(peak, lsm+vlog)
			t.Logf("after %d rewrites: lsm %d KB, vlog %d KB", i+1, lsm>>10, vlog>>10)
		}
	}
	written := int64(n) * int64(len(val))
	lsm, vlog := st.Size()
	if lsm+vlog > written/4 {
		t.Fatalf("%d MB on disk after %d MB written and GC: not bounded", (lsm+vlog)>>20, written>>20)
	}
	if v, _ := get(t, db, "hot", "body"); len(v) != len(val) {
		t.Fatalf("latest value lost: %d bytes", len(v))
	}
}

// CommitBound stays at or below the start of every transaction that may
// still write, a running one and one whose writer died with its locks
// left, and otherwise follows the newest timestamp, not the GC safe point
// held back by the grace period.
func TestCommitBound(t *testing.T) {
	db := openDB(t, percolator.Options{GCGrace: time.Hour})
	bound := func() uint64 {
		t.Helper()
		b, err := db.CommitBound(bg)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	committed := set(t, db, "a", "c", "1")
	if b := bound(); b <= committed {
		t.Fatalf("nothing running: bound %d, want past the last commit %d", b, committed)
	}

	running, _ := db.Begin(bg)
	running.Set("b", "c", []byte("2"))
	set(t, db, "a", "c", "3")
	if b := bound(); b > running.StartTs() {
		t.Fatalf("bound %d past the start %d of a running transaction", b, running.StartTs())
	}
	if err := running.Commit(bg); err != nil {
		t.Fatal(err)
	}
	if b := bound(); b <= running.StartTs() {
		t.Fatalf("after its commit: bound %d, want past %d", b, running.StartTs())
	}

	// A writer that died between its prewrites and its commit: its locks
	// can still be rolled forward or back, so they hold the bound.
	dead, _ := db.Begin(bg)
	dead.Set("d", "c", []byte("4"))
	dead.Set("e", "c", []byte("4"))
	percolator.SetCrash(dead, func(p percolator.CrashPoint) bool { return p == percolator.CrashAfterPrewrites })
	if err := dead.Commit(bg); !errors.Is(err, percolator.ErrCrashed) {
		t.Fatal(err)
	}
	set(t, db, "a", "c", "5")
	if b := bound(); b > dead.StartTs() {
		t.Fatalf("bound %d past the start %d of a transaction whose locks are left", b, dead.StartTs())
	}
	// Reads clean the dead writer's locks up (its DB knows it is not
	// running), and the bound moves on.
	if v, ok := get(t, db, "d", "c"); ok {
		t.Fatalf("d = %q from a transaction that never committed", v)
	}
	get(t, db, "e", "c")
	if b := bound(); b <= dead.StartTs() {
		t.Fatalf("locks cleaned: bound %d, want past %d", b, dead.StartTs())
	}
}
