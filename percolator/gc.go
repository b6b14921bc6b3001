package percolator

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The GC safe point is persisted so that a restarted DB keeps refusing
// reads the collected versions would have served.
// On a shared store the row also holds the candidate the next pass
// moves the safe point to at most (gcNextColumn), and the GC lease
// (gcLeaseColumn); see advanceSharedSafePoint.
const (
	gcRow         = "\x00meta/gc"
	gcColumn      = "safe"
	gcNextColumn  = "next"
	gcLeaseColumn = "lease"
)

// loadSafePoint moves the DB's safe point up to the one in the table.
func (db *DB) loadSafePoint(ctx context.Context) error {
	safe, _, err := db.readSafePoint(ctx)
	if err != nil {
		return err
	}
	for cur := db.safe.Load(); cur < safe && !db.safe.CompareAndSwap(cur, safe); cur = db.safe.Load() {
	}
	return nil
}

// readSafePoint returns the safe point and the next candidate in the
// table.
func (db *DB) readSafePoint(ctx context.Context) (safe, next uint64, err error) {
	cells, err := db.st.ReadRow(ctx, gcRow,
		Filter{Family: famMeta, Column: gcColumn, Latest: true},
		Filter{Family: famMeta, Column: gcNextColumn, Latest: true})
	if err != nil {
		return 0, 0, fmt.Errorf("percolator: read gc safe point: %w", err)
	}
	for _, c := range cells {
		switch c.Column {
		case gcColumn:
			safe = uint64(decodeInt64(c.Value))
		case gcNextColumn:
			next = uint64(decodeInt64(c.Value))
		}
	}
	return safe, next, nil
}

// SafePoint returns the GC safe point: reads below it fail with ErrTooOld.
func (db *DB) SafePoint() uint64 { return db.safe.Load() }

// GCStats describes one GC pass.
type GCStats struct {
	SafePoint uint64 // the safe point the pass collected below
	Cells     int    // columns whose old versions were deleted
	Duration  time.Duration
	// Busy: another process held the GC lease, and the pass did nothing.
	Busy bool
}

// GC deletes the versions no reader can need any more and lets the store
// reclaim their space. The safe point is the oldest of: now minus
// Options.GCGrace, the oldest running transaction of this DB, and the oldest
// lock in the table (a lock still to be rolled forward needs the history
// around it). For every column, the newest write at or below the safe point
// stays readable; older write records and data go. GC is safe to run
// concurrently with transactions; run one GC at a time.
func (db *DB) GC(ctx context.Context) (GCStats, error) {
	began := time.Now()
	safe, err := db.moveSafePoint(ctx)
	if errors.Is(err, errGCBusy) {
		return GCStats{SafePoint: db.safe.Load(), Busy: true}, nil
	}
	if err != nil {
		return GCStats{}, err
	}
	st := GCStats{SafePoint: safe}
	if safe == 0 {
		return st, nil // nothing to collect (and MaxTs 0 means no bound)
	}

	var batch []RowMutation
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := db.st.MutateRows(ctx, batch)
		batch = batch[:0]
		return err
	}
	var cbErr error
	err = db.st.ReadRows(ctx, "", "", func(row string, cells []Cell) bool {
		var muts []Mutation
		for i := 0; i < len(cells); {
			// cells of one column are adjacent, newest first
			j := i + 1
			for j < len(cells) && cells[j].Column == cells[i].Column {
				j++
			}
			newest := cells[i]
			w, err := decodeWrite(newest.Value)
			if err != nil {
				cbErr = fmt.Errorf("%w: %q %q@%d", err, row, newest.Column, newest.Ts)
				return false
			}
			switch {
			case w.kind == kindDelete:
				// Nothing at or below the safe point is readable: drop it all.
				muts = append(muts,
					Mutation{Op: DeleteOlder, Family: famWrite, Column: newest.Column, Ts: newest.Ts + 1},
					Mutation{Op: DeleteOlder, Family: famData, Column: newest.Column, Ts: w.startTs + 1})
			case j-i > 1:
				muts = append(muts,
					Mutation{Op: DeleteOlder, Family: famWrite, Column: newest.Column, Ts: newest.Ts},
					Mutation{Op: DeleteOlder, Family: famData, Column: newest.Column, Ts: w.startTs})
			}
			i = j
		}
		if len(muts) > 0 {
			st.Cells += len(muts) / 2
			batch = append(batch, RowMutation{Row: row, Mutations: muts})
			if len(batch) >= 256 {
				if cbErr = flush(); cbErr != nil {
					return false
				}
			}
		}
		return true
	}, Filter{Family: famWrite, MaxTs: safe})
	if err == nil {
		err = cbErr
	}
	if err == nil {
		err = flush()
	}
	if err != nil {
		return st, fmt.Errorf("percolator: gc: %w", err)
	}
	if c, ok := db.st.(Compactor); ok {
		if err := c.Compact(ctx, safe); err != nil {
			return st, fmt.Errorf("percolator: gc compact: %w", err)
		}
	}
	st.Duration = time.Since(began)
	return st, nil
}

// AdvanceSafePoint moves the safe point up as a GC pass does, and hands
// it to the store if it is a Discarder, but makes no pass: it reads no
// row but the locks and forces no compaction. So what the store's own
// deletions hide below it (notifications answered, locks released, the
// rows a GC pass deleted before) goes as the store compacts anyway, while
// the old versions that transactions leave (overwritten and deleted
// cells) stay until a GC pass. It suits a bulk load, where a pass would
// read every row and rewrite the table to collect little. It returns the
// safe point; when another process holds the GC lease it returns the
// current one and leaves it.
func (db *DB) AdvanceSafePoint(ctx context.Context) (uint64, error) {
	safe, err := db.moveSafePoint(ctx)
	if errors.Is(err, errGCBusy) {
		return db.safe.Load(), nil
	}
	if err != nil {
		return 0, err
	}
	if d, ok := db.st.(Discarder); ok && safe > 0 {
		d.Discard(safe)
	}
	return safe, nil
}

// moveSafePoint advances the safe point: this DB's own on an
// ExclusiveStore, the shared one otherwise (errGCBusy when another
// process moves it).
func (db *DB) moveSafePoint(ctx context.Context) (uint64, error) {
	if db.ex == nil {
		return db.advanceSharedSafePoint(ctx)
	}
	return db.advanceSafePoint(ctx)
}

// oldestLock returns the smallest start timestamp of a lock in the
// table, or MaxTs: of an entry of the lock index once it is complete
// (every lock of a transaction is at its start timestamp, and its entry
// stays until none is left), else of a scan of the locks.
func (db *DB) oldestLock(ctx context.Context) (uint64, error) {
	oldest := uint64(MaxTs)
	indexed, err := db.lockIndexed(ctx)
	if err != nil {
		return 0, err
	}
	if indexed {
		var over []indexedTxn
		err = db.scanLockIndex(ctx, func(t indexedTxn) {
			if db.over(t) {
				over = append(over, t)
			} else {
				oldest = min(oldest, t.startTs)
			}
		})
		if err != nil {
			return 0, fmt.Errorf("percolator: gc: %w", err)
		}
		// Entries of transactions known to be over (their writer is this
		// DB, or dead) count while they left locks; readers may have
		// resolved them all.
		for _, t := range over {
			if left, err := db.leftLocks(ctx, t); err != nil {
				return 0, err
			} else if left {
				oldest = min(oldest, t.startTs)
			}
		}
		return oldest, nil
	}
	err = db.st.ReadRows(ctx, "", "", func(_ string, cells []Cell) bool {
		for _, c := range cells {
			oldest = min(oldest, c.Ts)
		}
		return true
	}, Filter{Family: famLock, KeysOnly: true})
	if err != nil {
		return 0, fmt.Errorf("percolator: gc: scan locks: %w", err)
	}
	return oldest, nil
}

// localBound returns the highest safe point that the grace period, the
// locks (oldestLock, scanned before) and this DB's running transactions
// allow. db.mu must be held: a transaction that registers after the
// registry is read takes its start timestamp after the one taken here.
func (db *DB) localBound(ctx context.Context, oldestLock uint64) (uint64, error) {
	b, err := db.writeBound(ctx, oldestLock)
	return min(b, TsFromTime(time.Now().Add(-db.opt.GCGrace))), err
}

// writeBound returns the oldest of now, oldestLock (scanned before) and
// this DB's running transactions: a timestamp is taken before the
// registry is read, and a transaction registers before it takes its
// timestamp, so one that registers after the read begins above it.
func (db *DB) writeBound(ctx context.Context, oldestLock uint64) (uint64, error) {
	now, err := db.orc.Next(ctx)
	if err != nil {
		return 0, err
	}
	return min(now, oldestLock, db.oldestActive()), nil
}

// CommitBound returns a timestamp below which no transaction can still
// write: one that began below it has committed or rolled back, so a scan
// at a later timestamp sees its rows as they stay, and none begins below
// it any more. When this DB is the table's only writer (an
// ExclusiveStore) that is the GC safe point without Options.GCGrace: the
// oldest lock in the table and the oldest running transaction of this
// DB, seconds old where the safe point lags by a GC pass's interval. On a
// shared store the other processes' transactions are known only through
// the safe point, which it returns.
func (db *DB) CommitBound(ctx context.Context) (uint64, error) {
	if db.ex == nil {
		return db.SafePoint(), nil
	}
	// Locks first, as advanceSafePoint: a transaction forgotten after the
	// scan was still registered when writeBound reads the registry.
	oldestLock, err := db.oldestLock(ctx)
	if err != nil {
		return 0, err
	}
	b, err := db.writeBound(ctx, oldestLock)
	return max(b, db.SafePoint()), err
}

// advanceSafePoint computes, persists and publishes a new safe point.
func (db *DB) advanceSafePoint(ctx context.Context) (uint64, error) {
	// Locks first: a transaction that is forgotten after this scan was still
	// registered when oldestActive is computed below.
	oldestLock, err := db.oldestLock(ctx)
	if err != nil {
		return 0, err
	}

	// No transaction may begin below the new safe point: one that
	// registers after the registry is read takes its start timestamp after
	// now (see begin), and ViewAt waits for db.mu.
	db.mu.Lock()
	safe, err := db.localBound(ctx, oldestLock)
	if err != nil {
		db.mu.Unlock()
		return 0, err
	}
	safe = max(safe, db.safe.Load())
	db.safe.Store(safe)
	db.mu.Unlock()

	err = db.st.MutateRows(ctx, []RowMutation{{Row: gcRow, Mutations: []Mutation{
		{Op: SetCell, Family: famMeta, Column: gcColumn, Ts: 1, Value: encodeInt64(int64(safe))},
	}}})
	if err != nil {
		return 0, fmt.Errorf("percolator: gc: persist safe point: %w", err)
	}
	return safe, nil
}
