package percolator

import (
	"context"
	"time"

	"github.com/caffeine-go/caffeine/internal/ctxsleep"
)

// Stage is one stage of WorkerOptions.Stages.
type Stage struct {
	// Observers names the stage's observers.
	Observers []string
	// Before, if set, runs once the stages before are drained, before
	// the stage's observers run (on the worker's stager goroutine). It
	// may only save the observers work, as a batch computation of what
	// they would converge to: an error is logged and the stage goes on.
	Before func(ctx context.Context) error
}

// staging reports whether the worker still drains WorkerOptions.Stages.
func (w *Worker) staging() bool { return int(w.stage.Load()) < len(w.opt.Stages) }

// Staging reports whether the worker still drains WorkerOptions.Stages:
// some observers wait for the stages before theirs.
func (w *Worker) Staging() bool { return w.staging() }

// Stage returns the index of the stage of WorkerOptions.Stages being
// drained (its Before may be running); len(Stages) once all are.
func (w *Worker) Stage() int { return int(w.current.Load()) }

// stager moves the worker from stage to stage as each is drained,
// running each stage's Before first.
func (w *Worker) stager() {
	defer w.wg.Done()
	for cur := range w.opt.Stages {
		st := w.opt.Stages[cur]
		w.current.Store(int32(cur))
		if int(w.stage.Load()) < cur {
			if st.Before != nil {
				began := time.Now()
				if err := st.Before(w.ctx); err != nil {
					if w.ctx.Err() != nil {
						return
					}
					w.opt.Logger.Warn("stage's Before failed; the stage goes on", "stage", st.Observers, "err", err)
				} else {
					w.opt.Logger.Info("stage's Before done", "stage", st.Observers, "took", time.Since(began).Round(time.Millisecond))
				}
			}
			w.stage.Store(int32(cur))
			// The stage's notifications were written before it began,
			// so no hint brings them, and the scanners, which found
			// nothing at the end of the last stage, may sleep for
			// IdleMax: a pass now hands them out.
			if _, _, _, err := w.pass(w.ctx, w.starts.pick(), false); err != nil {
				if w.ctx.Err() != nil {
					return
				}
				w.opt.Logger.Warn("stage's first pass failed; the scanners go on", "stage", st.Observers, "err", err)
			}
		}
		began := time.Now()
		for {
			err := w.waitQuiet(w.ctx, cur)
			if err == nil {
				break
			}
			if w.ctx.Err() != nil {
				return
			}
			// A failed count must not hold the later stages for good.
			w.opt.Logger.Warn("stage's notifications not counted; looking again", "stage", st.Observers, "err", err)
			if ctxsleep.Sleep(w.ctx, time.Second) != nil {
				return
			}
		}
		w.opt.Logger.Info("stage drained", "stage", st.Observers, "took", time.Since(began).Round(time.Millisecond))
	}
	w.stage.Store(int32(len(w.opt.Stages)))
	w.current.Store(int32(len(w.opt.Stages)))
}
