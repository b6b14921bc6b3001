package bigtable

import (
	"context"
	"fmt"
	"sync/atomic"

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
// ("TABLE-groups", same row, family, column and timestamp), and a scan
// whose filters all select such families reads that table and then each
// row it names, with the caller's filters.
//
// A separate table rather than a key range of the same table: no user row
// can collide with it, and full-table scans (GC, lock cleanup) never read
// it.
//
// The index is written after the row, and never before, so a scan that
// finds an index cell whose row cell is gone knows it was deleted after
// being indexed and deletes that index cell (exactly that version). The
// two hazards left, a process that dies between the row write and the
// index write and a cell set again at the same timestamp while a scan
// deletes its index cell, are closed by a sweep: every sweepEvery-th
// group scan reads the table itself and indexes what it finds.
type groupIndex struct {
	s     *Store
	tbl   *bigtable.Table
	scans atomic.Uint64
}

// sweepEvery is how often a group scan reads the whole table instead of
// the index (and repairs the index from it).
const sweepEvery = 64

// add applies to the index the changes rows made to grouped cells: sets
// (keys only) and deletes, so that a notification's index cell goes with
// it and scans need not find it stale. Errors are dropped: the rows are
// written, the next sweep indexes what is missing, and a scan deletes an
// index cell whose row cell is gone.
func (g *groupIndex) add(ctx context.Context, rows []percolator.RowMutation) {
	var keys []string
	var ms []*bigtable.Mutation
	for _, r := range rows {
		var grouped []percolator.Mutation
		for _, mu := range r.Mutations {
			if g.s.grouped(mu.Family) {
				mu.Value = nil
				grouped = append(grouped, mu)
			}
		}
		if m, err := btMutation(grouped); err == nil && m != nil {
			keys = append(keys, r.Row)
			ms = append(ms, m)
		}
	}
	if len(ms) > 0 {
		g.s.calls.add(callIndexWrite)
		g.tbl.ApplyBulk(ctx, keys, ms)
	}
}

// verifyBatch is how many index rows a scan checks against the table with
// one read.
const verifyBatch = 100

// scan is ReadRows through the index.
func (g *groupIndex) scan(ctx context.Context, rr bigtable.RowRange, fn func(row string, cells []percolator.Cell) bool, filters []percolator.Filter) error {
	if g.scans.Add(1)%sweepEvery == 0 {
		return g.sweep(ctx, rr, fn, filters)
	}
	// The index holds keys only; Latest would hide versions whose row
	// cells are gone from the clean-up below.
	ifs := make([]percolator.Filter, len(filters))
	for i, f := range filters {
		f.Latest, f.KeysOnly = false, true
		ifs[i] = f
	}
	// The rows the index names are read from the table in batches, one
	// read per verifyBatch rows, in row order.
	type named struct {
		row     string
		indexed []percolator.Cell
	}
	var (
		batch []named
		ferr  error
		stop  bool
	)
	flush := func() bool {
		if len(batch) == 0 {
			return true
		}
		keys := make([]string, len(batch))
		for i, b := range batch {
			keys[i] = b.row
		}
		got, err := g.s.readList(ctx, keys, filters)
		if err != nil {
			ferr = err
			return false
		}
		for _, b := range batch {
			cs := got[b.row]
			if err := g.clean(ctx, b.row, b.indexed, cs); err != nil {
				ferr = err
				return false
			}
			if len(cs) > 0 && !fn(b.row, cs) {
				stop = true
				return false
			}
		}
		batch = batch[:0]
		return true
	}
	g.s.calls.add(callIndexRead)
	err := g.tbl.ReadRows(ctx, rr, func(r bigtable.Row) bool {
		indexed := cells(r)
		if len(indexed) == 0 {
			return true
		}
		batch = append(batch, named{r.Key(), indexed})
		return len(batch) < verifyBatch || flush()
	}, bigtable.RowFilter(unionFilter(ifs)))
	if err != nil {
		return fmt.Errorf("bigtable: read group index %v: %w", rr, err)
	}
	if ferr == nil && !stop {
		flush()
	}
	return ferr
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
	if err := g.tbl.Apply(ctx, row, m); err != nil {
		return fmt.Errorf("bigtable: clean group index of %q: %w", row, err)
	}
	return nil
}

// sweep is ReadRows on the table itself; it indexes every grouped cell it
// finds.
func (g *groupIndex) sweep(ctx context.Context, rr bigtable.RowRange, fn func(row string, cells []percolator.Cell) bool, filters []percolator.Filter) error {
	return g.s.scanTable(ctx, rr, func(row string, cs []percolator.Cell) bool {
		muts := make([]percolator.Mutation, len(cs))
		for i, c := range cs {
			muts[i] = percolator.Mutation{Op: percolator.SetCell, Family: c.Family, Column: c.Column, Ts: c.Ts}
		}
		g.add(ctx, []percolator.RowMutation{{Row: row, Mutations: muts}})
		return fn(row, cs)
	}, filters)
}
