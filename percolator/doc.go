// Package percolator implements Percolator (Peng & Dabek, OSDI 2010):
// cross-row snapshot-isolation transactions and a timestamp oracle on a
// Bigtable-like Store.
//
// # Basics
//
// Open a DB on a Store (percolator/badger for one machine), then run
// transactions through closures:
//
//	db, err := percolator.Open(ctx, store, percolator.Options{})
//	err = db.Update(ctx, func(tx *percolator.Tx) error {
//		v, err := tx.Get(ctx, "com.example.www/", "page:title")
//		...
//		return tx.Set("com.example.www/", "page:title", []byte("Example"))
//	})
//
// Update retries conflicts with jittered exponential backoff; View runs a
// read-only snapshot; Begin/Commit/Rollback give full control.
//
// # Layout
//
// A user column C of a row is stored in four physical families (Figure 5 of
// the paper): d:C holds values at their writer's start timestamp, l:C locks
// of uncommitted transactions, w:C write records at commit timestamps that
// point at the data, and n:C notifications in a locality group of their own.
// Values up to Options.InlineMax bytes are also stored in the write record,
// so most reads are a single store lookup.
//
// # Commit
//
// Commit prewrites the primary cell's row, then the secondary rows (in
// parallel), takes a commit timestamp and replaces the primary lock by a
// write record: that single-row operation is the commit point. Secondaries
// are committed after; a reader that meets one of their locks decides by the
// primary (roll forward or roll back). On an ExclusiveStore a transaction
// commits in one store operation without locks (CheckAndMutateRowsAt): its
// rows are held while the commit timestamp is taken and written at once.
//
// # Caveats
//
//   - Snapshot isolation is not serializability: write skew is possible.
//   - Locks of a live writer block readers up to twice the LockTTL; locks of
//     a dead or stuck writer are cleaned up by whoever meets them, and by
//     the workers' sweep: on a shared store only the worker holding the
//     "locks" Duty sweeps, every LockTTL. The sweep reads the lock index
//     (lockindex.go: an entry per two-phase commit, written before its
//     first lock), not the table; every process writing a table must
//     write the index.
//   - GC removes versions below a safe point; reads below it fail with
//     ErrTooOld. The safe point waits for this DB's running transactions, not
//     for other processes' (run GC where the transactions run).
//   - Rows beginning with 0x00 are reserved for bookkeeping.
//   - On a store other processes share (Bigtable), the workers split the
//     notification scans between them (rows \x00meta/scanner/ID): the rows
//     of a worker that died without Close wait until its beat is LockTTL +
//     ClockSkew old. Rows a process notified run there at once regardless.
package percolator
