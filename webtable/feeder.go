package webtable

// The serving feeder's election. On a table several processes share
// (Cloud Bigtable), the feeder of a named serving index applies the export
// queue only while it holds its lease, and every batch it applies checks
// the fencing cell, so that a feeder that lost its lease commits nothing
// after its successor took over.
const (
	// FeederLeasePrefix + index name is the lease row of the feeder of that
	// index: plain store cells (not a Percolator transaction, which the
	// reserved 0x00 prefix keeps out of), in family LeaseFamily. Each
	// holding is one column, LeaseHolderPrefix + a holder id new for every
	// acquisition, whose newest cell's timestamp is the lease's expiry
	// (percolator.TsFromTime of the holder's wall clock) and whose value
	// says who holds it ("host pid"). Written and read by serving's
	// feeders only (CheckAndMutateRow).
	FeederLeasePrefix = "\x00meta/feeder/"
	LeaseFamily       = "lease"
	LeaseHolderPrefix = "h:"

	// FeederPrefix + index name is the feeder's fencing row, in the
	// Percolator table: column FedBy holds the holder id of the feeder that
	// took over last. A new holder writes it before it catches up; every
	// batch a feeder applies reads it (and writes it again, so that the two
	// conflict) and aborts if it names someone else.
	FeederPrefix = "!feeder/"
	FedBy        = "serve:feeder"
)

// FeederLeaseRow is the lease row of the feeder of the index named name.
func FeederLeaseRow(name string) string { return FeederLeasePrefix + name }

// FeederRow is the fencing row of the feeder of the index named name.
func FeederRow(name string) string { return FeederPrefix + name }
