package percolator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caffeine-go/caffeine/internal/ctxsleep"
)

// Options configure a DB. The zero value of every field selects its default.
type Options struct {
	// LockTTL is how old a lock's wall time may get before any reader treats
	// its writer as stuck and cleans the lock up, even if the writer looks
	// alive. Writers refresh their primary lock during long commits.
	// Default 10s.
	LockTTL time.Duration

	// MaxAttempts bounds how often Update runs a conflicting transaction.
	// Default 30.
	MaxAttempts int

	// BackoffBase and BackoffMax bound Update's jittered exponential backoff
	// between attempts. Defaults 1ms and 500ms.
	BackoffBase, BackoffMax time.Duration

	// InlineMax is the largest value stored inside the write record, which
	// saves a lookup per read. Default 512 bytes; negative disables it.
	InlineMax int

	// OracleWindow is how many timestamps the oracle reserves per write of
	// its high-water mark. Default 1<<20.
	OracleWindow uint64

	// GCGrace is how far behind now the GC safe point stays, on top of
	// waiting for running transactions. Default 1 minute.
	GCGrace time.Duration

	// CommitParallelism bounds concurrent prewrites of one commit's
	// secondary rows. Default 8.
	CommitParallelism int

	// ClockSkew is how far the clocks of two machines sharing a store may
	// differ: another process's heartbeat or lease counts that much longer.
	// Default 2s.
	ClockSkew time.Duration

	// Logger receives rare operational events (lock cleanups). Default: a
	// logger that discards.
	Logger *slog.Logger

	// Observed lists the columns that have an observer. A transaction that
	// writes one also sets its notify cell, in the same prewrite. Every
	// process writing the table must list the same columns.
	Observed []string

	// Weak lists the columns that are only ever notified (DB.Notify), never
	// written: weak notifications never conflict (section 2.4).
	Weak []string
}

func (o *Options) ensureDefaults() {
	if o.LockTTL <= 0 {
		o.LockTTL = 10 * time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 30
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = time.Millisecond
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 500 * time.Millisecond
	}
	if o.InlineMax == 0 {
		o.InlineMax = 512
	}
	if o.OracleWindow == 0 {
		o.OracleWindow = 1 << 20
	}
	if o.GCGrace <= 0 {
		o.GCGrace = time.Minute
	}
	if o.ClockSkew <= 0 {
		o.ClockSkew = 2 * time.Second
	}
	if o.CommitParallelism <= 0 {
		o.CommitParallelism = 8
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// DB runs Percolator transactions on a Store. It is safe for concurrent
// use; each transaction must be used by one goroutine at a time.
type DB struct {
	st  Store
	ex  ExclusiveStore // non-nil when single-row transactions commit in one step
	pt  pointReader    // non-nil when point reads can pass the store their cell slice and key buffer
	orc *Oracle
	opt Options
	id  string // this instance's writer id, recorded in its locks

	mu      sync.Mutex         // held by GC while it moves the safe point, and by ViewAt to register
	active  registry           // start timestamps of running transactions
	safe    atomic.Uint64      // GC safe point: reads below it fail with ErrTooOld
	gate    sync.RWMutex       // one-phase commits hold R; scans take W once to wait for them
	closed  atomic.Bool        //
	indexed atomic.Bool        // every lock has its lock index entry (lockindex.go)
	ctx     context.Context    // cancelled by Close
	cancel  context.CancelFunc //
	wg      sync.WaitGroup     // background goroutines

	observed  map[string]bool          // columns whose writes set notify cells
	weak      map[string]bool          // columns only notified, never written
	epoch     atomic.Uint64            // bumped after every notification this DB writes
	hintMu    sync.Mutex               // guards followers, and changes of watchList
	watchList atomic.Pointer[[]*watch] // see Watch; replaced, never modified
	followers []*hintQueue             // of running workers: the rows they are told of
	quiet     sync.Map                 // columns of background observers (string → true): not hinted

	// On a shared store (ex == nil): when our heartbeat last proved us
	// alive, as the time since born (monotonic) until which other
	// processes' GC counts our transactions; see process.go.
	born       time.Time
	leaseUntil atomic.Int64

	prefetch sync.Map // first column read in a row → *learned (see prefetch.go)
}

// Open returns a DB over st, creating Percolator's column families and
// opening its timestamp oracle. Close the DB before the store.
func Open(ctx context.Context, st Store, opt Options) (*DB, error) {
	opt.ensureDefaults()
	if err := st.EnsureFamilies(ctx, schema); err != nil {
		return nil, fmt.Errorf("percolator: create families: %w", err)
	}
	ex, _ := st.(ExclusiveStore)
	orc, err := newOracle(ctx, st, opt.OracleWindow, ex == nil)
	if err != nil {
		return nil, fmt.Errorf("percolator: %w", err)
	}
	var id [8]byte
	rand.Read(id[:])
	db := &DB{st: st, ex: ex, orc: orc, opt: opt, id: hex.EncodeToString(id[:]), born: time.Now()}
	db.pt, _ = st.(pointReader)
	db.observed, db.weak = make(map[string]bool), make(map[string]bool)
	for _, c := range opt.Observed {
		db.observed[c] = true
	}
	for _, c := range opt.Weak {
		if db.observed[c] {
			return nil, fmt.Errorf("%w: column %q is both observed and weak", ErrInvalid, c)
		}
		db.weak[c] = true
	}
	db.ctx, db.cancel = context.WithCancel(context.Background())
	if db.ex != nil {
		db.wg.Go(func() { db.orc.tick(db.ctx) })
	}
	if err := db.loadSafePoint(ctx); err != nil {
		db.cancel()
		db.wg.Wait()
		return nil, err
	}
	if db.ex != nil {
		// No other process can reach an exclusive store: every lock in it
		// is left over from an earlier one, dead. Resolve them now rather
		// than make readers and writers meet them one by one.
		if n, err := db.CleanLocks(ctx); err != nil {
			db.cancel()
			db.wg.Wait()
			return nil, err
		} else if n > 0 {
			opt.Logger.Info("resolved the locks an earlier process left", "locks", n)
		}
	}
	if db.ex == nil {
		// Other processes judge our locks by this heartbeat, and GC
		// keeps what our transactions read.
		if err := db.beat(ctx); err != nil {
			db.cancel()
			db.wg.Wait()
			return nil, err
		}
		db.wg.Add(1)
		go db.heartbeat()
	}
	return db, nil
}

// Close stops background work. Running transactions are not waited for.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return nil
	}
	db.cancel()
	db.wg.Wait()
	if db.orc.shared != nil {
		db.orc.shared.wait()
	}
	if db.ex == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		db.st.MutateRows(ctx, []RowMutation{{Row: workerRow(db.id), Mutations: []Mutation{
			{Op: DeleteOlder, Family: famMeta, Column: beatColumn, Ts: MaxTs},
			{Op: DeleteOlder, Family: famMeta, Column: oldestColumn, Ts: MaxTs},
		}}})
	}
	return nil
}

// Store returns the store the DB runs on.
func (db *DB) Store() Store { return db.st }

// Oracle returns the DB's timestamp oracle.
func (db *DB) Oracle() *Oracle { return db.orc }

// ID returns the writer id this DB records in its locks.
func (db *DB) ID() string { return db.id }

// Begin starts a read-write transaction at a fresh start timestamp. The
// caller must end it with Commit or Rollback.
func (db *DB) Begin(ctx context.Context) (*Tx, error) {
	return db.begin(ctx, 0, false)
}

func (db *DB) begin(ctx context.Context, at uint64, readOnly bool) (*Tx, error) {
	tx := new(Tx)
	if err := db.start(ctx, tx, at, readOnly); err != nil {
		return nil, err
	}
	return tx, nil
}

// start starts tx, which is new or recycled, at the given timestamp (0: a
// fresh one, or for a read-only transaction the newest handed out).
func (db *DB) start(ctx context.Context, tx *Tx, at uint64, readOnly bool) error {
	tx.db, tx.readOnly, tx.done = db, readOnly, false
	if db.closed.Load() {
		return ErrClosed
	}
	if at != 0 {
		return db.startAt(ctx, tx, at)
	}
	// Register a lower bound of the start timestamp before taking it. GC
	// takes a timestamp before it reads the registry, so it either sees the
	// registration or took its timestamp first, and then its safe point is
	// at or below ours. A read-only transaction leaves the bound registered
	// and reads at the newest timestamp handed out, which it loads after
	// registering: it needs no timestamp of its own, as it writes nothing.
	reg := max(db.orc.last(), 1)
	k := db.active.add(reg)
	var ts uint64
	if readOnly && db.ex != nil {
		ts = max(db.orc.last(), reg)
	} else {
		// On a shared store a reader takes a timestamp too: the newest
		// this process took may be older than another process's commit
		// that finished before this transaction began.
		var err error
		if ts, err = db.orc.Next(ctx); err != nil {
			db.active.remove(k, reg)
			return err
		}
		if !readOnly {
			db.active.set(k, reg, ts|writer)
			reg = ts | writer
		}
	}
	if safe := db.safe.Load(); ts < safe { // a clock far behind an earlier run's
		db.active.remove(k, reg)
		return fmt.Errorf("%w: start %d < safe point %d", ErrTooOld, ts, safe)
	}
	tx.startTs, tx.reg, tx.slot, tx.registered = ts, reg, k, true
	return nil
}

// startAt starts tx at the given timestamp.
func (db *DB) startAt(ctx context.Context, tx *Tx, at uint64) error {
	// A given timestamp may be below the safe point GC is computing:
	// register under db.mu, which GC holds from before it reads the
	// registry until the new safe point is published.
	db.mu.Lock()
	if safe := db.safe.Load(); at < safe {
		db.mu.Unlock()
		return fmt.Errorf("%w: start %d < safe point %d", ErrTooOld, at, safe)
	}
	tx.startTs = at
	tx.register(at)
	db.mu.Unlock()
	if db.ex == nil {
		// Other processes' GC learns of it from our heartbeat.
		if err := db.admit(ctx, at); err != nil {
			db.forget(tx)
			return err
		}
	}
	return nil
}

func (tx *Tx) register(ts uint64) {
	tx.reg, tx.slot, tx.registered = ts, tx.db.active.add(ts), true
}

func (db *DB) forget(tx *Tx) {
	if tx.reads != nil {
		db.learn(tx.reads)
		tx.reads, tx.cache = nil, nil
	}
	if tx.registered {
		tx.registered = false
		db.active.remove(tx.slot, tx.reg)
	}
}

// Running returns the number of transactions begun on db that have not
// ended: neither committed nor rolled back, or, for DB.View and DB.ViewAt,
// whose function has not returned. A transaction left running holds the GC
// safe point back; tests check that none is left.
func (db *DB) Running() int { return db.active.count() }

// oldestActive returns the smallest start timestamp of a running
// transaction, or math.MaxUint64.
func (db *DB) oldestActive() uint64 { return db.active.oldest() }

// Update runs fn in a read-write transaction and commits it. A conflict
// (ErrConflict, ErrLocked) reruns fn in a new transaction after a jittered
// exponential backoff, up to Options.MaxAttempts times; then Update returns
// an error wrapping ErrGaveUp and the last conflict. An error or panic from
// fn rolls the transaction back and is returned (re-panicked) as is. fn may
// run several times and must not have effects outside the transaction.
func (db *DB) Update(ctx context.Context, fn func(tx *Tx) error) error {
	var last error
	for attempt := 0; attempt < db.opt.MaxAttempts; attempt++ {
		if attempt > 0 {
			if err := db.backoff(ctx, attempt); err != nil {
				return err
			}
		}
		err := db.try(ctx, fn)
		if !retryable(err) {
			return err
		}
		last = err
	}
	return fmt.Errorf("%w after %d attempts: %w", ErrGaveUp, db.opt.MaxAttempts, last)
}

func (db *DB) try(ctx context.Context, fn func(tx *Tx) error) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func retryable(err error) bool {
	return errors.Is(err, ErrConflict) || errors.Is(err, ErrLocked)
}

func (db *DB) backoff(ctx context.Context, attempt int) error {
	d := db.opt.BackoffBase << min(attempt-1, 20)
	if d > db.opt.BackoffMax || d <= 0 {
		d = db.opt.BackoffMax
	}
	return ctxsleep.Sleep(ctx, d/2+mrand.N(d/2+1)) // jitter: [d/2, d]
}

// View runs fn in a read-only transaction that sees every transaction
// committed before it began. It reads at the newest timestamp the oracle
// has handed out, without taking one of its own.
func (db *DB) View(ctx context.Context, fn func(tx *Tx) error) error {
	return db.ViewAt(ctx, 0, fn)
}

// ViewAt runs fn in a read-only transaction that sees the table as of
// timestamp ts (0 means now). It returns ErrTooOld when ts is below the GC
// safe point: the versions it would need may have been collected.
//
// The transaction is valid until fn returns, and must not be used after:
// Views reuse the transactions of earlier ones.
func (db *DB) ViewAt(ctx context.Context, ts uint64, fn func(tx *Tx) error) error {
	tx := viewTxs.Get().(*Tx)
	if err := db.start(ctx, tx, ts, true); err != nil {
		tx.recycle()
		return err
	}
	defer tx.recycle()
	return fn(tx)
}

// viewTxs holds the transactions of Views that returned, for the next ones:
// a View allocates no transaction, nor its point reads' scratch space.
var viewTxs = sync.Pool{New: func() any { return &Tx{pr: new(pointRead)} }}

// recycle ends tx, a View's, and returns it to viewTxs with nothing of its
// use left but its point reads' scratch space (released after each read).
// Until a View takes it again, a method called on it (by a caller who
// kept it) returns ErrTxDone.
func (tx *Tx) recycle() {
	tx.Rollback()
	*tx = Tx{done: true, pr: tx.pr}
	viewTxs.Put(tx)
}

// ClockSkew returns Options.ClockSkew: how far the clocks of the
// processes sharing the store may differ.
func (db *DB) ClockSkew() time.Duration { return db.opt.ClockSkew }
