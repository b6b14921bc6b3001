package percolator

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// scan is one scanner goroutine: of background work (Observer.Background)
// if bg, else of the rest. A scanner that found nothing waits, doubling the
// wait up to IdleMax: what this process notifies reaches the worker at once
// as a hint (follow), so passes are for the rest: notifications of other
// processes, dropped hints, retries.
func (w *Worker) scan(bg bool) {
	defer w.wg.Done()
	idle := w.opt.IdleMin
	var due time.Time // a background scanner holding rows for the foreground: its next pass regardless
	for w.ctx.Err() == nil {
		if now := time.Now(); now.Before(due) && w.foregroundBusy(now) {
			// Rows wait for the foreground to rest: look at it often (two
			// loads) and pass once it does, not every wait.
			_ = w.sleep(holdPoll)
			continue
		}
		due = time.Time{}
		if bg {
			w.held.Store(false)
			w.chainWait.Store(false)
		}
		found, soonest, read, err := w.pass(w.ctx, w.starts.pick(), bg)
		switch {
		case err == nil:
			w.passOK()
		case w.ctx.Err() == nil:
			w.opt.Logger.Warn("notification scan failed", "err", err)
			w.passFailed(err)
		}
		if bg && err == nil && w.settle(time.Now()) && found == 0 {
			// The worker settled since the pass began: pass again for
			// the chained work it may run now (chained.go).
			continue
		}
		if found > 0 {
			idle = w.opt.IdleMin
			// Back soon, but not at once: a pass reads every notification
			// (delayed background ones too), and in a bulk load a pass
			// that found something is the rule, so passes back to back
			// would cost CPU in proportion to the backlog. Resting
			// passPace times the pass's reading keeps scanning to a share
			// of a core whatever the backlog; what this process notifies
			// does not wait for a pass (follow). A rest, not an idle wait.
			rest := time.NewTimer(min(passPace*read, w.opt.IdleMax))
			select {
			case <-w.ctx.Done():
			case <-rest.C:
			}
			rest.Stop()
			continue
		}
		wait := idle
		if !soonest.IsZero() {
			// A delayed notification becomes ready then: be back for it,
			// and for those that become ready within delaySlack after it
			// (a pass reads every notification; one a row would be many).
			wait = max(min(wait, time.Until(soonest)+delaySlack), time.Millisecond)
		}
		if bg && w.held.Load() {
			due = time.Now().Add(wait)
			wait = holdPoll
		}
		if bg && w.chainWait.Load() {
			// Chained work waits for the runs in flight: look again soon.
			wait = min(wait, holdPoll)
		}
		if w.sleep(wait) == nil {
			idle = min(2*idle, w.opt.IdleMax)
		}
	}
}

// holdPoll is how often a background scanner holding rows for the
// foreground looks whether it rests (see Observer.Delay).
const holdPoll = 250 * time.Millisecond

// sleep is an idle scanner's wait. On a shared table a change of the
// members cuts it short (returning an error), as rows may have moved to w.
func (w *Worker) sleep(d time.Duration) error {
	if w.part == nil {
		return w.idleWait(w.ctx, d)
	}
	return w.part.sleep(w.ctx, d, w.idleWait)
}

// passPace is how many times as long as a pass spent reading the notify
// group a scanner that found work rests before its next pass (up to
// IdleMax): each of the two scanners reads a tenth of the time at most.
// At four, the passes over a million-page crawl's deleted notifications
// (which Badger keeps until compaction) took 7.5% of its CPU.
const passPace = 9

// delaySlack is how long after the first delayed notification becomes
// ready a scanner comes back for it: passes for delayed work are at most
// four a second.
const delaySlack = 250 * time.Millisecond

// follow runs the foreground tasks of the rows this process notifies as
// soon as it does (hints, see hintQueue), so that within one process a
// notification need not wait for a scanner's pass to reach it. A row with
// a task in flight is looked at again when that task ends: the task may
// have read the row before the new notification.
//
// On a shared table hints stay local: this process runs the rows it
// notified whoever owns them. A hint is what saves a notification the wait
// for a pass, and its row was just written here; the partition is for the
// passes, which would otherwise make every worker read and compete for
// every row. If the owner's pass meets such a row while it runs here, the
// two transactions conflict and the ack stops the loser's retry.
func (w *Worker) follow() {
	defer w.wg.Done()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.hints.ready:
		}
		rows := w.hints.take()
		for i, row := range rows {
			w.following.Store(int64(len(rows) - i))
			w.noteBacklog(len(rows) - i)
			cells, err := w.db.st.ReadRow(w.ctx, row, Filter{Family: famNotify, KeysOnly: true})
			if err != nil {
				if w.ctx.Err() == nil {
					w.opt.Logger.Warn("notification read failed", "row", row, "err", err)
				}
				continue // a pass finds it
			}
			t, ok := w.collect(row, cells, nil)
			if !ok || w.background(t) {
				continue
			}
			if !w.lockRow(row, false) {
				continue
			}
			if w.dispatch(w.ctx, w.tasks, t) != nil {
				return
			}
		}
		w.following.Store(0)
	}
}

// dispatch hands t, whose row the caller locked, to the pool reading ch.
func (w *Worker) dispatch(ctx context.Context, ch chan task, t task) error {
	w.inflight.Add(1)
	if t.bg {
		w.bgRunning.Add(1)
	} else {
		w.queued.Add(1)
	}
	select {
	case ch <- t:
		return nil
	case <-ctx.Done():
		if t.bg {
			w.bgRunning.Add(-1)
		} else {
			w.queued.Add(-1)
		}
		w.inflight.Add(-1)
		w.unlockRow(t.row)
		return ctx.Err()
	}
}

// startRows is where passes start: a row picked at random from a sample
// of the rows the last whole pass read, so passes start anywhere among
// the rows with notifications (the paper's scanners jump to random rows,
// against clumping). A random string would nearly always fall before or
// after the rows of a table whose keys share a prefix, and start passes
// at the table's first rows: behind 277,000 elections of a million-page
// table's !dup/ rows, parse did not run once in four minutes.
type startRows struct {
	mu   sync.Mutex
	rows []string // the last whole pass's sample; none before one
}

// startSample is how many rows a pass samples for the next passes'
// starts.
const startSample = 64

// pick returns a row of the sample, or "" (the table's start) while there
// is none.
func (s *startRows) pick() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rows) == 0 {
		return ""
	}
	return s.rows[rand.IntN(len(s.rows))]
}

// set replaces the sample with that of a whole pass.
func (s *startRows) set(rows []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows = rows
}

// rowSample is one pass's uniform sample of the rows it reads (reservoir
// sampling).
type rowSample struct {
	rows []string
	seen int
}

func (r *rowSample) add(row string) {
	r.seen++
	if len(r.rows) < startSample {
		r.rows = append(r.rows, row)
	} else if i := rand.IntN(r.seen); i < startSample {
		r.rows[i] = row
	}
}

// pass scans the notify group once around from start, dispatching the
// tasks of the scanner's kind (background if bg): a row whose
// notifications are all for background observers is background work. On a
// shared table it dispatches only the notifications w owns (members.go). It
// returns how many tasks it dispatched. A row with a task in flight is
// stepped over; a foreground one is looked at again when the task ends
// (lockRow), so scanners never wait for each other (the paper's scanners
// jump to a random row instead, against clumping). soonest is when the
// first notification it stepped over for its observer's Delay becomes
// ready (zero if none).
func (w *Worker) pass(ctx context.Context, start string, bg bool) (found int, soonest time.Time, read time.Duration, err error) {
	from, end, wrapped := start, "", false
	seen := make(map[string]int64) // notifications per observed column, for the queue gauge
	var sample rowSample           // the next passes' starts
	defer func() {
		if err != nil {
			return
		}
		for col, o := range w.obs {
			o.s.pending.Store(seen[col])
		}
		if len(sample.rows) > 0 {
			w.starts.set(sample.rows)
		}
	}()
	var view *members // the members sharing the table, if any
	if w.part != nil {
		view = w.part.current(ctx)
	}
	filter := Filter{Family: famNotify, KeysOnly: true}
	// On a BucketStore a shared table's pass reads only the buckets w
	// owns, and its positions (start, from, end) are BucketKeys.
	bs, byBucket := w.db.st.(BucketStore)
	byBucket = byBucket && view != nil && bs.Bucketed(filter)
	for {
		if view != nil {
			view = w.part.view.Load() // a long pass follows changes
		}
		var batch []task
		var last string
		full := false
		began := time.Now()
		visit := func(row string, cells []Cell) bool {
			key := row
			if byBucket {
				key = BucketKey(row)
			}
			last = key
			sample.add(key)
			for i, c := range cells {
				if i == 0 || cells[i-1].Column != c.Column {
					seen[c.Column]++
				}
			}
			if view != nil && !view.single() {
				cells = view.owned(row, cells, w.obs)
			}
			if t, ok := w.collect(row, cells, &soonest); ok && w.background(t) == bg {
				batch = append(batch, t)
			}
			full = len(batch) >= w.opt.BatchRows
			return !full
		}
		if byBucket {
			err = bs.ReadBuckets(ctx, clip(view.ranges, from, end), visit, filter)
		} else {
			err = w.db.st.ReadRows(ctx, from, end, visit, filter)
		}
		read += time.Since(began)
		if err != nil {
			return found, soonest, read, err
		}
		// Dispatching may wait long for a busy pool, which is when the
		// gauge matters: raise it now, set it exactly when the pass ends.
		for col, o := range w.obs {
			if n := seen[col]; n > o.s.pending.Load() {
				o.s.pending.Store(n)
			}
		}
		for i, t := range batch {
			if !w.lockRow(t.row, bg) {
				continue
			}
			tasks := w.tasks
			t.bg = bg
			switch {
			case !bg:
				w.noteBacklog(len(batch) - i)
			case w.foregroundBusy(time.Now()):
				// Background work runs on its own goroutines while the
				// foreground has a backlog, on all of them while not.
				tasks = w.bgTasks
			}
			if err := w.dispatch(ctx, tasks, t); err != nil {
				return found, soonest, read, err
			}
			found++
		}
		switch {
		case full:
			from = last + "\x00"
		case wrapped || start == "":
			return found, soonest, read, nil
		default:
			from, end, wrapped = "", start, true
		}
	}
}

// collect turns a row's notify cells into a task for the observers this
// worker runs, skipping notifications that wait for a retry, for their
// observer's Pace (the row is hinted again when it allows) or for its
// Delay (or, background ones, for the foreground); the earliest time one
// waiting for a Delay or the foreground becomes ready goes into *soonest
// (if soonest is not nil and it is earlier).
func (w *Worker) collect(row string, cells []Cell, soonest *time.Time) (task, bool) {
	t := task{row: row}
	now := time.Now()
	stage := int(w.stage.Load())
	staging := stage < len(w.opt.Stages)
	for _, c := range cells {
		o := w.obs[c.Column]
		if o == nil || o.stage > stage {
			continue
		}
		if n := len(t.notes); n > 0 && t.notes[n-1].col == c.Column {
			t.notes[n-1].versions = append(t.notes[n-1].versions, c.Ts)
			continue
		}
		if w.waiting(row, c.Column, now) || o.Pace > 0 && w.pacing(cellKey{row, c.Column}, now) {
			continue
		}
		t.notes = append(t.notes, note{col: c.Column, versions: []uint64{c.Ts}})
	}
	ready := t.notes[:0]
	for _, n := range t.notes {
		o := w.obs[n.col]
		held := !staging && o.Background && o.Delay > 0 && w.foregroundBusy(now)
		if at := o.readyAt(n.versions, held); now.Before(at) && (held || staging || !o.Background || !w.chainedReady(o, n)) {
			if held {
				w.held.Store(true)
			}
			if soonest != nil && (soonest.IsZero() || at.Before(*soonest)) {
				*soonest = at
			}
			if w.covers {
				t.waits = append(t.waits, n)
			}
			continue
		}
		ready = append(ready, n)
	}
	t.notes = ready
	return t, len(t.notes) > 0
}

// background reports whether every note of t is for a background
// observer.
func (w *Worker) background(t task) bool {
	if w.staging() {
		return false // staged observers all run as foreground ones
	}
	for _, n := range t.notes {
		if !w.obs[n.col].Background {
			return false
		}
	}
	return true
}

// lockRow takes row for a task (a background one if bg). If a task holds
// it, a foreground caller marks the row to be hinted again when that task
// ends (unlockRow): the task may have read the row before the notification
// the caller saw.
func (w *Worker) lockRow(row string, bg bool) bool {
	w.rowsMu.Lock()
	defer w.rowsMu.Unlock()
	if _, busy := w.rows[row]; busy {
		if !bg {
			w.later[row] = true
		}
		return false
	}
	w.rows[row] = struct{}{}
	return true
}

func (w *Worker) unlockRow(row string) {
	w.rowsMu.Lock()
	delete(w.rows, row)
	again := w.later[row]
	delete(w.later, row)
	w.rowsMu.Unlock()
	if again {
		w.hints.put([]string{row})
	}
}

// waiting reports whether the notification waits for a retry.
func (w *Worker) waiting(row, col string, now time.Time) bool {
	w.failMu.Lock()
	defer w.failMu.Unlock()
	f, ok := w.failures[cellKey{row, col}]
	return ok && now.Before(f.notBefore)
}

// countPending counts the notifications for this worker's observers,
// and returns how many are for those of stages up to upTo
// (WorkerOptions.Stages; len(Stages): all of them).
func (w *Worker) countPending(ctx context.Context, upTo int) (int, error) {
	counts := make(map[string]int64)
	err := w.db.st.ReadRows(ctx, "", "", func(_ string, cells []Cell) bool {
		seen := ""
		for _, c := range cells {
			if w.obs[c.Column] != nil && c.Column != seen {
				counts[c.Column]++
				seen = c.Column
			}
		}
		return true
	}, Filter{Family: famNotify, KeysOnly: true})
	if err != nil {
		return 0, err
	}
	total := 0
	for col, o := range w.obs {
		o.s.pending.Store(counts[col])
		if o.stage <= upTo {
			total += int(counts[col])
		}
	}
	return total, nil
}
