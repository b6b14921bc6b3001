package badger

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/caffeine-go/caffeine/percolator"
)

func (s *Store) slot(row string) int {
	return int(maphash.String(s.seed, row) & (nStripes - 1))
}

// MutateRows implements percolator.Store. All rows are written in one
// Badger write (see flush) while their stripes are held, so readers see them
// applied all or none, and so does a crash if all have one timestamp and
// fit in one Badger transaction.
func (s *Store) MutateRows(ctx context.Context, rows []percolator.RowMutation) error {
	if err := s.usable(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	var slots []int
	var ops []rowOp
	if len(rows) <= 4 {
		var sbuf [4]int
		var obuf [4]rowOp
		slots, ops = sbuf[:len(rows)], obuf[:len(rows)]
	} else {
		slots, ops = make([]int, len(rows)), make([]rowOp, len(rows))
	}
	for i, r := range rows {
		slots[i] = s.slot(r.Row)
		ops[i] = rowOp{st: &s.stripes[slots[i]], row: r.Row, muts: r.Mutations}
	}
	defer s.hold(slots)()
	return s.write(s.families(), ops)
}

// hold holds the stripes of slots (which it sorts) for writing, in
// ascending order so that concurrent calls cannot deadlock, and returns
// the function that lets them go.
func (s *Store) hold(slots []int) (release func()) {
	slices.Sort(slots)
	slots = slices.Compact(slots)
	for _, i := range slots {
		s.stripes[i].lock()
	}
	return func() {
		for _, i := range slots {
			s.stripes[i].unlock()
		}
	}
}

// CheckAndMutateRow implements percolator.Store.
func (s *Store) CheckAndMutateRow(ctx context.Context, row string, predicate []percolator.Filter, ifMatch, ifNoMatch []percolator.Mutation) (bool, error) {
	if err := s.usable(); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	st := s.stripe(row)
	st.lock()
	defer st.unlock()
	fams := s.families()
	if err := checkMutations(fams, ifMatch); err != nil {
		return false, err
	}
	if err := checkMutations(fams, ifNoMatch); err != nil {
		return false, err
	}
	matched, err := s.matches(st, fams, row, predicate)
	if err != nil {
		return false, err
	}
	muts := ifNoMatch
	if matched {
		muts = ifMatch
	}
	return matched, s.write(fams, []rowOp{{st, row, muts}})
}

// CheckAndMutateRowAt implements percolator.ExclusiveStore.
func (s *Store) CheckAndMutateRowAt(ctx context.Context, row string, predicate []percolator.Filter, ts func() (uint64, error), ifNoMatch func(ts uint64) []percolator.Mutation) (bool, error) {
	if err := s.usable(); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	st := s.stripe(row)
	st.lock()
	defer st.unlock()
	fams := s.families()
	matched, err := s.matches(st, fams, row, predicate)
	if err != nil || matched {
		return matched, err
	}
	s.atGate.RLock()
	defer s.atGate.RUnlock()
	t, err := ts()
	if err != nil {
		return false, err
	}
	return false, s.write(fams, []rowOp{{st, row, ifNoMatch(t)}})
}

// CheckAndMutateRowsAt implements percolator.ExclusiveStore: the rows'
// stripes are held as MutateRows holds them, and the mutations are one
// write (see flush).
func (s *Store) CheckAndMutateRowsAt(ctx context.Context, checks []percolator.RowPredicate, ts func() (uint64, error), ifNoMatch func(ts uint64) []percolator.RowMutation) (string, error) {
	if err := s.usable(); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	slots := make([]int, len(checks))
	held := make(map[string]int, len(checks))
	for i, c := range checks {
		slots[i] = s.slot(c.Row)
		held[c.Row] = slots[i]
	}
	defer s.hold(slots)()
	fams := s.families()
	for _, c := range checks {
		matched, err := s.matches(&s.stripes[held[c.Row]], fams, c.Row, c.Filters)
		if err != nil {
			return "", err
		}
		if matched {
			return c.Row, nil
		}
	}
	s.atGate.RLock()
	defer s.atGate.RUnlock()
	t, err := ts()
	if err != nil {
		return "", err
	}
	rows := ifNoMatch(t)
	ops := make([]rowOp, len(rows))
	for i, r := range rows {
		slot, ok := held[r.Row]
		if !ok {
			return "", fmt.Errorf("%w: row %q is not one of the rows checked", ErrBadMutation, r.Row)
		}
		ops[i] = rowOp{st: &s.stripes[slot], row: r.Row, muts: r.Mutations}
	}
	return "", s.write(fams, ops)
}

// matches reports whether a cell of row matches one of the filters. The
// caller holds st.
func (s *Store) matches(st *stripe, fams *famSet, row string, filters []percolator.Filter) (bool, error) {
	// Whether any version is in range is whether the newest one in range
	// is, which the point read answers.
	var c colFilters
	if ok, err := c.load(fams, filters, true); err != nil {
		return false, err
	} else if ok {
		return s.anyCol(st, row, &c)
	}
	fs := make([]percolator.Filter, len(filters))
	for i, f := range filters {
		f.KeysOnly, f.Latest = true, true
		fs[i] = f
	}
	ps, err := plan(fams, fs)
	if err != nil {
		return false, err
	}
	for i := range ps {
		cells, err := s.readRow(st, row, ps[i:i+1], nil)
		if err != nil || len(cells) > 0 {
			return len(cells) > 0, err
		}
	}
	return false, nil
}

// Increment implements percolator.Store. The new value replaces the newest
// cell at its own timestamp (or is written at timestamp 1), so a counter
// does not accumulate versions.
func (s *Store) Increment(ctx context.Context, row, family, column string, delta int64) (int64, error) {
	if err := s.usable(); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	st := s.stripe(row)
	st.lock()
	defer st.unlock()
	fams := s.families()
	f, ok := fams.get(family)
	if !ok {
		return 0, fmt.Errorf("%w: %q", ErrUnknownFamily, family)
	}
	p := famPlan{f: f, fs: []percolator.Filter{{Family: family, Column: column, Latest: true}}, cols: []string{column}}
	cells, err := s.readRow(st, row, []famPlan{p}, nil)
	if err != nil {
		return 0, err
	}
	var n int64
	ts := uint64(1)
	if len(cells) > 0 {
		c := cells[0]
		if len(c.Value) != 8 {
			return 0, fmt.Errorf("%w: %s:%s@%d of row %q holds %d bytes", ErrNotCounter, family, column, c.Ts, row, len(c.Value))
		}
		n = int64(binary.BigEndian.Uint64(c.Value))
		ts = max(c.Ts, 1)
	}
	n += delta
	m := percolator.Mutation{Op: percolator.SetCell, Family: family, Column: column, Ts: ts, Value: binary.BigEndian.AppendUint64(nil, uint64(n))}
	if err := s.write(fams, []rowOp{{st, row, []percolator.Mutation{m}}}); err != nil {
		return 0, err
	}
	return n, nil
}
