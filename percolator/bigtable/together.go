package bigtable

import "sync"

// together sends the items of concurrent callers with one call (group
// commit): while a call is in flight, the items of the callers that come
// wait in the next round, and one of those callers sends the whole round
// when the call returns. Nothing waits when nothing is in flight, and each
// caller returns once its own items were sent.
type together[T, R any] struct {
	mu      sync.Mutex
	idle    sync.Cond // signalled when a call returns
	busy    bool      // a call is in flight
	pending *round[T, R]
}

// round is the items that go with one call, and what the call returned.
type round[T, R any] struct {
	items  []T
	result R
	sent   bool
}

// join adds items to the next round and returns, once send (called by one
// of the round's callers, without the lock) sent it, its result and where
// items are in the round's items.
func (t *together[T, R]) join(items []T, send func([]T) R) (result R, lo, hi int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.idle.L == nil {
		t.idle.L = &t.mu
	}
	r := t.pending
	if r == nil {
		r = &round[T, R]{}
		t.pending = r
	}
	lo = len(r.items)
	r.items = append(r.items, items...)
	hi = len(r.items)
	for !r.sent {
		if t.busy || t.pending != r {
			t.idle.Wait()
			continue
		}
		t.busy, t.pending = true, nil
		t.mu.Unlock()
		res := send(r.items)
		t.mu.Lock()
		r.result, r.sent, t.busy = res, true, false
		t.idle.Broadcast()
	}
	return r.result, lo, hi
}
