// Package diskspace watches the free space of the file system a directory
// lives on, so that stores writing through memory-mapped files (Badger's
// logs and tables, Bleve's segments) refuse writes while there is still
// room for what they write unasked, rather than meet a full disk in the
// middle of a mapped page, which the kernel answers with SIGBUS.
//
// A Guard holds a directory's reserve: writes are allowed while the free
// space is at least the reserve. It looks at the file system every Period
// and after every Step bytes that its user reports writing, from a
// goroutine of its own, so that writes only load a flag.
//
// Caveat: space that another process takes is seen at the next look, and
// what the store writes meanwhile comes out of the reserve.
package diskspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// ErrFull is wrapped by the errors of a Guard (and by the sentinels of the
// stores that use one), so that one errors.Is tells a full disk from other
// failures.
var ErrFull = errors.New("disk full")

// Free returns the bytes that an unprivileged user may still write on the
// file system of dir, or of its nearest existing ancestor if dir does not
// exist yet.
func Free(dir string) (int64, error) {
	d := dir
	for {
		n, err := free(d)
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			if err != nil {
				return 0, fmt.Errorf("free space of %s: %w", dir, err)
			}
			return n, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return 0, fmt.Errorf("free space of %s: %w", dir, err)
		}
		d = up
	}
}

// MiB formats n bytes in whole mebibytes, rounded up.
func MiB(n int64) int64 { return (n + 1<<20 - 1) >> 20 }

// FullError returns the error of dir with free bytes free below need:
// "PREFIX: disk full: DIR has X MiB free, needs at least Y MiB", wrapping
// sentinel (which wraps ErrFull).
func FullError(sentinel error, dir string, free, need int64) error {
	return fmt.Errorf("%w: %s has %d MiB free, needs at least %d MiB", sentinel, dir, free>>20, MiB(need))
}

// Options configure a Guard.
type Options struct {
	// Dir is the directory watched.
	Dir string
	// Reserve is the free space below which Err reports the disk full.
	Reserve int64
	// Err is the sentinel that errors wrap; it should wrap ErrFull.
	// Default ErrFull.
	Err error
	// Period is the interval between looks; default 500ms.
	Period time.Duration
	// Step is how many bytes reported by Wrote make a look due before the
	// period ends; default Reserve/16.
	Step int64
}

// A Guard watches a directory's free space against a reserve. Its methods
// are safe for concurrent use.
type Guard struct {
	opt     Options
	mu      sync.Mutex   // serializes looks
	written atomic.Int64 // bytes reported since the last look
	full    atomic.Pointer[error]
	kick    chan struct{}
	stop    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
}

// Start looks at the free space once and returns the error of a full disk
// if it is below the reserve (or the error of the look); otherwise it
// starts the guard's goroutine, which Close stops.
func Start(opt Options) (*Guard, error) {
	if opt.Err == nil {
		opt.Err = ErrFull
	}
	if opt.Period <= 0 {
		opt.Period = 500 * time.Millisecond
	}
	if opt.Step <= 0 {
		opt.Step = max(opt.Reserve/16, 1<<20)
	}
	g := &Guard{opt: opt, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	if err := g.look(); err != nil {
		return nil, err
	}
	g.wg.Add(1)
	go g.run()
	return g, nil
}

// Reserve returns the guard's reserve in bytes.
func (g *Guard) Reserve() int64 { return g.opt.Reserve }

// Err returns nil while the free space was at least the reserve at the
// last look, else the error naming the directory and the space needed.
func (g *Guard) Err() error {
	if p := g.full.Load(); p != nil {
		return *p
	}
	return nil
}

// Wrote counts n bytes written, and makes a look due after Step bytes.
func (g *Guard) Wrote(n int) {
	if g.written.Add(int64(n)) >= g.opt.Step {
		select {
		case g.kick <- struct{}{}:
		default:
		}
	}
}

// Need returns nil if the free space is at least the reserve plus extra
// bytes, else the error of a full disk naming what is needed. It does not
// change the state.
func (g *Guard) Need(extra int64) error {
	free, err := Free(g.opt.Dir)
	if err != nil {
		return err
	}
	if need := g.opt.Reserve + extra; free < need {
		return FullError(g.opt.Err, g.opt.Dir, free, need)
	}
	return nil
}

// Close stops the guard's goroutine.
func (g *Guard) Close() {
	g.once.Do(func() { close(g.stop) })
	g.wg.Wait()
}

// look updates the state from the file system. An error of the look
// itself leaves the state as it was and is returned.
func (g *Guard) look() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.written.Store(0)
	free, err := Free(g.opt.Dir)
	if err != nil {
		return err
	}
	var full error
	if free < g.opt.Reserve {
		full = FullError(g.opt.Err, g.opt.Dir, free, g.opt.Reserve)
	}
	if full != nil {
		g.full.Store(&full)
	} else {
		g.full.Store(nil)
	}
	return full
}

func (g *Guard) run() {
	defer g.wg.Done()
	t := time.NewTicker(g.opt.Period)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		case <-g.kick:
		}
		g.look()
	}
}
