package percolator

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Timestamps are hybrid: the high bits are wall-clock milliseconds, the low
// tsLogicalBits a counter. A timestamp therefore says roughly when it was
// taken (the GC grace period and the status pages use that), while the oracle
// still hands out more than a thousand per millisecond by running ahead of the
// clock when it must. With 10 logical bits timestamps stay below 2^52, so the
// Bigtable backend can store them as microseconds (ts × 1000) in an int64.
const tsLogicalBits = 10

// TsFromTime returns the smallest timestamp the oracle would hand out at t.
func TsFromTime(t time.Time) uint64 {
	return uint64(t.UnixMilli()) << tsLogicalBits
}

// TimeFromTs returns the wall-clock time a timestamp was (at the latest)
// taken at.
func TimeFromTs(ts uint64) time.Time {
	return time.UnixMilli(int64(ts >> tsLogicalBits))
}

// Where the oracle persists its high-water mark.
const (
	oracleRow    = "\x00meta/oracle"
	oracleColumn = "hwm"
	// On a shared store: a cell whose timestamp is when (Unix ms) a
	// process last moved hwm up to the clock (see sharedOracle.reserve).
	oracleClockColumn = "clock"
)

// Oracle hands out strictly increasing timestamps (section 2.3 of the
// paper). It persists only the upper end of a range of timestamps and serves
// requests from memory until the range is used up, so after a restart
// timestamps jump forward and never go back. Concurrent callers share one
// pending allocation.
//
// On a store that other processes open too, the Oracle takes every
// timestamp from the table instead (see sharedOracle), so that any number
// of processes share one order of time.
//
// An Oracle is safe for concurrent use.
type Oracle struct {
	st     Store
	window uint64
	shared *sharedOracle   // non-nil on a shared store: no ranges, no clock
	remote TimestampSource // non-nil when the store names one: no ranges, no clock

	next  atomic.Uint64 // last timestamp handed out; the next is next+1
	limit atomic.Uint64 // highest persisted timestamp: never hand out more

	// clock is TsFromTime of the time, kept current to the millisecond by
	// tick: reading the time costs more than the rest of Next. While no
	// timestamp is taken for clockSleep, tick stops (asleep) and the next
	// take reads the time itself and wakes it.
	clock  atomic.Uint64
	asleep atomic.Bool
	wake   chan struct{} // take → tick, when asleep; buffered

	mu        sync.Mutex // one allocation at a time; guards persisted
	persisted uint64
}

// newOracle opens the oracle of st, allocating its first range. window is
// the number of timestamps reserved per persisted write. A shared oracle
// (other processes open st) reserves nothing.
func newOracle(ctx context.Context, st Store, window uint64, shared bool) (*Oracle, error) {
	o := &Oracle{st: st, window: window, wake: make(chan struct{}, 1)}
	if ts, ok := st.(TimestampStore); ok && shared && ts.Timestamps() != nil {
		o.remote = ts.Timestamps()
		return o, nil
	}
	if shared {
		o.shared = &sharedOracle{st: st}
		return o, nil
	}
	o.clock.Store(TsFromTime(time.Now()))
	cells, err := st.ReadRow(ctx, oracleRow, Filter{Family: famMeta, Column: oracleColumn, Latest: true})
	if err != nil {
		return nil, fmt.Errorf("read oracle high-water mark: %w", err)
	}
	if len(cells) == 1 {
		o.persisted = uint64(decodeInt64(cells[0].Value))
	}
	// Never reuse anything at or below the old high-water mark.
	o.next.Store(o.persisted)
	o.limit.Store(o.persisted)
	if err := o.allocate(ctx); err != nil {
		return nil, err
	}
	return o, nil
}

// Next returns a timestamp greater than every timestamp returned before,
// by this oracle or by any oracle on the same table before it, and not
// below the clock's (TsFromTime): timestamps say when they were taken,
// which the GC grace period, the serving feeder's lag and stage times rely
// on. (The clock it reads is the DB's, kept to about a millisecond.) It
// runs ahead of the clock only while more than 2^tsLogicalBits are taken
// in a millisecond.
func (o *Oracle) Next(ctx context.Context) (uint64, error) {
	if o.remote != nil {
		return o.remoteNext(ctx)
	}
	if o.shared != nil {
		ts, err := o.shared.next(ctx)
		if err == nil {
			for cur := o.next.Load(); cur < ts && !o.next.CompareAndSwap(cur, ts); cur = o.next.Load() {
			}
		}
		return ts, err
	}
	for {
		if ts, ok := o.take(); ok {
			return ts, nil
		}
		if err := o.refill(ctx); err != nil {
			return 0, err
		}
	}
}

// take is Next without the store: it reports false when the persisted
// range is used up and a refill must come first. A caller holding a
// store's row lock must use it: the refill writes the oracle's row, whose
// lock may be the one held (CheckAndMutateRowAt's ts, see commitOnePhase).
func (o *Oracle) take() (uint64, bool) {
	if o.asleep.Load() {
		o.wakeClock()
	}
	for {
		ts := o.next.Add(1)
		if ts > o.limit.Load() {
			return 0, false // values past the limit are never handed out
		}
		now := o.clock.Load()
		if ts >= now {
			return ts, true
		}
		// Behind the clock: move up to it and take another. The
		// timestamps skipped are never handed out.
		for cur := o.next.Load(); cur < now && !o.next.CompareAndSwap(cur, now); cur = o.next.Load() {
		}
	}
}

// clockSleep is how long tick keeps the clock current with no timestamp
// taken: an idle process does not wake a thousand times a second.
const clockSleep = 100 * time.Millisecond

// tick keeps o.clock current until ctx is done, and persists the next
// range while half of the current one is left, so that Next seldom waits
// for the store (with timestamps following the clock, a range of 2^20
// lasts about a second). After clockSleep without a timestamp taken it
// sleeps until take wakes it (wakeClock).
func (o *Oracle) tick(ctx context.Context) {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	seen, still := o.next.Load(), 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		o.setClock()
		if o.low() {
			o.extend(ctx) // on failure Next refills, and reports it
		}
		if n := o.next.Load(); n != seen {
			seen, still = n, 0
			continue
		}
		if still++; time.Duration(still)*time.Millisecond < clockSleep {
			continue
		}
		t.Stop()
		o.asleep.Store(true)
		select {
		case <-ctx.Done():
			return
		case <-o.wake:
		}
		t.Reset(time.Millisecond)
		seen, still = o.next.Load(), 0
	}
}

// wakeClock brings the clock up to date for a take that found tick asleep,
// and wakes tick. Every such take reads the time itself, so none uses a
// stale clock while another wakes tick.
func (o *Oracle) wakeClock() {
	o.setClock()
	if o.asleep.CompareAndSwap(true, false) {
		select {
		case o.wake <- struct{}{}:
		default:
		}
	}
}

// setClock moves the clock up to the time (never back).
func (o *Oracle) setClock() {
	now := TsFromTime(time.Now())
	for cur := o.clock.Load(); cur < now && !o.clock.CompareAndSwap(cur, now); cur = o.clock.Load() {
	}
}

// last returns a timestamp below every timestamp Next will return. (On
// a shared store, the newest this process took.)
func (o *Oracle) last() uint64 { return o.next.Load() }

// refill allocates a new range unless another caller already did since
// the range ran out.
func (o *Oracle) refill(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.next.Load() < o.limit.Load() {
		return nil // someone else refilled while we waited
	}
	return o.allocate(ctx)
}

// extend allocates the next range ahead of need, unless another caller
// already did.
func (o *Oracle) extend(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.low() {
		return nil
	}
	return o.allocate(ctx)
}

// low reports whether less than half a range is left ahead of the clock
// and of the last timestamp handed out.
func (o *Oracle) low() bool {
	return max(o.clock.Load(), o.next.Load())+o.window/2 > o.limit.Load()
}

// allocate persists a new high-water mark and makes the range below it
// available. o.mu must be held (or o not yet shared).
func (o *Oracle) allocate(ctx context.Context) error {
	start := max(o.limit.Load(), TsFromTime(time.Now()))
	want := start + o.window
	got, err := o.st.Increment(ctx, oracleRow, famMeta, oracleColumn, int64(want-o.persisted))
	if err != nil {
		return fmt.Errorf("persist oracle high-water mark: %w", err)
	}
	hwm := uint64(got)
	o.persisted = hwm
	// Every value up to hwm is persisted now; Next moves up to the clock
	// by itself, so the new range need not start there.
	o.limit.Store(hwm)
	return nil
}
