package percolator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caffeine-go/caffeine/internal/ctxsleep"
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

	slot       int    // the registry slot of reg
	reg        uint64 // what the transaction registered (see registry)
	registered bool

	crash func(CrashPoint) bool // test hook: abandon the commit at a point

	// On a shared store (see prefetch.go): rows read at once, and the
	// columns each row was read by Get, in order.
	cache map[string]rowCache
	reads map[string][]string

	// pr is a View's scratch space for its point reads, kept across the
	// Views that reuse it; nil in other transactions, whose reads take
	// one from pointReads.
	pr *pointRead
}

type cellKey struct{ row, col string }

type pending struct {
	kind  byte
	value []byte
}

// StartTs returns the transaction's start timestamp: the snapshot it reads.
// A read-write transaction's is its own; a View's may be another's.
func (tx *Tx) StartTs() uint64 { return tx.startTs }

// DB returns the DB the transaction runs on.
func (tx *Tx) DB() *DB { return tx.db }

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
	// A View has no writes: no map lookup (a call, and the key built on
	// the stack) on its reads.
	if len(tx.writes) > 0 {
		if p, ok := tx.writes[cellKey{row, col}]; ok {
			if p.kind == kindDelete {
				return nil, nil
			}
			return slices.Clone(p.value), nil
		}
	}
	return tx.get(ctx, row, col)
}

func (tx *Tx) get(ctx context.Context, row, col string) ([]byte, error) {
	var c Cell
	ok, err := tx.readRecord(ctx, row, col, &c)
	if err != nil {
		return nil, err
	}
	var v []byte
	if ok {
		if v, err = tx.db.value(ctx, row, col, &c); err != nil {
			return nil, err
		}
	}
	if tx.db.ex == nil {
		if err := tx.db.checkLease(ctx, tx.startTs); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// readWrite sets *wc to the newest write record of (row, col) at or below
// the start timestamp, after waiting for or cleaning up every lock at or
// below it, and reports whether there is one. (The record goes to the
// caller's Cell rather than back as a result: a copy less of 64 bytes on
// every read.)
func (tx *Tx) readWrite(ctx context.Context, row, col string, wc *Cell) (bool, error) {
	db, ts := tx.db, tx.startTs
	if safe := db.safe.Load(); ts < safe {
		return false, fmt.Errorf("%w: reading at %d < safe point %d", ErrTooOld, ts, safe)
	}
	pr := tx.pointRead()
	defer pr.release()
	var waited time.Duration
	for {
		cells, err := pr.read(ctx, db, row, col, ts)
		if err != nil {
			return false, fmt.Errorf("percolator: read %q %q: %w", row, col, err)
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
				return false, err
			}
			continue
		}
		if wcell == nil {
			return false, nil
		}
		// Field by field: the store has just written the cell so, and a
		// whole copy reads it back in 16-byte loads that each span two
		// of those stores, which the processor cannot forward.
		wc.Family, wc.Column, wc.Ts, wc.Value = wcell.Family, wcell.Column, wcell.Ts, wcell.Value
		return true, nil
	}
}

// pointRead is the scratch space of a point read: the filters it passes
// to the store and, for stores that take them (pointReader),
// the slice the cells come back in and the buffer the store builds its
// keys in. A View's transaction keeps one, others take one from
// pointReads, so that a read allocates none of them.
type pointRead struct {
	fs     [2]Filter
	cells  [2]Cell
	key    []byte
	busy   bool // a read of its transaction is using it
	pooled bool // it is from pointReads, and goes back there
}

var pointReads = sync.Pool{New: func() any { return &pointRead{pooled: true} }}

// pointReader is implemented by stores that read a point read into the
// caller's space: the cells appended to dst, as rowAppender does, and the
// keys they look up built in buf, which ReadPoint returns (grown if it
// had to) for the next read. The store keeps none of dst, filters and buf
// after it returns.
type pointReader interface {
	ReadPoint(ctx context.Context, dst []Cell, row string, filters []Filter, buf []byte) ([]Cell, []byte, error)
}

// pointRead returns the transaction's point read scratch space, or one
// from pointReads if it has none or a read of the transaction (one
// waiting for a lock) already uses it. Release it with release.
func (tx *Tx) pointRead() *pointRead {
	if pr := tx.pr; pr != nil && !pr.busy {
		pr.busy = true
		return pr
	}
	return pointReads.Get().(*pointRead)
}

// read returns the locks of (row, col) at or below ts and its newest write
// record at or below ts. The cells are valid until pr is released; their
// values are the caller's.
func (pr *pointRead) read(ctx context.Context, db *DB, row, col string, ts uint64) ([]Cell, error) {
	// Field by field: assigning the two filters whole builds them on the
	// stack and copies them. release left the other fields zero.
	fs := &pr.fs
	fs[0].Family, fs[0].Column, fs[0].MaxTs = famLock, col, ts
	fs[1].Family, fs[1].Column, fs[1].MaxTs, fs[1].Latest = famWrite, col, ts, true
	if db.pt == nil {
		return db.st.ReadRow(ctx, row, pr.fs[:]...)
	}
	cells, key, err := db.pt.ReadPoint(ctx, pr.cells[:0], row, pr.fs[:], pr.key[:0])
	if cap(key) <= maxKeyBuf {
		pr.key = key
	}
	return cells, err
}

// maxKeyBuf bounds the key buffer a transaction keeps.
const maxKeyBuf = 1 << 10

// release lets go of pr, keeping neither the filters' strings nor the
// cells' values.
func (pr *pointRead) release() {
	pr.fs = [2]Filter{}
	pr.cells = [2]Cell{}
	pr.busy = false
	if pr.pooled {
		pointReads.Put(pr)
	}
}

// value resolves the write record c to the value it committed.
func (db *DB) value(ctx context.Context, row, col string, c *Cell) ([]byte, error) {
	if v, ok := inlinedPut(c.Value); ok {
		return v, nil // never nil: a slice of c.Value
	}
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

// rowData reads in one call the data cells that a scan of row needs for
// the write records cols (the columns of names that are neither locked nor
// written by the transaction), when there are several: read one by one, a
// block row of a thousand pages costs a thousand reads of the row, and a
// store such as the Bigtable emulator copies the whole row for each. The
// values are keyed by column; a record whose data is missing here is left
// to value, which reports it.
func (db *DB) rowData(ctx context.Context, row, colPrefix string, names []string, cols map[string]*Cell, locked map[string]Cell, own map[cellKey]pending) (map[string][]byte, error) {
	type ref struct {
		col     string
		startTs uint64
	}
	var refs []ref
	for _, col := range names {
		c := cols[col]
		if c == nil {
			continue
		}
		if _, ok := locked[col]; ok {
			continue
		}
		if _, ok := own[cellKey{row, col}]; ok {
			continue
		}
		if _, ok := inlinedPut(c.Value); ok {
			continue
		}
		w, err := decodeWrite(c.Value)
		if err != nil || w.kind == kindDelete || w.inline {
			continue // value deals with these
		}
		refs = append(refs, ref{col, w.startTs})
	}
	if len(refs) < 2 {
		return nil, nil
	}
	lo, hi := refs[0].startTs, refs[0].startTs
	for _, r := range refs[1:] {
		lo, hi = min(lo, r.startTs), max(hi, r.startTs)
	}
	cells, err := db.st.ReadRow(ctx, row, Filter{Family: famData, ColumnPrefix: colPrefix, MinTs: lo, MaxTs: hi})
	if err != nil {
		return nil, fmt.Errorf("percolator: read data %q: %w", row, err)
	}
	// The cells come by column, newest first: pick each record's version.
	want := make(map[string]uint64, len(refs))
	for _, r := range refs {
		want[r.col] = r.startTs
	}
	data := make(map[string][]byte, len(refs))
	for _, c := range cells {
		if ts, ok := want[c.Column]; ok && c.Ts == ts {
			if c.Value == nil {
				c.Value = []byte{} // an empty value, not an absent one
			}
			data[c.Column] = c.Value
		}
	}
	return data, nil
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
	return ctxsleep.Sleep(ctx, d)
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
	return tx.scan(ctx, start, end, nil, colPrefix, fn)
}

// ScanRanges is Scan over several ranges of rows, sorted and disjoint, in
// row order, telling fn which range (its index) a cell's row is in: one
// store call for all of them on a store that reads a list of ranges at
// once (RangeReader: Bigtable), else a scan a range.
func (tx *Tx) ScanRanges(ctx context.Context, ranges []KeyRange, colPrefix string, fn func(r int, row, col string, value []byte) bool) error {
	if tx.done {
		return ErrTxDone
	}
	for i, r := range ranges {
		if r.End != "" && r.End < r.Start || i > 0 && (ranges[i-1].End == "" || r.Start < ranges[i-1].End) {
			return fmt.Errorf("%w: scan ranges not sorted and disjoint: %q", ErrInvalid, ranges)
		}
	}
	// Cells come in row order: the range is the last one starting at or
	// before the row.
	i, stopped := 0, false
	emit := func(row, col string, value []byte) bool {
		for i+1 < len(ranges) && row >= ranges[i+1].Start {
			i++
		}
		stopped = !fn(i, row, col, value)
		return !stopped
	}
	if _, ok := tx.db.st.(RangeReader); ok && tx.db.ex == nil && len(ranges) > 1 {
		return tx.scan(ctx, "", "", ranges, colPrefix, emit)
	}
	for _, r := range ranges {
		if err := tx.scan(ctx, r.Start, r.End, nil, colPrefix, emit); err != nil || stopped {
			return err
		}
	}
	return nil
}

// scan is Scan over [start, end), or over ranges (sorted, disjoint) when
// there are any, which takes a RangeReader.
func (tx *Tx) scan(ctx context.Context, start, end string, ranges []KeyRange, colPrefix string, fn func(row, col string, value []byte) bool) error {
	// Wait for one-phase commits that took their commit timestamp before our
	// start timestamp: the store's scan may otherwise start before they land.
	tx.db.gate.Lock()
	//lint:ignore SA2001 an empty critical section is the point: it waits for the holders
	tx.db.gate.Unlock()
	if tx.startTs < tx.db.safe.Load() {
		return ErrTooOld
	}

	var own []ownWrite
	if ranges == nil {
		own = tx.ownWrites(start, end, colPrefix)
	}
	for _, r := range ranges {
		own = append(own, tx.ownWrites(r.Start, r.End, colPrefix)...)
	}
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
	read := func(fn func(row string, cells []Cell) bool, filters ...Filter) error {
		if ranges == nil {
			return tx.db.st.ReadRows(ctx, start, end, fn, filters...)
		}
		return tx.db.st.(RangeReader).ReadRanges(ctx, ranges, fn, filters...)
	}
	scanErr := read(func(row string, cells []Cell) bool {
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
		data, err := tx.db.rowData(ctx, row, colPrefix, names, cols, locked, tx.writes)
		if err != nil {
			cbErr = err
			return false
		}
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
				v, err = tx.get(ctx, row, col) // waits on or cleans the lock
			} else if d, ok := data[col]; ok {
				v = d
			} else {
				v, err = tx.db.value(ctx, row, col, cols[col])
			}
			if err == nil && tx.db.ex == nil {
				err = tx.db.checkLease(ctx, tx.startTs)
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
		for _, o := range own { // own writes after the last stored cell
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
