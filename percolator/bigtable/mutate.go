package bigtable

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/caffeine-go/caffeine/percolator"
)

// btMutation converts muts to one Bigtable mutation, or nil when they
// change nothing (Bigtable refuses an empty mutation). SetCell needs a
// timestamp in [1, 2^52); a DeleteCell above it deletes nothing, a
// DeleteOlder above it the whole column.
func btMutation(muts []percolator.Mutation) (*bigtable.Mutation, error) {
	m := bigtable.NewMutation()
	n := 0
	for _, mu := range muts {
		switch mu.Op {
		case percolator.SetCell:
			if mu.Ts == 0 || mu.Ts >= topTs {
				return nil, fmt.Errorf("bigtable: %v: timestamp outside [1, 2^52)", mu)
			}
			v := mu.Value
			if v == nil {
				v = []byte{}
			}
			m.Set(mu.Family, mu.Column, micros(mu.Ts), v)
		case percolator.DeleteCell:
			if mu.Ts == 0 || mu.Ts >= topTs {
				continue
			}
			m.DeleteTimestampRange(mu.Family, mu.Column, micros(mu.Ts), micros(mu.Ts+1))
		case percolator.DeleteOlder:
			switch {
			case mu.Ts <= 1:
				continue
			case mu.Ts >= topTs:
				m.DeleteCellsInColumn(mu.Family, mu.Column)
			default:
				m.DeleteTimestampRange(mu.Family, mu.Column, 0, micros(mu.Ts))
			}
		default:
			return nil, fmt.Errorf("bigtable: %v: unknown op", mu)
		}
		n++
	}
	if n == 0 {
		return nil, nil
	}
	return m, nil
}

// MutateRows implements percolator.Store with one MutateRows call (the
// client retries it: every mutation has an explicit timestamp, so it is
// idempotent), shared with the calls made while another is in flight
// (batch.go).
func (s *Store) MutateRows(ctx context.Context, rows []percolator.RowMutation) error {
	ws := make([]rowWrite, 0, len(rows))
	for _, r := range rows {
		m, err := btMutation(r.Mutations)
		if err != nil {
			return fmt.Errorf("row %q: %w", r.Row, err)
		}
		if m != nil {
			ws = append(ws, rowWrite{r.Row, m, r})
		}
	}
	if len(ws) == 0 {
		return nil
	}
	rowErrs, err := s.mutate(ctx, ws)
	if err != nil {
		return fmt.Errorf("bigtable: mutate rows: %w", err)
	}
	var errs []error
	for j, e := range rowErrs {
		if e != nil {
			errs = append(errs, fmt.Errorf("bigtable: mutate row %q: %w", ws[j].key, e))
		}
	}
	return errors.Join(errs...)
}

// CheckAndMutateRow implements percolator.Store with one CheckAndMutateRow
// call. When the call fails with an unknown outcome (the request may or
// may not have been applied), the store re-reads the cells each branch
// sets: a branch with one of its cells there with its value was applied
// (this assumes, as Percolator's writes do, that a branch sets cells the
// row did not already hold with those values), and the call reports it;
// when neither is there, nothing was applied (or everything it set was
// deleted since) and the call is sent again, up to unknownRetries times.
// A call whose one non-empty branch only deletes is sent again too (the
// deletions are idempotent), and reports the match of the call that
// succeeded, which may differ from the first one's (Percolator ignores
// it: its rollback). A branch that sets no cell
// cannot be recognized: if it is not empty, the error is returned.
func (s *Store) CheckAndMutateRow(ctx context.Context, row string, predicate []percolator.Filter, ifMatch, ifNoMatch []percolator.Mutation) (bool, error) {
	mt, err := btMutation(ifMatch)
	if err != nil {
		return false, err
	}
	mf, err := btMutation(ifNoMatch)
	if err != nil {
		return false, err
	}
	if mt == nil && mf == nil {
		cs, err := s.ReadRow(ctx, row, predicate...)
		return len(cs) > 0, err
	}
	cm := bigtable.NewCondMutation(s.predicateFilter(predicate), mt, mf)
	for attempt := 0; ; attempt++ {
		var matched bool
		s.calls.add(callCheckAndMutate)
		err := s.tbl.Apply(ctx, row, cm, bigtable.GetCondMutationResult(&matched))
		if err == nil {
			s.index.add(ctx, []percolator.RowMutation{{Row: row, Mutations: branch(matched, ifMatch, ifNoMatch)}})
			return matched, nil
		}
		err = fmt.Errorf("bigtable: check and mutate row %q: %w", row, err)
		if !unknownOutcome(ctx, err) {
			return false, err
		}
		decided, matched, derr := s.decide(ctx, row, ifMatch, ifNoMatch)
		if derr != nil {
			return false, errors.Join(err, derr)
		}
		if decided {
			s.index.add(ctx, []percolator.RowMutation{{Row: row, Mutations: branch(matched, ifMatch, ifNoMatch)}})
			return matched, nil
		}
		if attempt == unknownRetries {
			return false, fmt.Errorf("%w (not applied; gave up after %d attempts)", err, attempt+1)
		}
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(min(5*time.Millisecond<<attempt, time.Second)):
		}
	}
}

// unknownRetries bounds how often a conditional mutation of unknown
// outcome that was found not applied is sent again (after 5 ms, doubling).
const unknownRetries = 10

func branch(matched bool, ifMatch, ifNoMatch []percolator.Mutation) []percolator.Mutation {
	if matched {
		return ifMatch
	}
	return ifNoMatch
}

// unknownOutcome reports whether err may have come after the server
// applied the request.
func unknownOutcome(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted, codes.Internal, codes.Canceled:
		return true
	}
	return false
}

// sets returns the cells muts leave set when applied in order.
func sets(muts []percolator.Mutation) []percolator.Cell {
	var out []percolator.Cell
	for _, m := range muts {
		switch m.Op {
		case percolator.SetCell:
			out = deleteCells(out, func(c percolator.Cell) bool {
				return c.Family == m.Family && c.Column == m.Column && c.Ts == m.Ts
			})
			out = append(out, percolator.Cell{Family: m.Family, Column: m.Column, Ts: m.Ts, Value: m.Value})
		case percolator.DeleteCell:
			out = deleteCells(out, func(c percolator.Cell) bool {
				return c.Family == m.Family && c.Column == m.Column && c.Ts == m.Ts
			})
		case percolator.DeleteOlder:
			out = deleteCells(out, func(c percolator.Cell) bool {
				return c.Family == m.Family && c.Column == m.Column && c.Ts < m.Ts
			})
		}
	}
	return out
}

func deleteCells(cs []percolator.Cell, del func(percolator.Cell) bool) []percolator.Cell {
	out := cs[:0]
	for _, c := range cs {
		if !del(c) {
			out = append(out, c)
		}
	}
	return out
}

// decide re-reads row after a conditional mutation of unknown outcome. It
// returns decided with the branch that was applied, or not decided when
// neither branch is visible and sending the call again is safe.
func (s *Store) decide(ctx context.Context, row string, ifMatch, ifNoMatch []percolator.Mutation) (decided, matched bool, err error) {
	st, sf := sets(ifMatch), sets(ifNoMatch)
	if len(st) == 0 && len(sf) == 0 {
		// At most one branch changes anything, and only by deleting
		// (Percolator's rollback of a lock): applying it again is the
		// same as applying it once.
		if len(ifMatch) == 0 || len(ifNoMatch) == 0 {
			return false, false, nil
		}
		return false, false, errors.New("bigtable: outcome unknown, and neither branch sets a cell to recognize it by")
	}
	var filters []percolator.Filter
	for _, c := range append(append([]percolator.Cell(nil), st...), sf...) {
		filters = append(filters, percolator.Filter{Family: c.Family, Column: c.Column, MinTs: c.Ts, MaxTs: c.Ts})
	}
	got, err := s.ReadRow(ctx, row, filters...)
	if err != nil {
		return false, false, fmt.Errorf("bigtable: re-read after an unknown outcome: %w", err)
	}
	// One cell is enough: others may have deleted the rest since (a
	// commit's notification run, a lock's commit), while the cells a
	// branch sets (at a transaction's own timestamps, with its own values)
	// were not there before.
	there := func(want []percolator.Cell) bool {
		for _, w := range want {
			for _, g := range got {
				if g.Family == w.Family && g.Column == w.Column && g.Ts == w.Ts && bytes.Equal(g.Value, w.Value) {
					return true
				}
			}
		}
		return false
	}
	t, f := there(st), there(sf)
	switch {
	case t && f:
		return false, false, errors.New("bigtable: outcome unknown, and both branches' cells are there")
	case t:
		return true, true, nil
	case f:
		return true, false, nil
	}
	// Neither is visible: sending again is safe when a branch that could
	// have been applied unseen changes nothing.
	if (len(st) == 0 && len(ifMatch) > 0) || (len(sf) == 0 && len(ifNoMatch) > 0) {
		return false, false, errors.New("bigtable: outcome unknown, and a branch that sets no cell may have been applied")
	}
	return false, false, nil
}

// Increment implements percolator.Store with ReadModifyWriteRow, which
// writes the new value at the server's time (or at the newest version's,
// when that is later). Every pruneEvery-th increment of a store then
// deletes the versions below the new one, as no garbage collection rule
// would: the shared oracle increments its row for every batch of
// timestamps, and a delete each time would double its calls.
func (s *Store) Increment(ctx context.Context, row, family, column string, delta int64) (int64, error) {
	rmw := bigtable.NewReadModifyWrite()
	rmw.Increment(family, column, delta)
	s.calls.add(callReadModifyWrite)
	r, err := s.tbl.ApplyReadModifyWrite(ctx, row, rmw)
	if err != nil {
		return 0, fmt.Errorf("bigtable: increment %s:%s of row %q: %w", family, column, row, err)
	}
	items := r[family]
	if len(items) != 1 || len(items[0].Value) != 8 {
		return 0, fmt.Errorf("bigtable: increment %s:%s of row %q: unexpected result %v", family, column, row, r)
	}
	v := int64(binary.BigEndian.Uint64(items[0].Value))
	if ts := items[0].Timestamp; ts > 0 && s.increments.Add(1)%pruneEvery == 0 {
		m := bigtable.NewMutation()
		m.DeleteTimestampRange(family, column, 0, ts)
		// The increment is done: a failure here only leaves old
		// versions, which a later prune deletes.
		s.calls.add(callMutateRows)
		_ = s.tbl.Apply(ctx, row, m)
	}
	return v, nil
}

// pruneEvery is how often Increment deletes the old versions of a counter.
const pruneEvery = 16
