package percolator

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// A lease: one row, a column "holder/ID" per process that held it, whose
// newest cell's timestamp is when (Unix ms, by the holder's clock) the
// holder last renewed it. A lease renewed less than the TTL ago is held. A
// process takes a lapsed lease by deleting every holder column and writing
// its own, in one conditional mutation that fails if any holder cell is
// recent; it renews by rewriting its column only while it is there, so a
// holder whose lease was taken over learns it on its next renewal.
//
// The oracle server holds one (oracleLeaseRow), and so does each Duty
// (dutyRow).
const (
	oracleLeaseRow = "\x00meta/oracle-lease"
	leasePrefix    = "holder/"
)

// lease is one process's hold on the lease of row.
type lease struct {
	st   Store
	row  string
	id   string
	ttl  time.Duration
	skew time.Duration // the most two machines' clocks differ
}

// acquire takes the lease if no process holds it, and returns until when
// (by the local clock) this process holds it.
func (l *lease) acquire(ctx context.Context) (deadline time.Time, ok bool, err error) {
	cells, err := l.st.ReadRow(ctx, l.row, Filter{Family: famMeta, ColumnPrefix: leasePrefix, Latest: true, KeysOnly: true})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read lease %q: %w", l.row, err)
	}
	start := time.Now()
	ms := uint64(start.UnixMilli())
	lapsed := ms - uint64((l.ttl + l.skew).Milliseconds())
	var muts []Mutation
	for _, c := range cells {
		if c.Ts > lapsed {
			return time.Time{}, false, nil // held (by another, or by us before a restart)
		}
		muts = append(muts, Mutation{Op: DeleteOlder, Family: famMeta, Column: c.Column, Ts: MaxTs})
	}
	muts = append(muts, Mutation{Op: SetCell, Family: famMeta, Column: l.column(), Ts: ms})
	recent := Filter{Family: famMeta, ColumnPrefix: leasePrefix, MinTs: lapsed + 1}
	held, err := l.st.CheckAndMutateRow(ctx, l.row, []Filter{recent}, nil, muts)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("take lease %q: %w", l.row, err)
	}
	if held {
		return time.Time{}, false, nil
	}
	return l.deadline(start), true, nil
}

// renew extends the lease if this process still holds it.
func (l *lease) renew(ctx context.Context) (deadline time.Time, ok bool, err error) {
	start := time.Now()
	ms := uint64(start.UnixMilli())
	mine := Filter{Family: famMeta, Column: l.column()}
	ok, err = l.st.CheckAndMutateRow(ctx, l.row, []Filter{mine}, []Mutation{
		{Op: DeleteOlder, Family: famMeta, Column: l.column(), Ts: ms},
		{Op: SetCell, Family: famMeta, Column: l.column(), Ts: ms},
	}, nil)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("renew lease %q: %w", l.row, err)
	}
	if !ok {
		return time.Time{}, false, nil
	}
	return l.deadline(start), true, nil
}

// release gives the lease up (a clean stop), so that a standby takes over
// without waiting for it to lapse.
func (l *lease) release(ctx context.Context) error {
	_, err := l.st.CheckAndMutateRow(ctx, l.row, []Filter{{Family: famMeta, Column: l.column()}},
		[]Mutation{{Op: DeleteOlder, Family: famMeta, Column: l.column(), Ts: MaxTs}}, nil)
	return err
}

// deadline is when a lease written at start stops being this process's:
// another process takes it once it is ttl+skew old by that process's clock,
// which is at least ttl by ours. The write may land after start (its
// timestamp is start's ms, at most 1 ms earlier).
func (l *lease) deadline(start time.Time) time.Time {
	return start.Add(l.ttl - time.Millisecond)
}

func (l *lease) column() string { return leasePrefix + l.id }

// validID reports whether id may name a lease holder.
func validID(id string) bool { return id != "" && !strings.ContainsAny(id, "\x00\n") }
