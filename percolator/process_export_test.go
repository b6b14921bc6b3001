package percolator

import "context"

// TakeGCLease takes db's GC lease as a GC pass does, and returns what
// releases it.
func TakeGCLease(db *DB) (release func(), err error) {
	expiry, err := db.acquireGCLease(context.Background())
	if err != nil {
		return nil, err
	}
	return func() { db.releaseGCLease(expiry) }, nil
}
