package serving

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/blevesearch/bleve/v2"

	"github.com/caffeine-go/caffeine/internal/diskspace"
)

// # Disk space
//
// Bleve meets a full disk while it writes a batch's segment, or later
// while it merges segments, and is not made for it: a batch that failed
// to persist leaves a closed segment in the index, and the next batch
// panics on it ("assignment to entry in nil map"). So an Index keeps a
// reserve of free space in its directory's file system, and Apply refuses
// a batch while there is less, with ErrDiskFull, before Bleve gets there.
// A batch that fails or panics all the same is turned into an error, and
// the index into a broken one (ErrIndexBroken): Apply refuses from then
// on, and the process should restart, which reopens the index as it was
// persisted last. What the failed batches held is still in the table's
// export queue, since the feeder records a batch only once it is applied.

var (
	// ErrDiskFull is returned by OpenIndex and Apply while the free space
	// of the index's directory is below Options.DiskReserve. Its errors
	// name the directory and the space needed; it wraps diskspace.ErrFull.
	ErrDiskFull = fmt.Errorf("serving: %w", diskspace.ErrFull)
	// ErrIndexBroken is returned by Apply once a batch failed or panicked
	// inside Bleve, wrapping that failure: the index must be reopened (the
	// process restarted) before it applies anything again. Searches go on
	// meanwhile.
	ErrIndexBroken = errors.New("serving: index broken by a failed batch; restart the process")
)

// DefaultIndexReserve is the free space an Index keeps by default: room
// for Bleve's merges of segments and the batches in flight.
const DefaultIndexReserve = 128 << 20

// startGuard starts the free-space guard of an index in dir.
func startGuard(dir string, opt Options) (*diskspace.Guard, error) {
	if opt.DiskReserve < 0 {
		return nil, nil
	}
	reserve := opt.DiskReserve
	if reserve == 0 {
		reserve = DefaultIndexReserve
	}
	return diskspace.Start(diskspace.Options{Dir: dir, Reserve: reserve, Err: ErrDiskFull})
}

// Health returns nil while the index takes batches; otherwise the error
// of a disk below the reserve (it clears when space is freed) or of a
// broken index (it does not). It is safe for concurrent use.
func (ix *Index) Health() error {
	if p := ix.broken.Load(); p != nil {
		return *p
	}
	if ix.guard != nil {
		return ix.guard.Err()
	}
	return nil
}

// batch applies b, whose documents hold about size bytes, to Bleve. A
// failure or a panic of Bleve breaks the index.
func (ix *Index) batch(b *bleve.Batch, size int) (err error) {
	// A fault on a mapped page panics here rather than kill the process.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("bleve panicked: %v", r)
		}
		if err != nil {
			err = ix.breaks(fmt.Errorf("serving: apply batch: %w", err))
		}
	}()
	if ix.guard != nil {
		ix.guard.Wrote(size)
	}
	return ix.bi.Batch(b)
}

// breaks marks the index broken by err and returns the error Apply
// returns from then on.
func (ix *Index) breaks(err error) error {
	e := fmt.Errorf("%w: %w", ErrIndexBroken, err)
	ix.broken.CompareAndSwap(nil, &e)
	return *ix.broken.Load()
}
