package percolator

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// On a store other processes open too (one that is not an ExclusiveStore:
// Cloud Bigtable), a range of timestamps reserved ahead of need would break
// the order of time across processes: a process could hand out a timestamp
// from its range after another process handed out a higher one, and a
// transaction started after another committed would not see it. There the
// table's oracle row is the one authority, as the paper's timestamp server
// is: every timestamp comes from an increment of that row that was sent
// after the timestamp was asked for. Callers are batched as in the paper
// (section 2.3): one increment is in flight per process, and the callers
// that arrive meanwhile share the next one, which reserves as many
// timestamps as they are.

// sharedOracle batches the callers of Next into increments of the oracle
// row.
type sharedOracle struct {
	st Store

	mu     sync.Mutex
	open   *oracleBatch // callers waiting for the next increment
	flying bool         // an increment is in flight (flush runs)
	wg     sync.WaitGroup
}

// oracleBatch is the callers that share one increment. first is the first
// of their n timestamps; caller i gets first+i.
type oracleBatch struct {
	n     uint64
	first uint64
	err   error
	done  chan struct{}
}

// sharedLag is how far a shared oracle's timestamps may trail the clock
// before an increment moves the row up to it: one increment more at most
// this often, where every increment would need one if timestamps had to
// follow the clock to the millisecond, as the exclusive oracle's do.
const sharedLag = 100 * time.Millisecond

// sharedTimeout bounds one increment. The increment serves many callers,
// so it does not run under any one caller's context.
const sharedTimeout = 30 * time.Second

// next returns a timestamp from an increment sent after it was called.
func (s *sharedOracle) next(ctx context.Context) (uint64, error) {
	s.mu.Lock()
	b := s.open
	if b == nil {
		b = &oracleBatch{done: make(chan struct{})}
		s.open = b
	}
	i := b.n
	b.n++
	if !s.flying {
		s.flying = true
		s.wg.Go(s.flush)
	}
	s.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		return 0, ctx.Err() // the timestamp reserved for us is never used
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.first + i, nil
}

// wait returns when no increment is in flight (the DB closes the store
// after it).
func (s *sharedOracle) wait() { s.wg.Wait() }

// flush sends one increment per batch until no caller waits.
func (s *sharedOracle) flush() {
	for {
		s.mu.Lock()
		b := s.open
		s.open = nil
		if b == nil {
			s.flying = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		b.first, b.err = s.reserve(b.n)
		close(b.done)
	}
}

// reserve increments the oracle row by n and returns the first of the n
// timestamps reserved. If the row is more than sharedLag behind the clock
// (few timestamps were taken lately), it moves it up to the clock with a
// second increment, so that timestamps say when they were taken (see
// Oracle.Next).
//
// Increments add up: processes that found the row behind at the same
// time and all moved it up by the gap would move it that many gaps ahead
// of the clock (on a new table, past 2^52). So one process at a time
// moves it: the one that first writes the row's clock cell, whose
// timestamp is the wall time in ms of the last move; a move less than
// sharedLag ago (by the mover's clock) holds off the others, whose
// timestamps trail the clock a little longer instead.
func (s *sharedOracle) reserve(n uint64) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	v, err := s.st.Increment(ctx, oracleRow, famMeta, oracleColumn, int64(n))
	if err != nil {
		return 0, fmt.Errorf("percolator: oracle increment: %w", err)
	}
	now := time.Now()
	ts := TsFromTime(now)
	if uint64(v) >= ts-uint64(sharedLag.Milliseconds())<<tsLogicalBits {
		return uint64(v) - n + 1, nil
	}
	ms := uint64(now.UnixMilli())
	recent := Filter{Family: famMeta, Column: oracleClockColumn, MinTs: ms - uint64(sharedLag.Milliseconds())}
	moved, err := s.st.CheckAndMutateRow(ctx, oracleRow, []Filter{recent}, nil, []Mutation{
		{Op: DeleteOlder, Family: famMeta, Column: oracleClockColumn, Ts: ms},
		{Op: SetCell, Family: famMeta, Column: oracleClockColumn, Ts: ms},
	})
	if err != nil {
		return 0, fmt.Errorf("percolator: oracle clock: %w", err)
	}
	if moved {
		return uint64(v) - n + 1, nil // another process is moving it up
	}
	// The range (v, v+delta] of this increment is ours, and delta ≥ n.
	delta := ts + n - 1 - uint64(v)
	if v, err = s.st.Increment(ctx, oracleRow, famMeta, oracleColumn, int64(delta)); err != nil {
		return 0, fmt.Errorf("percolator: oracle increment: %w", err)
	}
	return uint64(v) - n + 1, nil
}
