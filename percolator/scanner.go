package percolator

import (
	"context"
	"math/rand/v2"
	"time"
)

// scan is one scanner goroutine.
func (w *Worker) scan() {
	defer w.wg.Done()
	idle := w.opt.IdleMin
	for w.ctx.Err() == nil {
		found, teleport, err := w.pass(w.ctx, randomRow())
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
		case <-w.db.wake:
			// Pass the wake-up on so every idle scanner notices it.
			select {
			case w.db.wake <- struct{}{}:
			default:
			}
			idle = w.opt.IdleMin
		case <-t.C:
			idle = min(2*idle, w.opt.IdleMax)
		}
		t.Stop()
	}
}

// randomRow returns a random place to start scanning: rows are
// mostly printable, so pick a printable first byte.
func randomRow() string {
	b := []byte{byte(0x21 + rand.IntN(0x5e)), byte(rand.IntN(256)), byte(rand.IntN(256))}
	return string(b)
}

// pass scans the notify group once around from start, dispatching tasks. It
// returns how many it dispatched, and whether it stopped early because
// another run holds a row it reached.
func (w *Worker) pass(ctx context.Context, start string) (found int, teleport bool, err error) {
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
			if t, ok := w.collect(row, cells); ok {
				batch = append(batch, t)
			}
			full = len(batch) >= w.opt.BatchRows
			return !full
		}, Filter{Family: famNotify, KeysOnly: true})
		if err != nil {
			return found, false, err
		}
		for _, t := range batch {
			if !w.lockRow(t.row) {
				return found, true, nil // someone is here already: jump elsewhere
			}
			w.inflight.Add(1)
			select {
			case w.tasks <- t:
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

func (w *Worker) lockRow(row string) bool {
	w.rowsMu.Lock()
	defer w.rowsMu.Unlock()
	if w.rows[row] {
		return false
	}
	w.rows[row] = true
	return true
}

func (w *Worker) unlockRow(row string) {
	w.rowsMu.Lock()
	delete(w.rows, row)
	w.rowsMu.Unlock()
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
