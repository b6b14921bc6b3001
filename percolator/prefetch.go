package percolator

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Prefetching (section 2.6 of the paper): on a store where every read is a
// round trip (one that is not an ExclusiveStore: Bigtable), reading several
// columns of a row costs what reading one does. So a transaction's first
// read of a row also reads the columns that transactions reading that
// column first went on to read in the same row before (learned per DB,
// up to prefetchMax), and its later reads of them come from what it read
// then. A read that finds one of them locked goes to the store itself.
//
// Using an earlier read of a column is as good as reading it now: a
// transaction that committed before our start timestamp wrote its locks
// before we took it (section 2.3), so any read after the start sees its
// lock or its write record. On the embedded store reads cost microseconds
// and nothing of this runs.

// prefetchMax bounds the columns learned for one first column.
const prefetchMax = 24

// rowCache is what a transaction read of a row at once: per column, its
// newest write record at or below the start timestamp, or that a lock at
// or below it was there.
type rowCache map[string]cachedCol

type cachedCol struct {
	write    Cell
	hasWrite bool
	locked   bool
}

// recordFilters select the locks at or below ts of cols and their newest
// write records at or below it.
func recordFilters(cols []string, ts uint64) []Filter {
	filters := make([]Filter, 0, 2*len(cols))
	for _, c := range cols {
		filters = append(filters,
			Filter{Family: famLock, Column: c, MaxTs: ts, KeysOnly: true},
			Filter{Family: famWrite, Column: c, MaxTs: ts, Latest: true})
	}
	return filters
}

// add records what cells (a read's locks and write records) say of the
// cached columns.
func (rc rowCache) add(cells []Cell) {
	for _, c := range cells {
		e, ok := rc[c.Column]
		if !ok {
			continue
		}
		switch c.Family {
		case famLock:
			e.locked = true
		case famWrite:
			e.write, e.hasWrite = c, true
		}
		rc[c.Column] = e
	}
}

// learned holds, per column read first in a row, the columns read after it.
type learned struct {
	mu   sync.Mutex
	cols []string
}

// predict returns the columns learned to follow first.
func (db *DB) predict(first string) []string {
	v, ok := db.prefetch.Load(first)
	if !ok {
		return nil
	}
	l := v.(*learned)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cols
}

// learn records the columns of each row a transaction read with Get, in
// the order read.
func (db *DB) learn(reads map[string][]string) {
	for _, cols := range reads {
		if len(cols) < 2 {
			continue
		}
		v, _ := db.prefetch.LoadOrStore(cols[0], new(learned))
		l := v.(*learned)
		l.mu.Lock()
		for _, c := range cols[1:] {
			if len(l.cols) >= prefetchMax {
				break
			}
			known := false
			for _, k := range l.cols {
				known = known || k == c
			}
			if !known && c != cols[0] {
				// Copy on write: predict's callers hold the old slice.
				l.cols = append(l.cols[:len(l.cols):len(l.cols)], c)
			}
		}
		l.mu.Unlock()
	}
}

// readRecord is readWrite on a shared store, through the transaction's
// row cache and prefetching.
func (tx *Tx) readRecord(ctx context.Context, row, col string, wc *Cell) (bool, error) {
	db := tx.db
	if db.ex != nil {
		return tx.readWrite(ctx, row, col, wc)
	}
	if safe := db.safe.Load(); tx.startTs < safe {
		return false, fmt.Errorf("%w: reading at %d < safe point %d", ErrTooOld, tx.startTs, safe)
	}
	if tx.reads == nil {
		tx.reads = make(map[string][]string)
	}
	tx.reads[row] = append(tx.reads[row], col)
	rc, cached := tx.cache[row]
	if !cached {
		if next := db.predict(col); len(next) > 0 {
			var err error
			if rc, err = tx.prefetch(ctx, row, col, next); err != nil {
				return false, err
			}
		}
	}
	if c, ok := rc[col]; ok && !c.locked {
		*wc = c.write
		return c.hasWrite, nil
	}
	return tx.readWrite(ctx, row, col, wc)
}

// prefetch reads col and next of row with one store read and caches them.
func (tx *Tx) prefetch(ctx context.Context, row, col string, next []string) (rowCache, error) {
	cols := append([]string{col}, next...)
	filters := recordFilters(cols, tx.startTs)
	rc := make(rowCache, len(cols))
	for _, c := range cols {
		rc[c] = cachedCol{}
	}
	cells, err := tx.db.st.ReadRow(ctx, row, filters...)
	if err != nil {
		return nil, fmt.Errorf("percolator: read %q: %w", row, err)
	}
	rc.add(cells)
	if tx.cache == nil {
		tx.cache = make(map[string]rowCache)
	}
	tx.cache[row] = rc
	return rc, nil
}

// prefetchRows bounds the rows Prefetch reads with one store call.
const prefetchRows = 200

// Prefetch reads cols of rows in the transaction's snapshot with as few
// store calls as the store allows, so that the transaction's Gets of those
// cells that follow cost none: on a store that reads a list of rows with
// one call (RowListReader: Bigtable), a call for up to 200 rows instead of
// a call a row. Call it before a loop of Gets over many rows (the
// canonicals of a page's linkers, the members of a cluster). Rows the
// transaction has already read, and every row on other stores, are left
// to Get. A prefetched cell found locked is read again by Get, which waits
// for or cleans up after its writer as always.
func (tx *Tx) Prefetch(ctx context.Context, rows []string, cols ...string) error {
	if tx.done {
		return ErrTxDone
	}
	if slices.Contains(cols, "") {
		return fmt.Errorf("%w: empty column", ErrInvalid)
	}
	rl, ok := tx.db.st.(RowListReader)
	if !ok || tx.db.ex != nil || len(cols) == 0 {
		return nil
	}
	if safe := tx.db.safe.Load(); tx.startTs < safe {
		return fmt.Errorf("%w: reading at %d < safe point %d", ErrTooOld, tx.startTs, safe)
	}
	var todo []string
	for _, r := range rows {
		if _, cached := tx.cache[r]; !cached && r != "" && r[0] != 0 {
			todo = append(todo, r)
		}
	}
	slices.Sort(todo)
	todo = slices.Compact(todo)
	switch {
	case len(todo) == 0 || len(todo) == 1 && len(cols) == 1:
		return nil // Get's own read (and its prefetch of a row) costs the same
	case len(todo) == 1:
		// One row: the columns with those learned to follow the first.
		next := cols[1:]
		for _, c := range tx.db.predict(cols[0]) {
			if !slices.Contains(cols, c) {
				next = append(next[:len(next):len(next)], c)
			}
		}
		_, err := tx.prefetch(ctx, todo[0], cols[0], next)
		return err
	}
	filters := recordFilters(cols, tx.startTs)
	if tx.cache == nil {
		tx.cache = make(map[string]rowCache, len(todo))
	}
	for len(todo) > 0 {
		batch := todo[:min(len(todo), prefetchRows)]
		todo = todo[len(batch):]
		for _, r := range batch {
			rc := make(rowCache, len(cols))
			for _, c := range cols {
				rc[c] = cachedCol{}
			}
			tx.cache[r] = rc
		}
		err := rl.ReadRowList(ctx, batch, func(row string, cells []Cell) bool {
			tx.cache[row].add(cells)
			return true
		}, filters...)
		if err != nil {
			for _, r := range batch {
				delete(tx.cache, r)
			}
			return fmt.Errorf("percolator: prefetch %d rows: %w", len(batch), err)
		}
	}
	return nil
}
