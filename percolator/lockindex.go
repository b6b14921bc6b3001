package percolator

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"
)

// The lock index lets the lock sweep find dead writers' locks without
// reading the table. A two-phase commit writes, before its primary lock,
// an entry naming every cell it is about to lock, in the row
// lockIndexRow(primary row) (family m, column the primary column, at the
// start timestamp); it deletes the entry once all its locks are gone
// (committed or rolled back). So while any lock of a transaction is in
// the table its entry is too, whatever step a crash stops the writer at,
// and the sweep (CleanLocks) reads the entries, a key range that holds
// the transactions under way and the crashes' leftovers, not the table:
// it decides each dead transaction by its primary and resolves the cells
// the entry names, as a reader meeting them would (section 2.2's lazy
// cleanup, driven by the index rather than by reads).
//
// An entry whose primary holds neither the lock nor a write record is a
// transaction whose prewrite has not landed yet, or one rolled back. The
// sweep deletes it only once it is indexGrace old, then reads the
// primary again and puts the entry back if a lock appeared meanwhile;
// a writer whose primary prewrite returns more than LockTTL after the
// entry was written writes the entry again. Either way a lock that
// lands after the sweep looked has its entry.
//
// An ExclusiveStore keeps no index: no other process writes it, so the
// locks an earlier process left are resolved when the DB opens, and its
// store keeps the lock family in memory as well (Family.Sparse), which
// is what the sweep then reads.
//
// The entries are complete only once every lock older than the index
// has been resolved: the holder of the "locks" duty scans the table's
// locks, and once every lock that scan leaves (a live writer's) has its
// entry it records that in the marker lockIndexedRow; until then
// CleanLocks and the GC's oldest lock scan the table as before. Every process writing a table must write
// the index (this package's version or later).
const (
	lockIndexPrefix   = "\x00locks/"
	lockIndexEnd      = "\x00locks0" // '/'+1: the end of the prefix's range
	lockIndexedRow    = "\x00meta/lockindex"
	lockIndexedColumn = "complete"
	lockEntryVersion  = 1
)

func lockIndexRow(primaryRow string) string { return lockIndexPrefix + primaryRow }

// lockEntry is the content of a lock index cell: the transaction's cells
// and when the entry was written.
type lockEntry struct {
	wallMs int64
	writer string // the DB that wrote it (DB.ID)
	rows   []rowCols
}

// rowCols is one row of a transaction and the columns it locks there.
type rowCols struct {
	row  string
	cols []string
}

func (e lockEntry) encode() []byte {
	n := 16 + len(e.writer)
	for _, r := range e.rows {
		n += 2 + len(r.row)
		for _, c := range r.cols {
			n += 2 + len(c)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, lockEntryVersion)
	b = binary.AppendVarint(b, e.wallMs)
	b = appendString(b, e.writer)
	b = binary.AppendUvarint(b, uint64(len(e.rows)))
	for _, r := range e.rows {
		b = appendString(b, r.row)
		b = binary.AppendUvarint(b, uint64(len(r.cols)))
		for _, c := range r.cols {
			b = appendString(b, c)
		}
	}
	return b
}

func decodeLockEntry(b []byte) (lockEntry, error) {
	var e lockEntry
	if len(b) < 1 || b[0] != lockEntryVersion {
		return e, errCorrupt("lock index", b)
	}
	d := decoder{b: b[1:]}
	e.wallMs = d.varint()
	e.writer = d.string()
	nrows := d.uvarint()
	for i := uint64(0); i < nrows && d.err == nil; i++ {
		r := rowCols{row: d.string()}
		ncols := d.uvarint()
		for j := uint64(0); j < ncols && d.err == nil; j++ {
			r.cols = append(r.cols, d.string())
		}
		e.rows = append(e.rows, r)
	}
	if d.err != nil || len(d.b) > 0 {
		return e, errCorrupt("lock index", b)
	}
	return e, nil
}

// indexGrace is how old an entry whose primary has no lock must be
// before the sweep deletes it (see above): LockTTL and twice ClockSkew,
// so that a prewrite landing after the sweep looked returns to its writer
// more than LockTTL after the entry was written, by the writer's clock,
// and the writer writes the entry again.
func (db *DB) indexGrace() time.Duration { return db.opt.LockTTL + 2*db.opt.ClockSkew }

// indexEntryMutation returns the mutation that writes tx's lock index entry.
func (tx *Tx) indexEntryMutation(rows []rowWrites, wallMs int64) RowMutation {
	e := lockEntry{wallMs: wallMs, writer: tx.db.id, rows: make([]rowCols, len(rows))}
	for i, r := range rows {
		e.rows[i] = rowCols{row: r.row, cols: r.cols}
	}
	return RowMutation{Row: lockIndexRow(rows[0].row), Mutations: []Mutation{
		{Op: SetCell, Family: famMeta, Column: rows[0].cols[0], Ts: tx.startTs, Value: e.encode()},
	}}
}

// indexDeleteMutation returns the mutation that deletes the lock index
// entry of the transaction that started at ts with the primary (row, col).
func indexDeleteMutation(row, col string, ts uint64) RowMutation {
	return RowMutation{Row: lockIndexRow(row), Mutations: []Mutation{
		{Op: DeleteCell, Family: famMeta, Column: col, Ts: ts},
	}}
}

// lockIndexed reports whether every lock in the table has its entry in
// the lock index: never on an ExclusiveStore, which keeps no index (its
// scans of the lock family read the store's in-memory mirror of the
// locks, Family.Sparse), on a shared one once the marker is written.
func (db *DB) lockIndexed(ctx context.Context) (bool, error) {
	if db.ex != nil {
		return false, nil
	}
	if db.indexed.Load() {
		return true, nil
	}
	cells, err := db.st.ReadRow(ctx, lockIndexedRow, Filter{Family: famMeta, Column: lockIndexedColumn, Latest: true, KeysOnly: true})
	if err != nil {
		return false, fmt.Errorf("percolator: read lock index marker: %w", err)
	}
	if len(cells) == 0 {
		return false, nil
	}
	db.indexed.Store(true)
	return true, nil
}

// markLockIndexed records that every lock of the table has its entry.
// The caller has resolved every lock older than the index.
func (db *DB) markLockIndexed(ctx context.Context) error {
	err := db.st.MutateRows(ctx, []RowMutation{{Row: lockIndexedRow, Mutations: []Mutation{
		{Op: SetCell, Family: famMeta, Column: lockIndexedColumn, Ts: 1, Value: []byte{1}},
	}}})
	if err != nil {
		return fmt.Errorf("percolator: write lock index marker: %w", err)
	}
	db.indexed.Store(true)
	return nil
}

// indexedTxn is one entry of the lock index.
type indexedTxn struct {
	primaryRow, primaryCol string
	startTs                uint64
	entry                  lockEntry
}

// scanLockIndex calls fn for every entry of the lock index.
func (db *DB) scanLockIndex(ctx context.Context, fn func(indexedTxn)) error {
	var decodeErr error
	err := db.st.ReadRows(ctx, lockIndexPrefix, lockIndexEnd, func(row string, cells []Cell) bool {
		for _, c := range cells {
			e, err := decodeLockEntry(c.Value)
			if err != nil {
				decodeErr = fmt.Errorf("%w: %q %q@%d", err, row, c.Column, c.Ts)
				return false
			}
			fn(indexedTxn{primaryRow: row[len(lockIndexPrefix):], primaryCol: c.Column, startTs: c.Ts, entry: e})
		}
		return true
	}, Filter{Family: famMeta})
	if err == nil {
		err = decodeErr
	}
	if err != nil {
		return fmt.Errorf("percolator: scan lock index: %w", err)
	}
	return nil
}

// over reports whether the writer of t is known to have ended it: t is
// this DB's and no longer running. Its prewrites can no longer land.
func (db *DB) over(t indexedTxn) bool {
	return t.entry.writer == db.id && !db.active.has(t.startTs|writer)
}

// cleanIndexed resolves the locks of the indexed transaction t if its
// writer is dead or stuck, and deletes its entry once none is left. It
// reports how many locks it resolved, and whether the entry is gone.
func (db *DB) cleanIndexed(ctx context.Context, t indexedTxn) (n int, gone bool, err error) {
	status, commitTs, plock, err := db.primaryStatus(ctx, t.primaryRow, t.primaryCol, t.startTs)
	if err != nil {
		return 0, false, err
	}
	if status == statusLocked {
		cleaned, err := db.resolve(ctx, t.primaryRow, t.primaryCol, t.startTs, plock)
		if err != nil || !cleaned {
			return 0, false, err // a live writer, or an error
		}
		n++
		if status, commitTs, _, err = db.primaryStatus(ctx, t.primaryRow, t.primaryCol, t.startTs); err != nil {
			return n, false, err
		}
		if status == statusLocked {
			return n, false, nil // locked again (the entry stays): the next sweep decides
		}
	}
	young := time.Now().UnixMilli() < t.entry.wallMs+db.indexGrace().Milliseconds()
	if status == statusRolledBack && young && n == 0 && !db.over(t) {
		// Not prewritten yet, or rolled back by a reader: the sweep
		// waits until no prewrite can still land.
		return n, false, nil
	}
	// The transaction is decided: resolve its other cells.
	for _, r := range t.entry.rows {
		fs := make([]Filter, 0, len(r.cols))
		for _, col := range r.cols {
			if r.row == t.primaryRow && col == t.primaryCol {
				continue
			}
			fs = append(fs, Filter{Family: famLock, Column: col, MinTs: t.startTs, MaxTs: t.startTs})
		}
		if len(fs) == 0 {
			continue
		}
		cells, err := db.st.ReadRow(ctx, r.row, fs...)
		if err != nil {
			return n, false, fmt.Errorf("percolator: read locks of %q: %w", r.row, err)
		}
		for _, c := range cells {
			l, err := decodeLock(c.Value)
			if err != nil {
				return n, false, fmt.Errorf("%w: %q %q@%d", err, r.row, c.Column, c.Ts)
			}
			if status == statusCommitted {
				err = db.rollForward(ctx, r.row, c.Column, t.startTs, commitTs, l)
			} else {
				err = db.rollbackCell(ctx, r.row, c.Column, t.startTs)
			}
			if err != nil {
				return n, false, err
			}
			n++
		}
	}
	del := indexDeleteMutation(t.primaryRow, t.primaryCol, t.startTs)
	if err := db.st.MutateRows(ctx, []RowMutation{del}); err != nil {
		return n, false, fmt.Errorf("percolator: delete lock index entry: %w", err)
	}
	if status == statusRolledBack {
		// A prewrite that landed after primaryStatus read the row (a
		// writer stalled past the grace) keeps its entry.
		if status, _, _, err = db.primaryStatus(ctx, t.primaryRow, t.primaryCol, t.startTs); err != nil {
			return n, false, err
		}
		if status == statusLocked {
			put := RowMutation{Row: del.Row, Mutations: []Mutation{{Op: SetCell, Family: famMeta, Column: t.primaryCol, Ts: t.startTs, Value: t.entry.encode()}}}
			if err := db.st.MutateRows(ctx, []RowMutation{put}); err != nil {
				return n, false, fmt.Errorf("percolator: restore lock index entry: %w", err)
			}
			return n, false, nil
		}
	}
	return n, true, nil
}

// leftLocks reports whether a lock of t, a transaction that is over
// (DB.over), is still in the table; if none is, it deletes t's entry.
func (db *DB) leftLocks(ctx context.Context, t indexedTxn) (bool, error) {
	for _, r := range t.entry.rows {
		fs := make([]Filter, len(r.cols))
		for i, col := range r.cols {
			fs[i] = Filter{Family: famLock, Column: col, MinTs: t.startTs, MaxTs: t.startTs, KeysOnly: true}
		}
		cells, err := db.st.ReadRow(ctx, r.row, fs...)
		if err != nil {
			return false, fmt.Errorf("percolator: read locks of %q: %w", r.row, err)
		}
		if len(cells) > 0 {
			return true, nil
		}
	}
	if err := db.st.MutateRows(ctx, []RowMutation{indexDeleteMutation(t.primaryRow, t.primaryCol, t.startTs)}); err != nil {
		return false, fmt.Errorf("percolator: delete lock index entry: %w", err)
	}
	return false, nil
}
