package percolator

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// errGCBusy: another process holds the GC lease.
var errGCBusy = errors.New("percolator: another process runs gc")

// gcLeaseTTL bounds how long a GC pass holds the lease: from before it
// reads the worker rows until it has persisted the new safe point.
const gcLeaseTTL = 30 * time.Second

// advanceSharedSafePoint is advanceSafePoint on a shared store, where the
// transactions of other processes count too: each publishes the oldest
// timestamp it reads at in its heartbeat row (see process.go), and the
// safe point stays at or below the smallest of the live ones. One process
// at a time moves it, holding the GC lease.
//
// A transaction begun at an old timestamp (ViewAt) registers, publishes
// a heartbeat and then checks the safe point (admit); a pass that read
// the worker rows just before that heartbeat must not collect below it.
// So a pass moves the safe point only up to the candidate the previous
// pass persisted (next) and persists its own candidate for the pass after:
// the new safe point is the smaller of the two. admit checks against both,
// and a transaction that passed was seen by every pass after the one whose
// candidate it checked against.
func (db *DB) advanceSharedSafePoint(ctx context.Context) (uint64, error) {
	expiry, err := db.acquireGCLease(ctx)
	if err != nil {
		return 0, err
	}
	defer db.releaseGCLease(expiry)

	oldestLock, err := db.oldestLock(ctx)
	if err != nil {
		return 0, err
	}
	db.mu.Lock()
	own, err := db.localBound(ctx, oldestLock)
	db.mu.Unlock()
	if err != nil {
		return 0, err
	}
	others, err := db.liveOldest(ctx)
	if err != nil {
		return 0, err
	}
	cand := min(own, others)
	prevSafe, prevNext, err := db.readSafePoint(ctx)
	if err != nil {
		return 0, err
	}
	safe := max(prevSafe, min(cand, prevNext))
	next := max(prevNext, cand)
	if time.Now().UnixMilli() >= int64(expiry)-db.opt.ClockSkew.Milliseconds() {
		return 0, fmt.Errorf("percolator: gc: lease expired before the safe point was written")
	}
	err = db.st.MutateRows(ctx, []RowMutation{{Row: gcRow, Mutations: []Mutation{
		{Op: SetCell, Family: famMeta, Column: gcColumn, Ts: 1, Value: encodeInt64(int64(safe))},
		{Op: SetCell, Family: famMeta, Column: gcNextColumn, Ts: 1, Value: encodeInt64(int64(next))},
	}}})
	if err != nil {
		return 0, fmt.Errorf("percolator: gc: persist safe point: %w", err)
	}
	db.mu.Lock()
	db.safe.Store(max(db.safe.Load(), safe))
	db.mu.Unlock()
	return safe, nil
}

// acquireGCLease takes the GC lease: a cell of the gc row whose timestamp
// is its expiry (Unix ms), written only if no unexpired one is there. It
// returns the expiry, or errGCBusy.
func (db *DB) acquireGCLease(ctx context.Context) (uint64, error) {
	now := time.Now()
	expiry := uint64(now.Add(gcLeaseTTL).UnixMilli())
	// Another machine's lease counts until its expiry plus ClockSkew.
	live := Filter{Family: famMeta, Column: gcLeaseColumn, MinTs: uint64(now.Add(-db.opt.ClockSkew).UnixMilli())}
	held, err := db.st.CheckAndMutateRow(ctx, gcRow, []Filter{live}, nil, []Mutation{
		{Op: DeleteOlder, Family: famMeta, Column: gcLeaseColumn, Ts: expiry},
		{Op: SetCell, Family: famMeta, Column: gcLeaseColumn, Ts: expiry, Value: []byte(db.id)},
	})
	if err != nil {
		return 0, fmt.Errorf("percolator: gc: take lease: %w", err)
	}
	if held {
		return 0, errGCBusy
	}
	return expiry, nil
}

// releaseGCLease deletes the lease written at expiry (not a later holder's).
func (db *DB) releaseGCLease(expiry uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	db.st.MutateRows(ctx, []RowMutation{{Row: gcRow, Mutations: []Mutation{
		{Op: DeleteCell, Family: famMeta, Column: gcLeaseColumn, Ts: expiry},
	}}})
}
