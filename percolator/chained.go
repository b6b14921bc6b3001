package percolator

import (
	"sync"
	"time"
)

// # Chained background work
//
// A background observer's Delay lets a row's notifications gather, and
// when one background observer notifies another (the election after a
// PageRank change re-crediting anchors, say), the second waited its own
// Delay after the first had waited its: twice the Delay from the last
// foreground change to idle. Yet what the first run wrote had gathered
// already, and with nothing else going on nothing more is coming.
//
// So a notification that only background runs of this worker wrote (every
// version is the commit timestamp of one, see chainedCommits) runs
// without its Delay once the worker has settled: nothing in flight or
// hinted, the foreground at rest and without notifications, and no
// background observer before it (in the order given to NewWorker) with
// any pending. Notifications the foreground or other processes wrote
// still wait their Delay, which is what gathers a paced crawl's anchors.

// chainedCommits remembers the commit timestamps of this worker's recent
// background runs, the last chainedKeep of them.
type chainedCommits struct {
	mu   sync.Mutex
	set  map[uint64]struct{}
	ring []uint64 // in commit order; ring[next] is the oldest once full
	next int
}

// chainedKeep is how many background commits a worker remembers: more
// than run within a Delay, or a chain is merely not shortened.
const chainedKeep = 4096

func (c *chainedCommits) add(ts uint64) {
	if ts == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set == nil {
		c.set = make(map[uint64]struct{}, chainedKeep)
	}
	if len(c.ring) < chainedKeep {
		c.ring = append(c.ring, ts)
	} else {
		delete(c.set, c.ring[c.next])
		c.ring[c.next] = ts
		c.next = (c.next + 1) % chainedKeep
	}
	c.set[ts] = struct{}{}
}

// all reports whether every version is a remembered commit.
func (c *chainedCommits) all(versions []uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range versions {
		if _, ok := c.set[v]; !ok {
			return false
		}
	}
	return len(versions) > 0
}

// settle sets w.early after a background pass, from the pending counts
// that pass left: the order of the first background observer with pending
// notifications if the worker has settled, else -1. It reports whether
// w.early changed to an observer.
func (w *Worker) settle(now time.Time) bool {
	early := int64(-1)
	if w.inflight.Load() == 0 && w.following.Load() == 0 && w.hints.len() == 0 && !w.foregroundBusy(now) {
		for _, o := range w.obs {
			if o.s.pending.Load() == 0 {
				continue
			}
			if !o.Background {
				early = -1
				break
			}
			if early < 0 || int64(o.order) < early {
				early = int64(o.order)
			}
		}
	}
	return w.early.Swap(early) != early && early >= 0
}

// chainedReady reports whether n, a note of background observer o that
// waits for its Delay, may run now (see Chained background work). If it
// may once the background runs in flight end, it sets w.chainWait, so
// that the background scanner looks again soon.
func (w *Worker) chainedReady(o *observerState, n note) bool {
	if !w.chained.all(n.versions) {
		return false
	}
	if int64(o.order) == w.early.Load() {
		return true
	}
	if w.bgRunning.Load() > 0 {
		w.chainWait.Store(true)
	}
	return false
}
