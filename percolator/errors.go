package percolator

import "errors"

var (
	// ErrConflict is returned by Commit when another transaction wrote one of
	// the transaction's cells after it started, or holds a lock on one. The
	// transaction has been rolled back; retrying it (DB.Update does) is safe.
	ErrConflict = errors.New("percolator: write conflict")

	// ErrTooOld is returned by reads whose start timestamp is below the
	// garbage-collection safe point: the versions they need may be gone.
	ErrTooOld = errors.New("percolator: transaction older than the gc safe point")

	// ErrTxDone is returned when a transaction is used after Commit or
	// Rollback.
	ErrTxDone = errors.New("percolator: transaction already committed or rolled back")

	// ErrReadOnly is returned by Set, Delete and Commit on a read-only
	// transaction (DB.View).
	ErrReadOnly = errors.New("percolator: write in a read-only transaction")

	// ErrGaveUp is returned by DB.Update when the transaction still conflicted
	// after the configured number of attempts. It wraps the last error.
	ErrGaveUp = errors.New("percolator: transaction kept conflicting")

	// ErrLocked is returned by Get and Scan when a lock at or before the
	// transaction's start timestamp belongs to a live writer and did not go
	// away while the read waited for it, up to twice Options.LockTTL in all.
	// Retrying later is safe.
	ErrLocked = errors.New("percolator: cell locked by a live transaction")

	// ErrClosed is returned when the DB has been closed.
	ErrClosed = errors.New("percolator: db closed")

	// ErrStoreFailing is returned by Worker.Run when the worker stopped
	// because its store kept failing (WorkerOptions.StopAfter). It wraps
	// the store's last error.
	ErrStoreFailing = errors.New("percolator: store failing")

	// ErrInvalid is returned for malformed arguments: an empty row or column,
	// a reserved column name.
	ErrInvalid = errors.New("percolator: invalid argument")
)
