package percolator

import (
	"context"
	"math/rand/v2"
	"time"
)

// scan is one scanner goroutine: of background work (Observer.Background)
// if bg, else of the rest. Foreground scanners wake at once when a commit
// sets a notification; the background scanner only polls, and waits for
// room in its queue: background work neither wakes nor holds up the rest.
func (w *Worker) scan(bg bool) {
	defer w.wg.Done()
	idle := w.opt.IdleMin
	for w.ctx.Err() == nil {
		// Taken before the pass: a notification set during the pass
		// (which may have missed it) wakes the wait after it.
		var wake <-chan struct{}
		if !bg {
			wake = w.db.wakeUp()
		}
		found, teleport, err := w.pass(w.ctx, randomRow(), bg)
		if err != nil {
			if w.ctx.Err() == nil {
				w.opt.Logger.Warn("notification scan failed", "err", err)
			}
		}
		if teleport {
			continue
		}
		if found > 0 {
			idle = w.opt.IdleMin
			continue
		}
		t := time.NewTimer(idle)
		select {
		case <-w.ctx.Done():
		case <-wake:
			idle = w.opt.IdleMin
		case <-t.C:
			idle = min(2*idle, w.opt.IdleMax)
		}
		t.Stop()
	}
}

// follow runs the foreground tasks of the rows this process notifies as
// soon as it does (hints, see hintQueue), so that within one process a
// notification need not wait for a scanner's pass to reach it. A row with
// a task in flight is looked at again when that task ends: the task may
// have read the row before the new notification.
func (w *Worker) follow() {
	defer w.wg.Done()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.hints.ready:
		}
		for _, row := range w.hints.take() {
			cells, err := w.db.st.ReadRow(w.ctx, row, Filter{Family: famNotify, KeysOnly: true})
			if err != nil {
				if w.ctx.Err() == nil {
					w.opt.Logger.Warn("notification read failed", "row", row, "err", err)
				}
				continue // a pass finds it
			}
			t, ok := w.collect(row, cells)
			if !ok || w.background(t) {
				continue
			}
			if !w.lockLater(row) {
				continue
			}
			w.inflight.Add(1)
			select {
			case w.tasks <- t:
			case <-w.ctx.Done():
				w.inflight.Add(-1)
				w.unlockRow(row)
				return
			}
		}
	}
}

// lockLater takes row for a foreground task, or, if a task holds it, marks
// it to be hinted again when that one ends.
func (w *Worker) lockLater(row string) bool {
	w.rowsMu.Lock()
	defer w.rowsMu.Unlock()
	if _, busy := w.rows[row]; busy {
		w.later[row] = true
		return false
	}
	w.rows[row] = false
	return true
}

// randomRow returns a random place to start scanning: rows are
// mostly printable, so pick a printable first byte.
func randomRow() string {
	b := []byte{byte(0x21 + rand.IntN(0x5e)), byte(rand.IntN(256)), byte(rand.IntN(256))}
	return string(b)
}

// pass scans the notify group once around from start, dispatching the
// tasks of the scanner's kind (background if bg): a row whose
// notifications are all for background observers is background work. It
// returns how many tasks it dispatched, and whether it stopped early because
// another scanner's run holds a row it reached.
func (w *Worker) pass(ctx context.Context, start string, bg bool) (found int, teleport bool, err error) {
	from, end, wrapped := start, "", false
	seen := make(map[string]int64) // notifications per observed column, for the queue gauge
	defer func() {
		if err != nil {
			return
		}
		for col, o := range w.obs {
			if !teleport {
				o.s.pending.Store(seen[col])
			} else if n := seen[col]; n > o.s.pending.Load() {
				// A partial pass saw at least this many: a lower bound,
				// so a worker whose passes keep meeting busy rows still
				// shows its queue.
				o.s.pending.Store(n)
			}
		}
	}()
	tasks := w.tasks
	if bg {
		tasks = w.bgTasks
	}
	for {
		var batch []task
		var last string
		full := false
		err := w.db.st.ReadRows(ctx, from, end, func(row string, cells []Cell) bool {
			last = row
			for i, c := range cells {
				if i == 0 || cells[i-1].Column != c.Column {
					seen[c.Column]++
				}
			}
			if t, ok := w.collect(row, cells); ok && w.background(t) == bg {
				batch = append(batch, t)
			}
			full = len(batch) >= w.opt.BatchRows
			return !full
		}, Filter{Family: famNotify, KeysOnly: true})
		if err != nil {
			return found, false, err
		}
		for _, t := range batch {
			if ok, heldBg := w.lockRow(t.row, bg); !ok {
				if bg || heldBg {
					// Background work steps around what is running; the
					// foreground around background runs, and picks up
					// the row on a later pass.
					continue
				}
				return found, true, nil // another scanner is here: jump elsewhere
			}
			w.inflight.Add(1)
			select {
			case tasks <- t:
				found++
			case <-ctx.Done():
				w.inflight.Add(-1)
				w.unlockRow(t.row)
				return found, false, ctx.Err()
			}
		}
		switch {
		case full:
			from = last + "\x00"
		case wrapped || start == "":
			return found, false, nil
		default:
			from, end, wrapped = "", start, true
		}
	}
}

// collect turns a row's notify cells into a task for the observers this
// worker runs, skipping notifications that wait for a retry.
func (w *Worker) collect(row string, cells []Cell) (task, bool) {
	t := task{row: row}
	now := time.Now()
	for _, c := range cells {
		if w.obs[c.Column] == nil {
			continue
		}
		if n := len(t.notes); n > 0 && t.notes[n-1].col == c.Column {
			t.notes[n-1].versions = append(t.notes[n-1].versions, c.Ts)
			continue
		}
		if w.waiting(row, c.Column, now) {
			continue
		}
		t.notes = append(t.notes, note{col: c.Column, versions: []uint64{c.Ts}})
	}
	return t, len(t.notes) > 0
}

// background reports whether every note of t is for a background
// observer.
func (w *Worker) background(t task) bool {
	for _, n := range t.notes {
		if !w.obs[n.col].Background {
			return false
		}
	}
	return true
}

// lockRow takes row for a task (a background one if bg). If another task
// holds it, it reports whether that one is a background task.
func (w *Worker) lockRow(row string, bg bool) (ok, heldBg bool) {
	w.rowsMu.Lock()
	defer w.rowsMu.Unlock()
	if held, busy := w.rows[row]; busy {
		return false, held
	}
	w.rows[row] = bg
	return true, false
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

// countPending counts the notifications for this worker's observers.
func (w *Worker) countPending(ctx context.Context) (int, error) {
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
		total += int(counts[col])
	}
	return total, nil
}
