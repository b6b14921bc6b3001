package budget

import (
	"context"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// work bounds the memory the stages of a process hold at once for what
// a page brings (a fetched body in extraction, a batch of documents in
// the index): a quarter of the budget, set by Apply. Without a budget
// nothing is held back.
var work atomic.Pointer[workSem]

type workSem struct {
	sem  *semaphore.Weighted
	size int64
	held atomic.Int64 // bytes lent now
	peak atomic.Int64 // the most lent at once
}

// WorkShare is the share of the budget (1/WorkShare) that Hold lends.
const WorkShare = 4

// setWork has Hold lend at most n bytes at once (0: no bound) and returns
// what unsets it (if it is still the bound).
func setWork(n int64) (unset func()) {
	if n <= 0 {
		work.Store(nil)
		return func() {}
	}
	w := &workSem{sem: semaphore.NewWeighted(n), size: n}
	work.Store(w)
	return func() { work.CompareAndSwap(w, nil) }
}

// Hold waits until n bytes of the budget's working share are free and
// takes them until release is called: a stage calls it before it builds
// what it derives from a large input, with n the memory it will hold (an
// estimate, several times the input's size), so that a site of large
// pages has a few of them in memory at once, not one per worker. More
// than the whole share is taken as the whole share, so a single large
// input always goes through, alone. Without a budget Hold returns at
// once. It returns ctx's error if ctx ends first. Calls must not nest: a
// goroutine holding a share must release it before it asks again.
func Hold(ctx context.Context, n int64) (release func(), err error) {
	w := work.Load()
	if w == nil || n <= 0 {
		return func() {}, nil
	}
	n = min(n, w.size)
	if err := w.sem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	h := w.held.Add(n)
	for p := w.peak.Load(); h > p && !w.peak.CompareAndSwap(p, h); p = w.peak.Load() {
	}
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			w.held.Add(-n)
			w.sem.Release(n)
		}
	}, nil
}

// WorkSize returns the most Hold lends at once, or 0 without a budget:
// a stage that chooses how much to take in at once (a batch) keeps it
// within this, so that its loan covers what it builds.
func WorkSize() int64 {
	if w := work.Load(); w != nil {
		return w.size
	}
	return 0
}

// Lent returns the bytes Hold lends now and the most it has lent at once
// since the budget was applied (zeros without a budget).
func Lent() (now, peak int64) {
	w := work.Load()
	if w == nil {
		return 0, 0
	}
	return w.held.Load(), w.peak.Load()
}
