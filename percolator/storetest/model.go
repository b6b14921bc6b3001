package storetest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/caffeine-go/caffeine/percolator"
)

// Model is the reference implementation of the contract: one mutex over a
// map of rows, each row's cells kept sorted by family, column and timestamp
// descending. It is the model a backend is compared with, operation by
// operation, in differential tests; it is slow and keeps everything in
// memory, so it is not meant to hold a table. It implements
// percolator.ExclusiveStore and percolator.Compactor. Its zero value is not
// usable: call NewModel.
//
// Increment writes the new value one timestamp above the newest cell and
// deletes the older versions; a backend may choose other timestamps, so a
// differential test compares counters by value.
type Model struct {
	mu     sync.Mutex
	fams   map[string]percolator.Family
	rows   map[string][]percolator.Cell
	closed bool
}

var (
	_ percolator.ExclusiveStore = (*Model)(nil)
	_ percolator.Compactor      = (*Model)(nil)
)

// errClosed is returned by the methods of a closed Model.
var errClosed = errors.New("storetest: model closed")

// NewModel returns an empty, open model.
func NewModel() *Model {
	return &Model{fams: make(map[string]percolator.Family), rows: make(map[string][]percolator.Cell)}
}

// check reports why a call cannot proceed. s.mu must be held.
func (s *Model) check(ctx context.Context) error {
	if s.closed {
		return errClosed
	}
	return ctx.Err()
}

// EnsureFamilies implements percolator.Store.
func (s *Model) EnsureFamilies(ctx context.Context, fams []percolator.Family) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	for _, f := range fams {
		if _, ok := s.fams[f.Name]; !ok {
			s.fams[f.Name] = f
		}
	}
	return nil
}

func compareCells(a, b percolator.Cell) int {
	return cmp.Or(cmp.Compare(a.Family, b.Family), cmp.Compare(a.Column, b.Column), cmp.Compare(b.Ts, a.Ts))
}

// read returns the cells of row matching the filters. s.mu must be held.
func (s *Model) read(row string, filters []percolator.Filter) []percolator.Cell {
	type colKey struct{ fam, col string }
	selected := make(map[int]bool) // index in row → with value
	for _, f := range filters {
		taken := make(map[colKey]bool)
		for i, c := range s.rows[row] {
			if !f.Matches(c) {
				continue
			}
			if f.Latest {
				// Versions are sorted newest first.
				if taken[colKey{c.Family, c.Column}] {
					continue
				}
				taken[colKey{c.Family, c.Column}] = true
			}
			selected[i] = selected[i] || !f.KeysOnly
		}
	}
	var out []percolator.Cell
	for i, c := range s.rows[row] {
		withValue, ok := selected[i]
		if !ok {
			continue
		}
		c.Value = nil
		if withValue {
			c.Value = bytes.Clone(s.rows[row][i].Value)
		}
		out = append(out, c)
	}
	return out
}

// apply applies muts to row atomically: all or, on error, none. s.mu must be
// held.
func (s *Model) apply(row string, muts []percolator.Mutation) error {
	for _, m := range muts {
		if _, ok := s.fams[m.Family]; !ok {
			return fmt.Errorf("storetest: model: %v: unknown family %q", m, m.Family)
		}
		if m.Op < percolator.SetCell || m.Op > percolator.DeleteOlder {
			return fmt.Errorf("storetest: model: %v: unknown op", m)
		}
	}
	cells := s.rows[row]
	for _, m := range muts {
		same := func(c percolator.Cell) bool { return c.Family == m.Family && c.Column == m.Column }
		switch m.Op {
		case percolator.SetCell:
			c := percolator.Cell{Family: m.Family, Column: m.Column, Ts: m.Ts, Value: bytes.Clone(m.Value)}
			if i, found := slices.BinarySearchFunc(cells, c, compareCells); found {
				cells[i] = c
			} else {
				cells = slices.Insert(cells, i, c)
			}
		case percolator.DeleteCell:
			cells = slices.DeleteFunc(cells, func(c percolator.Cell) bool { return same(c) && c.Ts == m.Ts })
		case percolator.DeleteOlder:
			cells = slices.DeleteFunc(cells, func(c percolator.Cell) bool { return same(c) && c.Ts < m.Ts })
		}
	}
	if len(cells) == 0 {
		delete(s.rows, row)
	} else {
		s.rows[row] = cells
	}
	return nil
}

// ReadRow implements percolator.Store.
func (s *Model) ReadRow(ctx context.Context, row string, filters ...percolator.Filter) ([]percolator.Cell, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	return s.read(row, filters), nil
}

// ReadRows implements percolator.Store. Each row is read under the
// mutex; the scan as a whole is not a snapshot.
func (s *Model) ReadRows(ctx context.Context, start, end string, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	s.mu.Lock()
	if err := s.check(ctx); err != nil {
		s.mu.Unlock()
		return err
	}
	var keys []string
	for row := range s.rows {
		if row >= start && (end == "" || row < end) {
			keys = append(keys, row)
		}
	}
	s.mu.Unlock()
	sort.Strings(keys)
	for _, row := range keys {
		s.mu.Lock()
		err := s.check(ctx)
		var cells []percolator.Cell
		if err == nil {
			cells = s.read(row, filters)
		}
		s.mu.Unlock()
		if err != nil {
			return err
		}
		if len(cells) > 0 && !fn(row, cells) {
			return nil
		}
	}
	return nil
}

// CheckAndMutateRow implements percolator.Store.
func (s *Model) CheckAndMutateRow(ctx context.Context, row string, predicate []percolator.Filter, ifMatch, ifNoMatch []percolator.Mutation) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return false, err
	}
	if len(s.read(row, predicate)) > 0 {
		return true, s.apply(row, ifMatch)
	}
	return false, s.apply(row, ifNoMatch)
}

// CheckAndMutateRowAt implements percolator.ExclusiveStore.
func (s *Model) CheckAndMutateRowAt(ctx context.Context, row string, predicate []percolator.Filter, ts func() (uint64, error), ifNoMatch func(ts uint64) []percolator.Mutation) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return false, err
	}
	if len(s.read(row, predicate)) > 0 {
		return true, nil
	}
	t, err := ts()
	if err != nil {
		return false, fmt.Errorf("storetest: model: timestamp: %w", err)
	}
	return false, s.apply(row, ifNoMatch(t))
}

// CheckAndMutateRowsAt implements percolator.ExclusiveStore.
func (s *Model) CheckAndMutateRowsAt(ctx context.Context, checks []percolator.RowPredicate, ts func() (uint64, error), ifNoMatch func(ts uint64) []percolator.RowMutation) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return "", err
	}
	checked := make(map[string]bool, len(checks))
	for _, c := range checks {
		if len(s.read(c.Row, c.Filters)) > 0 {
			return c.Row, nil
		}
		checked[c.Row] = true
	}
	t, err := ts()
	if err != nil {
		return "", fmt.Errorf("storetest: model: timestamp: %w", err)
	}
	rows := ifNoMatch(t)
	for _, r := range rows {
		if !checked[r.Row] {
			return "", fmt.Errorf("storetest: model: row %q is not one of the rows checked", r.Row)
		}
	}
	var errs []error
	for _, r := range rows {
		errs = append(errs, s.apply(r.Row, r.Mutations))
	}
	return "", errors.Join(errs...)
}

// MutateRows implements percolator.Store.
func (s *Model) MutateRows(ctx context.Context, rows []percolator.RowMutation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return err
	}
	var errs []error
	for _, r := range rows {
		errs = append(errs, s.apply(r.Row, r.Mutations))
	}
	return errors.Join(errs...)
}

// Increment implements percolator.Store.
func (s *Model) Increment(ctx context.Context, row, family, column string, delta int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	var v int64
	ts := uint64(1)
	if cs := s.read(row, []percolator.Filter{{Family: family, Column: column, Latest: true}}); len(cs) > 0 {
		if len(cs[0].Value) != 8 {
			return 0, fmt.Errorf("storetest: model: increment %s:%s of row %q: value is %d bytes, not 8", family, column, row, len(cs[0].Value))
		}
		v = int64(binary.BigEndian.Uint64(cs[0].Value))
		ts = cs[0].Ts + 1
	}
	v += delta
	// The new version replaces the older ones, which nothing reads.
	err := s.apply(row, []percolator.Mutation{
		{Op: percolator.SetCell, Family: family, Column: column, Ts: ts, Value: binary.BigEndian.AppendUint64(nil, uint64(v))},
		{Op: percolator.DeleteOlder, Family: family, Column: column, Ts: ts},
	})
	return v, err
}

// Compact implements percolator.Compactor. It has nothing to do:
// deletions free their cells at once.
func (s *Model) Compact(ctx context.Context, safeTs uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.check(ctx)
}

// Close implements percolator.Store. Every later call returns an error.
func (s *Model) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// ReadRowList implements percolator.RowListReader: a ReadRow a row.
func (s *Model) ReadRowList(ctx context.Context, rows []string, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	return RowByRow(ctx, s, rows, fn, filters...)
}

// ReadRanges implements percolator.RangeReader: a ReadRows a range.
func (s *Model) ReadRanges(ctx context.Context, ranges []percolator.KeyRange, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	return RangeByRange(ctx, s, ranges, fn, filters...)
}

// RowByRow is percolator.RowListReader's ReadRowList made of s's ReadRow
// calls, a row each: for stores (and wrappers) that read lists as Bigtable
// does, but without its one call.
func RowByRow(ctx context.Context, s percolator.Store, rows []string, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	for _, r := range rows {
		cs, err := s.ReadRow(ctx, r, filters...)
		if err != nil {
			return err
		}
		if len(cs) > 0 && !fn(r, cs) {
			return nil
		}
	}
	return nil
}

// RangeByRange is percolator.RangeReader's ReadRanges made of s's
// ReadRows calls, a range each.
func RangeByRange(ctx context.Context, s percolator.Store, ranges []percolator.KeyRange, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	stopped := false
	for _, r := range ranges {
		err := s.ReadRows(ctx, r.Start, r.End, func(row string, cells []percolator.Cell) bool {
			stopped = !fn(row, cells)
			return !stopped
		}, filters...)
		if err != nil || stopped {
			return err
		}
	}
	return nil
}
