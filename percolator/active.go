package percolator

import (
	"math"
	"sync"
	"sync/atomic"
)

// registry holds the start timestamps of the running transactions: the GC
// safe point stays at or below the oldest, and a lock of this DB whose
// transaction is not registered is left over from a crash. Read-write
// transactions register their start timestamp with the writer bit set, so
// that only they count for the latter; read-only ones may register a lower
// bound of theirs.
//
// Beginning and ending a transaction is lock-free: it claims a free slot
// with a compare-and-swap and clears it at the end. Only when every slot is
// taken does it fall back to a map under a mutex.
type registry struct {
	slots [nSlots]slot
	// hint is the slot freed last, where add looks first: a goroutine that
	// runs one transaction after another keeps reusing one cache line.
	hint atomic.Int64

	mu       sync.Mutex     // guards overflow
	overflow map[uint64]int // start timestamps without a slot, with their counts
}

// nSlots bounds the transactions registered without the mutex; a power of
// two.
const nSlots = 256

// A slot holds a start timestamp, or 0 when free. It fills a cache line,
// so that transactions on different cores do not share lines.
type slot struct {
	ts atomic.Uint64
	_  [56]byte
}

// noSlot is the slot index of a transaction registered in the overflow map.
const noSlot = -1

// writer marks the registration of a read-write transaction. Timestamps
// stay below 2^52 (see Store), so the bit is free.
const writer = 1 << 63

// add registers ts, which is not 0, and returns its slot index for remove
// and set.
func (r *registry) add(ts uint64) int {
	start := int(r.hint.Load())
	for i := range nSlots {
		k := (start + i) & (nSlots - 1)
		if s := &r.slots[k]; s.ts.Load() == 0 && s.ts.CompareAndSwap(0, ts) {
			return k
		}
	}
	r.mu.Lock()
	if r.overflow == nil {
		r.overflow = make(map[uint64]int)
	}
	r.overflow[ts]++
	r.mu.Unlock()
	return noSlot
}

// set replaces the timestamp registered at slot k, which was old, by ts.
func (r *registry) set(k int, old, ts uint64) {
	if k != noSlot {
		r.slots[k].ts.Store(ts)
		return
	}
	r.mu.Lock()
	r.drop(old)
	r.overflow[ts]++
	r.mu.Unlock()
}

// remove unregisters ts, registered at slot k.
func (r *registry) remove(k int, ts uint64) {
	if k != noSlot {
		r.slots[k].ts.Store(0)
		if r.hint.Load() != int64(k) {
			r.hint.Store(int64(k))
		}
		return
	}
	r.mu.Lock()
	r.drop(ts)
	r.mu.Unlock()
}

// drop removes one count of ts from the overflow map. r.mu must be held.
func (r *registry) drop(ts uint64) {
	if r.overflow[ts] <= 1 {
		delete(r.overflow, ts)
	} else {
		r.overflow[ts]--
	}
}

// oldest returns the smallest registered timestamp, or math.MaxUint64.
func (r *registry) oldest() uint64 {
	oldest := uint64(math.MaxUint64)
	for i := range r.slots {
		if ts := r.slots[i].ts.Load(); ts != 0 {
			oldest = min(oldest, ts&^writer)
		}
	}
	r.mu.Lock()
	for ts := range r.overflow {
		oldest = min(oldest, ts&^writer)
	}
	r.mu.Unlock()
	return oldest
}

// has reports whether ts is registered, with the writer bit if it is a
// read-write transaction's.
func (r *registry) has(ts uint64) bool {
	if ts == 0 {
		return false
	}
	for i := range r.slots {
		if r.slots[i].ts.Load() == ts {
			return true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.overflow[ts] > 0
}

// count returns the number of registered timestamps.
func (r *registry) count() int {
	n := 0
	for i := range r.slots {
		if r.slots[i].ts.Load() != 0 {
			n++
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.overflow {
		n += c
	}
	return n
}
