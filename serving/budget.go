package serving

import (
	"context"
	"sync/atomic"
	"time"
)

// A ranked search's budget: a query whose hits take long to score (a
// common word over millions of pages) stops scoring at its cutoff and
// answers with the best results among the hits scored so far, marked
// Partial, rather than running into the request's deadline (a 504 with
// nothing). The cutoff is the context's deadline less a reserve for the
// rest of the request (snippets, a relaxed search, a suggestion, the
// response): a fifth of the time left, and minReserve at least.

// minReserve is the least time a search keeps back from its deadline.
const minReserve = 20 * time.Millisecond

// checkEvery is how many hits a rank searcher scores between looks at
// the clock.
const checkEvery = 256

// cutoff returns when a ranked search stops scoring under ctx: zero (no
// cutoff) without a deadline.
func cutoff(ctx context.Context) time.Time {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Time{}
	}
	left := time.Until(d)
	return d.Add(-max(left/5, minReserve))
}

// stopper ends a rank searcher's hits at a cutoff and records that it
// did.
type stopper struct {
	at      time.Time    // zero: never
	n       int          // hits since the last look at the clock
	stopped *atomic.Bool // set once it stopped a searcher
}

// stop reports whether the searcher should end its hits now.
func (s *stopper) stop() bool {
	if s.at.IsZero() {
		return false
	}
	if s.n++; s.n < checkEvery {
		return false
	}
	s.n = 0
	if time.Now().Before(s.at) {
		return false
	}
	s.stopped.Store(true)
	return true
}
