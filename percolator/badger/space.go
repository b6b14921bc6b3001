package badger

import (
	"context"
	"fmt"
	"time"

	bdb "github.com/dgraph-io/badger/v4"

	"github.com/caffeine-go/caffeine/internal/diskspace"
)

// # Disk space
//
// Badger writes its logs and tables through memory mappings of files it
// sizes first (sparsely: a memtable's log is twice the memtable, a value
// log file twice its size). On a full disk, a store to a mapped page the
// file system cannot back raises SIGBUS, which kills the process wherever
// Badger's goroutines are: no error ever comes back. So the store keeps a
// reserve of free space (diskReserve) and refuses writes below it, with
// ErrDiskFull, before Badger meets the end of the disk: it checks at Open,
// then every half second and every reserve/16 bytes written (a
// diskspace.Guard). Reads go on. The reserve covers what Badger writes
// without being asked once a write is in: the memtables it flushes into
// tables, the logs of the next two, and a level-0 compaction, which
// writes its tables again before it deletes them. Compact asks for the
// reserve plus the size of the tables, which flattening rewrites.

// DefaultDiskReserve is the least free space the store keeps by default;
// see Options.DiskReserve.
const DefaultDiskReserve = 256 << 20

// diskReserve returns the free space a store with Badger options bo keeps:
// at least floor, and at least what Badger writes unasked.
func diskReserve(bo bdb.Options, floor int64) int64 {
	unasked := int64(bo.NumMemtables+2+bo.NumLevelZeroTables) * bo.MemTableSize
	return max(floor, unasked)
}

// startGuard starts the free-space guard of a store in dir, or returns
// the error of a disk below the reserve. It returns nil in memory or when
// opt turns the check off.
func startGuard(dir string, bo bdb.Options, opt Options) (*diskspace.Guard, error) {
	if opt.InMemory || opt.DiskReserve < 0 {
		return nil, nil
	}
	floor := opt.DiskReserve
	if floor == 0 {
		floor = DefaultDiskReserve
	}
	return diskspace.Start(diskspace.Options{Dir: dir, Reserve: diskReserve(bo, floor), Err: ErrDiskFull})
}

// spaceErr returns the error of a full disk while the store refuses
// writes, else nil.
func (s *Store) spaceErr() error {
	if s.guard == nil {
		return nil
	}
	return s.guard.Err()
}

// wrote counts the bytes of entries for the free-space guard.
func (s *Store) wrote(entries []entry) {
	if s.guard == nil {
		return
	}
	// Keys, values, and Badger's header and version of each.
	n := 0
	for i := range entries {
		n += len(entries[i].key) + len(entries[i].val) + 32
	}
	s.guard.Wrote(n)
}

// DiskReserve returns the free space below which the store refuses
// writes; 0 in memory or without a guard.
func (s *Store) DiskReserve() int64 {
	if s.guard == nil {
		return 0
	}
	return s.guard.Reserve()
}

// Health returns nil while the store takes writes. Otherwise it returns
// why not: an error wrapping ErrDiskFull while the free space of its
// directory is below the reserve (it clears when space is freed), or one
// wrapping ErrBroken once a failed call left Badger unusable (it never
// clears). It is safe for concurrent use.
func (s *Store) Health() error {
	if p := s.broken.Load(); p != nil {
		return *p
	}
	return s.spaceErr()
}

// healthPoll is how often Watch asks a store's Health.
const healthPoll = 250 * time.Millisecond

// Watch returns a context derived from ctx that is canceled once st, if it
// has a Health method (a *Store), reports that it cannot write: a full
// disk or a broken store. A process that runs its work under the context
// thus stops with one error naming the directory, rather than retrying
// writes that cannot succeed. unwatch ends the watch and returns that
// Health error if it canceled the context, else nil; call it once the work
// returned, and prefer its error to the work's (which is then a context
// error). For other stores the context is only canceled by unwatch.
func Watch(ctx context.Context, st any) (wctx context.Context, unwatch func() error) {
	wctx, cancel := context.WithCancelCause(ctx)
	h, ok := st.(interface{ Health() error })
	if !ok {
		return wctx, func() error { cancel(nil); return nil }
	}
	var failed error // set before cancel, read after done
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(healthPoll)
		defer t.Stop()
		for {
			if err := h.Health(); err != nil {
				failed = err
				cancel(err)
				return
			}
			select {
			case <-wctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return wctx, func() error {
		cancel(nil)
		<-done
		return failed
	}
}

// breaks marks the store broken by err, a failure that left Badger's
// state unusable, and returns the error every call returns from then on.
func (s *Store) breaks(err error) error {
	e := fmt.Errorf("%w: %w", ErrBroken, err)
	s.broken.CompareAndSwap(nil, &e)
	return *s.broken.Load()
}

// usable returns ErrClosed after Close, the broken error after a failure
// that broke the store, else nil.
func (s *Store) usable() error {
	if s.closed.Load() {
		return ErrClosed
	}
	if p := s.broken.Load(); p != nil {
		return *p
	}
	return nil
}
