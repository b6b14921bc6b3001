package percolator

import (
	"context"
	"time"

	"github.com/caffeine-go/caffeine/internal/ctxsleep"
)

// WaitIdle returns when the worker has nothing left to do: a full scan of
// the notify group found no notification for its observers (other than
// parked failures), no observer was running, and this DB wrote no
// notification meanwhile (Apache Fluo's `fluo wait` rule). Notifications
// waiting for a retry count as work.
func (w *Worker) WaitIdle(ctx context.Context) error {
	return w.waitQuiet(ctx, len(w.opt.Stages))
}

// waitQuiet is WaitIdle for the observers of stages up to upTo
// (len(Stages): all of them).
func (w *Worker) waitQuiet(ctx context.Context, upTo int) error {
	quiet := 0 // consecutive polls with nothing running and no new notification
	last := w.db.epoch.Load()
	// A full check reads every notification of the table; while checks
	// find work that other processes do (nothing of ours runs), they come
	// less often, up to idleCheckMax apart.
	every, next := idleCheckMin, time.Time{}
	for {
		if err := w.stopped(); err != nil {
			return err
		}
		epoch := w.db.epoch.Load()
		if w.inflight.Load() > 0 || epoch != last {
			quiet, last, every = 0, epoch, idleCheckMin
		} else {
			quiet++
		}
		if quiet >= 2 && !time.Now().Before(next) {
			n, err := w.countPending(ctx, upTo)
			if err != nil {
				return err
			}
			cleaned := 0
			if n == 0 {
				// Dead writers' locks may hold notifications back, and
				// their rows have none yet: the lock scan reads the
				// whole table, so only when nothing else is left.
				if cleaned, err = w.db.CleanLocks(ctx); err != nil {
					return err
				}
			}
			if n+cleaned == 0 && w.inflight.Load() == 0 && epoch == w.db.epoch.Load() {
				return nil
			}
			quiet, next, every = 0, time.Now().Add(every), min(2*every, idleCheckMax)
		}
		if err := ctxsleep.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// The interval of WaitIdle's full checks while they find work: it starts
// at idleCheckMin after anything of this worker ran.
const (
	idleCheckMin = 40 * time.Millisecond
	idleCheckMax = time.Second
)
