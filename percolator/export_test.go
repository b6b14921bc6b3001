package percolator

import "context"

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
