package badger

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"

	bdb "github.com/dgraph-io/badger/v4"
)

// Kinds of batch entries.
const (
	opSet  = iota + 1 // a live cell
	opTomb            // a Badger tombstone
	opDel             // a metaDeleted marker
	opBlob            // a live cell whose value is a blob; val is the blob's id
)

type entry struct {
	key []byte
	ver uint64
	op  byte
	val []byte // opSet only
}

type entryID struct {
	key string
	ver uint64
}

// A batch collects the entries of one atomic write.
type batch struct {
	entries []entry
	at      map[entryID]int // later entries for the same key and version replace earlier ones
	// probes are the cells the batch sets as blobs at a version that may
	// hold a blob already: key and version, to look up before the flush.
	probes []entry
}

// find returns the entry of b for key at version ver, or nil.
func (b *batch) find(key []byte, ver uint64) *entry {
	if b.at != nil {
		if i, ok := b.at[entryID{string(key), ver}]; ok {
			return &b.entries[i]
		}
		return nil
	}
	for i := range b.entries {
		if b.entries[i].ver == ver && bytes.Equal(b.entries[i].key, key) {
			return &b.entries[i]
		}
	}
	return nil
}

func (b *batch) add(e entry) {
	// Most writes have a handful of entries: a linear search beats hashing.
	const small = 16
	if b.at == nil {
		if p := b.find(e.key, e.ver); p != nil {
			*p = e
			return
		}
		if len(b.entries) < small {
			b.entries = append(b.entries, e)
			return
		}
		b.at = make(map[entryID]int, 2*small)
		for i, e := range b.entries {
			b.at[entryID{string(e.key), e.ver}] = i
		}
	}
	id := entryID{string(e.key), e.ver}
	if i, ok := b.at[id]; ok {
		b.entries[i] = e
		return
	}
	b.at[id] = len(b.entries)
	b.entries = append(b.entries, e)
}

// flush writes entries to Badger atomically, crashes included.
//
// Entries that all have one version go in a managed transaction committed
// at that version: Badger marks its entries as one transaction in its log,
// so that a crash keeps all or none of them, and it is the cheapest way to
// write. Entries of several versions, or too many for one transaction, go
// with an intent that Open replays after a crash (see intent.go).
//
// A write of several versions that sets or deletes blobs goes in three
// steps: the blobs it sets, its cell entries, then the deletions of blobs
// (see blob.go), so that no crash leaves a cell whose blob is missing.
//
// It writes nothing and returns the ErrDiskFull error while the disk is
// below the reserve (see space.go).
func (s *Store) flush(entries []entry) error {
	if err := s.spaceErr(); err != nil {
		return err
	}
	s.wrote(entries)
	s.gate.RLock()
	defer s.gate.RUnlock()
	if sameVersion(entries) || !slices.ContainsFunc(entries, isBlobEntry) {
		return s.flushAll(entries)
	}
	var sets, cells, tombs []entry
	for _, e := range entries {
		switch {
		case !isBlobEntry(e):
			cells = append(cells, e)
		case e.op == opTomb:
			tombs = append(tombs, e)
		default:
			sets = append(sets, e)
		}
	}
	for i, step := range [][]entry{sets, cells, tombs} {
		if len(step) == 0 {
			continue
		}
		if testHookFlushStep != nil {
			if err := testHookFlushStep(i); err != nil {
				return err
			}
		}
		if err := s.flushAll(step); err != nil {
			return err
		}
	}
	return nil
}

// isBlobEntry reports whether e sets or deletes a blob.
func isBlobEntry(e entry) bool { return e.key[0] == tagBlob }

// testHookFlushStep, if set, runs before each step of a write in steps
// (0: blobs set, 1: cells, 2: blobs deleted); an error ends the write
// there, as a crash would.
var testHookFlushStep func(step int) error

// flushAll writes entries to Badger all or none, crashes included: in one
// managed transaction if they all have one version and fit, else with an
// intent (see intent.go). In memory, where nothing survives a crash, what
// one transaction cannot take goes in a write batch.
func (s *Store) flushAll(entries []entry) error {
	var err error
	switch one := sameVersion(entries); {
	case testForceLogged && !s.mem:
		err = s.flushLogged(entries)
	case one:
		err = s.commitStep(0, entries)
		if errors.Is(err, bdb.ErrTxnTooBig) {
			if s.mem {
				err = s.writeBatch(entries)
			} else {
				err = s.flushLogged(entries)
			}
		}
	case s.mem:
		err = s.writeBatch(entries)
	default:
		err = s.flushVersions(entries)
	}
	if err != nil {
		return fmt.Errorf("badger: write: %w", err)
	}
	return nil
}

// writeBatch writes entries in a managed write batch: in several commits
// if they outgrow one, and with no mark that makes a crash keep all or
// none of them.
func (s *Store) writeBatch(entries []entry) error {
	wb := s.db.NewManagedWriteBatch()
	for _, e := range entries {
		var err error
		if e.op == opTomb {
			err = wb.DeleteAt(e.key, e.ver)
		} else {
			err = wb.SetEntryAt(e.badger(), e.ver)
		}
		if err != nil {
			wb.Cancel()
			return err
		}
	}
	return wb.Flush()
}

func sameVersion(entries []entry) bool {
	for _, e := range entries[1:] {
		if e.ver != entries[0].ver {
			return false
		}
	}
	return true
}

// commitAt writes entries, which all have one version, in one managed
// transaction. Nothing is written if it returns bdb.ErrTxnTooBig.
func (s *Store) commitAt(entries []entry) error {
	// Without conflict detection, the read timestamp of a transaction that
	// reads nothing does not matter.
	txn := s.db.NewTransactionAt(math.MaxUint64, true)
	defer txn.Discard()
	for _, e := range entries {
		var err error
		if e.op == opTomb {
			err = txn.Delete(e.key)
		} else {
			err = txn.SetEntry(e.badger())
		}
		if err != nil {
			return err
		}
	}
	return txn.CommitAt(entries[0].ver, nil)
}

// badger returns the Badger entry of e, a live cell or a marker, without
// its version.
func (e *entry) badger() *bdb.Entry {
	switch {
	case e.op == opDel:
		return bdb.NewEntry(e.key, []byte{0}).WithMeta(metaDeleted)
	case e.op == opBlob:
		return bdb.NewEntry(e.key, e.val).WithMeta(metaBlob)
	case len(e.val) == 0:
		return bdb.NewEntry(e.key, []byte{0}).WithMeta(metaEmpty)
	}
	return bdb.NewEntry(e.key, e.val)
}
