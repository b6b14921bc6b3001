package bigtable

import (
	"context"
	"sync"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/caffeine-go/caffeine/percolator"
)

// MutateRows calls made while another is in flight wait and go together
// in one call when it returns, sent by one of their callers (group
// commit): the lock index entries, secondaries' commits, notifications
// and acknowledgements of a process's many concurrent transactions cost
// one call a round trip, not one each. Each row is still applied
// atomically and rows are independent, as MutateRows promises; a caller
// returns once its own rows are written (or failed), with their errors.
type mutateGroup struct {
	mu      sync.Mutex
	idle    sync.Cond // signalled when a call returns
	busy    bool      // a call is in flight
	pending *mutateBatch
}

// mutateBatch is the rows of the callers that go with one call.
type mutateBatch struct {
	keys    []string
	ms      []*bigtable.Mutation
	rows    []percolator.RowMutation // by entry, for the notify index
	rowErrs []error                  // by entry, once written
	err     error                    // the call's own error
	written bool
}

// mutateTimeout bounds a call that carries other callers' rows: one
// caller's cancellation must not fail theirs.
const mutateTimeout = time.Minute

// apply writes the rows (keys, ms) with the rows of concurrent callers and
// returns their errors by entry, or the call's error.
func (g *mutateGroup) apply(ctx context.Context, s *Store, keys []string, ms []*bigtable.Mutation, rows []percolator.RowMutation) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.idle.L == nil {
		g.idle.L = &g.mu
	}
	b := g.pending
	if b == nil {
		b = &mutateBatch{}
		g.pending = b
	}
	lo := len(b.keys)
	b.keys = append(b.keys, keys...)
	b.ms = append(b.ms, ms...)
	b.rows = append(b.rows, rows...)
	hi := len(b.keys)
	for !b.written {
		if !g.busy && g.pending == b {
			g.flush(ctx, s, b)
			continue
		}
		g.idle.Wait()
	}
	if b.err != nil {
		return nil, b.err
	}
	if b.rowErrs == nil {
		return nil, nil
	}
	return b.rowErrs[lo:hi], nil
}

// flush sends b with one call, the lock released meanwhile, and indexes
// the notify cells of the rows it applied.
func (g *mutateGroup) flush(ctx context.Context, s *Store, b *mutateBatch) {
	g.busy, g.pending = true, nil
	g.mu.Unlock()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mutateTimeout)
	s.calls.add(callMutateRows)
	rowErrs, err := s.tbl.ApplyBulk(cctx, b.keys, b.ms)
	cancel()
	if err == nil {
		applied := b.rows
		if rowErrs != nil {
			applied = nil
			for i, e := range rowErrs {
				if e == nil {
					applied = append(applied, b.rows[i])
				}
			}
		}
		s.index.add(ctx, applied)
	}
	g.mu.Lock()
	b.rowErrs, b.err, b.written = rowErrs, err, true
	g.busy = false
	g.idle.Broadcast()
}
