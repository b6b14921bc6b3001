package bigtable

import (
	"slices"
	"strings"

	"cloud.google.com/go/bigtable"

	"github.com/caffeine-go/caffeine/percolator"
)

// The emulator (cloud.google.com/go/bigtable/bttest) answers an interleave
// of filters by copying the whole row once per filter and merging the
// copies column by column, sorting the row's column names again for each
// column it adds: a call costs the square of the row's columns, however
// few cells it selects. A PageRank block row of a thousand pages has
// thousands of columns; a point read of it (a lock and a write filter)
// took a good part of a second there, and the prewrite of a run that
// deletes hundreds of its cells (a predicate of two filters a cell) took
// minutes, long enough to lose to every change in the section.
//
// So when the store talks to the emulator:
//   - a point read of several filters (ReadRow, a list of rows, a scan of
//     one row) asks for a superset made of conditions, one column range a
//     family (see supersetFilter), and keeps here the cells the filters
//     select, each filter's Latest included; a scan of many rows, whose
//     rows are narrow, keeps the interleave;
//   - the predicate of a conditional mutation, which only has to match or
//     not, is a chain of conditions (a family's column range; if it holds
//     a cell, the family's filters one by one; else the next family): a
//     copy of the row each, no merge.
//
// Cloud Bigtable gets the interleave, whose cost is what the filters
// select (the superset could cost more: columns between those asked for).

// readFilter is what a read sends for filters, and what it keeps of the
// answer.
type readFilter struct {
	filter bigtable.Filter
	exact  []percolator.Filter // non-nil: filter selects more; keep what these select
}

// readFilter returns how a read asks for the union of filters; point is
// whether it reads one row or a list of rows (not a range of them).
func (s *Store) readFilter(filters []percolator.Filter, point bool) readFilter {
	if !point || !s.emulated() || len(filters) < 2 {
		return readFilter{filter: unionFilter(filters)}
	}
	return readFilter{filter: supersetFilter(filters), exact: filters}
}

// emulated reports whether the store talks to the emulator and reads the
// emulator's way (see above).
func (s *Store) emulated() bool { return s.conn != nil && !s.interleave }

// predicateFilter is the filter that matches a row when one of filters
// matches it. On the emulator: for each family's filters in turn, if the
// column range of the family's filters (groupFilter) holds a cell, each
// of them in turn, else the next family; no merge.
func (s *Store) predicateFilter(filters []percolator.Filter) bigtable.Filter {
	if !s.emulated() || len(filters) < 2 {
		return unionFilter(filters)
	}
	groups := byFamily(filters)
	if len(groups) == 0 {
		return bigtable.BlockAllFilter()
	}
	var next bigtable.Filter = bigtable.BlockAllFilter()
	for g := len(groups) - 1; g >= 0; g-- {
		exact := next
		for i := len(groups[g]) - 1; i >= 0; i-- {
			exact = bigtable.ConditionFilter(btFilter(groups[g][i]), bigtable.PassAllFilter(), exact)
		}
		next = bigtable.ConditionFilter(groupFilter(groups[g]), exact, next)
	}
	return next
}

// cells converts a row read with rf to the cells its filters select.
func (rf readFilter) cells(r bigtable.Row) []percolator.Cell {
	cs := cells(r)
	if rf.exact == nil {
		return cs
	}
	return selectCells(cs, rf.exact)
}

// supersetFilter is a filter that selects every cell some filter of
// filters selects, and whose cost on the emulator is a few copies of the
// row rather than a merge. The filters are grouped by family (in the
// order of the families' names: Percolator's lock family comes before its
// write family); a group is one column range, from the first column one of
// its filters selects to the end of the last, with the span of their
// timestamps. Then, with the groups g1 … gn:
//
//	if g1's range holds a cell and one of g1's filters selects one:
//	    the interleave of every filter
//	else if g2's range holds a cell and one of g2's filters selects one:
//	    the interleave of every filter but g1's
//	…
//	else: gn's range
//
// (a group of more than maxTried filters is not tried filter by filter).
// A group that selects nothing (as the lock family, most of the time) costs
// a copy of the row.
func supersetFilter(filters []percolator.Filter) bigtable.Filter {
	groups := byFamily(filters)
	if len(groups) == 0 {
		return bigtable.BlockAllFilter()
	}
	last := len(groups) - 1
	out := groupFilter(groups[last])
	for g := last - 1; g >= 0; g-- {
		var rest []percolator.Filter
		for _, gr := range groups[g:] {
			rest = append(rest, gr...)
		}
		all := unionFilter(rest)
		// The range may hold a cell none of the group's filters selects
		// (a lock of another column): a few filters are tried one by one
		// before paying for the interleave.
		exact := all
		if len(groups[g]) <= maxTried {
			exact = out
			for i := len(groups[g]) - 1; i >= 0; i-- {
				exact = bigtable.ConditionFilter(btFilter(groups[g][i]), all, exact)
			}
		}
		out = bigtable.ConditionFilter(groupFilter(groups[g]), exact, out)
	}
	return out
}

// maxTried bounds the filters of a family that supersetFilter tries one by
// one, each try holding a copy of the interleave.
const maxTried = 8

// byFamily returns the filters that select something, grouped by family,
// in the order of the families' names.
func byFamily(filters []percolator.Filter) [][]percolator.Filter {
	var live []percolator.Filter
	for _, f := range filters {
		if f.MinTs < topTs && f.MinTs <= f.Max() {
			live = append(live, f)
		}
	}
	slices.SortStableFunc(live, func(a, b percolator.Filter) int { return strings.Compare(a.Family, b.Family) })
	var groups [][]percolator.Filter
	for i, f := range live {
		if i == 0 || f.Family != live[i-1].Family {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], f)
	}
	return groups
}

// groupFilter is one chain that selects every cell some filter of group
// (filters of one family) selects: a column range from the first column
// one selects to the end of the last ("" is no end), the span of their
// timestamps, and Latest and KeysOnly when every filter has them (Latest
// also needs the same timestamps).
func groupFilter(group []percolator.Filter) bigtable.Filter {
	var start, end string
	unbounded := false
	lo, hi := group[0].MinTs, group[0].Max()
	latest, keysOnly := true, true
	for i, f := range group {
		first, past := f.Column, f.Column+"\x00"
		if f.Column == "" {
			first, past = f.ColumnPrefix, prefixEnd(f.ColumnPrefix)
		}
		if i == 0 || first < start {
			start = first
		}
		if past == "" {
			unbounded = true
		} else if past > end {
			end = past
		}
		latest = latest && f.Latest && f.MinTs == group[0].MinTs && f.Max() == group[0].Max()
		keysOnly = keysOnly && f.KeysOnly
		lo, hi = min(lo, f.MinTs), max(hi, f.Max())
	}
	if unbounded {
		end = ""
	}
	return rangeFilter(percolator.Filter{Family: group[0].Family, MinTs: lo, MaxTs: hi, Latest: latest, KeysOnly: keysOnly}, start, end)
}

// selectCells keeps the cells of cs (sorted by family, column, timestamp
// descending, as cells returns them) that some filter selects: any
// matching cell for a filter without Latest, the newest matching cell of
// its column for a filter with it.
func selectCells(cs []percolator.Cell, filters []percolator.Filter) []percolator.Cell {
	type last struct{ family, column string }
	newest := make([]last, len(filters)) // the column each Latest filter last kept a cell of
	out := cs[:0]
	for _, c := range cs {
		keep := false
		for i, f := range filters {
			if !f.Matches(c) {
				continue
			}
			if !f.Latest {
				keep = true
				continue
			}
			if n := &newest[i]; n.family != c.Family || n.column != c.Column {
				n.family, n.column = c.Family, c.Column
				keep = true
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}
