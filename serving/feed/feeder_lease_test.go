package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
	"github.com/caffeine-go/caffeine/percolator/bigtable/emulator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/serving"
	"github.com/caffeine-go/caffeine/webtable"
)

// errDead is what a killed process's store calls return.
var errDead = errors.New("test: process killed")

// mortal is one process's connection to a shared store: kill makes every
// call fail, as if the process had died (no renewal, no release, no
// commit), and Close leaves the shared store open.
type mortal struct {
	percolator.Store
	dead atomic.Bool
}

func (m *mortal) kill() { m.dead.Store(true) }

func (m *mortal) ReadRow(ctx context.Context, row string, filters ...percolator.Filter) ([]percolator.Cell, error) {
	if m.dead.Load() {
		return nil, errDead
	}
	return m.Store.ReadRow(ctx, row, filters...)
}

func (m *mortal) ReadRows(ctx context.Context, start, end string, fn func(string, []percolator.Cell) bool, filters ...percolator.Filter) error {
	if m.dead.Load() {
		return errDead
	}
	return m.Store.ReadRows(ctx, start, end, fn, filters...)
}

func (m *mortal) CheckAndMutateRow(ctx context.Context, row string, predicate []percolator.Filter, ifMatch, ifNoMatch []percolator.Mutation) (bool, error) {
	if m.dead.Load() {
		return false, errDead
	}
	return m.Store.CheckAndMutateRow(ctx, row, predicate, ifMatch, ifNoMatch)
}

func (m *mortal) MutateRows(ctx context.Context, rows []percolator.RowMutation) error {
	if m.dead.Load() {
		return errDead
	}
	return m.Store.MutateRows(ctx, rows)
}

func (m *mortal) Increment(ctx context.Context, row, family, column string, delta int64) (int64, error) {
	if m.dead.Load() {
		return 0, errDead
	}
	return m.Store.Increment(ctx, row, family, column, delta)
}

func (m *mortal) Close() error { return nil }

// process is a search process on the shared table: its DB, its own copy of
// the index and its feeder.
type process struct {
	st     *mortal
	db     *percolator.DB
	ix     *serving.Index
	f      *Feeder
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returned, with err
	err    error
}

// stop ends the feeder's Run (which releases the lease if the process is
// alive) and waits for it.
func (p *process) stop(t *testing.T) {
	t.Helper()
	p.cancel()
	<-p.done
	if p.err != nil {
		t.Errorf("Run = %v", p.err)
	}
}

// cluster is several processes on one table that no process holds
// exclusively (as Cloud Bigtable), and a writer DB standing for the
// export observer.
type cluster struct {
	t      *testing.T
	shared percolator.Store
	opt    percolator.Options // of every process's DB
	writer *percolator.DB
	ps     []*process

	mu     sync.Mutex
	events []int // the process of every batch an index applied, in order
}

var leaseDBOptions = percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak, LockTTL: 500 * time.Millisecond}

// newCluster returns a cluster on a Badger store with its ExclusiveStore
// hidden (percolatortest.Shared).
func newCluster(t *testing.T) *cluster {
	t.Helper()
	st, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return newClusterOn(t, percolatortest.Shared(st))
}

// newClusterOn returns a cluster on st, which it takes over.
func newClusterOn(t *testing.T, st percolator.Store) *cluster {
	t.Helper()
	return newClusterWith(t, st, leaseDBOptions)
}

// newClusterWith returns a cluster on st, which it takes over, whose DBs
// have options opt.
func newClusterWith(t *testing.T, st percolator.Store, opt percolator.Options) *cluster {
	t.Helper()
	c := &cluster{t: t, shared: st, opt: opt}
	// The writer's DB is opened first, so its cleanup (which checks the
	// table and closes the store) runs after every process's.
	c.writer = percolatortest.OpenOn(t, c.shared, opt)
	return c
}

// start starts a process feeding the index named name.
func (c *cluster) start(name string, opt FeederOptions) *process {
	t := c.t
	t.Helper()
	i := len(c.ps)
	p := &process{st: &mortal{Store: c.shared}, done: make(chan struct{})}
	var err error
	if p.db, err = percolator.Open(bg, p.st, c.opt); err != nil {
		t.Fatal(err)
	}
	if _, err := webtable.Spread(bg, p.db); err != nil {
		t.Fatal(err)
	}
	p.ix, err = serving.OpenIndex(filepath.Join(t.TempDir(), "index"), serving.Options{OnApply: func([]serving.Applied) {
		c.mu.Lock()
		c.events = append(c.events, i)
		c.mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	opt.Name = name
	opt.Logger = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	p.f = NewFeeder(p.db, p.ix, opt)
	ctx, cancel := context.WithCancel(bg)
	p.cancel = cancel
	go func() {
		defer close(p.done)
		p.err = p.f.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
		p.ix.Close()
		p.db.Close()
	})
	c.ps = append(c.ps, p)
	return p
}

// add exports n new pages numbered from first, with the word w.
func (c *cluster) add(first, n int, w string) {
	for i := first; i < first+n; i++ {
		e := upsert(0, fmt.Sprintf("com.example/p%03d", i), fmt.Sprintf("http://example.com/p%03d", i), "Page", w+" common", 1)
		e.Doc.FetchedAt = time.Now().UTC()
		enqueueNow(c.t, c.writer, e)
	}
}

// feeding returns the processes whose feeders feed.
func (c *cluster) feeding() []*process {
	var ps []*process
	for _, p := range c.ps {
		if p.f.State() == FeederFeeding {
			ps = append(ps, p)
		}
	}
	return ps
}

// holder waits for one process other than not to feed and returns it.
func (c *cluster) holder(not *process) *process {
	c.t.Helper()
	var h *process
	waitFor(c.t, func() bool {
		if ps := c.feeding(); len(ps) == 1 && ps[0] != not {
			h = ps[0]
		}
		return h != nil
	})
	return h
}

// count returns the documents in ix.
func count(t *testing.T, ix *serving.Index) int {
	t.Helper()
	n, err := ix.Count()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// watchFeeders fails the test if two feeders ever feed at once, sampling
// until the test ends.
func (c *cluster) watchFeeders() {
	ctx, cancel := context.WithCancel(bg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if ps := c.feeding(); len(ps) > 1 {
				c.t.Errorf("%d feeders feed at once", len(ps))
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	c.t.Cleanup(func() { cancel(); <-done })
}

// runs returns the processes whose indexes applied batches, one per run
// of consecutive batches of one process.
func (c *cluster) runs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var r []int
	for _, i := range c.events {
		if len(r) == 0 || r[len(r)-1] != i {
			r = append(r, i)
		}
	}
	return r
}

var testLease = FeederOptions{Poll: 5 * time.Millisecond, LagScan: 20 * time.Millisecond, FullScan: 200 * time.Millisecond,
	Lease: time.Second, ClockSkew: 300 * time.Millisecond}

// TestFeedersElectOne: three processes feed one index name from one
// table; exactly one applies at a time and its copy of the index gets
// every export. Killed without releasing, the holder is replaced once its
// lease expires, and its successor's copy (which stood by, empty) catches
// up with what the holder applied and then gets the rest; closed, a
// holder releases, and a standby takes over before the lease would have
// expired.
func TestFeedersElectOne(t *testing.T) { electOne(t, newCluster(t)) }

// TestFeedersElectOneBigtable runs TestFeedersElectOne on the Bigtable
// store on the emulator (BIGTABLE_EMULATOR_HOST, or one it starts).
func TestFeedersElectOneBigtable(t *testing.T) {
	emulator.Ensure(t)
	st, err := bigtable.Open(bg, bigtable.Config{Project: "caffeine", Instance: "test", Table: "feeders"})
	if err != nil {
		t.Fatal(err)
	}
	electOne(t, newClusterOn(t, st))
}

func electOne(t *testing.T, c *cluster) {
	for range 3 {
		c.start("main", testLease)
	}
	c.watchFeeders()

	c.add(0, 20, "first")
	a := c.holder(nil)
	waitFor(t, func() bool { return count(t, a.ix) == 20 })
	for _, p := range c.ps {
		if p != a {
			if n := count(t, p.ix); n != 0 || p.f.Applied() != 0 {
				t.Fatalf("a standby's index has %d documents, its feeder applied %d", n, p.f.Applied())
			}
			if p.f.State() != FeederStandby || p.f.Holder() == "" {
				t.Fatalf("a standby is %v, sees holder %q", p.f.State(), p.f.Holder())
			}
		}
	}

	// Kill the holder: it renews nothing, releases nothing, commits nothing.
	a.st.kill()
	killed := time.Now()
	c.add(20, 20, "second")
	b := c.holder(a)
	if d := time.Since(killed); d < testLease.Lease-testLease.ClockSkew {
		t.Errorf("a standby took over %v after the kill, before the lease could expire", d)
	}
	waitFor(t, func() bool { return count(t, b.ix) == 40 })
	if got := len(find(t, b.ix, "first")); got != 10 { // the search's N
		t.Errorf("the new holder's index finds %d of what the killed holder applied", got)
	}
	a.stop(t)

	// Close the new holder: it releases, and the last process takes over
	// at once (a standby looks every Lease/4).
	closed := time.Now()
	b.stop(t)
	var last *process
	for _, p := range c.ps {
		if p != a && p != b {
			last = p
		}
	}
	waitFor(t, func() bool { return last.f.State() == FeederFeeding })
	if d := time.Since(closed); d >= testLease.Lease {
		t.Errorf("the standby took over %v after the holder closed: not released", d)
	}
	c.add(40, 10, "third")
	waitFor(t, func() bool { return count(t, last.ix) == 50 })
	waitFor(t, func() bool { return queueLen(t, c.writer) == 0 })

	if r := c.runs(); len(r) != 3 || r[0] != c.index(a) || r[1] != c.index(b) || r[2] != c.index(last) {
		t.Errorf("batches were applied by processes %v (runs), want %d, %d, %d", r, c.index(a), c.index(b), c.index(last))
	}
	// The killed process's locks, if any, are left for the check.
	if _, err := c.writer.CleanLocks(bg); err != nil {
		t.Fatal(err)
	}
}

func (c *cluster) index(p *process) int {
	for i, q := range c.ps {
		if q == p {
			return i
		}
	}
	return -1
}

// TestFeederFenced: a holder whose lease was taken over while it was
// paused (its clock or its network let it believe it still held it)
// commits no batch after the takeover: the queue entries stay for the new
// holder.
func TestFeederFenced(t *testing.T) {
	c := newCluster(t)
	a := c.start("main", testLease)
	c.holder(nil)
	c.add(0, 3, "first")
	waitFor(t, func() bool { return queueLen(t, c.writer) == 0 })
	a.stop(t)

	// a believes it holds the lease as fenced id "old"; another process
	// took over since.
	err := c.writer.Update(bg, func(tx *percolator.Tx) error {
		return tx.Set(webtable.FeederRow("main"), webtable.FedBy, []byte("new"))
	})
	if err != nil {
		t.Fatal(err)
	}
	f := NewFeeder(a.db, a.ix, testLease)
	f.lease.set(time.Now())
	f.holder = "old"
	c.add(3, 2, "second")
	if _, err := f.look(bg, fromStart, 0); !errors.Is(err, errFenced) {
		t.Fatalf("look = %v, want %v", err, errFenced)
	}
	if n := queueLen(t, c.writer); n != 2 {
		t.Fatalf("%d entries left in the queue, want 2", n)
	}
	f.lease.drop()
	if _, err := f.look(bg, fromStart, 0); !errors.Is(err, errLeaseLost) {
		t.Fatalf("look after the lease lapsed = %v, want %v", err, errLeaseLost)
	}
}

func queueLen(t *testing.T, db *percolator.DB) int {
	t.Helper()
	n := 0
	err := db.View(bg, func(tx *percolator.Tx) error {
		n = 0
		return tx.Scan(bg, webtable.ExportPrefix, webtable.ExportPrefix+"\xff", webtable.ExportDoc, func(string, string, []byte) bool {
			n++
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }

// TestFeederRestartTrustsItsIndex: a feeder that takes the feed over from
// itself (a restart: nobody fed the index since its copy was fed) does not
// read the table to catch up; after another process fed, it does.
func TestFeederRestartTrustsItsIndex(t *testing.T) {
	c := newCluster(t)
	a := c.start("main", testLease)
	c.holder(nil)
	c.add(0, 3, "first")
	waitFor(t, func() bool { return queueLen(t, c.writer) == 0 })
	a.stop(t)
	// A document lost behind the feeder's back shows whether a takeover
	// caught up from the table.
	if _, err := a.ix.Apply([]serving.Update{{Export: webtable.Export{Op: webtable.OpDelete, Version: 1, Row: "com.example/p000"}}}); err != nil {
		t.Fatal(err)
	}
	restart := func(ix *serving.Index) {
		t.Helper()
		fed := func() string { // set once the takeover is done
			v, err := ix.Internal(fedByKey)
			if err != nil {
				t.Fatal(err)
			}
			return string(v)
		}
		before := fed()
		f := NewFeeder(a.db, ix, testLease)
		ctx, cancel := context.WithCancel(bg)
		done := make(chan error, 1)
		go func() { done <- f.Run(ctx) }()
		waitFor(t, func() bool { return fed() != before })
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	restart(a.ix)
	if n := count(t, a.ix); n != 2 {
		t.Fatalf("after a restart the index has %d documents, want the 2 it kept (no catch-up)", n)
	}
	other := openIndex(t) // another process feeds meanwhile
	restart(other)
	restart(a.ix)
	if n := count(t, a.ix); n != 3 {
		t.Fatalf("after another process fed, the index has %d documents, want 3 (caught up)", n)
	}
}

// TestFeederIdleBacksOff: an idle feeder looks at the queue about once a
// MaxPoll (its waits double from Poll), not every Poll, on a table
// another process shares; an export of that other process is still
// applied within MaxPoll of its commit, and one of its own process at
// once.
func TestFeederIdleBacksOff(t *testing.T) {
	c := newCluster(t)
	opt := testLease
	opt.Poll, opt.MaxPoll, opt.LagScan = 10*time.Millisecond, 300*time.Millisecond, time.Second
	p := c.start("main", opt)
	waitFor(t, func() bool { return p.f.State() == FeederFeeding })
	time.Sleep(200 * time.Millisecond) // past the first looks
	before := p.f.looks.Load()
	time.Sleep(time.Second)
	// Polling every 10 ms would be about 100 looks; backing off: the
	// waits of 10, 20, ... 300 ms and then 300 ms.
	if n := p.f.looks.Load() - before; n > 8 {
		t.Errorf("%d looks in an idle second, want at most 8", n)
	}
	began := time.Now()
	c.add(0, 1, "other") // committed by the cluster's writer: another process
	waitFor(t, func() bool { return count(t, p.ix) == 1 })
	if took := time.Since(began); took > opt.MaxPoll+500*time.Millisecond {
		t.Errorf("another process's export applied after %v, want within MaxPoll %v", took, opt.MaxPoll)
	}
	time.Sleep(time.Second)
	began = time.Now()
	e := upsert(0, "com.example/own", "http://example.com/own", "Page", "own", 1)
	e.Doc.FetchedAt = time.Now().UTC()
	enqueueNow(t, p.db, e) // this process's: Watch wakes the feeder
	waitFor(t, func() bool { return count(t, p.ix) == 2 })
	if took := time.Since(began); took > 150*time.Millisecond {
		t.Errorf("this process's export applied after %v, want at once", took)
	}
}
