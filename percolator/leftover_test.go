package percolator_test

import (
	"errors"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// crashCommit commits a transaction writing val to col of rows and
// abandons it at p, as a process killed there would.
func crashCommit(t *testing.T, db *percolator.DB, p percolator.CrashPoint, col, val string, rows ...string) {
	t.Helper()
	tx, err := db.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := tx.Set(r, col, []byte(val)); err != nil {
			t.Fatal(err)
		}
	}
	percolator.SetCrash(tx, func(q percolator.CrashPoint) bool { return q == p })
	if err := tx.Commit(bg); !errors.Is(err, percolator.ErrCrashed) {
		t.Fatalf("Commit = %v, want the injected crash", err)
	}
}

// TestOpenResolvesLeftoverLocks: on an exclusive store, Open resolves every
// lock an earlier process left, at once: committed transactions roll
// forward, the others back, and the first read or write waits for none.
func TestOpenResolvesLeftoverLocks(t *testing.T) {
	skipShared(t, "an exclusive store")
	dir := t.TempDir()
	st := openStore(t, dir)
	// A long TTL: only Open's resolution can clean up in time.
	opt := percolator.Options{LockTTL: time.Hour}
	db, err := percolator.Open(bg, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	set(t, db, "a", "c", "old")
	crashCommit(t, db, percolator.CrashAfterPrewrites, "c", "rolled back", "a", "b")
	crashCommit(t, db, percolator.CrashAfterPrimaryCommit, "d", "committed", "a", "b", "x")
	crashCommit(t, db, percolator.CrashMidSecondaries, "e", "committed", "a", "b", "x", "y", "z")
	if n, err := percolator.CountLocks(db); err != nil || n == 0 {
		t.Fatalf("%d locks before the restart (%v), want some", n, err)
	}
	// The process dies: nothing is closed in order but the store's files.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	st = openStore(t, dir)
	t.Cleanup(func() { st.Close() })
	start := time.Now()
	db, err = percolator.Open(bg, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if n, err := percolator.CountLocks(db); err != nil || n != 0 {
		t.Fatalf("%d locks after Open (%v), want none", n, err)
	}
	want := map[[2]string]string{
		{"a", "c"}: "old", {"b", "c"}: "",
		{"a", "d"}: "committed", {"b", "d"}: "committed", {"x", "d"}: "committed",
		{"a", "e"}: "committed", {"b", "e"}: "committed", {"x", "e"}: "committed",
		{"y", "e"}: "committed", {"z", "e"}: "committed",
	}
	for k, v := range want {
		if got, _ := get(t, db, k[0], k[1]); got != v {
			t.Errorf("%s:%s = %q, want %q", k[0], k[1], got, v)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("restart to reads took %v", d)
	}
}

// TestBlindWriteResolvesDeadLock: a transaction that only writes a cell a
// dead writer left locked resolves the lock and commits, on a shared store
// too (where the writer's death shows by its heartbeat), instead of
// conflicting until it gives up.
func TestBlindWriteResolvesDeadLock(t *testing.T) {
	st := percolatortest.Shared(openStore(t, t.TempDir()))
	t.Cleanup(func() { st.Close() })
	opt := percolator.Options{LockTTL: time.Hour, MaxAttempts: 3}
	dead, err := percolator.Open(bg, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	crashCommit(t, dead, percolator.CrashAfterPrewrites, "c", "never", "a", "b")
	crashCommit(t, dead, percolator.CrashAfterPrimaryCommit, "d", "committed", "a", "b")
	if err := dead.Close(); err != nil { // its heartbeat goes with it
		t.Fatal(err)
	}
	db, err := percolator.Open(bg, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	start := time.Now()
	for _, col := range []string{"c", "d"} {
		err := db.Update(bg, func(tx *percolator.Tx) error {
			return tx.Set("b", col, []byte("blind"))
		})
		if err != nil {
			t.Fatalf("blind write of b:%s: %v", col, err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("blind writes took %v", d)
	}
	for k, v := range map[[2]string]string{
		{"a", "c"}: "", {"b", "c"}: "blind", {"a", "d"}: "committed", {"b", "d"}: "blind",
	} {
		if got, _ := get(t, db, k[0], k[1]); got != v {
			t.Errorf("%s:%s = %q, want %q", k[0], k[1], got, v)
		}
	}
}
