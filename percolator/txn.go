package percolator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Tx is a snapshot-isolation transaction (Figure 6 of the paper). Reads see
// the table as of the start timestamp plus the transaction's own writes;
// writes are buffered and applied by Commit with two-phase commit: prewrite
// (lock) every cell, the primary first, take a commit timestamp, commit the
// primary (the commit point), then the secondaries.
//
// A Tx is not safe for concurrent use.
type Tx struct {
	db       *DB
	startTs  uint64
	commitTs uint64
	readOnly bool
	done     bool
	writes   map[cellKey]pending

	crash func(CrashPoint) bool // test hook: abandon the commit at a point
}

type cellKey struct{ row, col string }

type pending struct {
	kind  byte
	value []byte
}

// StartTs returns the transaction's start timestamp: the snapshot it reads.
func (tx *Tx) StartTs() uint64 { return tx.startTs }

// CommitTs returns the commit timestamp after a successful Commit that
// wrote something, else 0.
func (tx *Tx) CommitTs() uint64 { return tx.commitTs }

func checkCell(row, col string) error {
	if row == "" || col == "" {
		return fmt.Errorf("%w: empty row or column", ErrInvalid)
	}
	if row[0] == 0 {
		return fmt.Errorf("%w: row %q: rows starting with 0x00 are reserved", ErrInvalid, row)
	}
	return nil
}

// Get returns the value of (row, col) in the transaction's snapshot, or nil
// if there is none. A present empty value is returned as a non-nil empty
// slice. The caller owns the returned slice.
//
// A lock at or before the start timestamp means a transaction may have
// committed before we started: Get waits for a live writer and cleans up
// after a dead or stuck one (rolling its transaction forward or back), and
// returns ErrLocked if a live writer keeps the lock too long.
func (tx *Tx) Get(ctx context.Context, row, col string) ([]byte, error) {
	if tx.done {
		return nil, ErrTxDone
	}
	if err := checkCell(row, col); err != nil {
		return nil, err
	}
	if p, ok := tx.writes[cellKey{row, col}]; ok {
		if p.kind == kindDelete {
			return nil, nil
		}
		return slices.Clone(p.value), nil
	}
	return tx.db.get(ctx, tx.startTs, row, col)
}

func (db *DB) get(ctx context.Context, ts uint64, row, col string) ([]byte, error) {
	c, ok, err := db.readWrite(ctx, ts, row, col)
	if err != nil || !ok {
		return nil, err
	}
	return db.value(ctx, row, col, c)
}

// readWrite returns the newest write record of (row, col) at or below ts,
// after waiting for or cleaning up every lock at or below ts.
func (db *DB) readWrite(ctx context.Context, ts uint64, row, col string) (Cell, bool, error) {
	if ts < db.safe.Load() {
		return Cell{}, false, fmt.Errorf("%w: reading at %d < safe point %d", ErrTooOld, ts, db.safe.Load())
	}
	var waited time.Duration
	for {
		cells, err := db.st.ReadRow(ctx, row,
			Filter{Family: famLock, Column: col, MaxTs: ts},
			Filter{Family: famWrite, Column: col, MaxTs: ts, Latest: true})
		if err != nil {
			return Cell{}, false, fmt.Errorf("percolator: read %q %q: %w", row, col, err)
		}
		var wcell, lcell *Cell
		for i := range cells {
			switch cells[i].Family {
			case famLock:
				if lcell == nil {
					lcell = &cells[i]
				}
			case famWrite:
				wcell = &cells[i]
			}
		}
		if lcell != nil {
			if err := db.waitOrClean(ctx, row, col, *lcell, &waited); err != nil {
				return Cell{}, false, err
			}
			continue
		}
		if wcell == nil {
			return Cell{}, false, nil
		}
		return *wcell, true, nil
	}
}

// value resolves a write record to the value it committed.
func (db *DB) value(ctx context.Context, row, col string, c Cell) ([]byte, error) {
	w, err := decodeWrite(c.Value)
	if err != nil {
		return nil, fmt.Errorf("%w: %q %q@%d", err, row, col, c.Ts)
	}
	if w.kind == kindDelete {
		return nil, nil
	}
	if w.inline {
		if w.value == nil {
			return []byte{}, nil
		}
		return w.value, nil
	}
	cells, err := db.st.ReadRow(ctx, row, Filter{Family: famData, Column: col, MinTs: w.startTs, MaxTs: w.startTs})
	if err != nil {
		return nil, fmt.Errorf("percolator: read data %q %q: %w", row, col, err)
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("percolator: write record %q %q@%d points at missing data@%d", row, col, c.Ts, w.startTs)
	}
	if cells[0].Value == nil {
		return []byte{}, nil
	}
	return cells[0].Value, nil
}

// waitOrClean handles a lock met by a reader: it cleans up after a dead or
// stuck writer, or waits a little for a live one. waited accumulates the
// time spent waiting; past twice the LockTTL it gives up with ErrLocked.
func (db *DB) waitOrClean(ctx context.Context, row, col string, c Cell, waited *time.Duration) error {
	l, err := decodeLock(c.Value)
	if err != nil {
		return fmt.Errorf("%w: %q %q@%d", err, row, col, c.Ts)
	}
	cleaned, err := db.resolve(ctx, row, col, c.Ts, l)
	if err != nil || cleaned {
		return err
	}
	if *waited > 2*db.opt.LockTTL {
		return fmt.Errorf("%w: %q %q@%d held by %s", ErrLocked, row, col, c.Ts, l.writer)
	}
	d := min(time.Millisecond<<min(int(*waited/(10*time.Millisecond)), 6), 100*time.Millisecond)
	*waited += d
	return sleep(ctx, d)
}

// Set buffers a write of value to (row, col). The transaction keeps its own
// copy of value.
func (tx *Tx) Set(row, col string, value []byte) error {
	return tx.buffer(row, col, pending{kind: kindPut, value: slices.Clone(value)})
}

// Delete buffers the deletion of (row, col).
func (tx *Tx) Delete(row, col string) error {
	return tx.buffer(row, col, pending{kind: kindDelete})
}

// writable checks that the transaction can still take a write of (row, col).
func (tx *Tx) writable(row, col string) error {
	if tx.done {
		return ErrTxDone
	}
	if tx.readOnly {
		return ErrReadOnly
	}
	return checkCell(row, col)
}

func (tx *Tx) buffer(row, col string, p pending) error {
	if err := tx.writable(row, col); err != nil {
		return err
	}
	if col[0] == 0 {
		return fmt.Errorf("%w: column %q: columns starting with 0x00 are reserved", ErrInvalid, col)
	}
	if tx.db.weak[col] {
		return fmt.Errorf("%w: column %q is weak: it can only be notified (DB.Notify)", ErrInvalid, col)
	}
	return tx.bufferInternal(row, col, p)
}

// bufferInternal buffers a write without the checks on user columns.
func (tx *Tx) bufferInternal(row, col string, p pending) error {
	if tx.writes == nil {
		tx.writes = make(map[cellKey]pending)
	}
	tx.writes[cellKey{row, col}] = p
	return nil
}

// Scan calls fn for every cell in rows [start, end) (an empty end means the
// end of the table) whose column begins with colPrefix, in row and column
// order, as seen by the transaction (its snapshot plus its own writes). fn
// returning false stops the scan. The value passed to fn is the caller's.
func (tx *Tx) Scan(ctx context.Context, start, end, colPrefix string, fn func(row, col string, value []byte) bool) error {
	if tx.done {
		return ErrTxDone
	}
	// Wait for one-phase commits that took their commit timestamp before our
	// start timestamp: the store's scan may otherwise start before they land.
	tx.db.gate.Lock()
	tx.db.gate.Unlock() //nolint:staticcheck // an empty critical section is the point
	if tx.startTs < tx.db.safe.Load() {
		return ErrTooOld
	}

	own := tx.ownWrites(start, end, colPrefix)
	var (
		stop    bool
		cbErr   error
		emitOwn = func(upTo cellKey, inclusive bool) {
			for len(own) > 0 && !stop {
				k := own[0].key
				if k.row > upTo.row || (k.row == upTo.row && (k.col > upTo.col || (k.col == upTo.col && !inclusive))) {
					return
				}
				if own[0].p.kind == kindPut && !fn(k.row, k.col, slices.Clone(own[0].p.value)) {
					stop = true
				}
				own = own[1:]
			}
		}
	)
	scanErr := tx.db.st.ReadRows(ctx, start, end, func(row string, cells []Cell) bool {
		cols := make(map[string]*Cell) // newest write record per column
		locked := make(map[string]Cell)
		var names []string
		for i := range cells {
			c := &cells[i]
			if !strings.HasPrefix(c.Column, colPrefix) || (c.Column[0] == 0 && (colPrefix == "" || colPrefix[0] != 0)) {
				continue // internal columns only when asked for by prefix
			}
			switch c.Family {
			case famWrite:
				if _, ok := cols[c.Column]; !ok {
					cols[c.Column] = c
					names = append(names, c.Column)
				}
			case famLock:
				if _, ok := locked[c.Column]; !ok {
					locked[c.Column] = *c
					if _, ok := cols[c.Column]; !ok {
						cols[c.Column] = nil
						names = append(names, c.Column)
					}
				}
			}
		}
		slices.Sort(names)
		for _, col := range names {
			emitOwn(cellKey{row, col}, false)
			if stop {
				return false
			}
			if p, ok := tx.writes[cellKey{row, col}]; ok {
				if p.kind == kindPut && !fn(row, col, slices.Clone(p.value)) {
					stop = true
					return false
				}
				own = own[1:]
				continue
			}
			var v []byte
			var err error
			if _, isLocked := locked[col]; isLocked || cols[col] == nil {
				v, err = tx.db.get(ctx, tx.startTs, row, col) // waits on or cleans the lock
			} else {
				v, err = tx.db.value(ctx, row, col, *cols[col])
			}
			if err != nil {
				cbErr = err
				return false
			}
			if v != nil && !fn(row, col, v) {
				stop = true
				return false
			}
		}
		return true
	}, Filter{Family: famWrite, ColumnPrefix: colPrefix, MaxTs: tx.startTs, Latest: true}, Filter{Family: famLock, ColumnPrefix: colPrefix, MaxTs: tx.startTs})
	if scanErr != nil {
		return fmt.Errorf("percolator: scan: %w", scanErr)
	}
	if cbErr != nil {
		return cbErr
	}
	if !stop {
		emitOwn(cellKey{row: "\xff\xff\xff\xff", col: ""}, true)
		for _, o := range own { // rows beyond any stored row
			if stop {
				break
			}
			if o.p.kind == kindPut && !fn(o.key.row, o.key.col, slices.Clone(o.p.value)) {
				stop = true
			}
		}
	}
	return nil
}

type ownWrite struct {
	key cellKey
	p   pending
}

// ownWrites returns the buffered writes within a scan's range, sorted.
func (tx *Tx) ownWrites(start, end, colPrefix string) []ownWrite {
	var out []ownWrite
	for k, p := range tx.writes {
		if k.row >= start && (end == "" || k.row < end) && strings.HasPrefix(k.col, colPrefix) && (k.col[0] != 0 || colPrefix != "") {
			out = append(out, ownWrite{k, p})
		}
	}
	slices.SortFunc(out, func(a, b ownWrite) int { return compareKeys(a.key, b.key) })
	return out
}

func compareKeys(a, b cellKey) int {
	if c := strings.Compare(a.row, b.row); c != 0 {
		return c
	}
	return strings.Compare(a.col, b.col)
}

// Rollback abandons the transaction's buffered writes. It is a no-op after
// Commit, so `defer tx.Rollback()` is always safe.
func (tx *Tx) Rollback() {
	if tx.done {
		return
	}
	tx.done = true
	tx.db.forget(tx)
}

// CrashPoint names a step of Commit at which tests abandon a transaction, as
// a worker that dies there would.
type CrashPoint int

const (
	CrashAfterPrimaryPrewrite CrashPoint = iota + 1
	CrashAfterPrewrites
	CrashAfterPrimaryCommit
	CrashMidSecondaries
)

// errCrashed is returned by a Commit abandoned at a CrashPoint.
var errCrashed = errors.New("percolator: injected crash")

// Commit applies the buffered writes atomically. It returns ErrConflict if
// another transaction wrote or locked one of the cells since the start
// timestamp; the transaction is then rolled back. After Commit returns nil
// the writes are visible to every transaction that starts later.
func (tx *Tx) Commit(ctx context.Context) error {
	if tx.done {
		return ErrTxDone
	}
	defer tx.Rollback()
	if len(tx.writes) == 0 {
		return nil
	}
	if tx.readOnly {
		return ErrReadOnly
	}
	rows := tx.rows()
	if tx.db.ex != nil && len(rows) == 1 && tx.crash == nil {
		return tx.commitOnePhase(ctx, rows[0])
	}
	return tx.commitTwoPhase(ctx, rows)
}

// rowWrites is one row's share of a transaction's writes, columns sorted.
type rowWrites struct {
	row  string
	cols []string
	ps   []pending
}

// rows groups the writes by row, sorted, so the primary (the first cell of
// the first row) is chosen deterministically.
func (tx *Tx) rows() []rowWrites {
	keys := make([]cellKey, 0, len(tx.writes))
	for k := range tx.writes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	var out []rowWrites
	for _, k := range keys {
		if len(out) == 0 || out[len(out)-1].row != k.row {
			out = append(out, rowWrites{row: k.row})
		}
		r := &out[len(out)-1]
		r.cols = append(r.cols, k.col)
		r.ps = append(r.ps, tx.writes[k])
	}
	return out
}

// conflictPredicate matches what makes a prewrite of r impossible: a lock
// at any timestamp, or a write committed at or after our start.
func (tx *Tx) conflictPredicate(r rowWrites) []Filter {
	fs := make([]Filter, 0, 2*len(r.cols))
	for _, col := range r.cols {
		fs = append(fs,
			Filter{Family: famLock, Column: col, KeysOnly: true},
			Filter{Family: famWrite, Column: col, MinTs: tx.startTs, Latest: true, KeysOnly: true})
	}
	return fs
}

func (tx *Tx) inline(p pending) bool {
	return p.kind == kindPut && len(p.value) <= tx.db.opt.InlineMax
}

func (tx *Tx) record(p pending, inline bool) []byte {
	w := write{kind: p.kind, startTs: tx.startTs}
	if inline {
		w.inline, w.value = true, p.value
	}
	return w.encode()
}

// commitOnePhase commits a single-row transaction on an exclusive store in
// one row operation: the store holds the row while the commit timestamp is
// taken, so no reader can see the row without the write once the timestamp
// exists (the job the lock does in two-phase commit).
func (tx *Tx) commitOnePhase(ctx context.Context, r rowWrites) error {
	tx.db.gate.RLock()
	defer tx.db.gate.RUnlock()
	matched, err := tx.db.ex.CheckAndMutateRowAt(ctx, r.row, tx.conflictPredicate(r),
		func() (uint64, error) { return tx.db.orc.Next(ctx) },
		func(commitTs uint64) []Mutation {
			tx.commitTs = commitTs
			muts := make([]Mutation, 0, 2*len(r.cols))
			for i, col := range r.cols {
				p := r.ps[i]
				in := tx.inline(p)
				if p.kind == kindPut && !in {
					muts = append(muts, Mutation{Op: SetCell, Family: famData, Column: col, Ts: tx.startTs, Value: p.value})
				}
				muts = append(muts, Mutation{Op: SetCell, Family: famWrite, Column: col, Ts: commitTs, Value: tx.record(p, in)})
				if n, ok := commitNotify(col, commitTs); ok {
					muts = append(muts, n)
				}
			}
			return tx.db.notifyMutations(r, tx.startTs, muts)
		})
	if err != nil {
		tx.commitTs = 0
		return fmt.Errorf("percolator: commit %q: %w", r.row, err)
	}
	if matched {
		tx.commitTs = 0
		return fmt.Errorf("%w: row %q", ErrConflict, r.row)
	}
	tx.db.notified([]rowWrites{r})
	return nil
}

func (tx *Tx) commitTwoPhase(ctx context.Context, rows []rowWrites) error {
	primary := cellKey{rows[0].row, rows[0].cols[0]}
	lk := lock{primaryRow: primary.row, primaryCol: primary.col, writer: tx.db.id, wallMs: time.Now().UnixMilli(), ttlMs: tx.db.opt.LockTTL.Milliseconds()}

	// Prewrite the primary's row first: secondaries exist only once the
	// primary lock does, which is what lets a cleaner decide by the primary.
	if err := tx.prewrite(ctx, rows[0], lk); err != nil {
		return err
	}
	if tx.crashed(CrashAfterPrimaryPrewrite) {
		return errCrashed
	}
	if err := tx.prewriteSecondaries(ctx, rows[1:], lk); err != nil {
		tx.rollbackRows(rows)
		return err
	}
	if tx.crashed(CrashAfterPrewrites) {
		return errCrashed
	}

	commitTs, err := tx.db.orc.Next(ctx)
	if err != nil {
		tx.rollbackRows(rows)
		return err
	}
	// The commit point: replace the primary lock by a write record, if the
	// lock is still ours (a cleaner may have rolled us back).
	matched, err := tx.db.st.CheckAndMutateRow(ctx, primary.row,
		[]Filter{{Family: famLock, Column: primary.col, MinTs: tx.startTs, MaxTs: tx.startTs, KeysOnly: true}},
		tx.commitMutations(rows[0], commitTs), nil)
	if err != nil {
		// Unknown outcome: leave the locks; readers resolve them by the primary.
		return fmt.Errorf("percolator: commit primary %q %q: %w", primary.row, primary.col, err)
	}
	if !matched {
		tx.rollbackRows(rows)
		return fmt.Errorf("%w: primary lock %q %q was cleaned up", ErrConflict, primary.row, primary.col)
	}
	tx.commitTs = commitTs
	if tx.crashed(CrashAfterPrimaryCommit) {
		return errCrashed
	}

	// Secondaries: committed already in effect; a failure here only leaves
	// locks that readers roll forward.
	rest := rows[1:]
	muts := make([]RowMutation, 0, len(rest))
	for i, r := range rest {
		if i == len(rest)/2 && tx.crashed(CrashMidSecondaries) {
			tx.db.st.MutateRows(ctx, muts)
			return errCrashed
		}
		muts = append(muts, RowMutation{Row: r.row, Mutations: tx.commitMutations(r, commitTs)})
	}
	if len(muts) > 0 {
		if err := tx.db.st.MutateRows(ctx, muts); err != nil {
			tx.db.opt.Logger.Warn("commit secondaries failed; readers will roll them forward", "start_ts", tx.startTs, "err", err)
		}
	}
	tx.db.notified(rows)
	return nil
}

// crashed reports whether a test asked to abandon the commit at p; the
// transaction is then forgotten without cleanup, like a dead worker's.
func (tx *Tx) crashed(p CrashPoint) bool {
	if tx.crash == nil || !tx.crash(p) {
		return false
	}
	tx.done = true
	tx.db.forget(tx)
	return true
}

func (tx *Tx) prewrite(ctx context.Context, r rowWrites, lk lock) error {
	muts := make([]Mutation, 0, 2*len(r.cols))
	for i, col := range r.cols {
		p := r.ps[i]
		l := lk
		l.kind = p.kind
		if p.kind == kindPut {
			muts = append(muts, Mutation{Op: SetCell, Family: famData, Column: col, Ts: tx.startTs, Value: p.value})
		}
		muts = append(muts, Mutation{Op: SetCell, Family: famLock, Column: col, Ts: tx.startTs, Value: l.encode()})
	}
	muts = tx.db.notifyMutations(r, tx.startTs, muts)
	matched, err := tx.db.st.CheckAndMutateRow(ctx, r.row, tx.conflictPredicate(r), nil, muts)
	if err != nil {
		return fmt.Errorf("percolator: prewrite %q: %w", r.row, err)
	}
	if matched {
		return fmt.Errorf("%w: row %q", ErrConflict, r.row)
	}
	return nil
}

// prewriteSecondaries prewrites the secondary rows in parallel. While it
// makes progress it keeps the primary lock's wall time fresh (every
// LockTTL/3), so readers do not take a long commit for a stuck one; a writer
// that stops making progress stops refreshing and is cleaned up after the
// TTL, as the paper wants for live but stuck workers.
func (tx *Tx) prewriteSecondaries(ctx context.Context, rows []rowWrites, lk lock) error {
	if len(rows) == 0 {
		return nil
	}
	var mu sync.Mutex // guards refreshed, serializes refreshes
	refreshed := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(tx.db.opt.CommitParallelism)
	for _, r := range rows {
		g.Go(func() error {
			if err := tx.prewrite(gctx, r, lk); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if time.Since(refreshed) < tx.db.opt.LockTTL/3 {
				return nil
			}
			refreshed = time.Now()
			return tx.refreshPrimary(gctx, lk)
		})
	}
	return g.Wait()
}

func (tx *Tx) refreshPrimary(ctx context.Context, lk lock) error {
	lk.wallMs = time.Now().UnixMilli()
	lk.kind = tx.writes[cellKey{lk.primaryRow, lk.primaryCol}].kind
	matched, err := tx.db.st.CheckAndMutateRow(ctx, lk.primaryRow,
		[]Filter{{Family: famLock, Column: lk.primaryCol, MinTs: tx.startTs, MaxTs: tx.startTs, KeysOnly: true}},
		[]Mutation{{Op: SetCell, Family: famLock, Column: lk.primaryCol, Ts: tx.startTs, Value: lk.encode()}}, nil)
	if err != nil {
		return fmt.Errorf("percolator: refresh primary lock: %w", err)
	}
	if !matched {
		return fmt.Errorf("%w: primary lock was cleaned up during commit", ErrConflict)
	}
	return nil
}

func (tx *Tx) commitMutations(r rowWrites, commitTs uint64) []Mutation {
	muts := make([]Mutation, 0, 2*len(r.cols))
	for i, col := range r.cols {
		muts = append(muts,
			Mutation{Op: SetCell, Family: famWrite, Column: col, Ts: commitTs, Value: tx.record(r.ps[i], tx.inline(r.ps[i]))},
			Mutation{Op: DeleteCell, Family: famLock, Column: col, Ts: tx.startTs})
		if n, ok := commitNotify(col, commitTs); ok {
			muts = append(muts, n)
		}
	}
	return muts
}

// rollbackRows erases the locks and data this transaction prewrote, where
// they are still its own. Errors are ignored: leftover locks are cleaned up
// by readers.
func (tx *Tx) rollbackRows(rows []rowWrites) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The primary first: once it is gone the transaction is decided.
	for _, r := range rows {
		for _, col := range r.cols {
			tx.db.rollbackCell(ctx, r.row, col, tx.startTs)
		}
	}
}
