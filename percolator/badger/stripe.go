package badger

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"unsafe"
)

// nStripes is the number of row lock stripes. Two rows share a stripe with
// probability 1/nStripes, which only serializes them.
const nStripes = 4096

// A stripe holds the rows that hash to it. It fills a cache line, so that
// an operation on a row touches one line for it and stripes do not share
// lines. Its newest-version cache is apart (Store.vers).
type stripe struct {
	// The padding comes first: a zero-size last field would take space.
	_ [(64 - unsafe.Sizeof(stripeState{})%64) % 64]byte
	stripeState
}

type stripeState struct {
	mu sync.RWMutex
	// seq tells readers that do not hold mu (see ReadRow) about the
	// stripe: bit 0 is set while mu is held for writing, bit 1 while sparse
	// is not nil, and the rest counts the holds for writing. Written with mu
	// held for writing.
	seq atomic.Uint64
	// tomb bounds the version of every real tombstone in the stripe's rows
	// from above; a cell written above it cannot be below a tombstone, so
	// it needs no check. Guarded by mu held for writing.
	tomb uint64
	// top bounds the version of every entry in the stripe's rows from
	// above, so no cell has a timestamp at or above it: a predicate asking
	// for one needs no read, and a point read bounded at or above it can
	// read at the top version. Written with mu held for writing.
	top atomic.Uint64
	// sparse holds the live cells of sparse families, by row; nil when
	// there are none, so that a read of a row without any looks at no other
	// memory. Guarded by mu.
	sparse map[string]sparseRow
	// last is the store's write sequence number after the latest write to
	// the stripe's rows. Guarded by mu.
	last uint64
}

// Bits of stripe.seq.
const (
	seqWriting = 1 << iota // mu is held for writing
	seqSparse              // sparse is not nil
	seqOne                 // one hold for writing
)

// lock holds st for writing. Every holder for writing must use lock and
// unlock, not mu, for the sake of lock-free readers.
func (st *stripe) lock() {
	st.mu.Lock()
	st.seq.Store(st.seq.Load() | seqWriting)
}

func (st *stripe) unlock() {
	st.seq.Store(st.nextSeq())
	st.mu.Unlock()
}

// nextSeq returns the sequence number that ends the current hold for
// writing (or, when the store opens, a first one).
func (st *stripe) nextSeq() uint64 {
	seq := st.seq.Load()&^(seqWriting|seqSparse) + seqOne
	if st.sparse != nil {
		seq |= seqSparse
	}
	return seq
}

func (s *Store) stripe(row string) *stripe {
	return &s.stripes[maphash.String(s.seed, row)&(nStripes-1)]
}
