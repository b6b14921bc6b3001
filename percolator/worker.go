package percolator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caffeine-go/caffeine/internal/ctxsleep"
)

// WorkerOptions configure a Worker. The zero value of every field selects
// its default.
type WorkerOptions struct {
	// Scanners is the number of goroutines scanning for notifications.
	// Default 2.
	Scanners int
	// Workers bounds the observer transactions running at once. Default 16.
	Workers int
	// Background bounds the background observers' transactions running
	// at once (Observer.Background), besides Workers. Default Workers/8,
	// at least 1, on an ExclusiveStore (Badger: runs cost CPU, which the
	// foreground needs more); Workers/2 on a shared store (Bigtable: a run
	// is about 20 RPCs and mostly waits for them, so at a few ms each two
	// at a time would drain a bulk crawl's background backlog at 20–40
	// rows a second).
	Background int
	// BatchRows is the number of notified rows a scanner reads at a time.
	// Default 256.
	BatchRows int
	// MaxFailures is how often a notification's observer may fail before
	// it is parked as failed. Default 5.
	MaxFailures int
	// RetryBase is the first retry delay of a failing observer; it doubles
	// with every failure. Default 100ms.
	RetryBase time.Duration
	// IdleMin and IdleMax bound an idle scanner's sleep between passes, which
	// doubles while it finds nothing. A notification set by this process
	// does not wait for a pass: the worker is told its row at once.
	// Defaults 100ms and 5s.
	IdleMin, IdleMax time.Duration
	// StopAfter is how long the worker's passes over the notify group
	// may fail, without one succeeding in between, before the worker
	// takes its store for dead and stops (Run returns the last error):
	// Badger closed or failing every read, Bigtable out of reach. A
	// worker that kept running would log a warning a pass and do nothing.
	// Default 1 minute; negative: never stop.
	StopAfter time.Duration
	// Stages, if set, drains the table's notifications stage by stage:
	// until no notification of a stage's observers (and those of the
	// stages before it) is left and no run is in flight, the observers
	// of later stages do not run; then the next stage starts. Observers
	// named in no stage run after the last. While staging, background
	// observers run as foreground ones (they keep their Delay, not their
	// yielding to a backlog). Once the last stage is drained the worker
	// runs every observer as usual. A first bulk load drained in the
	// order of the chain runs each observer about once a row: a page's
	// election after its PageRank converged, its export after its
	// election and its anchors, not again for each of them as they come.
	Stages []Stage
	// Metrics, if set, is told of the worker by NewWorker, so that it can
	// export the worker's counters (Stats, Inflight). Package
	// percolator/promstats implements it for Prometheus.
	Metrics Watcher
	// Logger receives failures. Default: the DB's logger.
	Logger *slog.Logger
}

func (o *WorkerOptions) ensureDefaults(db *DB) {
	if o.Scanners <= 0 {
		o.Scanners = 2
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.Background <= 0 {
		o.Background = max(1, o.Workers/8)
		if db.ex == nil {
			o.Background = max(1, o.Workers/2)
		}
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 256
	}
	if o.MaxFailures <= 0 {
		o.MaxFailures = 5
	}
	if o.RetryBase <= 0 {
		o.RetryBase = 100 * time.Millisecond
	}
	if o.IdleMin <= 0 {
		o.IdleMin = 100 * time.Millisecond
	}
	if o.IdleMax <= 0 {
		o.IdleMax = 5 * time.Second
	}
	if o.StopAfter == 0 {
		o.StopAfter = time.Minute
	}
	if o.Logger == nil {
		o.Logger = db.opt.Logger
	}
}

// Worker finds notifications and runs their observers: the Percolator
// worker. Scanners start at random rows of the notify locality group (of
// those the last whole pass read: startRows), scan
// forward and wrap, stepping over rows with a run in flight. Rows notified
// by this process reach the worker at once as hints (follow), so the
// scanners are for what other processes notified and what a hint missed.
// An in-process row lock keeps two runs off one row. On a table other
// processes share, the workers' passes split the rows between them
// (members.go): each dispatches only the rows it owns.
type Worker struct {
	db  *DB
	opt WorkerOptions
	obs map[string]*observerState // by observed column

	tasks    chan task
	bgTasks  chan task    // tasks of background observers only
	inflight atomic.Int64 // tasks dispatched and not finished

	// backlogAt is when the foreground last had more tasks waiting than
	// goroutines to run them (UnixNano): background observers yield to
	// it meanwhile (Observer.Delay).
	backlogAt atomic.Int64
	queued    atomic.Int64 // foreground tasks dispatched and not yet taken by a goroutine
	following atomic.Int64 // hinted rows follow has taken and not yet dispatched
	held      atomic.Bool  // a pass stepped over background work held for the foreground

	// Background notifications written by background runs (chained.go):
	// the runs' commits, the order of the observer whose such
	// notifications run without their Delay (-1: none), whether a pass
	// stepped over one while runs were in flight, and the background
	// tasks in flight.
	chained   chainedCommits
	covers    bool // some observer covers others (Observer.Covers): tasks keep their waiting notes
	early     atomic.Int64
	chainWait atomic.Bool
	bgRunning atomic.Int64

	rowsMu sync.Mutex          // guards rows and later
	rows   map[string]struct{} // rows with a task in flight: the lock service
	later  map[string]bool     // hinted rows met with a task in flight: hinted again when it ends

	hints  *hintQueue // rows this process notified: see follow
	starts startRows  // where passes start

	// part shares the scanning with the other workers of a shared table
	// (members.go); nil on an ExclusiveStore, where w scans alone.
	part *partition

	// idleWait is how an idle scanner waits: d, or until ctx is done, when
	// it returns ctx's error. It is sleep; tests replace it to drive the
	// scanners' clock.
	idleWait func(ctx context.Context, d time.Duration) error

	failMu   sync.Mutex                // guards failures
	failures map[cellKey]*failureState // notifications whose observer failed

	paceMu    sync.Mutex           // guards paced and pacePrune
	paced     map[cellKey]*paceGap // rows whose paced observer ran lately (Observer.Pace)
	pacePrune int                  // len(paced) at which expired gaps are dropped

	// stage is the last stage of WorkerOptions.Stages whose observers
	// run (-1: none yet, while the first stage's Before runs);
	// len(Stages) once all are drained (or with none).
	stage   atomic.Int32
	current atomic.Int32 // the stage the stager works on (Stage)

	sweeps atomic.Int64 // lock sweeps made (sweep)

	// failingSince is when the passes began to fail (UnixNano), 0 while
	// the last one succeeded: see WorkerOptions.StopAfter.
	failingSince atomic.Int64

	// ctx is canceled by Close, or by stop with the error that stopped
	// the worker (context.Cause).
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
}

type observerState struct {
	Observer
	order int // the observer's place in NewWorker's arguments
	stage int // the first WorkerOptions.Stages naming it; len(Stages) if none
	ack   string
	weak  bool
	s     statCounters
	// labels carry the profiler label observer=Name, set on the goroutine
	// for the observer's runs: CPU profiles tell the observers apart.
	labels context.Context
}

type task struct {
	row   string
	notes []note
	// waits are the row's notifications that wait for their observer's
	// Delay (or for the foreground): a run may cover them (Observer.Covers).
	waits []note
	bg    bool // background work (Observer.Background) only
}

// note is one notification: a column of a row and the notify versions seen.
type note struct {
	col      string
	versions []uint64
}

type failureState struct {
	attempts  int
	notBefore time.Time
	lastErr   error
	first     time.Time
}

// NewWorker returns a worker running observers over db. Observers are
// explicit: every one the process runs is passed here. It returns an error
// for two observers of one column or a column the DB does not notify.
func NewWorker(db *DB, opt WorkerOptions, observers ...Observer) (*Worker, error) {
	opt.ensureDefaults(db)
	w := &Worker{
		db:       db,
		opt:      opt,
		obs:      make(map[string]*observerState),
		rows:     make(map[string]struct{}),
		later:    make(map[string]bool),
		hints:    newHintQueue(),
		failures: make(map[cellKey]*failureState),
		paced:    make(map[cellKey]*paceGap),
		tasks:    make(chan task, opt.Workers),
		bgTasks:  make(chan task, opt.Background),
		idleWait: ctxsleep.Sleep,
	}
	w.early.Store(-1)
	names := make(map[string]bool)
	for i, o := range observers {
		switch {
		case o.Name == "" || o.Column == "" || o.Run == nil:
			return nil, fmt.Errorf("%w: observer %q needs a name, a column and a Run func", ErrInvalid, o.Name)
		case names[o.Name]:
			return nil, fmt.Errorf("%w: two observers named %q", ErrInvalid, o.Name)
		case w.obs[o.Column] != nil:
			return nil, fmt.Errorf("%w: observers %q and %q both observe %q", ErrInvalid, w.obs[o.Column].Name, o.Name, o.Column)
		case !db.observed[o.Column] && !db.weak[o.Column]:
			return nil, fmt.Errorf("%w: observer %q observes %q, which is in neither Options.Observed nor Options.Weak", ErrInvalid, o.Name, o.Column)
		}
		names[o.Name] = true
		if err := checkCovers(db, o); err != nil {
			return nil, err
		}
		w.covers = w.covers || len(o.Covers) > 0
		if o.Delay < 0 || o.MaxDelay < 0 {
			return nil, fmt.Errorf("%w: observer %q has a negative delay", ErrInvalid, o.Name)
		}
		if o.Pace < 0 || (o.Pace > 0 && o.Background) {
			return nil, fmt.Errorf("%w: observer %q: Pace is for foreground observers, and not negative", ErrInvalid, o.Name)
		}
		if o.Delay > 0 && o.MaxDelay == 0 {
			o.MaxDelay = 10 * o.Delay
		}
		if o.Background {
			db.quiet.Store(o.Column, true)
		}
		w.obs[o.Column] = &observerState{Observer: o, order: i, ack: ackColumn(o.Name), weak: db.weak[o.Column], stage: len(opt.Stages),
			labels: pprof.WithLabels(context.Background(), pprof.Labels(ProfileLabel, o.Name))}
	}
	for i := len(opt.Stages) - 1; i >= 0; i-- {
		for _, name := range opt.Stages[i].Observers {
			if !names[name] {
				return nil, fmt.Errorf("%w: stage %d names %q, which is not an observer of the worker", ErrInvalid, i, name)
			}
			for _, o := range w.obs {
				if o.Name == name {
					o.stage = i
				}
			}
		}
	}
	if db.ex == nil && len(w.obs) > 0 {
		w.part = newPartition(db, w.obs)
	}
	if len(opt.Stages) > 0 && opt.Stages[0].Before != nil {
		w.stage.Store(-1)
	}
	if opt.Metrics != nil {
		opt.Metrics.Watch(w)
	}
	return w, nil
}

// Start launches the scanners and the observer pool. Close stops them.
func (w *Worker) Start() {
	w.ctx, w.cancel = context.WithCancelCause(context.Background())
	if w.part != nil {
		w.join()
	}
	for range w.opt.Workers {
		w.wg.Add(1)
		go w.runTasks(w.tasks)
	}
	for range w.opt.Background {
		w.wg.Add(1)
		go w.runTasks(w.bgTasks)
	}
	for range w.opt.Scanners {
		w.wg.Add(1)
		go w.scan(false)
	}
	if w.staging() {
		w.wg.Add(1)
		go w.stager()
	}
	w.db.follow(w.hints)
	w.wg.Add(1)
	go w.follow()
	for _, o := range w.obs {
		if o.Background {
			w.wg.Add(1)
			go w.scan(true)
			break
		}
	}
	w.wg.Add(1)
	go w.sweep()
}

// sweep cleans up after dead writers, so locks on cells that nobody reads
// (and the notifications they carry) do not stay forever. The sweep reads
// the lock index (CleanLocks), not the table; on a shared store only the
// worker holding the "locks" duty sweeps (one in the deployment), and the
// next sweep waits sweepIdle times as long as the last took if that is
// longer than LockTTL. Readers resolve the locks they meet meanwhile
// (resolve), as ever. The holder also repairs the store's index, if it
// keeps one (IndexRepairer), every repairEvery lock TTLs: that reads the
// whole table.
func (w *Worker) sweep() {
	defer w.wg.Done()
	duty := w.db.Duty(dutyLocks)
	w.wg.Go(func() { duty.Hold(w.ctx) })
	wait := w.db.opt.LockTTL
	repaired := time.Now() // the first repair waits too: processes restart often
	for {
		t := time.NewTimer(wait)
		select {
		case <-w.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = w.db.opt.LockTTL
		if !duty.Held() {
			continue
		}
		began := time.Now()
		if _, err := w.db.CleanLocks(w.ctx); err != nil && w.ctx.Err() == nil {
			w.opt.Logger.Warn("lock sweep failed", "err", err)
		}
		w.sweeps.Add(1)
		wait = max(wait, sweepIdle*time.Since(began))
		if ir, ok := w.db.st.(IndexRepairer); ok && time.Since(repaired) >= repairEvery*w.db.opt.LockTTL {
			began := time.Now()
			if err := ir.RepairIndex(w.ctx); err != nil && w.ctx.Err() == nil {
				w.opt.Logger.Warn("index repair failed", "err", err)
			}
			repaired = time.Now()
			wait = max(wait, sweepIdle*time.Since(began))
		}
	}
}

// repairEvery is how many lock TTLs apart the holder of the "locks" duty
// repairs the store's index (IndexRepairer): 100 s at the default
// LockTTL. A notification whose index cell a crash lost waits that long.
const repairEvery = 10

// ProfileLabel is the profiler label (runtime/pprof) whose value is the
// name of the observer a sample ran: a worker sets it on the goroutine for
// each run, so what the run starts carries it too.
const ProfileLabel = "observer"

// dutyLocks names the duty of sweeping for dead writers' locks.
const dutyLocks = "locks"

// sweepIdle is how many times a lock sweep's duration the worker waits
// before the next one, at least.
const sweepIdle = 9

// Close stops the worker and waits for its goroutines. Observer runs in
// flight are cancelled and rolled back; their notifications stay for the
// next worker.
func (w *Worker) Close() {
	if w.cancel == nil {
		return
	}
	w.cancel(nil)
	w.wg.Wait()
	w.db.unfollow(w.hints)
	if w.part != nil {
		w.part.leave()
	}
}

// Run starts the worker, runs it until ctx is done or the worker stops on
// its own, and closes it: the lifecycle of the crawler and the serving
// feeder (crawl.Crawler.Run, feed.Feeder.Run), so a process runs them
// all alike. It returns nil when ctx ends it, and the reason when the
// worker stopped: its store failing for WorkerOptions.StopAfter.
func (w *Worker) Run(ctx context.Context) error {
	w.Start()
	defer w.Close()
	select {
	case <-ctx.Done():
		return nil
	case <-w.ctx.Done():
		return w.stopped()
	}
}

// stop stops the worker's goroutines for err; Close still waits for them.
// The first reason stays.
func (w *Worker) stop(err error) {
	w.cancel(err)
}

// stopped returns the error that stopped the worker, or nil if it runs or
// Close stopped it.
func (w *Worker) stopped() error {
	if w.ctx == nil || w.ctx.Err() == nil {
		return nil
	}
	if err := context.Cause(w.ctx); !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// passFailed is told of every failed pass over the notify group and
// stops the worker once they have failed for StopAfter; passOK of every
// pass that succeeded.
func (w *Worker) passFailed(err error) {
	now := time.Now().UnixNano()
	w.failingSince.CompareAndSwap(0, now)
	failing := time.Duration(now - w.failingSince.Load())
	if w.opt.StopAfter > 0 && failing >= w.opt.StopAfter {
		w.stop(fmt.Errorf("%w for %s, worker stopped: %w", ErrStoreFailing, failing.Round(time.Millisecond), err))
	}
}

func (w *Worker) passOK() { w.failingSince.Store(0) }

// runTasks is one goroutine of the observer pool, taking tasks from ch.
func (w *Worker) runTasks(ch chan task) {
	defer w.wg.Done()
	for {
		select {
		case <-w.ctx.Done():
			return
		case t := <-ch:
			if !t.bg {
				w.queued.Add(-1)
			}
			for _, n := range t.notes {
				w.handle(w.ctx, t, n)
			}
			w.unlockRow(t.row)
			if t.bg {
				w.bgRunning.Add(-1)
			}
			w.inflight.Add(-1)
		}
	}
}

// noteBacklog is told how many foreground tasks a dispatcher still has to
// hand out; with those the pool holds, more than it has goroutines is a
// backlog.
func (w *Worker) noteBacklog(left int) {
	if left+int(w.queued.Load()) > w.opt.Workers {
		w.backlogAt.Store(time.Now().UnixNano())
	}
}

// foregroundBusy reports whether background observers yield to the
// foreground at now: it had a backlog less than foregroundRest ago. A
// foreground task now and then (one a background run caused, say) does
// not hold them; a bulk load's backlog does.
func (w *Worker) foregroundBusy(now time.Time) bool {
	return now.UnixNano()-w.backlogAt.Load() < int64(foregroundRest)
}

// foregroundRest is how long the foreground must have had no backlog
// before held background work runs: a backlog that drains in bursts is
// one backlog.
const foregroundRest = time.Second
