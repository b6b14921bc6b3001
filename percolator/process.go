package percolator

import (
	"context"
	"fmt"
	"time"
)

// On a shared store (one that is not an ExclusiveStore) every DB is a
// process among others, and proves it is alive with a row of its own, the
// paper's Chubby token: "\x00meta/worker/ID" with
//
//	beat    the wall time (Unix ms) of its last heartbeat
//	oldest  a timestamp at or below the start timestamp of every
//	        transaction it runs, or will begin before its next heartbeat
//
// Other processes clean up the locks of a process whose beat is stale
// (writerAlive), and GC keeps every version that a live process's oldest
// may read (liveOldest). A process counts as alive for LockTTL after its
// beat, plus ClockSkew, as the beat is read on another machine's clock.
//
// While its own heartbeat is not refreshed, a process cannot know whether
// others still count it alive: its lease (leaseUntil) has lapsed, and its
// reads then check the safe point in the table before they return
// (checkLease). A beat that succeeds after a lapse reloads the safe point
// before it renews the lease.
const (
	beatColumn   = "beat"
	oldestColumn = "oldest"
)

func workerRow(id string) string { return "\x00meta/worker/" + id }

// workerPrefix is where the worker rows are.
const workerPrefix = "\x00meta/worker/"

// beat publishes this process's heartbeat and the oldest timestamp its
// transactions read at, reloads the GC safe point, and renews the lease.
func (db *DB) beat(ctx context.Context) error {
	sent := time.Since(db.born)
	// A timestamp first, then the registry: a transaction not in the
	// registry registers after it was read, and then takes its start
	// timestamp after ts (see begin), so oldest bounds it too.
	ts, err := db.orc.Next(ctx)
	if err != nil {
		return fmt.Errorf("percolator: heartbeat: %w", err)
	}
	oldest := min(ts, db.oldestActive())
	err = db.st.MutateRows(ctx, []RowMutation{{Row: workerRow(db.id), Mutations: []Mutation{
		{Op: SetCell, Family: famMeta, Column: beatColumn, Ts: 1, Value: encodeInt64(time.Now().UnixMilli())},
		{Op: SetCell, Family: famMeta, Column: oldestColumn, Ts: 1, Value: encodeInt64(int64(oldest))},
	}}})
	if err != nil {
		return fmt.Errorf("percolator: write heartbeat: %w", err)
	}
	// Every beat reloads the safe point that other processes' GC moved;
	// after a lapse, that must come before the lease is renewed.
	if err := db.loadSafePoint(ctx); err != nil {
		return err
	}
	db.leaseUntil.Store(int64(sent + db.opt.LockTTL))
	return nil
}

func (db *DB) heartbeat() {
	defer db.wg.Done()
	t := time.NewTicker(db.opt.LockTTL / 4)
	defer t.Stop()
	for {
		select {
		case <-db.ctx.Done():
			return
		case <-t.C:
			if err := db.beat(db.ctx); err != nil && db.ctx.Err() == nil {
				db.opt.Logger.Warn("heartbeat failed", "err", err)
			}
		}
	}
}

// leaseHeld reports whether every other process still counts this one
// alive: its last heartbeat was written less than LockTTL ago (by this
// process's monotonic clock, from before the write was sent).
func (db *DB) leaseHeld() bool {
	return int64(time.Since(db.born)) < db.leaseUntil.Load()
}

// checkLease is called by reads on a shared store after they read at ts:
// while the lease has lapsed, another process's GC may have collected what
// they read, and then it has published a safe point above ts first.
func (db *DB) checkLease(ctx context.Context, ts uint64) error {
	if db.ex != nil || db.leaseHeld() {
		return nil
	}
	if err := db.loadSafePoint(ctx); err != nil {
		return err
	}
	if safe := db.safe.Load(); ts < safe {
		return fmt.Errorf("%w: reading at %d < safe point %d (this process's heartbeat lapsed)", ErrTooOld, ts, safe)
	}
	return nil
}

// admit makes a transaction registered at an old timestamp at known to
// every GC before it reads: it publishes a heartbeat, then checks at
// against both the safe point and the candidate GC moves it to next (see
// advanceSharedSafePoint). A GC that read our row before the heartbeat
// published its candidate before its next pass, and that pass moves the
// safe point no higher than that candidate.
func (db *DB) admit(ctx context.Context, at uint64) error {
	if err := db.beat(ctx); err != nil {
		return err
	}
	safe, next, err := db.readSafePoint(ctx)
	if err != nil {
		return err
	}
	if at < max(safe, next) {
		return fmt.Errorf("%w: start %d < safe point %d", ErrTooOld, at, max(safe, next))
	}
	return nil
}

// alive reports whether a heartbeat written at beat (Unix ms, another
// machine's clock) is fresh.
func (db *DB) alive(beat int64) bool {
	return time.Now().UnixMilli()-beat < (db.opt.LockTTL + db.opt.ClockSkew).Milliseconds()
}

// liveOldest returns the smallest oldest of the other processes alive.
// (This process's own registry is more current than its row.)
func (db *DB) liveOldest(ctx context.Context) (oldest uint64, err error) {
	oldest = MaxTs
	own := workerRow(db.id)
	err = db.st.ReadRows(ctx, workerPrefix, workerPrefix+"\xff", func(row string, cells []Cell) bool {
		if row == own {
			return true
		}
		var beat, old int64
		hasOld := false
		for _, c := range cells {
			switch c.Column {
			case beatColumn:
				beat = decodeInt64(c.Value)
			case oldestColumn:
				old, hasOld = decodeInt64(c.Value), true
			}
		}
		if beat == 0 || !db.alive(beat) {
			return true
		}
		if !hasOld {
			old = 0 // a process that does not say: keep everything
		}
		oldest = min(oldest, uint64(old))
		return true
	}, Filter{Family: famMeta, Latest: true})
	if err != nil {
		return 0, fmt.Errorf("percolator: read worker rows: %w", err)
	}
	return oldest, nil
}

// writerAlive reports whether the transaction that took l at startTs may
// still be running.
func (db *DB) writerAlive(ctx context.Context, l lock, startTs uint64) (bool, error) {
	if l.writer == db.id {
		return db.active.has(startTs | writer), nil
	}
	if db.ex != nil {
		// Nobody else can be writing an exclusive store: the lock is left
		// over from an earlier process.
		return false, nil
	}
	cells, err := db.st.ReadRow(ctx, workerRow(l.writer), Filter{Family: famMeta, Column: beatColumn, Latest: true})
	if err != nil {
		return false, err
	}
	if len(cells) == 0 {
		return false, nil
	}
	return db.alive(decodeInt64(cells[0].Value)), nil
}
