package rank

import "github.com/caffeine-go/caffeine/webtable"

// SetMaxWrites sets how many page rows one block run writes, for tests; it
// returns a function restoring the default.
func SetMaxWrites(n int) func() {
	old := maxWrites
	maxWrites = n
	return func() { maxWrites = old }
}

// SetHostBlocks makes every block a whole host, as before blocks were split
// by directory; it returns a function restoring the split. No worker may
// run meanwhile.
func SetHostBlocks() func() {
	blockKey = webtable.HostOfRow
	return func() { blockKey = dirBlockKey }
}

// SetScanFrom sets how many targets in another block make a run read that
// block in one scan, for tests; it returns a function restoring the
// default. No worker may run meanwhile.
func SetScanFrom(n int) func() {
	old := scanFrom
	scanFrom = n
	return func() { scanFrom = old }
}
