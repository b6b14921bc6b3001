package badger

import (
	"encoding/binary"
	"errors"
	"fmt"

	bdb "github.com/dgraph-io/badger/v4"

	"github.com/caffeine-go/caffeine/percolator"
)

// Newest-version entries.
//
// Badger, in managed mode, cannot know that the version of a key it finds
// in the memtable is the newest: a write may put an older version later.
// So a Get at a read timestamp that is not exactly a version of the key
// looks in every level of the LSM tree, a third of the time of a point
// read. Reads of a family declared Newest (Percolator's write records,
// read at "the newest version at or below the start timestamp") go to a
// second key instead: tagNewest plus the cell key's suffix, always at
// version 1, read at version 1, which Badger returns from the first table
// holding it. Its value names the column's newest live version and holds
// its value:
//
//	kind byte, generation uvarint, ts uvarint, value
//
// kind is newestLive, newestEmpty (a live cell with an empty value) or
// newestUnknown (look at the versions). The entry is written in the same
// batch as the cell writes it describes:
//
//   - SetCell at a version above every version of its stripe (stripe.top)
//     makes it that version; any other SetCell makes it unknown, since an
//     older version written late is not the newest;
//   - DeleteCell or DeleteOlder that deletes the newest live version makes
//     it unknown.
//
// A read believes an entry only at a generation ≥ trusted. A write batch
// with several versions is not atomic in Badger: a crash in mid-write may
// keep the entry without the cell or the cell without the entry. So the
// store notes in tagGen that it is open, and an Open that finds that note
// (the last run did not close) distrusts every entry written before, as
// does declaring a family Newest again after a time without (its entries
// were not kept up to date meanwhile). Distrusted and missing entries only
// cost the read its speed: it reads the versions.
const (
	newestUnknown byte = iota
	newestLive
	newestEmpty
)

// newestVersion is the Badger version of every newest-version entry and
// of the generation record.
const newestVersion = 1

// newestKey turns a cell key into its newest-version key, in place; the
// caller turns it back with cellKeyOf.
func newestKey(key []byte) []byte { key[0] = tagNewest; return key }

func cellKeyOf(key []byte) []byte { key[0] = tagCell; return key }

// newestEntry returns the newest-version entry of the cell key for a write
// batch: the column's newest live version is ts with value val when known,
// else unknown.
func (s *Store) newestEntry(key []byte, known bool, ts uint64, val []byte) entry {
	k := append([]byte(nil), key...)
	newestKey(k)
	v := make([]byte, 1, 1+2*binary.MaxVarintLen64+len(val))
	switch {
	case !known:
		v[0] = newestUnknown
	case len(val) == 0:
		v[0] = newestEmpty
	default:
		v[0] = newestLive
	}
	v = binary.AppendUvarint(v, s.gen.Load())
	if known {
		v = binary.AppendUvarint(v, ts)
		v = append(v, val...)
	}
	return entry{key: k, ver: newestVersion, op: opSet, val: v}
}

// readNewest answers a Latest read of one column of a Newest family from
// its newest-version entry: ok is false when the entry is missing,
// distrusted, unknown or above the filter's bound, and the caller must
// read the versions. key is the cell key; it is changed and restored.
func (s *Store) readNewest(key []byte, f *family, col string, fl percolator.Filter, out []percolator.Cell) (_ []percolator.Cell, ok bool, err error) {
	item, err := s.newestTxn.Get(newestKey(key))
	cellKeyOf(key)
	if errors.Is(err, bdb.ErrKeyNotFound) {
		return out, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	err = item.Value(func(v []byte) error {
		if len(v) == 0 {
			return fmt.Errorf("%w: empty newest-version entry", ErrCorrupt)
		}
		kind := v[0]
		gen, n := binary.Uvarint(v[1:])
		if n <= 0 {
			return fmt.Errorf("%w: newest-version entry %q", ErrCorrupt, v)
		}
		if kind == newestUnknown || gen < s.trusted.Load() {
			return nil
		}
		rest := v[1+n:]
		ts, n := binary.Uvarint(rest)
		if n <= 0 {
			return fmt.Errorf("%w: newest-version entry %q", ErrCorrupt, v)
		}
		if ts > fl.Max() {
			return nil // a newer version than the read wants: read the versions
		}
		ok = true
		if ts < fl.MinTs {
			return nil
		}
		c := percolator.Cell{Family: f.name, Column: col, Ts: ts}
		if !fl.KeysOnly {
			c.Value = append(make([]byte, 0, len(rest)-n), rest[n:]...)
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, ok, nil
}

// The generation record, tagGen at version 1: gen, trusted (uvarints) and
// whether the store was closed (one byte).

// openGeneration starts a generation: one past the last, and trusted from
// it when the last run did not close (or declared a Newest family, which
// calls distrustNewest).
func (s *Store) openGeneration() error {
	txn := s.db.NewTransactionAt(newestVersion, false)
	defer txn.Discard()
	var gen, trusted uint64
	closed := true
	item, err := txn.Get([]byte{tagGen})
	switch {
	case errors.Is(err, bdb.ErrKeyNotFound):
	case err != nil:
		return fmt.Errorf("badger: open: %w", err)
	default:
		v, err := item.ValueCopy(nil)
		if err != nil {
			return fmt.Errorf("badger: open: %w", err)
		}
		var n, m int
		gen, n = binary.Uvarint(v)
		if n > 0 {
			trusted, m = binary.Uvarint(v[n:])
		}
		if n <= 0 || m <= 0 || len(v) != n+m+1 {
			return fmt.Errorf("%w: generation record %q", ErrCorrupt, v)
		}
		closed = v[n+m] == 1
	}
	gen++
	if !closed {
		trusted = gen
	}
	s.gen.Store(gen)
	s.trusted.Store(trusted)
	return s.saveGeneration(false)
}

// distrustNewest starts a generation trusted from itself. The caller
// holds s.famMu.
func (s *Store) distrustNewest() error {
	// Entries written after the new generation is stored carry it; a
	// write racing with this may carry the old one and be distrusted,
	// which costs nothing but speed.
	gen := s.gen.Add(1)
	s.trusted.Store(gen)
	return s.saveGeneration(false)
}

func (s *Store) saveGeneration(closed bool) error {
	v := binary.AppendUvarint(nil, s.gen.Load())
	v = binary.AppendUvarint(v, s.trusted.Load())
	c := byte(0)
	if closed {
		c = 1
	}
	v = append(v, c)
	s.gate.RLock()
	defer s.gate.RUnlock()
	wb := s.db.NewManagedWriteBatch()
	if err := wb.SetEntryAt(bdb.NewEntry([]byte{tagGen}, v), newestVersion); err != nil {
		wb.Cancel()
		return fmt.Errorf("badger: save generation: %w", err)
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("badger: save generation: %w", err)
	}
	return nil
}
