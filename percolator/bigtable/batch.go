package bigtable

import (
	"context"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/caffeine-go/caffeine/percolator"
)

// MutateRows calls made while another is in flight wait and go together
// in one call when it returns (together): the lock index entries,
// secondaries' commits, notifications and acknowledgements of a process's
// many concurrent transactions cost one call a round trip, not one each.
// Each row is still applied atomically and rows are independent, as
// MutateRows promises; a caller returns once its own rows are written (or
// failed), with their errors.

// rowWrite is a row's mutation in a MutateRows round.
type rowWrite struct {
	key string
	m   *bigtable.Mutation
	row percolator.RowMutation // for the notify index
}

// applied is what a MutateRows round's call returned.
type applied struct {
	rowErrs []error // by item, nil if every row was written
	err     error   // the call's own error
}

// mutateTimeout bounds a call that carries other callers' rows: one
// caller's cancellation must not fail theirs.
const mutateTimeout = time.Minute

// mutate writes ws with the rows of concurrent callers and returns their
// errors by item, or the call's error.
func (s *Store) mutate(ctx context.Context, ws []rowWrite) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, lo, hi := s.mutations.join(ws, func(ws []rowWrite) applied {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mutateTimeout)
		defer cancel()
		keys := make([]string, len(ws))
		ms := make([]*bigtable.Mutation, len(ws))
		for i, w := range ws {
			keys[i], ms[i] = w.key, w.m
		}
		s.calls.add(callMutateRows)
		rowErrs, err := s.tbl.ApplyBulk(cctx, keys, ms)
		if err != nil {
			return applied{err: err}
		}
		var done []percolator.RowMutation
		for i, w := range ws {
			if rowErrs == nil || rowErrs[i] == nil {
				done = append(done, w.row)
			}
		}
		s.index.add(ctx, done)
		return applied{rowErrs: rowErrs}
	})
	if res.err != nil || res.rowErrs == nil {
		return nil, res.err
	}
	return res.rowErrs[lo:hi], nil
}
