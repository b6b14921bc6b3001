package percolator_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// scanCounter is a store that counts the ReadRows calls that cover the
// table's user rows: scans of the table.
type scanCounter struct {
	percolator.Store
	tableScans atomic.Int64
}

func (s *scanCounter) ReadRows(ctx context.Context, start, end string, fn func(string, []percolator.Cell) bool, filters ...percolator.Filter) error {
	if start < "\x01" && (end == "" || end > "\x01") {
		s.tableScans.Add(1)
	}
	return s.Store.ReadRows(ctx, start, end, fn, filters...)
}

// The lock sweep of a shared table reads the lock index, not the table:
// the locks of dead writers on rows nobody reads are resolved, those of
// a committed transaction rolled forward and those of one that never got
// to its commit point rolled back, whatever the table's size, and an
// entry written by a writer that died before its first lock goes too.
func TestLockSweepReadsIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) (percolator.Store, func() int64)
	}{
		{"badger-shared", func(t *testing.T) (percolator.Store, func() int64) {
			st := &scanCounter{Store: percolatortest.Shared(openStore(t, t.TempDir()))}
			return st, st.tableScans.Load
		}},
		// The Bigtable store counts its scans of the whole table itself.
		{"bigtable", func(t *testing.T) (percolator.Store, func() int64) {
			st := bigtableStore(t, "locksweep")
			return st, func() int64 { return st.Calls()["ReadRows(all)"] }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, scans := tc.open(t)
			testLockSweepReadsIndex(t, st, scans)
		})
	}
}

func testLockSweepReadsIndex(t *testing.T, st percolator.Store, tableScans func() int64) {
	const ttl = 200 * time.Millisecond
	db := percolatortest.OpenOn(t, st, percolator.Options{LockTTL: ttl, ClockSkew: 10 * time.Millisecond})

	const pages = 300
	err := db.Update(bg, func(tx *percolator.Tx) error {
		for i := range pages {
			if err := tx.Set(fmt.Sprintf("page/%04d", i), "body", []byte("text")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The first sweep finds no index yet: it scans the table once, then
	// marks the index complete.
	if _, err := db.CleanLocks(bg); err != nil {
		t.Fatal(err)
	}
	if n := tableScans(); n != 1 {
		t.Fatalf("first sweep: %d scans of the table, want 1", n)
	}

	crashOn := func(db *percolator.DB, at percolator.CrashPoint, rows ...string) *percolator.Tx {
		t.Helper()
		tx, err := db.Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if err := tx.Set(r, "c", []byte("new")); err != nil {
				t.Fatal(err)
			}
		}
		percolator.SetCrash(tx, func(p percolator.CrashPoint) bool { return p == at })
		if err := tx.Commit(bg); !errors.Is(err, percolator.ErrCrashed) {
			t.Fatalf("Commit = %v, want ErrCrashed", err)
		}
		return tx
	}
	crash := func(at percolator.CrashPoint, rows ...string) *percolator.Tx {
		t.Helper()
		return crashOn(db, at, rows...)
	}
	crash(percolator.CrashAfterPrewrites, "back/1", "back/2", "back/3")
	crash(percolator.CrashAfterPrimaryCommit, "fwd/1", "fwd/2")
	crash(percolator.CrashAfterIndexEntry, "none/1", "none/2")
	if n, _ := percolator.CountLocks(db); n != 4 {
		t.Fatalf("%d locks after the crashes, want 4", n)
	}
	time.Sleep(3 * ttl) // the locks are stale, the index grace past

	before := tableScans()
	n, err := db.CleanLocks(bg)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("CleanLocks resolved %d locks, want 4", n)
	}
	if scans := tableScans() - before; scans != 0 {
		t.Errorf("sweep: %d scans of the table (of %d pages), want none", scans, pages)
	}
	if n, _ := percolator.CountLocks(db); n != 0 {
		t.Errorf("%d locks after the sweep", n)
	}
	if n, err := percolator.LockIndexEntries(db); err != nil || n != 0 {
		t.Errorf("%d lock index entries after the sweep (%v), want 0", n, err)
	}
	for row, want := range map[string]string{"back/1": "", "back/3": "", "fwd/1": "new", "fwd/2": "new", "none/2": ""} {
		if v, _ := get(t, db, row, "c"); v != want {
			t.Errorf("%s = %q, want %q", row, v, want)
		}
	}

	// Transactions that finish leave no entry behind.
	set(t, db, "a", "c", "1")
	err = db.Update(bg, func(tx *percolator.Tx) error {
		tx.Set("a", "c", []byte("2"))
		return tx.Set("b", "c", []byte("2"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := percolator.LockIndexEntries(db); err != nil || n != 0 {
		t.Errorf("%d lock index entries after two commits (%v), want 0", n, err)
	}

	// Another process's fresh entry without a lock may be a prewrite on
	// its way: it stays until LockTTL and twice ClockSkew have passed.
	other, err := percolator.Open(bg, st, percolator.Options{LockTTL: ttl, ClockSkew: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	crashOn(other, percolator.CrashAfterIndexEntry, "late/1", "late/2")
	if _, err := db.CleanLocks(bg); err != nil {
		t.Fatal(err)
	}
	if n, err := percolator.LockIndexEntries(db); err != nil || n != 1 {
		t.Errorf("%d lock index entries after a sweep right after another writer's entry (%v), want it kept", n, err)
	}
	time.Sleep(3 * ttl / 2)
	if _, err := db.CleanLocks(bg); err != nil {
		t.Fatal(err)
	}
	if n, err := percolator.LockIndexEntries(db); err != nil || n != 0 {
		t.Errorf("%d lock index entries after the grace (%v), want 0", n, err)
	}
}
