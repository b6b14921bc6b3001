package percolator

import (
	"math"
	"sync"
	"testing"
)

func TestRegistry(t *testing.T) {
	var r registry
	if got := r.oldest(); got != math.MaxUint64 {
		t.Fatalf("empty registry: oldest = %d", got)
	}
	// More transactions than slots: the rest go to the overflow map.
	n := nSlots + 10
	type reg struct {
		k  int
		ts uint64
	}
	regs := make([]reg, n)
	for i := range regs {
		ts := uint64(1000 + i)
		regs[i] = reg{r.add(ts), ts}
	}
	if got := r.oldest(); got != 1000 {
		t.Fatalf("oldest = %d, want 1000", got)
	}
	// A read-write transaction replaces its lower bound by its timestamp
	// with the writer bit; only then is it found by has.
	last := &regs[n-1]
	if r.has(5000 | writer) {
		t.Fatal("has(5000) before it is registered")
	}
	r.set(last.k, last.ts, 5000|writer)
	last.ts = 5000 | writer
	if !r.has(5000|writer) || r.has(5000) {
		t.Fatal("has does not tell writers from readers")
	}
	for i := range regs[:n-1] {
		r.remove(regs[i].k, regs[i].ts)
	}
	if got := r.oldest(); got != 5000 {
		t.Fatalf("oldest = %d, want 5000 (writer bit masked)", got)
	}
	r.remove(last.k, last.ts)
	if got := r.oldest(); got != math.MaxUint64 || r.has(5000|writer) || len(r.overflow) != 0 {
		t.Fatalf("after removing all: oldest %d, overflow %v", got, r.overflow)
	}
}

// Concurrent registrations never share a slot: every transaction finds
// its own timestamp registered until it removes it.
func TestRegistryConcurrent(t *testing.T) {
	var r registry
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				ts := uint64(g+1)<<32 | uint64(i+1) | writer
				k := r.add(ts)
				if !r.has(ts) {
					t.Errorf("%x not registered", ts)
					return
				}
				r.remove(k, ts)
				if r.has(ts) {
					t.Errorf("%x still registered", ts)
					return
				}
			}
		})
	}
	wg.Wait()
}
