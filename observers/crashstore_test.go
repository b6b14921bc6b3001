package observers_test

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
)

// errDead is what a crashStore answers once its process has died.
var errDead = errors.New("test: process crashed")

// crashStore is one process's view of a Badger store that outlives the
// process: once kill is called every call fails, so the process's
// transactions stop wherever they are (a prewrite done, a primary
// committed and its secondaries not, ...), as when a process is killed,
// and their locks stay for the next process to resolve. The next process
// opens a new DB over a new crashStore of the same store. It keeps the
// store's ExclusiveStore and point reads, so the DB behaves as over the
// store itself.
type crashStore struct {
	st   *badger.Store
	dead atomic.Bool
}

var (
	_ percolator.ExclusiveStore = (*crashStore)(nil)
)

func (s *crashStore) kill() { s.dead.Store(true) }

func (s *crashStore) EnsureFamilies(ctx context.Context, fams []percolator.Family) error {
	if s.dead.Load() {
		return errDead
	}
	return s.st.EnsureFamilies(ctx, fams)
}

func (s *crashStore) ReadRow(ctx context.Context, row string, filters ...percolator.Filter) ([]percolator.Cell, error) {
	if s.dead.Load() {
		return nil, errDead
	}
	return s.st.ReadRow(ctx, row, filters...)
}

// ReadPoint is the Badger store's point read, which the DB uses when the
// store has it.
func (s *crashStore) ReadPoint(ctx context.Context, dst []percolator.Cell, row string, filters []percolator.Filter, buf []byte) ([]percolator.Cell, []byte, error) {
	if s.dead.Load() {
		return dst, buf, errDead
	}
	return s.st.ReadPoint(ctx, dst, row, filters, buf)
}

func (s *crashStore) ReadRows(ctx context.Context, start, end string, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	if s.dead.Load() {
		return errDead
	}
	return s.st.ReadRows(ctx, start, end, func(row string, cells []percolator.Cell) bool {
		return !s.dead.Load() && fn(row, cells)
	}, filters...)
}

func (s *crashStore) CheckAndMutateRow(ctx context.Context, row string, predicate []percolator.Filter, ifMatch, ifNoMatch []percolator.Mutation) (bool, error) {
	if s.dead.Load() {
		return false, errDead
	}
	return s.st.CheckAndMutateRow(ctx, row, predicate, ifMatch, ifNoMatch)
}

func (s *crashStore) CheckAndMutateRowAt(ctx context.Context, row string, predicate []percolator.Filter, ts func() (uint64, error), ifNoMatch func(ts uint64) []percolator.Mutation) (bool, error) {
	if s.dead.Load() {
		return false, errDead
	}
	return s.st.CheckAndMutateRowAt(ctx, row, predicate, func() (uint64, error) {
		if s.dead.Load() {
			return 0, errDead
		}
		return ts()
	}, ifNoMatch)
}

func (s *crashStore) CheckAndMutateRowsAt(ctx context.Context, checks []percolator.RowPredicate, ts func() (uint64, error), ifNoMatch func(ts uint64) []percolator.RowMutation) (string, error) {
	if s.dead.Load() {
		return "", errDead
	}
	return s.st.CheckAndMutateRowsAt(ctx, checks, func() (uint64, error) {
		if s.dead.Load() {
			return 0, errDead
		}
		return ts()
	}, ifNoMatch)
}

// MutateRows applies the rows one by one, so that a process killed in the
// middle leaves some applied and some not, as MutateRows allows.
func (s *crashStore) MutateRows(ctx context.Context, rows []percolator.RowMutation) error {
	for i := range rows {
		if s.dead.Load() {
			return errDead
		}
		if err := s.st.MutateRows(ctx, rows[i:i+1]); err != nil {
			return err
		}
	}
	return nil
}

func (s *crashStore) Increment(ctx context.Context, row, family, column string, delta int64) (int64, error) {
	if s.dead.Load() {
		return 0, errDead
	}
	return s.st.Increment(ctx, row, family, column, delta)
}

// Close does not close the store, which outlives the process.
func (s *crashStore) Close() error { return nil }
