package percolator

import (
	"context"
	"fmt"
	"time"
)

// txnStatus is what the primary cell says about a transaction.
type txnStatus int

const (
	statusLocked     txnStatus = iota // primary lock still there: undecided
	statusCommitted                   // primary has a write record for the transaction
	statusRolledBack                  // neither: the transaction is dead for good
)

// resolve deals with the lock l on (row, col) of the transaction that
// started at ts. If its writer is alive and the lock fresh it does nothing
// and reports false; otherwise it rolls the cell forward or back, deciding
// by the primary, and reports true (section 2.2: lazy cleanup).
func (db *DB) resolve(ctx context.Context, row, col string, ts uint64, l lock) (bool, error) {
	if live, err := db.lockLive(ctx, l, ts); err != nil || live {
		return false, err
	}
	for {
		status, commitTs, plock, err := db.primaryStatus(ctx, l.primaryRow, l.primaryCol, ts)
		if err != nil {
			return false, err
		}
		switch status {
		case statusCommitted:
			return true, db.rollForward(ctx, row, col, ts, commitTs, l)
		case statusRolledBack:
			return true, db.rollbackCell(ctx, row, col, ts)
		}
		// The primary is still locked. A writer that refreshed the primary
		// during a long commit is alive even if this lock looks old.
		if live, err := db.lockLive(ctx, plock, ts); err != nil || live {
			return false, err
		}
		// Roll the primary back first, under the row's atomicity: once it is
		// gone the writer can no longer commit.
		if err := db.rollbackCell(ctx, l.primaryRow, l.primaryCol, ts); err != nil {
			return false, err
		}
		db.opt.Logger.Info("rolled back abandoned transaction", "start_ts", ts, "primary_row", l.primaryRow, "primary_col", l.primaryCol, "writer", l.writer)
	}
}

// lockLive reports whether l's writer may still be working on it: the writer
// is alive and the lock's wall time is within its TTL.
func (db *DB) lockLive(ctx context.Context, l lock, ts uint64) (bool, error) {
	if time.Now().UnixMilli() > l.wallMs+l.ttlMs {
		return false, nil
	}
	return db.writerAlive(ctx, l, ts)
}

// primaryStatus reads the primary cell of the transaction that started at
// ts. With statusCommitted it also returns the commit timestamp; with
// statusLocked the primary lock.
func (db *DB) primaryStatus(ctx context.Context, row, col string, ts uint64) (txnStatus, uint64, lock, error) {
	cells, err := db.st.ReadRow(ctx, row,
		Filter{Family: famLock, Column: col, MinTs: ts, MaxTs: ts},
		Filter{Family: famWrite, Column: col, MinTs: ts})
	if err != nil {
		return 0, 0, lock{}, fmt.Errorf("percolator: read primary %q %q: %w", row, col, err)
	}
	var (
		pl     lock
		locked bool
	)
	for _, c := range cells {
		switch c.Family {
		case famWrite:
			w, err := decodeWrite(c.Value)
			if err != nil {
				return 0, 0, lock{}, fmt.Errorf("%w: %q %q@%d", err, row, col, c.Ts)
			}
			if w.startTs == ts {
				return statusCommitted, c.Ts, lock{}, nil
			}
		case famLock:
			if pl, err = decodeLock(c.Value); err != nil {
				return 0, 0, lock{}, fmt.Errorf("%w: %q %q@%d", err, row, col, c.Ts)
			}
			locked = true
		}
	}
	if locked {
		return statusLocked, 0, pl, nil
	}
	return statusRolledBack, 0, lock{}, nil
}

// rollForward replaces the lock l of a committed transaction by its write
// record, as the writer would have.
func (db *DB) rollForward(ctx context.Context, row, col string, startTs, commitTs uint64, l lock) error {
	rec := write{kind: l.kind, startTs: startTs, inline: l.inline, value: l.value}.encode()
	muts := []Mutation{
		{Op: SetCell, Family: famWrite, Column: col, Ts: commitTs, Value: rec},
		{Op: DeleteCell, Family: famLock, Column: col, Ts: startTs},
	}
	if n, ok := commitNotify(col, commitTs); ok {
		muts = append(muts, n) // the writer died before setting it
	}
	_, err := db.st.CheckAndMutateRow(ctx, row,
		[]Filter{{Family: famLock, Column: col, MinTs: startTs, MaxTs: startTs, KeysOnly: true}},
		muts, nil)
	if err != nil {
		return fmt.Errorf("percolator: roll forward %q %q@%d: %w", row, col, startTs, err)
	}
	return nil
}

// rollbackCell erases the lock and data of the transaction that started at
// ts from (row, col), if the lock is still there.
func (db *DB) rollbackCell(ctx context.Context, row, col string, ts uint64) error {
	_, err := db.st.CheckAndMutateRow(ctx, row,
		[]Filter{{Family: famLock, Column: col, MinTs: ts, MaxTs: ts, KeysOnly: true}},
		[]Mutation{
			{Op: DeleteCell, Family: famLock, Column: col, Ts: ts},
			{Op: DeleteCell, Family: famData, Column: col, Ts: ts},
			// The notification announced a write that will never be:
			// nothing is left for an observer to do.
			{Op: DeleteCell, Family: famNotify, Column: col, Ts: ts},
		}, nil)
	if err != nil {
		return fmt.Errorf("percolator: roll back %q %q@%d: %w", row, col, ts, err)
	}
	return nil
}

// CleanLocks resolves every lock in the table whose writer is dead or stuck:
// rolled forward if its transaction committed, back otherwise. Readers do
// this lazily for the cells they read; a sweep also reaches cells nobody
// reads (such as the internal cells that carry Tx.Notify's notifications).
// It reports how many locks it resolved. Locks of live writers are left.
//
// On a shared store it reads the lock index (lockindex.go), not the
// table, once the index is complete; until then it scans the table's
// locks, and completes the index when that scan resolved them all. On an
// ExclusiveStore it scans the locks, which the store keeps in memory.
func (db *DB) CleanLocks(ctx context.Context) (int, error) {
	indexed, err := db.lockIndexed(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	if !indexed {
		m, all, err := db.cleanAllLocks(ctx)
		n += m
		if err != nil {
			return n, err
		}
		if all && db.ex == nil {
			if err := db.markLockIndexed(ctx); err != nil {
				return n, err
			}
		}
	}
	if db.ex != nil {
		return n, nil // no index
	}
	var txns []indexedTxn
	if err := db.scanLockIndex(ctx, func(t indexedTxn) { txns = append(txns, t) }); err != nil {
		return n, err
	}
	for _, t := range txns {
		m, _, err := db.cleanIndexed(ctx, t)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// cleanAllLocks is CleanLocks by a scan of the table's locks. all reports
// whether every lock left (of a live writer) has its lock index entry.
func (db *DB) cleanAllLocks(ctx context.Context) (n int, all bool, err error) {
	type held struct {
		row, col string
		ts       uint64
		l        lock
	}
	var locks []held
	err = db.scanLocks(ctx, func(row, col string, ts uint64, l lock) {
		locks = append(locks, held{row, col, ts, l})
	})
	if err != nil {
		return 0, false, err
	}
	var left []held
	for _, h := range locks {
		cleaned, err := db.resolve(ctx, h.row, h.col, h.ts, h.l)
		if err != nil {
			return n, false, err
		}
		if cleaned {
			n++
		} else {
			left = append(left, h)
		}
	}
	if len(left) == 0 || db.ex != nil {
		return n, true, nil
	}
	// A live writer's lock: its transaction wrote its entry before it
	// (scanned after the locks), unless its writer predates the index.
	type txn struct {
		row, col string
		ts       uint64
	}
	entries := make(map[txn]bool)
	if err := db.scanLockIndex(ctx, func(t indexedTxn) { entries[txn{t.primaryRow, t.primaryCol, t.startTs}] = true }); err != nil {
		return n, false, err
	}
	for _, h := range left {
		if entries[txn{h.l.primaryRow, h.l.primaryCol, h.ts}] {
			continue
		}
		// No entry: the transaction ended since (its lock went first), or
		// its writer writes none.
		cells, err := db.st.ReadRow(ctx, h.row, Filter{Family: famLock, Column: h.col, MinTs: h.ts, MaxTs: h.ts, KeysOnly: true})
		if err != nil {
			return n, false, fmt.Errorf("percolator: read lock %q %q: %w", h.row, h.col, err)
		}
		if len(cells) > 0 {
			return n, false, nil
		}
	}
	return n, true, nil
}

// scanLocks calls fn for every lock in the table, reading the store
// directly, outside any transaction.
func (db *DB) scanLocks(ctx context.Context, fn func(row, col string, ts uint64, l lock)) error {
	var decodeErr error
	err := db.st.ReadRows(ctx, "", "", func(row string, cells []Cell) bool {
		for _, c := range cells {
			l, err := decodeLock(c.Value)
			if err != nil {
				decodeErr = fmt.Errorf("%w: %q %q@%d", err, row, c.Column, c.Ts)
				return false
			}
			fn(row, c.Column, c.Ts, l)
		}
		return true
	}, Filter{Family: famLock})
	if err == nil {
		err = decodeErr
	}
	if err != nil {
		return fmt.Errorf("percolator: scan locks: %w", err)
	}
	return nil
}
