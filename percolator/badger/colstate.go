package badger

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	bdb "github.com/dgraph-io/badger/v4"

	"github.com/caffeine-go/caffeine/percolator"
)

// colState is what a write knows about one column beyond Badger's current
// state: the live versions and tombstones, with the write's own earlier
// mutations applied. Only columns that need it have one.
type colState struct {
	key []byte
	f   *family
	st  *stripe
	row string
	col string
	// live are the live versions, newest first; with values for sparse
	// families only.
	live []version
	// tombs are the Badger versions of real tombstones, newest first. It
	// is complete above floor, which is all the rescue in set needs.
	tombs []uint64
	// needRaw asks for live and tombs to be loaded from Badger; tombs
	// only above floor, the lowest version a SetCell of the write puts.
	needRaw bool
	floor   uint64
}

// colStates holds the column states of a write, by key.
type colStates struct {
	list []*colState
	// by indexes list once it is long; most writes touch a column or two.
	by map[string]*colState
}

const smallCols = 8

func (c *colStates) get(key []byte) *colState {
	if c.by != nil {
		return c.by[string(key)]
	}
	for _, cs := range c.list {
		if bytes.Equal(cs.key, key) {
			return cs
		}
	}
	return nil
}

func (c *colStates) add(cs *colState) {
	c.list = append(c.list, cs)
	switch {
	case c.by != nil:
		c.by[string(cs.key)] = cs
	case len(c.list) > smallCols:
		c.by = make(map[string]*colState, 2*len(c.list))
		for _, cs := range c.list {
			c.by[string(cs.key)] = cs
		}
	}
}

// set records a SetCell at ts in cs, of a value stored as blob id if id is
// not 0. Every tombstone above the new version would make compaction drop
// the new cell, so it is overwritten with a metaDeleted marker at the same
// version, which reads the same. A blob of the version it replaces is
// deleted.
func (cs *colState) set(b *batch, key []byte, ts uint64, val []byte, id uint64) {
	ver := ts + 1
	n := 0
	for _, t := range cs.tombs {
		switch {
		case t > ver:
			b.add(entry{key: key, ver: t, op: opDel})
		case t < ver:
			cs.tombs[n] = t
			n++
		}
	}
	cs.tombs = cs.tombs[:n]
	v := version{ts: ts, blob: id}
	if cs.f.sparse && len(val) > 0 {
		v.val = bytes.Clone(val)
	}
	j, found := slices.BinarySearchFunc(cs.live, ts, func(v version, ts uint64) int {
		switch {
		case v.ts > ts:
			return -1
		case v.ts < ts:
			return 1
		}
		return 0
	})
	if found {
		deleteBlob(b, cs.live[j])
		cs.live[j] = v
	} else {
		cs.live = slices.Insert(cs.live, j, v)
	}
}

// deleteBlob adds to b the deletion of v's blob, if it has one: a
// tombstone one version above the blob, so that compaction counts the
// value it drops (see blob.go).
func deleteBlob(b *batch, v version) {
	if v.blob != 0 {
		b.add(entry{key: blobKey(v.blob), ver: v.ts + 2, op: opTomb})
	}
}

func insertDesc(s []uint64, v uint64) []uint64 {
	j := 0
	for j < len(s) && s[j] > v {
		j++
	}
	if j < len(s) && s[j] == v {
		return s
	}
	return slices.Insert(s, j, v)
}

// loadRaw reads the live versions (of non-sparse families) and the
// tombstones above cs.floor of the column key into cs.
func (s *Store) loadRaw(key []byte, cs *colState) error {
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	it := txn.NewKeyIterator(key, bdb.IteratorOptions{})
	defer it.Close()
	live := !cs.f.sparse
	for it.Seek(key); it.Valid(); it.Next() {
		item := it.Item()
		ver := item.Version()
		if !live && ver <= cs.floor {
			break // a column's history may be long: read no more than needed
		}
		if item.IsDeletedOrExpired() {
			if ver > cs.floor {
				cs.tombs = append(cs.tombs, ver)
			}
			live = false // nothing below a tombstone is live
			continue
		}
		switch item.UserMeta() {
		case metaDeleted:
		case metaLive, metaEmpty, metaBlob:
			if live {
				id, err := blobRef(item)
				if err != nil {
					return fmt.Errorf("badger: read %q: %w", key, err)
				}
				cs.live = append(cs.live, version{ts: ver - 1, blob: id})
			}
		default:
			return fmt.Errorf("%w: key %q has user meta %d", ErrCorrupt, key, item.UserMeta())
		}
	}
	return nil
}

// loadLive reads the live versions of the column key, with values.
func (s *Store) loadLive(key []byte) ([]version, error) {
	txn := s.db.NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	it := txn.NewKeyIterator(key, bdb.IteratorOptions{})
	defer it.Close()
	p := newPicker([]percolator.Filter{{}})
	it.Seek(key)
	cells, err := s.walkKey(it, key, &p, "", "", nil)
	if err != nil {
		return nil, err
	}
	vs := make([]version, len(cells))
	for i, c := range cells {
		vs[i] = version{ts: c.Ts, val: c.Value}
	}
	return vs, nil
}
