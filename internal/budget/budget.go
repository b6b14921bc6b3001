// Package budget gives a process one memory budget, set by the -cache-mb
// flag of every command that opens the table: a share of it for the
// table's caches and memtables, three quarters of it as the Go runtime's
// soft memory limit, so that garbage is collected before the heap
// outgrows it (raised above it while the live heap needs more, see
// Apply), and what
// the anonymous memory leaves of it (a quarter at least) as the most
// pages of the mapped table and index files that stay resident (see
// trimmer): the budget bounds the process's resident size, not its
// parts one by one.
package budget

import (
	"context"
	"flag"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// DefaultMB is the default budget in MiB.
const DefaultMB = 384

// Budget is a memory budget in MiB; 0 means none (Badger's default caches
// and no memory limit).
type Budget struct {
	MB int
	t  atomic.Pointer[trimmer] // Apply's
}

// Flag registers -cache-mb on fs and returns the budget it sets.
func Flag(fs *flag.FlagSet) *Budget {
	b := new(Budget)
	fs.IntVar(&b.MB, "cache-mb", DefaultMB, "memory budget in `MiB`: a quarter for the Badger table's index cache and memtables (unused with -table), three quarters as the Go runtime's soft memory limit (less while the mapped files hold more than their share; GOMEMLIMIT, if set, wins), and what the heap and the binary leave of it (a quarter at least) as the most resident pages of the mapped table and index files; 0 for Badger's defaults and no limit")
	return b
}

// TableBytes is the share of the table (badger.Options.CacheBytes).
func (b *Budget) TableBytes() int64 {
	if b.MB <= 0 {
		return 0
	}
	return int64(b.MB) << 20 / 4
}

// Trims returns what the trimmer that Apply started has done so far
// (zero without one).
func (b *Budget) Trims() TrimStats {
	if t := b.t.Load(); t != nil {
		return t.Stats()
	}
	return TrimStats{}
}

// heapLimit is the Go runtime's soft memory limit under a budget of
// budget bytes: what the mapped files' least share (a quarter, see
// trimmer) leaves of it when they are trimmed, so that the heap at its
// limit and the mapped files at theirs fit the budget together; the
// whole budget when they are not.
func heapLimit(budget int64, trimmed bool) int64 {
	if trimmed {
		return budget - budget/4
	}
	return budget
}

// heapLimitNow is the soft memory limit while the process's file
// mappings hold mapped bytes resident and the live heap is live bytes.
// It is limit (heapLimit), or live × 1.5 + 64 MiB while live × 1.5 is
// above limit, so that a live heap that outgrows the budget never has
// the collector run without pause; and while the mapped files leave the
// heap less than that, what they leave of the budget, but half the
// budget at least (the trimmer takes the files back to their share
// within a second or so) and live × 1.5 at least (the collector runs
// when the heap has grown by half).
func heapLimitNow(budget, limit, mapped, live int64) int64 {
	want := limit
	if live+live/2 > limit {
		want = live + live/2 + 64<<20
	}
	if mapped > 0 {
		want = min(want, max(budget-mapped, budget/2, live+live/2))
	}
	return want
}

// followEvery is how often Apply moves the soft memory limit: as often
// as the trimmer looks (trimEvery), so that the heap yields to a burst
// of mapped pages while the trimmer takes them out.
const followEvery = trimEvery

// Apply holds the process to the budget until ctx is done: it keeps the
// resident pages of the files it maps from under dirs (the table's and
// the serving index's directories) within what the process's anonymous
// resident memory and its other file mappings leave of the budget, and
// a quarter of it at least (see trimmer), and the Go runtime's soft
// memory limit at the other three quarters (the whole budget when there
// are no files to trim; see heapLimit), unless the GOMEMLIMIT
// environment variable sets one, and lends a quarter of it to the
// stages that handle large inputs (Hold). A budget of 0 does none of
// these.
//
// The heap and the mapped files share the budget: while the file
// mappings hold more than their quarter (a compaction's new tables, a
// scan of the table, before a trim takes them out), the soft limit
// comes down to what they leave of the budget, half the budget at the
// least, so that the collector runs before the heap grows into their
// share (heapLimitNow).
//
// Near the soft limit the collector runs more often. When the live heap
// itself outgrows the budget (a bulk crawl's backlog), a limit at the
// budget would have the collector run without pause (the runtime lets it
// take half the CPU): so eight times a second, while live × 1.5 is
// above the limit, the limit moves up to live × 1.5 + 64 MiB, and back
// down as the live heap shrinks. The budget is a target for memory,
// never a stall.
func (b *Budget) Apply(ctx context.Context, dirs ...string) {
	if b.MB <= 0 {
		return
	}
	budget := int64(b.MB) << 20
	unset := setWork(budget / WorkShare)
	context.AfterFunc(ctx, unset)
	trimmed := canTrim && len(dirs) > 0
	if trimmed {
		t := newTrimmer(budget, dirs)
		b.t.Store(t)
		go t.run(ctx)
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := heapLimit(budget, trimmed)
	debug.SetMemoryLimit(limit)
	go func() {
		t := time.NewTicker(followEvery)
		defer t.Stop()
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			metrics.Read(sample)
			var live, mapped int64
			if sample[0].Value.Kind() == metrics.KindUint64 {
				live = int64(sample[0].Value.Uint64())
			}
			if trimmed {
				mapped, _ = rss()
			}
			if want := heapLimitNow(budget, limit, mapped, live); want != debug.SetMemoryLimit(-1) {
				debug.SetMemoryLimit(want)
			}
		}
	}()
}
