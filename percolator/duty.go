package percolator

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Duty is work that one process of a table does for all of them: the
// sweep for dead writers' locks (the worker's), GC passes and the counts a
// status page shows (the engine's). Work that reads the whole table must
// not be done by every process on a timer: on Bigtable a filtered scan
// reads every row server side, and N processes would read the table N
// times as often as one.
//
// On a shared store a Duty is a lease (lease.go) in the row
// "\x00meta/duty/NAME": Hold keeps taking or renewing it, and Held reports
// whether this Duty holds it now. Another process's Duty takes it over
// Options.LockTTL plus Options.ClockSkew after the holder's last renewal
// (and up to half the TTL more: a standby looks every half TTL), at its
// next look when the holder stops cleanly (Hold releases it). On an
// ExclusiveStore there is no other process: Held is always true and Hold
// does nothing.
//
// A Duty's methods are safe for concurrent use.
type Duty struct {
	db *DB
	l  lease

	mu       sync.Mutex // guards deadline
	deadline time.Time  // until when (local monotonic clock) the lease is ours; zero: not held
}

// dutyRow is the lease row of the duty name.
func dutyRow(name string) string { return "\x00meta/duty/" + name }

// dutyIDs makes the holder ids of one DB's duties distinct: two workers
// of one process must not both think they hold a lease.
var dutyIDs atomic.Int64

// Duty returns the duty name of db ("locks" is the worker's lock sweep;
// any name without a 0x00 byte): a lease that this process competes for with the
// other processes' duties of that name. Call Hold to compete.
func (db *DB) Duty(name string) *Duty {
	return &Duty{db: db, l: lease{st: db.st, row: dutyRow(name),
		id:  db.id + "-" + strconv.FormatInt(dutyIDs.Add(1), 10),
		ttl: db.opt.LockTTL, skew: db.opt.ClockSkew}}
}

// Held reports whether this Duty holds its lease now: the caller may do
// the work. It is always true on an ExclusiveStore. The lease may lapse
// right after; the work must be safe if two processes did it at once
// (every duty's is: it is only wasteful).
func (d *Duty) Held() bool {
	if d.db.ex != nil {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return time.Now().Before(d.deadline)
}

// Hold competes for the lease until ctx is done: it renews it while
// held, every quarter of its TTL, and looks whether it lapsed every half
// (a standby's look is one read), then releases it. Errors are logged;
// the lease is simply not held meanwhile. On an ExclusiveStore it returns
// at once.
func (d *Duty) Hold(ctx context.Context) {
	if d.db.ex != nil {
		return
	}
	for {
		wait := d.l.ttl / 2
		if d.step(ctx) {
			wait = d.l.ttl / 4
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			d.mu.Lock()
			held := !d.deadline.IsZero()
			d.deadline = time.Time{}
			d.mu.Unlock()
			if held {
				rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				if err := d.l.release(rctx); err != nil {
					d.db.opt.Logger.Warn("release duty", "row", d.l.row, "err", err)
				}
				cancel()
			}
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// step takes or renews the lease once, and reports whether it holds it.
func (d *Duty) step(ctx context.Context) bool {
	d.mu.Lock()
	held := !d.deadline.IsZero()
	d.mu.Unlock()
	var (
		deadline time.Time
		ok       bool
		err      error
	)
	if held {
		deadline, ok, err = d.l.renew(ctx)
	} else {
		deadline, ok, err = d.l.acquire(ctx)
	}
	if err != nil && ctx.Err() == nil {
		d.db.opt.Logger.Warn("duty lease", "row", d.l.row, "err", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case ok:
		d.deadline = deadline
	case err == nil || time.Now().After(d.deadline):
		// Taken over, or renewals failed until it lapsed.
		d.deadline = time.Time{}
	}
	return !d.deadline.IsZero()
}
