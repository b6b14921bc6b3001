package percolator

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caffeine-go/caffeine/internal/ctxsleep"
)

// Observer is code run in its own transaction after Column changes in some
// row (section 2.4). At most one run commits per change of the column, and
// many changes before a run collapse into one run.
type Observer struct {
	// Name identifies the observer; it names the ack column that records its
	// last run on each row. Keep it stable across releases.
	Name string
	// Column is the observed column. It must be in Options.Observed (or
	// Options.Weak for a weakly notified column).
	Column string
	// Run does the work in tx, which the worker commits. An error or panic
	// rolls it back and the worker retries it with backoff; after
	// WorkerOptions.MaxFailures it is parked (DB.Failed).
	Run func(ctx context.Context, tx *Tx, row, col string) error
	// Background marks work that may wait: a row whose notifications are
	// all for background observers is found by a scanner of its own and
	// runs on the worker's background goroutines (WorkerOptions.Background);
	// the other scanners step over it, and its commits do not wake them.
	// So a backlog of background work (documents whose only change is
	// their PageRank, say) never holds up the notifications behind it.
	// The column should be weak.
	Background bool
	// Delay lets a row's notifications for this observer gather before it
	// runs: the row runs once its newest notification is Delay old, or its
	// oldest is MaxDelay old, whichever comes first. A page whose inbound
	// links or PageRank move many times during a bulk crawl then runs once
	// or twice, not once a move, and what it derives is at most MaxDelay
	// (plus the backlog) behind the table. Pending delayed notifications
	// still count as pending (WaitIdle and -until-idle wait for them). Zero
	// runs a notification as soon as a scanner finds it.
	//
	// A background observer with a Delay also yields to the foreground:
	// while the worker's foreground has a backlog (more tasks waiting
	// than goroutines to run them, now or less than a second ago), its
	// rows wait until their oldest notification is MaxDelay old. In a
	// bulk load the foreground's backlog lasts minutes and PageRank and
	// anchor waves reach a page many times while it drains; held, the
	// page runs once when the backlog is done (or every MaxDelay while it
	// lasts), not once a wave.
	Delay time.Duration
	// MaxDelay bounds Delay's wait for a row notified again and again, and
	// a background observer's wait for the foreground; default 10 × Delay.
	MaxDelay time.Duration
	// Covers lists weak columns whose observers do nothing a run of this
	// one on the same row does not (the same recomputation from the
	// table, say): once a run of this observer has committed, or wrote
	// nothing, the notifications of those columns that its task saw on
	// the row, older than its start timestamp, are deleted: the run saw
	// what their writers wrote. A document's export answers the
	// notifications waiting for its anchors that way.
	Covers []string
	// Pace spaces a row's runs of this foreground observer: after a run
	// that took d, the row's next run of it waits until Pace × d (at
	// most maxPaceWait) after that run ended, and what was notified
	// meanwhile gathers into that run. A row that costs much to run and
	// is notified again and again (a rank block while its section is
	// crawled: a notification a page) then takes at most 1/(Pace + 1)
	// of a goroutine, not one run a notification back to back. A row
	// that has not run lately runs at once. Zero does not space runs.
	Pace int
}

// maxPaceWait bounds Observer.Pace's wait, against a run slowed by a
// loaded machine spacing its row for long.
const maxPaceWait = time.Second

// readyAt returns when a notification with these notify versions may run:
// Delay after the newest, or MaxDelay after the oldest if that is sooner
// or if held (a background observer yielding to the foreground).
func (o *Observer) readyAt(versions []uint64, held bool) time.Time {
	if o.Delay <= 0 || len(versions) == 0 {
		return time.Time{}
	}
	newest, oldest := slices.Max(versions), slices.Min(versions)
	quiet := TimeFromTs(newest).Add(o.Delay)
	bound := TimeFromTs(oldest).Add(o.MaxDelay)
	if held || bound.Before(quiet) {
		return bound
	}
	return quiet
}

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

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type observerState struct {
	Observer
	order int // the observer's place in NewWorker's arguments
	stage int // the first WorkerOptions.Stages naming it; len(Stages) if none
	ack   string
	weak  bool
	s     statCounters
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
		w.obs[o.Column] = &observerState{Observer: o, order: i, ack: ackColumn(o.Name), weak: db.weak[o.Column], stage: len(opt.Stages)}
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
	w.ctx, w.cancel = context.WithCancel(context.Background())
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

// sweep cleans up after dead writers every LockTTL, so locks on cells that
// nobody reads (and the notifications they carry) do not stay forever.
func (w *Worker) sweep() {
	defer w.wg.Done()
	t := time.NewTicker(w.db.opt.LockTTL)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
			if _, err := w.db.CleanLocks(w.ctx); err != nil && w.ctx.Err() == nil {
				w.opt.Logger.Warn("lock sweep failed", "err", err)
			}
		}
	}
}

// Close stops the worker and waits for its goroutines. Observer runs in
// flight are cancelled and rolled back; their notifications stay for the
// next worker.
func (w *Worker) Close() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	w.wg.Wait()
	w.db.unfollow(w.hints)
	if w.part != nil {
		w.part.leave()
	}
}

// Run starts the worker, runs it until ctx is done, and closes it: the
// lifecycle of the crawler and the serving feeder (crawl.Crawler.Run,
// serving.Feeder.Run), so a process runs them all alike. It returns nil
// when ctx ends it.
func (w *Worker) Run(ctx context.Context) error {
	w.Start()
	defer w.Close()
	<-ctx.Done()
	return nil
}

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

// outcome of one observer attempt.
type outcome int

const (
	ran      outcome = iota // the observer ran and its transaction committed
	nothing                 // the change was already acknowledged
	conflict                // another transaction won; try again later
	empty                   // a weak observer ran and wrote nothing: nothing to commit
)

// handle runs the observer of one notification and deals with the outcome.
func (w *Worker) handle(ctx context.Context, t task, n note) {
	row := t.row
	o := w.obs[n.col]
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
