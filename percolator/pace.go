package percolator

import "time"

// paceGap is a row's wait before its paced observer runs again
// (Observer.Pace): until when, and whether a hint is set to bring the row
// back then.
type paceGap struct {
	until  time.Time
	hinted bool
}

// space makes the notifications of key wait until until: its observer
// (Observer.Pace) just ran on the row.
func (w *Worker) space(key cellKey, until time.Time) {
	w.paceMu.Lock()
	defer w.paceMu.Unlock()
	if len(w.paced) >= w.pacePrune {
		now := time.Now()
		for k, g := range w.paced {
			if !g.hinted && !now.Before(g.until) {
				delete(w.paced, k)
			}
		}
		w.pacePrune = max(2*len(w.paced), 1024)
	}
	if g, ok := w.paced[key]; ok {
		if until.After(g.until) {
			g.until = until
		}
		return
	}
	w.paced[key] = &paceGap{until: until}
}

// pacing reports whether the notification of key waits for its
// observer's pace at now; if so the row is hinted again when it may run,
// so that the notification need not wait for a scanner's pass.
func (w *Worker) pacing(key cellKey, now time.Time) bool {
	w.paceMu.Lock()
	defer w.paceMu.Unlock()
	g, ok := w.paced[key]
	if !ok {
		return false
	}
	if !now.Before(g.until) {
		if !g.hinted {
			delete(w.paced, key)
		}
		return false
	}
	if !g.hinted {
		g.hinted = true
		time.AfterFunc(g.until.Sub(now), func() {
			w.paceMu.Lock()
			g.hinted = false
			w.paceMu.Unlock()
			w.hints.put([]string{key.row})
		})
	}
	return true
}
