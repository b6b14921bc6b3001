package bigtable

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/caffeine-go/caffeine/percolator"
)

// groupIndex stands in for Bigtable's missing locality groups. Percolator
// keeps its notify cells in the row they are about (the prewrite that sets
// one is the same conditional mutation as the lock, and a rollback erases
// both), so they stay in the table; but a scan filtered to the notify
// family would read every cell of the table server side. So every cell of
// a family in an indexed locality group (Config.IndexGroups: Percolator's
// notify group) is mirrored, keys only, in a separate table
// ("TABLE-index", same family, column and timestamp), and a scan whose
// filters all select such families reads that table and then each row it
// names, with the caller's filters.
//
// The index's row keys are percolator.BucketKey(row): a bucket, then
// the row. So the workers sharing a table each read only the buckets they
// own (ReadBuckets, one call for all of a worker's buckets), and a
// worker's scan costs its share of the notifications, not all of them. A
// ReadRows through the index reads every bucket's part of the range with
// one call and sorts the rows before it reads them from the table.
//
// A separate table rather than a key range of the same table: no user row
// can collide with it, and full-table scans (GC, lock cleanup) never read
// it. Tables indexed by row ("TABLE-groups") are moved to the bucketed
// index by EnsureFamilies (see migrate).
//
// The index is written after the row, and never before, so a scan that
// finds an index cell whose row cell is gone knows it was deleted after
// being indexed and deletes that index cell (exactly that version). The
// two hazards left, a process that dies between the row write and the
// index write and a cell set again at the same timestamp while a scan
// deletes its index cell, are closed by a sweep (RepairIndex): it reads
// the table itself and indexes what it finds. It reads every row, so one
// process of a deployment runs it, seldom (percolator.IndexRepairer).
type groupIndex struct {
	s   *Store
	tbl *bigtable.Table

	// Index writes of concurrent calls go together, one call a round.
	writes together[indexWrite, struct{}]
}

// indexWrite is a mutation of an index row.
type indexWrite struct {
	key string
	m   *bigtable.Mutation
}

// add applies to the index the changes rows made to grouped cells: sets
// (keys only) and deletes, so that a notification's index cell goes with
// it and scans need not find it stale. Errors are dropped: the rows are
// written, the next sweep indexes what is missing, and a scan deletes an
// index cell whose row cell is gone.
func (g *groupIndex) add(ctx context.Context, rows []percolator.RowMutation) {
	var ws []indexWrite
	for _, r := range rows {
		var grouped []percolator.Mutation
		for _, mu := range r.Mutations {
			if g.s.grouped(mu.Family) {
				mu.Value = nil
				grouped = append(grouped, mu)
			}
		}
		if m, err := btMutation(grouped); err == nil && m != nil {
			ws = append(ws, indexWrite{percolator.BucketKey(r.Row), m})
		}
	}
	if len(ws) > 0 {
		g.writes.join(ws, func(ws []indexWrite) struct{} {
			// The round holds other callers' writes: one caller's
			// deadline or cancellation must not drop them.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), indexWriteTimeout)
			defer cancel()
			keys := make([]string, len(ws))
			ms := make([]*bigtable.Mutation, len(ws))
			for i, w := range ws {
				keys[i], ms[i] = w.key, w.m
			}
			g.s.calls.add(callIndexWrite)
			g.tbl.ApplyBulk(ctx, keys, ms)
			return struct{}{}
		})
	}
}

// indexWriteTimeout bounds an index write.
const indexWriteTimeout = 10 * time.Second

// verifyBatch is how many index rows a scan checks against the table with
// one read.
const verifyBatch = 100

// scan is ReadRows through the index: every bucket's part of [start, end)
// with one read, the rows it names sorted, then read from the table in
// row order. It holds the index cells of the whole range in memory.
func (g *groupIndex) scan(ctx context.Context, start, end string, fn func(row string, cells []percolator.Cell) bool, filters []percolator.Filter) error {
	var set bigtable.RowRangeList
	for b := range percolator.Buckets {
		p := percolator.BucketStart(b)
		stop := percolator.BucketStart(b + 1)
		if end != "" {
			stop = p + end
		}
		if rr, ok := rowRange(p+start, stop); ok {
			set = append(set, rr)
		}
	}
	var all []named
	err := g.read(ctx, set, filters, func(n named) bool {
		all = append(all, n)
		return true
	})
	if err != nil {
		return err
	}
	slices.SortFunc(all, func(a, b named) int { return strings.Compare(a.row, b.row) })
	v := g.verifier(ctx, fn, filters)
	for _, n := range all {
		if !v.add(n) {
			break
		}
	}
	return v.done()
}

// readBuckets is ReadBuckets through the index: the rows it names in
// ranges, in index order, read from the table in batches.
func (g *groupIndex) readBuckets(ctx context.Context, ranges []percolator.KeyRange, fn func(row string, cells []percolator.Cell) bool, filters []percolator.Filter) error {
	var set bigtable.RowRangeList
	for _, r := range ranges {
		if rr, ok := rowRange(r.Start, r.End); ok {
			set = append(set, rr)
		}
	}
	if len(set) == 0 {
		return nil
	}
	v := g.verifier(ctx, fn, filters)
	if err := g.read(ctx, set, filters, v.add); err != nil {
		return err
	}
	return v.done()
}

// named is a row an index scan found, with its index cells.
type named struct {
	row     string
	indexed []percolator.Cell
}

// read calls fn with each row of the index in set that has cells matching
// filters, in index order, until fn returns false.
func (g *groupIndex) read(ctx context.Context, set bigtable.RowSet, filters []percolator.Filter, fn func(named) bool) error {
	// The index holds keys only; Latest would hide versions whose row
	// cells are gone from the clean-up below.
	ifs := make([]percolator.Filter, len(filters))
	for i, f := range filters {
		f.Latest, f.KeysOnly = false, true
		ifs[i] = f
	}
	g.s.calls.add(callIndexRead)
	rf := g.s.readFilter(ifs, false)
	err := g.tbl.ReadRows(ctx, set, func(r bigtable.Row) bool {
		indexed := rf.cells(r)
		row, ok := percolator.RowOfBucketKey(r.Key())
		if len(indexed) == 0 || !ok {
			return true
		}
		g.s.indexRows.Add(1)
		return fn(named{row, indexed})
	}, bigtable.RowFilter(rf.filter))
	if err != nil {
		return fmt.Errorf("bigtable: read group index: %w", err)
	}
	return nil
}

// A verifier reads the rows an index scan names from the table, one read
// per verifyBatch rows, and gives fn those that still have matching
// cells, cleaning the index of those that do not.
type verifier struct {
	g       *groupIndex
	ctx     context.Context
	fn      func(row string, cells []percolator.Cell) bool
	filters []percolator.Filter
	batch   []named
	err     error
	stop    bool
}

func (g *groupIndex) verifier(ctx context.Context, fn func(row string, cells []percolator.Cell) bool, filters []percolator.Filter) *verifier {
	return &verifier{g: g, ctx: ctx, fn: fn, filters: filters}
}

// add queues n, and reports whether the scan goes on.
func (v *verifier) add(n named) bool {
	v.batch = append(v.batch, n)
	return len(v.batch) < verifyBatch || v.flush()
}

// done checks the rows left and returns the scan's error.
func (v *verifier) done() error {
	if v.err == nil && !v.stop {
		v.flush()
	}
	return v.err
}

func (v *verifier) flush() bool {
	if len(v.batch) == 0 {
		return true
	}
	keys := make([]string, len(v.batch))
	for i, b := range v.batch {
		keys[i] = b.row
	}
	slices.Sort(keys)
	got, err := v.g.s.readList(v.ctx, keys, v.filters)
	if err != nil {
		v.err = err
		return false
	}
	for _, b := range v.batch {
		cs := got[b.row]
		if err := v.g.clean(v.ctx, b.row, b.indexed, cs); err != nil {
			v.err = err
			return false
		}
		if len(cs) > 0 && !v.fn(b.row, cs) {
			v.stop = true
			return false
		}
	}
	v.batch = v.batch[:0]
	return true
}

// clean deletes the index cells of row whose row cells are gone. seen are
// row cells read after the index cells were.
func (g *groupIndex) clean(ctx context.Context, row string, indexed, seen []percolator.Cell) error {
	type key struct {
		fam, col string
		ts       uint64
	}
	have := make(map[key]bool, len(seen))
	for _, c := range seen {
		have[key{c.Family, c.Column, c.Ts}] = true
	}
	var check []percolator.Filter
	for _, c := range indexed {
		if !have[key{c.Family, c.Column, c.Ts}] {
			check = append(check, percolator.Filter{Family: c.Family, Column: c.Column, MinTs: c.Ts, MaxTs: c.Ts, KeysOnly: true})
		}
	}
	if len(check) == 0 {
		return nil
	}
	// Cells the caller's filters did not ask for (Latest, time ranges):
	// read them, still after the index.
	there, err := g.s.ReadRow(ctx, row, check...)
	if err != nil {
		return err
	}
	for _, c := range there {
		have[key{c.Family, c.Column, c.Ts}] = true
	}
	var del []percolator.Mutation
	for _, f := range check {
		if !have[key{f.Family, f.Column, f.MinTs}] {
			del = append(del, percolator.Mutation{Op: percolator.DeleteCell, Family: f.Family, Column: f.Column, Ts: f.MinTs})
		}
	}
	m, err := btMutation(del)
	if err != nil || m == nil {
		return err
	}
	g.s.calls.add(callIndexWrite)
	if err := g.tbl.Apply(ctx, percolator.BucketKey(row), m); err != nil {
		return fmt.Errorf("bigtable: clean group index of %q: %w", row, err)
	}
	return nil
}

// sweep reads the grouped families of the table itself and indexes every
// cell it finds, verifyBatch rows a write.
func (g *groupIndex) sweep(ctx context.Context, filters []percolator.Filter) error {
	var batch []percolator.RowMutation
	err := g.s.scanTable(ctx, bigtable.InfiniteRange(""), false, func(row string, cs []percolator.Cell) bool {
		muts := make([]percolator.Mutation, len(cs))
		for i, c := range cs {
			muts[i] = percolator.Mutation{Op: percolator.SetCell, Family: c.Family, Column: c.Column, Ts: c.Ts}
		}
		batch = append(batch, percolator.RowMutation{Row: row, Mutations: muts})
		if len(batch) >= verifyBatch {
			g.add(ctx, batch)
			batch = nil
		}
		return true
	}, filters)
	g.add(ctx, batch)
	return err
}
