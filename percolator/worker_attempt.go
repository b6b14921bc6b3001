package percolator

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"time"
)

// outcome of one observer attempt.
type outcome int

const (
	ran      outcome = iota // the observer ran and its transaction committed
	nothing                 // the change was already acknowledged
	conflict                // another transaction won; try again later
	empty                   // a weak observer ran and wrote nothing: nothing to commit
)

// slowRun is how long a run takes before the worker logs it: a run that
// long holds back what waits for it (a section's documents wait for its
// PageRank block), and with several processes it may lose to another.
const slowRun = 30 * time.Second

func (o outcome) String() string {
	switch o {
	case ran:
		return "committed"
	case nothing:
		return "nothing to do"
	case conflict:
		return "conflict"
	case empty:
		return "nothing written"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// handle runs the observer of one notification and deals with the outcome.
func (w *Worker) handle(ctx context.Context, t task, n note) {
	row := t.row
	o := w.obs[n.col]
	if o.labels != nil {
		pprof.SetGoroutineLabels(o.labels)
		defer pprof.SetGoroutineLabels(ctx)
	}
	began := time.Now()
	res, err := w.attempt(ctx, o, t, n)
	if ctx.Err() != nil {
		return // cancelled: the notification stays for the next worker
	}
	if retryable(err) {
		res, err = conflict, nil // contention, not a failure of the observer
	}
	took := time.Since(began)
	o.s.record(res, err, took)
	if took >= slowRun {
		what := res.String()
		if err != nil {
			what = "failed: " + err.Error()
		}
		w.opt.Logger.Info("slow observer run", "observer", o.Name, "row", row, "took", took.Round(time.Millisecond), "outcome", what)
	}
	key := cellKey{row, n.col}
	if o.Pace > 0 && err == nil && (res == ran || res == empty) {
		w.space(key, time.Now().Add(min(time.Duration(o.Pace)*took, maxPaceWait)))
	}
	switch {
	case err != nil:
		w.failed(ctx, o, row, n, err)
	case res == conflict:
		// Let the winner finish; a little jitter keeps losers from
		// colliding again.
		w.failMu.Lock()
		if _, ok := w.failures[key]; !ok {
			w.failures[key] = &failureState{first: time.Now()}
		}
		d := time.Duration(5+rand.IntN(20)) * time.Millisecond
		w.failures[key].notBefore = time.Now().Add(d)
		w.failMu.Unlock()
		if !o.Background {
			// Try again then, without waiting for a pass.
			time.AfterFunc(d+time.Millisecond, func() { w.hints.put([]string{row}) })
		}
	default:
		w.failMu.Lock()
		delete(w.failures, key)
		w.failMu.Unlock()
	}
}

// attempt is one observer transaction for notification n.
func (w *Worker) attempt(ctx context.Context, o *observerState, t task, n note) (res outcome, err error) {
	row := t.row
	if o.weak {
		// A weak notification has no write to compare an ack with, and a
		// scanner may have read it just before a run on the row deleted
		// it: run only if it is still there.
		if live, err := w.notified(ctx, row, n); err != nil || !live {
			return nothing, err
		}
	}
	tx, err := w.db.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()

	run := true
	var seen uint64 // start ts of the newest write this run sees
	if !o.weak {
		var wc Cell
		ok, err := tx.readWrite(ctx, row, n.col, &wc)
		if err != nil {
			return 0, err
		}
		var written uint64
		if ok {
			rec, err := decodeWrite(wc.Value)
			if err != nil {
				return 0, err
			}
			written, seen = wc.Ts, rec.startTs
		}
		ack, err := tx.Get(ctx, row, o.ack)
		if err != nil {
			return 0, err
		}
		run = ok && written > decodeUint(ack)
	}
	res = nothing
	if run {
		if err := safeRun(ctx, o, tx, row, n.col); err != nil {
			return 0, err
		}
		// A weak observer's ack is never read (see above): a run that
		// wrote nothing has nothing to commit.
		res = empty
		if !o.weak || len(tx.writes) > 0 {
			tx.bufferInternal(row, o.ack, pending{kind: kindPut, value: binary.BigEndian.AppendUint64(nil, tx.startTs)})
			if err := tx.Commit(ctx); err != nil {
				return 0, err
			}
			if o.Background {
				w.chained.add(tx.CommitTs())
			}
			res = ran
		}
	}

	// The run (or the ack it found) covers every notification whose write it
	// could see; newer ones stay and trigger another run.
	var done []Mutation
	for _, v := range n.versions {
		if o.weak || v <= seen {
			done = append(done, Mutation{Op: DeleteCell, Family: famNotify, Column: n.col, Ts: v})
		}
	}
	if res != nothing {
		done = covered(done, o, t, tx.startTs)
	}
	if len(done) > 0 {
		if err := w.db.st.MutateRows(ctx, []RowMutation{{Row: row, Mutations: done}}); err != nil {
			return res, fmt.Errorf("percolator: delete notification: %w", err)
		}
		// The pending notifications changed, even where nothing was
		// committed (a run that wrote nothing, an ack found): tell the
		// watchers, whose counts of them would otherwise stand.
		w.db.watched([]rowWrites{{row: row}})
	}
	return res, nil
}

// safeRun runs the observer, turning a panic into an error.
// notified reports whether some version of notification n is still set.
func (w *Worker) notified(ctx context.Context, row string, n note) (bool, error) {
	found := false
	err := w.db.st.ReadRows(ctx, row, row+"\x00", func(string, []Cell) bool {
		found = true
		return false
	}, Filter{Family: famNotify, Column: n.col, MinTs: slices.Min(n.versions), MaxTs: slices.Max(n.versions), KeysOnly: true})
	return found, err
}

func safeRun(ctx context.Context, o *observerState, tx *Tx, row, col string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("observer %s panicked: %v\n%s", o.Name, r, debug.Stack())
		}
	}()
	return o.Run(ctx, tx, row, col)
}

func decodeUint(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// failed counts a failure of n's observer: retried with exponential
// backoff, parked after MaxFailures.
func (w *Worker) failed(ctx context.Context, o *observerState, row string, n note, err error) {
	key := cellKey{row, n.col}
	w.failMu.Lock()
	f, ok := w.failures[key]
	if !ok {
		f = &failureState{first: time.Now()}
		w.failures[key] = f
	}
	f.attempts++
	f.lastErr = err
	f.notBefore = time.Now().Add(w.opt.RetryBase << min(f.attempts-1, 10))
	attempts, first := f.attempts, f.first
	park := f.attempts >= w.opt.MaxFailures
	if park {
		delete(w.failures, key)
	}
	w.failMu.Unlock()

	w.opt.Logger.Warn("observer failed", "observer", o.Name, "row", row, "column", n.col, "attempt", attempts, "parked", park, "err", err)
	if !park {
		return
	}
	fl := Failure{Observer: o.Name, Row: row, Column: n.col, Error: err.Error(), Attempts: attempts, First: first, Last: time.Now()}
	if err := w.db.park(ctx, fl, n.versions); err != nil {
		w.opt.Logger.Error("could not park failed notification; it stays and will be retried", "observer", o.Name, "row", row, "err", err)
		return
	}
	o.s.parked.Add(1)
}
