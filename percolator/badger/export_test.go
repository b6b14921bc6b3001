package badger

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	bdb "github.com/dgraph-io/badger/v4"
)

// CellKey is the Badger key of a cell, for tests that inspect Badger.
func CellKey(group, row, family, column string) []byte {
	return cellKey(groupPrefix(group), row, family, column)
}

// GroupPrefix is the prefix of every key of a locality group.
func GroupPrefix(group string) []byte { return groupPrefix(group) }

// User meta of entries, for tests that inspect Badger.
const (
	MetaLive    = metaLive
	MetaEmpty   = metaEmpty
	MetaDeleted = metaDeleted
)

// CheckSparse compares the in-memory copy of every sparse family with what
// Badger holds.
func (s *Store) CheckSparse() error {
	for _, f := range s.families().byName {
		if !f.sparse {
			continue
		}
		want := make(map[string]map[famCol][]version)
		err := s.scanSparse(f, func(row string, fc famCol, vs []version) {
			if want[row] == nil {
				want[row] = make(map[famCol][]version)
			}
			want[row][fc] = vs
		})
		if err != nil {
			return err
		}
		got := make(map[string]map[famCol][]version)
		for i := range s.stripes {
			st := &s.stripes[i]
			st.mu.RLock()
			for row, r := range st.sparse {
				for fc, vs := range r {
					if fc.fam != f.name {
						continue
					}
					if got[row] == nil {
						got[row] = make(map[famCol][]version)
					}
					got[row][fc] = vs
				}
			}
			st.mu.RUnlock()
		}
		eq := func(a, b map[famCol][]version) bool {
			return maps.EqualFunc(a, b, func(x, y []version) bool {
				if len(x) != len(y) {
					return false
				}
				for i := range x {
					if x[i].ts != y[i].ts || !bytes.Equal(x[i].val, y[i].val) {
						return false
					}
				}
				return true
			})
		}
		if !maps.EqualFunc(got, want, eq) {
			return fmt.Errorf("family %q: memory %v, Badger %v", f.name, got, want)
		}
	}
	return nil
}

// CachedVersion returns the newest-version cache's entry for a column of
// the default locality group: its timestamp, and whether there is one.
func (s *Store) CachedVersion(row, family, column string) (uint64, bool) {
	key := cellKey(groupPrefix(""), row, family, column)
	v, ok := s.versOf(s.stripe(row)).get(s.vh.of(key))
	return v - 1, ok
}

// SetScanCursorHook makes ReadRows call f after it makes each locality
// group's cursor, until the test ends.
func SetScanCursorHook(t interface{ Cleanup(func()) }, f func()) {
	testHookScanCursor = f
	t.Cleanup(func() { testHookScanCursor = nil })
}

// SameStripe reports whether rows a and b share a row lock.
func (s *Store) SameStripe(a, b string) bool { return s.stripe(a) == s.stripe(b) }

// SetFlushStepHook sets testHookFlushStep until the test ends.
func SetFlushStepHook(t interface{ Cleanup(func()) }, fn func(step int) error) {
	testHookFlushStep = fn
	t.Cleanup(func() { testHookFlushStep = nil })
}

// CheckBlobs checks that every live cell that refers to a blob finds it,
// and that every blob not deleted is referred to by exactly one live cell
// (none is left behind by a deletion or an overwrite).
func (s *Store) CheckBlobs() error { return s.checkBlobs(false) }

// CheckBlobsFound is CheckBlobs allowing blobs that no cell refers to,
// which a crash in mid-write may leave.
func (s *Store) CheckBlobsFound() error { return s.checkBlobs(true) }

func (s *Store) checkBlobs(leaks bool) error {
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	refs := make(map[uint64]string)
	it := txn.NewIterator(bdb.IteratorOptions{Prefix: []byte{tagCell}, AllVersions: true})
	var dead []byte // a key below whose tombstone nothing is live
	for it.Rewind(); it.Valid(); it.Next() {
		item := it.Item()
		if dead != nil && bytes.Equal(item.Key(), dead) {
			continue
		}
		if item.IsDeletedOrExpired() {
			dead = item.KeyCopy(dead[:0])
			continue
		}
		id, err := blobRef(item)
		if err != nil {
			it.Close()
			return err
		}
		if id == 0 {
			continue
		}
		at := fmt.Sprintf("%q@%d", item.Key(), item.Version())
		if other, ok := refs[id]; ok {
			it.Close()
			return fmt.Errorf("blob %d referred to by %s and %s", id, other, at)
		}
		refs[id] = at
	}
	it.Close()
	live := make(map[uint64]bool)
	bt := txn.NewIterator(bdb.IteratorOptions{Prefix: []byte{tagBlob}})
	defer bt.Close()
	for bt.Rewind(); bt.Valid(); bt.Next() {
		live[binary.BigEndian.Uint64(bt.Item().Key()[1:])] = true
	}
	var errs []string
	for id, at := range refs {
		if !live[id] {
			errs = append(errs, fmt.Sprintf("%s: blob %d missing", at, id))
		}
	}
	for id := range live {
		if _, ok := refs[id]; !ok && !leaks {
			errs = append(errs, fmt.Sprintf("blob %d left behind", id))
		}
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		return fmt.Errorf("%d blob errors: %s", len(errs), strings.Join(errs, "; "))
	}
	return nil
}

// Blobs returns the number of blobs not deleted.
func (s *Store) Blobs() int {
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	it := txn.NewIterator(bdb.IteratorOptions{Prefix: []byte{tagBlob}})
	defer it.Close()
	n := 0
	for it.Rewind(); it.Valid(); it.Next() {
		n++
	}
	return n
}

// Compactions runs the compactions of Compact but leaves the discard
// timestamp as it is: as Badger's own compactions would, in time.
func (s *Store) Compactions() error {
	if err := s.flushMemtables(); err != nil {
		return err
	}
	return s.db.Flatten(1)
}

// SetWriteStepHook sets testHookStep until the test ends.
func SetWriteStepHook(t interface{ Cleanup(func()) }, fn func(i int, batch bool, n int) (keep func(int) bool, stop error)) {
	testHookStep = fn
	t.Cleanup(func() { testHookStep = nil })
}

// SetForceLogged makes every write go through the intent in chunks, as one
// too large for a transaction does, while force is true; until the test
// ends.
func SetForceLogged(t interface{ Cleanup(func()) }, force bool) {
	testForceLogged = force
	t.Cleanup(func() { testForceLogged = false })
}

// LiveIntents returns how many intents are live in Badger.
func (s *Store) LiveIntents() (int, error) {
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	it := txn.NewIterator(bdb.IteratorOptions{Prefix: []byte{tagIntent}})
	defer it.Close()
	n := 0
	for it.Rewind(); it.Valid(); it.Next() {
		n++
	}
	return n, nil
}

// SetMinSpareFiles sets how many file descriptors must be free for Compact
// to flush the memtables, and returns a func that restores it.
func SetMinSpareFiles(n int) (restore func()) {
	old := minSpareFiles
	minSpareFiles = n
	return func() { minSpareFiles = old }
}
