package serving

import (
	"slices"
	"sync"
)

// window keeps the last n samples for percentiles.
type window struct {
	mu   sync.Mutex
	buf  []float64
	next int
	full bool
}

func newWindow(n int) *window { return &window{buf: make([]float64, n)} }

func (w *window) add(x float64) {
	w.mu.Lock()
	w.buf[w.next] = x
	w.next++
	if w.next == len(w.buf) {
		w.next, w.full = 0, true
	}
	w.mu.Unlock()
}

func (w *window) summary() Latency {
	w.mu.Lock()
	n := w.next
	if w.full {
		n = len(w.buf)
	}
	xs := slices.Clone(w.buf[:n])
	w.mu.Unlock()
	return summarize(xs)
}

// summarize returns the percentiles of xs (sorted in place).
func summarize(xs []float64) Latency {
	if len(xs) == 0 {
		return Latency{}
	}
	slices.Sort(xs)
	q := func(p float64) float64 { return xs[min(len(xs)-1, int(p*float64(len(xs))))] }
	return Latency{Count: len(xs), P50: q(0.50), P90: q(0.90), P99: q(0.99)}
}
