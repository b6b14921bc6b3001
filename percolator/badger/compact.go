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
// Percolator's GC runs it), not a call per write. It needs room for that:
// without the reserve plus the tables' size (and a value log file) free,
// it moves the discard timestamp only and returns an ErrDiskFull error.
//
// When the memtables cannot be flushed safely (too few file descriptors
// left for the tables and the log it creates) it flushes nothing and
// returns the error. Badger's flush is not undone when it fails midway: it
// leaves memtables released but still listed, which the next read, write
// or flush dereferences. So once it has failed the store is broken
// (ErrBroken): every call returns that error and none touches Badger.
func (s *Store) Compact(ctx context.Context, safeTs uint64) error {
	if err := s.usable(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	s.Discard(safeTs)
	if s.guard != nil {
		// Flattening writes the tables again before it deletes them;
		// value log GC rewrites a file's live values.
		lsm, vlog := s.Size()
		if err := s.guard.Need(lsm + min(vlog, s.db.Opts().ValueLogFileSize)); err != nil {
			return fmt.Errorf("%w to compact; not compacted", err)
		}
	}
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

// minSpareFiles is how many file descriptors must be free for
// flushMemtables to start: each memtable's table and the next memtable's
// log take one, and other goroutines may open more meanwhile.
var minSpareFiles = 64

// flushMemtables writes the memtables to level 0 and compacts it.
func (s *Store) flushMemtables() error {
	if spare, limit, ok := spareFiles(); ok && spare < minSpareFiles {
		return fmt.Errorf("badger: compact: memtables not flushed: %d file descriptors free of %d, needs %d", spare, limit, minSpareFiles)
	}
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
		return s.breaks(fmt.Errorf("badger: compact: flush memtables: %w", err))
	}
	return nil
}
