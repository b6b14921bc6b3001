package percolator

import (
	"sort"
	"sync/atomic"
	"time"
)

// ObserverStats counts what an observer did in this process.
type ObserverStats struct {
	Name      string
	Column    string
	Runs      int64         // transactions that ran the observer
	Commits   int64         // runs that committed
	Empty     int64         // runs of a weak observer that wrote nothing, so had nothing to commit
	Nothing   int64         // notifications found already acknowledged
	Conflicts int64         // runs that lost to another transaction
	Failures  int64         // runs whose observer returned an error or panicked
	Parked    int64         // notifications parked as failed
	Pending   int64         // notifications seen by the last full scan (the queue length)
	RunTime   time.Duration // total time of runs
}

// Add adds o's counts of what was done (runs and their outcomes, run
// time) to s: the totals of several workers, or of several observers.
// Pending is left to the caller: workers sharing a table see one queue.
func (s *ObserverStats) Add(o ObserverStats) {
	s.Runs += o.Runs
	s.Commits += o.Commits
	s.Empty += o.Empty
	s.Nothing += o.Nothing
	s.Conflicts += o.Conflicts
	s.Failures += o.Failures
	s.Parked += o.Parked
	s.RunTime += o.RunTime
}

type statCounters struct {
	runs, commits, empty, nothing, conflicts, failures, parked, pending, runNanos atomic.Int64
}

func (c *statCounters) record(res outcome, err error, d time.Duration) {
	switch {
	case err != nil:
		c.runs.Add(1)
		c.failures.Add(1)
	case res == ran:
		c.runs.Add(1)
		c.commits.Add(1)
	case res == conflict:
		c.runs.Add(1)
		c.conflicts.Add(1)
	case res == empty:
		c.runs.Add(1)
		c.empty.Add(1)
	default:
		c.nothing.Add(1)
	}
	c.runNanos.Add(int64(d))
}

func (o *observerState) stats() ObserverStats {
	c := &o.s
	return ObserverStats{
		Name: o.Name, Column: o.Column,
		Runs: c.runs.Load(), Commits: c.commits.Load(), Empty: c.empty.Load(), Nothing: c.nothing.Load(),
		Conflicts: c.conflicts.Load(), Failures: c.failures.Load(), Parked: c.parked.Load(),
		Pending: c.pending.Load(), RunTime: time.Duration(c.runNanos.Load()),
	}
}

// Stats returns per-observer counts, sorted by observer name.
func (w *Worker) Stats() []ObserverStats {
	out := make([]ObserverStats, 0, len(w.obs))
	for _, o := range w.obs {
		out = append(out, o.stats())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Watcher is told of new workers, to read their counters (Stats,
// Inflight) when it needs them; see WorkerOptions.Metrics.
type Watcher interface {
	Watch(w *Worker)
}

// Backlog returns the number of foreground tasks this process has found
// and no goroutine runs yet: rows notified here and not yet handed out
// (at most 4,096; beyond, they wait for the scanners) and tasks waiting
// for a goroutine. It is what a process that feeds the chain (a crawler)
// can pace itself by.
func (w *Worker) Backlog() int {
	return w.hints.len() + int(w.following.Load()) + int(w.queued.Load())
}

// Inflight returns the number of observer tasks dispatched and not
// finished.
func (w *Worker) Inflight() int64 { return w.inflight.Load() }
