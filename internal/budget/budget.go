// Package budget gives a process one memory budget, set by the -cache-mb
// flag of every command that opens the table: a share of it for the
// table's caches and memtables, the whole of it as the Go runtime's soft
// memory limit, so that garbage is collected before the heap outgrows it.
package budget

import (
	"flag"
	"os"
	"runtime/debug"
)

// DefaultMB is the default budget in MiB.
const DefaultMB = 384

// Budget is a memory budget in MiB; 0 means none (Badger's default caches
// and no memory limit).
type Budget struct {
	MB int
}

// Flag registers -cache-mb on fs and returns the budget it sets.
func Flag(fs *flag.FlagSet) *Budget {
	b := new(Budget)
	fs.IntVar(&b.MB, "cache-mb", DefaultMB, "memory budget in `MiB`: a quarter for the table's block and index caches and memtables, the whole as the Go runtime's soft memory limit (GOMEMLIMIT, if set, wins); 0 for Badger's defaults and no limit")
	return b
}

// TableBytes is the share of the table (badger.Options.CacheBytes).
func (b *Budget) TableBytes() int64 {
	if b.MB <= 0 {
		return 0
	}
	return int64(b.MB) << 20 / 4
}

// Apply sets the Go runtime's soft memory limit to the budget, unless the
// GOMEMLIMIT environment variable sets one or the budget is 0. Near the
// limit the collector runs more often; it never stalls the process (the
// runtime caps the collector's CPU), so a live heap bigger than the budget
// only costs CPU.
func (b *Budget) Apply() {
	if b.MB <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(int64(b.MB) << 20)
}
