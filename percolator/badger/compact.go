package badger

import (
	"context"
	"errors"
	"fmt"

	bdb "github.com/dgraph-io/badger/v4"
)

// Compact implements percolator.Compactor. It lets Badger discard every
// version below safeTs that a deletion hides, then forces the compactions
// that do it rather than waiting for the LSM tree to grow into them:
//
//  1. It flushes the memtables, whose entries compaction never sees. Badger
//     has no call for that alone; DropPrefix of a throwaway key does it,
//     and compacts level 0 on the way. DropPrefix makes Badger reject
//     writes meanwhile, so the store's writes wait on a gate instead.
//  2. It flattens the tree, compacting every level into the next.
//  3. It garbage-collects value log files, which hold values of 1 MiB and
//     more.
//
// This rewrites the whole LSM tree, so it suits a periodic collection (as
// Percolator's GC runs it), not a call per write.
func (s *Store) Compact(ctx context.Context, safeTs uint64) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	s.Discard(safeTs)
	if err := s.flushMemtables(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.db.Flatten(1); err != nil {
		return fmt.Errorf("badger: compact: %w", err)
	}
	if s.mem {
		return nil // no value log in memory
	}
	for ctx.Err() == nil {
		err := s.db.RunValueLogGC(0.5)
		if errors.Is(err, bdb.ErrNoRewrite) || errors.Is(err, bdb.ErrRejected) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("badger: value log gc: %w", err)
		}
	}
	return ctx.Err()
}

// Discard implements percolator.Discarder: Badger's compactions drop,
// from then on, the tombstones at or below safeTs and the versions they
// hide (see Layout and Deletions in the package doc).
func (s *Store) Discard(safeTs uint64) {
	s.discardMu.Lock()
	defer s.discardMu.Unlock()
	// A Bigtable timestamp t is version t+1, so versions at or below safeTs
	// are the timestamps below safeTs.
	if safeTs > s.discardTs {
		s.discardTs = safeTs
		s.db.SetDiscardTs(safeTs)
	}
}

// flushMemtables writes the memtables to level 0 and compacts it.
func (s *Store) flushMemtables() error {
	s.gate.Lock()
	defer s.gate.Unlock()
	key := []byte{tagFlush}
	wb := s.db.NewManagedWriteBatch()
	if err := wb.SetEntryAt(bdb.NewEntry(key, []byte{0}), 1); err != nil {
		wb.Cancel()
		return fmt.Errorf("badger: compact: %w", err)
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("badger: compact: %w", err)
	}
	if err := s.db.DropPrefix(key); err != nil {
		return fmt.Errorf("badger: compact: %w", err)
	}
	return nil
}
