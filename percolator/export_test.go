package percolator

import (
	"context"
	"time"
)

// Test hooks for package percolator_test.

// SetCrash makes tx's Commit abandon the transaction at the first point p
// for which crash returns true, as a worker dying there would.
func SetCrash(tx *Tx, crash func(p CrashPoint) bool) { tx.crash = crash }

// ErrCrashed is returned by a Commit abandoned by SetCrash.
var ErrCrashed = errCrashed

// CountLocks returns the number of lock cells in the table.
func CountLocks(db *DB) (int, error) {
	n := 0
	err := db.st.ReadRows(context.Background(), "", "", func(_ string, cells []Cell) bool {
		n += len(cells)
		return true
	}, Filter{Family: famLock, KeysOnly: true})
	return n, err
}

// SetIdleWait replaces how w's idle scanners wait between passes (d, or
// until ctx is done); call it before Start.
func SetIdleWait(w *Worker, wait func(ctx context.Context, d time.Duration) error) { w.idleWait = wait }

// HintedLater reports whether w met a hint for row while a task on row was
// in flight, and so looks at row again when that task ends.
func HintedLater(w *Worker, row string) bool {
	w.rowsMu.Lock()
	defer w.rowsMu.Unlock()
	return w.later[row]
}

// OracleAsleep reports whether o's clock stopped ticking for want of
// timestamps taken.
func OracleAsleep(o *Oracle) bool { return o.asleep.Load() }

// PassStart returns a row where one of w's next passes may start.
func PassStart(w *Worker) string { return w.starts.pick() }

// Pass makes one pass of w's scanner of background work (bg) or of the
// rest, from start; it returns how many tasks it dispatched.
func Pass(ctx context.Context, w *Worker, start string, bg bool) (int, error) {
	found, _, _, err := w.pass(ctx, start, bg)
	return found, err
}

// Sweeps returns how many lock sweeps w made.
func Sweeps(w *Worker) int64 { return w.sweeps.Load() }

// LockIndexEntries returns the number of entries in db's lock index.
func LockIndexEntries(db *DB) (int, error) {
	n := 0
	err := db.scanLockIndex(context.Background(), func(indexedTxn) { n++ })
	return n, err
}

// SetMaxPieceCells makes rows of more than n written cells prewrite in
// pieces of n, until t ends.
func SetMaxPieceCells(t interface{ Cleanup(func()) }, n int) {
	old := maxPieceCells
	maxPieceCells = n
	t.Cleanup(func() { maxPieceCells = old })
}
