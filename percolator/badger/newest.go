package badger

import (
	"hash/maphash"
	"sync/atomic"
	"unsafe"
)

// The newest-version cache.
//
// Badger, in managed mode, cannot know that the version of a key it finds
// in the memtable is the key's newest: a write may put an older version
// later. So a Get at a read timestamp that is not exactly a version of the
// key searches every level of the LSM tree (BENCHMARKS.md has what that
// costs). A Get at exactly the key's version ends at the first table
// holding it. For the families declared Newest (Percolator's write
// records, read as "the newest version at or below the start timestamp"),
// each stripe caches the Badger version of its columns' newest live
// version, so that a read whose bound is at or above it asks Badger for
// exactly that version (and a read of keys only needs no Get at all).
//
// The cache is memory only and forgets freely: a stripe has verBuckets
// buckets of eight slots, two cache lines each (4 MB for the store, in one
// array, so that finding a bucket loads nothing first); a column goes to a
// slot of the bucket its key hashes to, replacing another when the bucket
// is full. (Of BenchmarkFigure8's reads of 100,000 columns, 1.6% missed
// with 16 buckets of four a stripe, as crowded buckets went on replacing
// their columns; with 8 of eight, 0.2% do.) A column it does not know is
// read as before, and that read fills it in. What it holds is exact:
//
//   - a write sets a column's slot when it puts a version above every
//     version of the stripe (stripe.top), the column's newest then, and
//     clears it on any other SetCell (an older version written late) and
//     on a deletion of the newest version; it does so after the write
//     reached Badger (clearing on a failed write) and before it lets go
//     of the stripe, so a reader that does not hold the stripe and saw the
//     old slot sees the stripe's sequence number move and reads again;
//   - a read fills a slot in from what it read at the top version (the
//     newest of all) only when it can hold the stripe for writing at once
//     and its sequence number shows no write since the read began.
//
// So every change of a stripe's slots is made holding the stripe. A slot
// is two words, a tag and a version; a writer clears the version, then
// sets the tag, then the version, and a reader that does not hold the
// stripe believes a version only when the tag is the key's before and
// after it. A key is known by its stripe (the hash of its row) and its tag
// (a 64-bit hash of the key, whose high half also picks the bucket): a
// wrong match is as unlikely as a hardware fault.
const (
	verBuckets = 8
	verWays    = 8
)

// verSlot caches one column's newest version: the tag of its cell key and
// its Badger version (0: none).
type verSlot struct {
	tag, ver atomic.Uint64
}

type verBucket [verWays]verSlot

// verCache is one stripe's buckets.
type verCache [verBuckets]verBucket

// newVers returns the newest-version caches of a store's stripes. They
// are aligned to huge pages (2 MB) and the system is asked to back them
// with huge pages where it can (hugepage_linux.go): a read looks at a
// random one of its 1,024 4 KB pages, whose address translation, on a
// virtual machine especially, costs about what loading the bucket does.
// The array is on the Go heap (it holds no pointers), so it lives as long
// as the store does.
func newVers() *[nStripes]verCache {
	const size = unsafe.Sizeof(verCache{})
	all := make([]verCache, nStripes+hugePage/size)
	skip := (hugePage - uintptr(unsafe.Pointer(&all[0]))%hugePage) % hugePage / size
	vers := (*[nStripes]verCache)(all[skip:])
	adviseHuge(unsafe.Pointer(vers), unsafe.Sizeof(*vers))
	return vers
}

// hugePage is the size of a huge page on the systems that have them.
const hugePage = 2 << 20

// versOf returns the cache of st, one of s.stripes.
func (s *Store) versOf(st *stripe) *verCache {
	i := (uintptr(unsafe.Pointer(st)) - uintptr(unsafe.Pointer(s.stripes))) / unsafe.Sizeof(stripe{})
	return &s.vers[i]
}

// verHashes is the seed of the hash of a cell key.
type verHashes struct{ seed maphash.Seed }

func newVerHashes() verHashes { return verHashes{maphash.MakeSeed()} }

// of returns the bucket of key and its tag: the high bits of one 64-bit
// hash choose the bucket, and the whole hash is the tag.
func (h verHashes) of(key []byte) (int, uint64) {
	tag := maphash.Bytes(h.seed, key)
	return int(tag>>32) % verBuckets, tag
}

// get returns the cached newest version of the column whose key has
// bucket b and tag (see verHashes.of).
func (vc *verCache) get(b int, tag uint64) (uint64, bool) {
	bk := &vc[b]
	for i := range bk {
		sl := &bk[i]
		if sl.tag.Load() != tag {
			continue
		}
		v := sl.ver.Load()
		if v == 0 || sl.tag.Load() != tag {
			return 0, false
		}
		return v, true
	}
	return 0, false
}

// set caches ver as the newest version of the column key, or forgets the
// column when ver is 0. The caller holds the cache's stripe for writing.
func (vc *verCache) set(h verHashes, key []byte, ver uint64) {
	b, tag := h.of(key)
	bk := &vc[b]
	var sl *verSlot
	for i := range bk {
		if bk[i].tag.Load() == tag {
			sl = &bk[i]
			break
		}
	}
	if ver == 0 {
		if sl != nil {
			sl.ver.Store(0)
		}
		return
	}
	if sl == nil {
		sl = &bk[tag%verWays] // a full bucket's victim, unless one is free
		for i := range bk {
			if bk[i].ver.Load() == 0 {
				sl = &bk[i]
				break
			}
		}
		// The version first to 0, so that no reader pairs the new tag
		// with the old version.
		sl.ver.Store(0)
		sl.tag.Store(tag)
	}
	sl.ver.Store(ver)
}

// fillVer caches ver, read at the top version, as the newest version of
// the column key of st, if it can hold st at once and no write held it
// since the read began, when st's sequence number was seq.
func (s *Store) fillVer(st *stripe, seq uint64, key []byte, ver uint64) {
	if !st.mu.TryLock() {
		return
	}
	if st.seq.Load() == seq {
		s.versOf(st).set(s.vh, key, ver)
	}
	st.mu.Unlock()
}

// clear forgets every column. The caller holds the cache's stripe for
// writing.
func (vc *verCache) clear() {
	for b := range vc {
		for i := range vc[b] {
			vc[b][i].ver.Store(0)
		}
	}
}
