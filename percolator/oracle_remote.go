package percolator

import "context"

// TimestampSource hands out strictly increasing timestamps from outside
// the DB: an OracleClient of an oracle server (see OracleServer).
type TimestampSource interface {
	// Next returns a timestamp greater than every timestamp any caller
	// of the source was handed before Next was called.
	Next(ctx context.Context) (uint64, error)
}

// TimestampStore is a Store that names where the DBs opened on it take
// their timestamps: a non-nil source replaces the oracle row of the table
// (the one-row oracle) on a store other processes open too (not an
// ExclusiveStore). The Bigtable store does when its Config says so.
type TimestampStore interface {
	Store
	Timestamps() TimestampSource
}

// remoteNext takes a timestamp from the source and records it as the
// newest this process took (see Oracle.last).
func (o *Oracle) remoteNext(ctx context.Context) (uint64, error) {
	ts, err := o.remote.Next(ctx)
	if err == nil {
		for cur := o.next.Load(); cur < ts && !o.next.CompareAndSwap(cur, ts); cur = o.next.Load() {
		}
	}
	return ts, err
}
