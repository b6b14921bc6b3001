package percolator

// Test hooks for partitioned scanning (members.go).

// KillWorker stops w as a crash would: its goroutines end, but its member
// row stays, so the other workers take its rows only once its beat is
// stale.
func KillWorker(w *Worker) {
	if w.part != nil {
		w.part.keep.Store(true)
	}
	w.Close()
}

// MemberPrefix begins the member rows of the scanning workers.
const MemberPrefix = memberPrefix

// NoPartition makes w scan every row of a shared table, as workers did
// before they split the scans; call it before Start. For comparisons.
func NoPartition(w *Worker) { w.part = nil }
