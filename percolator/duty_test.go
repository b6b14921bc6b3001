package percolator_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// cutStore is a store that a test can cut off, as a process whose machine
// stopped: every call fails from then on.
type cutStore struct {
	percolator.Store
	cut atomic.Bool
}

var errCut = errors.New("cut off")

func (s *cutStore) ReadRow(ctx context.Context, row string, filters ...percolator.Filter) ([]percolator.Cell, error) {
	if s.cut.Load() {
		return nil, errCut
	}
	return s.Store.ReadRow(ctx, row, filters...)
}

func (s *cutStore) ReadRows(ctx context.Context, start, end string, fn func(string, []percolator.Cell) bool, filters ...percolator.Filter) error {
	if s.cut.Load() {
		return errCut
	}
	return s.Store.ReadRows(ctx, start, end, fn, filters...)
}

func (s *cutStore) MutateRows(ctx context.Context, rows []percolator.RowMutation) error {
	if s.cut.Load() {
		return errCut
	}
	return s.Store.MutateRows(ctx, rows)
}

func (s *cutStore) CheckAndMutateRow(ctx context.Context, row string, cond []percolator.Filter, ifMatch, ifNot []percolator.Mutation) (bool, error) {
	if s.cut.Load() {
		return false, errCut
	}
	return s.Store.CheckAndMutateRow(ctx, row, cond, ifMatch, ifNot)
}

func (s *cutStore) Close() error { return nil }

// sharedDBs opens n DBs on one shared Badger store, each through its own
// cutStore, as n processes on one Bigtable table.
func sharedDBs(t *testing.T, n int, opt percolator.Options) ([]*percolator.DB, []*cutStore) {
	t.Helper()
	base := percolatortest.Shared(openStore(t, t.TempDir()))
	t.Cleanup(func() { base.Close() })
	var dbs []*percolator.DB
	var sts []*cutStore
	for range n {
		st := &cutStore{Store: base}
		db, err := percolator.Open(bg, st, opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs, sts = append(dbs, db), append(sts, st)
	}
	return dbs, sts
}

// TestDutyExclusive: of several duties of one name (two in each of three
// processes), at most one is held at any time, one is held soon, and when
// the holder stops, cleanly or cut off from the table, another takes over
// within the lease's TTL and the clock skew.
func TestDutyExclusive(t *testing.T) {
	opt := percolator.Options{LockTTL: 200 * time.Millisecond, ClockSkew: 50 * time.Millisecond}
	dbs, sts := sharedDBs(t, 3, opt)
	type holder struct {
		d      *percolator.Duty
		st     *cutStore
		cancel context.CancelFunc
		done   chan struct{}
	}
	var hs []*holder
	for i, db := range dbs {
		for range 2 {
			ctx, cancel := context.WithCancel(bg)
			h := &holder{d: db.Duty("test"), st: sts[i], cancel: cancel, done: make(chan struct{})}
			go func() { defer close(h.done); h.d.Hold(ctx) }()
			t.Cleanup(func() { cancel(); <-h.done })
			hs = append(hs, h)
		}
	}
	// held returns the index of the one holder, -1 if none; it fails t
	// if two hold the lease.
	held := func() int {
		who := -1
		for i, h := range hs {
			if h.d.Held() {
				if who >= 0 {
					t.Fatalf("duties %d and %d both hold the lease", who, i)
				}
				who = i
			}
		}
		return who
	}
	// watch samples the holders for d and returns the last one, failing
	// t if none held the lease for longer than the TTL and skew after
	// the first 'limit'.
	watch := func(d, limit time.Duration) int {
		t.Helper()
		start, lastHeld := time.Now(), time.Now()
		who := -1
		for time.Since(start) < d {
			if who = held(); who >= 0 {
				lastHeld = time.Now()
			} else if gap := time.Since(lastHeld); gap > limit {
				t.Fatalf("no duty held the lease for %v", gap)
			}
			time.Sleep(time.Millisecond)
		}
		return who
	}
	failover := opt.LockTTL + opt.ClockSkew + opt.LockTTL/2 + 200*time.Millisecond
	who := watch(time.Second, failover)
	if who < 0 {
		t.Fatal("no duty holds the lease")
	}

	// A clean stop releases the lease: another takes it over at its
	// next step.
	hs[who].cancel()
	<-hs[who].done
	if hs[who].d.Held() {
		t.Fatal("a stopped duty still holds the lease")
	}
	next := watch(time.Second, failover)
	if next < 0 || next == who {
		t.Fatalf("after holder %d stopped, holder %d", who, next)
	}

	// A holder cut off from the table stops holding the lease within
	// its TTL, and another takes it over once it lapsed.
	cutAt := time.Now()
	hs[next].st.cut.Store(true)
	deadline := time.Now().Add(5 * failover)
	for {
		now := held()
		if now >= 0 && now != next && hs[now].st != hs[next].st {
			if d := time.Since(cutAt); d > failover {
				t.Errorf("fail-over took %v, want under %v", d, failover)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no fail-over %v after the holder was cut off", 5*failover)
		}
		time.Sleep(time.Millisecond)
	}
	watch(500*time.Millisecond, failover)
}

// TestSweepOneHolder: of the workers of three processes sharing a table,
// one sweeps for dead writers' locks; a lock that no reader meets is
// resolved by its sweeps all the same, and when its process stops,
// another worker's sweeps take over.
func TestSweepOneHolder(t *testing.T) {
	opt := percolator.Options{LockTTL: 200 * time.Millisecond, ClockSkew: 20 * time.Millisecond}
	dbs, _ := sharedDBs(t, 4, opt)
	dead := dbs[3]
	var ws []*percolator.Worker
	var mu sync.Mutex
	closed := map[int]bool{}
	for i, db := range dbs[:3] {
		w, err := percolator.NewWorker(db, percolator.WorkerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w.Start()
		t.Cleanup(func() {
			mu.Lock()
			defer mu.Unlock()
			if !closed[i] {
				w.Close()
			}
		})
		ws = append(ws, w)
	}
	sweeping := func() (who []int) {
		for i, w := range ws {
			if !closed[i] && percolator.Sweeps(w) > 0 {
				who = append(who, i)
			}
		}
		return who
	}
	time.Sleep(15 * opt.LockTTL)
	who := sweeping()
	if len(who) != 1 {
		t.Fatalf("workers %v swept, want exactly one", who)
	}

	// A dead writer's locks on rows nobody reads: the sweeps resolve
	// them, the primary's commit rolled forward.
	crashCommit(t, dead, percolator.CrashAfterPrimaryCommit, "c", "committed", "a", "b")
	crashCommit(t, dead, percolator.CrashAfterPrewrites, "d", "never", "a", "b")
	if err := dead.Close(); err != nil { // its heartbeat goes with it
		t.Fatal(err)
	}
	waitNoLocks := func() {
		t.Helper()
		deadline := time.Now().Add(50 * opt.LockTTL)
		for {
			n, err := percolator.CountLocks(dbs[0])
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d locks left %v after their writer died", n, 100*opt.LockTTL)
			}
			time.Sleep(opt.LockTTL / 5)
		}
	}
	waitNoLocks()

	// The sweeper's process stops: another worker sweeps.
	mu.Lock()
	ws[who[0]].Close()
	closed[who[0]] = true
	mu.Unlock()
	time.Sleep(15 * opt.LockTTL)
	next := sweeping()
	if len(next) != 1 {
		t.Fatalf("after worker %d stopped, workers %v swept, want exactly one", who[0], next)
	}
	for k, v := range map[[2]string]string{{"a", "c"}: "committed", {"b", "c"}: "committed", {"a", "d"}: "", {"b", "d"}: ""} {
		if got, _ := get(t, dbs[0], k[0], k[1]); got != v {
			t.Errorf("%s:%s = %q, want %q", k[0], k[1], got, v)
		}
	}
}
