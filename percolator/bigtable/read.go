package bigtable

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"cloud.google.com/go/bigtable"

	"github.com/caffeine-go/caffeine/percolator"
)

// topTs bounds cell timestamps: cells live at [1, topTs).
const topTs = 1 << 52

// micros is the Bigtable timestamp of a cell at oracle timestamp ts (< topTs).
func micros(ts uint64) bigtable.Timestamp { return bigtable.Timestamp(ts * 1000) }

// oracleTs is the oracle timestamp of a Bigtable cell timestamp.
func oracleTs(t bigtable.Timestamp) uint64 { return uint64(t) / 1000 }

// prefixEnd returns the smallest string above every string beginning with
// p, or "" (no bound) when there is none.
func prefixEnd(p string) string {
	b := []byte(p)
	for len(b) > 0 && b[len(b)-1] == 0xff {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return ""
	}
	b[len(b)-1]++
	return string(b)
}

// btFilter is the Bigtable chain of f: a column range (never a regular
// expression, so any column name works), a timestamp range mapped to
// [MinTs×1000, (MaxTs+1)×1000), then Latest and KeysOnly.
func btFilter(f percolator.Filter) bigtable.Filter {
	if f.Column != "" {
		return rangeFilter(f, f.Column, f.Column+"\x00")
	}
	return rangeFilter(f, f.ColumnPrefix, prefixEnd(f.ColumnPrefix))
}

// rangeFilter is btFilter with f's columns replaced by the range [first,
// past) ("" is no end).
func rangeFilter(f percolator.Filter, first, past string) bigtable.Filter {
	chain := []bigtable.Filter{bigtable.ColumnRangeFilter(f.Family, first, past)}
	lo, hi := f.MinTs, f.Max()
	if lo >= topTs || lo > hi {
		return bigtable.BlockAllFilter()
	}
	var start, end bigtable.Timestamp
	if lo > 0 {
		start = micros(lo)
	}
	if hi < topTs-1 {
		end = micros(hi + 1)
	}
	if start != 0 || end != 0 {
		chain = append(chain, bigtable.TimestampRangeFilterMicros(start, end))
	}
	if f.Latest {
		chain = append(chain, bigtable.LatestNFilter(1))
	}
	if f.KeysOnly {
		chain = append(chain, bigtable.StripValueFilter())
	}
	if len(chain) == 1 {
		return chain[0]
	}
	return bigtable.ChainFilters(chain...)
}

// unionFilter is the Bigtable filter of a union of filters; a cell two of
// them match comes back twice (see cells).
func unionFilter(filters []percolator.Filter) bigtable.Filter {
	if len(filters) == 0 {
		return bigtable.BlockAllFilter()
	}
	if len(filters) == 1 {
		return btFilter(filters[0])
	}
	fs := make([]bigtable.Filter, len(filters))
	for i, f := range filters {
		fs[i] = btFilter(f)
	}
	return bigtable.InterleaveFilters(fs...)
}

// cells converts a Bigtable row to cells sorted by family, column and
// timestamp descending, with each cell once: a cell that several filters
// of an interleave matched comes once per filter, with its value from each
// filter that did not strip it.
func cells(r bigtable.Row) []percolator.Cell {
	var out []percolator.Cell
	for fam, items := range r {
		for _, it := range items {
			out = append(out, percolator.Cell{
				Family: fam,
				Column: strings.TrimPrefix(it.Column, fam+":"),
				Ts:     oracleTs(it.Timestamp),
				Value:  it.Value,
			})
		}
	}
	slices.SortStableFunc(out, func(a, b percolator.Cell) int {
		return cmp.Or(cmp.Compare(a.Family, b.Family), cmp.Compare(a.Column, b.Column), cmp.Compare(b.Ts, a.Ts))
	})
	// Keep the first of equal keys, with a value if any copy has one.
	n := 0
	for i, c := range out {
		if n > 0 && i > 0 {
			p := &out[n-1]
			if p.Family == c.Family && p.Column == c.Column && p.Ts == c.Ts {
				if len(p.Value) == 0 && len(c.Value) > 0 {
					p.Value = c.Value
				}
				continue
			}
		}
		out[n] = c
		n++
	}
	return out[:n]
}

var errNoFilter = errors.New("bigtable: a read needs at least one filter")

// ReadRow implements percolator.Store.
func (s *Store) ReadRow(ctx context.Context, row string, filters ...percolator.Filter) ([]percolator.Cell, error) {
	if len(filters) == 0 {
		return nil, errNoFilter
	}
	s.calls.add(callReadRow)
	rf := s.readFilter(filters, true)
	r, err := s.tbl.ReadRow(ctx, row, bigtable.RowFilter(rf.filter))
	if err != nil {
		return nil, fmt.Errorf("bigtable: read row %q: %w", row, err)
	}
	return rf.cells(r), nil
}

// readList reads the rows of keys (sorted) with one call and returns the
// matching cells of each row that has any.
func (s *Store) readList(ctx context.Context, keys []string, filters []percolator.Filter) (map[string][]percolator.Cell, error) {
	out := make(map[string][]percolator.Cell, len(keys))
	s.calls.add(callReadRowList)
	rf := s.readFilter(filters, true)
	err := s.tbl.ReadRows(ctx, bigtable.RowList(keys), func(r bigtable.Row) bool {
		if cs := rf.cells(r); len(cs) > 0 {
			out[r.Key()] = cs
		}
		return true
	}, bigtable.RowFilter(rf.filter))
	if err != nil {
		return nil, fmt.Errorf("bigtable: read %d rows: %w", len(keys), err)
	}
	return out, nil
}

// rowRange is [start, end) as Bigtable's row set; ok is false for an
// empty range.
func rowRange(start, end string) (bigtable.RowRange, bool) {
	if end == "" {
		return bigtable.InfiniteRange(start), true
	}
	if start >= end {
		return bigtable.RowRange{}, false
	}
	return bigtable.NewRange(start, end), true
}

// ReadRows implements percolator.Store. A scan whose filters all select
// families of locality groups reads the group index (see groupIndex), not
// the table.
func (s *Store) ReadRows(ctx context.Context, start, end string, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	if len(filters) == 0 {
		return errNoFilter
	}
	rr, ok := rowRange(start, end)
	if !ok {
		return nil
	}
	if s.groupOnly(filters) {
		return s.index.scan(ctx, start, end, fn, filters)
	}
	return s.scanTable(ctx, rr, end == start+"\x00", fn, filters)
}

// ReadRanges implements percolator.RangeReader: the rows of every range
// with one ReadRows call.
func (s *Store) ReadRanges(ctx context.Context, ranges []percolator.KeyRange, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	if len(filters) == 0 {
		return errNoFilter
	}
	if s.groupOnly(filters) {
		for _, r := range ranges { // the index reads its own way
			stop := false
			err := s.index.scan(ctx, r.Start, r.End, func(row string, cells []percolator.Cell) bool {
				stop = !fn(row, cells)
				return !stop
			}, filters)
			if err != nil || stop {
				return err
			}
		}
		return nil
	}
	var set bigtable.RowRangeList
	for _, r := range ranges {
		if rr, ok := rowRange(r.Start, r.End); ok {
			set = append(set, rr)
		}
	}
	switch len(set) {
	case 0:
		return nil
	case 1:
		return s.scanTable(ctx, set[0], false, fn, filters)
	}
	return s.scanTable(ctx, set, false, fn, filters)
}

// scanTable reads the rows of rr; oneRow says rr is one row's range, key
// to key+"\x00" (a transaction's scan of a row's columns).
func (s *Store) scanTable(ctx context.Context, rr bigtable.RowSet, oneRow bool, fn func(row string, cells []percolator.Cell) bool, filters []percolator.Filter) error {
	if r, ok := rr.(bigtable.RowRange); ok && r.String() == wholeTable {
		s.calls.add(callReadAll) // reads every row server side, whatever the filters
	} else {
		s.calls.add(callReadRows)
	}
	rf := s.readFilter(filters, oneRow)
	err := s.tbl.ReadRows(ctx, rr, func(r bigtable.Row) bool {
		cs := rf.cells(r)
		if len(cs) == 0 {
			return true
		}
		return fn(r.Key(), cs)
	}, bigtable.RowFilter(rf.filter))
	if err != nil {
		return fmt.Errorf("bigtable: read rows %v: %w", rr, err)
	}
	return nil
}

// groupOnly reports whether every filter selects a family of a locality
// group.
func (s *Store) groupOnly(filters []percolator.Filter) bool {
	for _, f := range filters {
		if !s.grouped(f.Family) {
			return false
		}
	}
	return true
}

// Bucketed implements percolator.BucketStore: the families of
// Config.IndexGroups are kept by bucket in the group index.
func (s *Store) Bucketed(filters ...percolator.Filter) bool {
	return len(filters) > 0 && s.groupOnly(filters)
}

// ReadBuckets implements percolator.BucketStore: one read of the group
// index for all of ranges, and one read of the table per verifyBatch rows
// it names.
func (s *Store) ReadBuckets(ctx context.Context, ranges []percolator.KeyRange, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	if !s.Bucketed(filters...) {
		return fmt.Errorf("bigtable: ReadBuckets of families not in an indexed group: %v", filters)
	}
	return s.index.readBuckets(ctx, ranges, fn, filters)
}

var _ percolator.IndexRepairer = (*Store)(nil)

// RepairIndex implements percolator.IndexRepairer: it reads the grouped
// families of the whole table and indexes every cell it finds, so a cell
// whose index write was lost is found by the scans again.
func (s *Store) RepairIndex(ctx context.Context) error {
	s.mu.Lock()
	var filters []percolator.Filter
	for f := range s.groups {
		filters = append(filters, percolator.Filter{Family: f, KeysOnly: true})
	}
	s.mu.Unlock()
	if len(filters) == 0 {
		return nil
	}
	slices.SortFunc(filters, func(a, b percolator.Filter) int { return strings.Compare(a.Family, b.Family) })
	return s.index.sweep(ctx, filters)
}

var (
	_ percolator.RowListReader = (*Store)(nil)
	_ percolator.RangeReader   = (*Store)(nil)
)

// listBatch bounds the rows of one ReadRowList call.
const listBatch = 1000

// ReadRowList implements percolator.RowListReader: one ReadRows call over
// the list (a call per listBatch rows).
func (s *Store) ReadRowList(ctx context.Context, rows []string, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	if len(filters) == 0 {
		return errNoFilter
	}
	for len(rows) > 0 {
		batch := rows[:min(len(rows), listBatch)]
		rows = rows[len(batch):]
		got, err := s.readList(ctx, batch, filters)
		if err != nil {
			return err
		}
		for _, r := range batch {
			if cs := got[r]; len(cs) > 0 && !fn(r, cs) {
				return nil
			}
		}
	}
	return nil
}
