package percolator_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// openProcesses opens n DBs with opt on one shared store (percolatortest.
// Shared over one Badger store), standing for n processes on one Bigtable
// table. wrap, if not nil, wraps the store of DB i. At cleanup it checks
// the table and closes them.
func openProcesses(t *testing.T, n int, opt percolator.Options, wrap func(i int, st percolator.Store) percolator.Store) []*percolator.DB {
	t.Helper()
	st := percolatortest.Shared(openStore(t, t.TempDir()))
	dbs := make([]*percolator.DB, n)
	for i := range dbs {
		s := st
		if wrap != nil {
			s = wrap(i, st)
		}
		db, err := percolator.Open(bg, s, opt)
		if err != nil {
			t.Fatal(err)
		}
		dbs[i] = db
	}
	t.Cleanup(func() {
		for _, db := range dbs {
			if err := percolatortest.Check(bg, db); err != nil {
				t.Error(err)
			}
		}
		for _, db := range dbs {
			db.Close()
		}
		st.Close()
	})
	return dbs
}

// Two oracles on one table once handed out duplicate timestamps, and half
// of them went backwards: each reserved ranges of its own. On a shared
// store they take every timestamp from the table, so timestamps taken one
// after another, by whichever process, keep increasing.
func TestOracleAcrossProcesses(t *testing.T) {
	dbs := openProcesses(t, 2, percolator.Options{OracleWindow: 1 << 12}, nil)
	var last uint64
	for i := range 20000 {
		ts, err := dbs[i%2].Oracle().Next(bg)
		if err != nil {
			t.Fatal(err)
		}
		if ts <= last {
			t.Fatalf("call %d (process %d): timestamp %d after %d", i, i%2, ts, last)
		}
		last = ts
	}
}

// A transaction that begins after another committed, in another process,
// sees its writes: the paper's order of time (section 2.3), which ranges
// reserved per process break.
func TestRealTimeOrderAcrossProcesses(t *testing.T) {
	dbs := openProcesses(t, 3, percolator.Options{}, nil)
	for i := range 300 {
		w, r := dbs[i%3], dbs[(i+1)%3]
		want := fmt.Sprint(i)
		set(t, w, "row", "c", want)
		if got, _ := get(t, r, "row", "c"); got != want {
			t.Fatalf("round %d: read %q after %q committed", i, got, want)
		}
	}
}

// GC in one process keeps what a transaction of another still reads: the
// other publishes the oldest timestamp it reads at in its heartbeat row.
func TestGCKeepsOtherProcessesReads(t *testing.T) {
	opt := percolator.Options{GCGrace: time.Nanosecond, InlineMax: 4, LockTTL: time.Second}
	dbs := openProcesses(t, 2, opt, nil)
	reader, gc := dbs[0], dbs[1]
	for i := range 5 {
		set(t, gc, "row", "c", fmt.Sprintf("older-value-%d", i))
	}
	set(t, gc, "row", "c", "old-value")
	time.Sleep(5 * time.Millisecond)
	tx, err := reader.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// The reader's heartbeat must have published tx: wait for one.
	time.Sleep(opt.LockTTL/4 + 200*time.Millisecond)
	for i := range 20 {
		set(t, gc, "row", "c", fmt.Sprintf("new-value-%d", i))
	}
	time.Sleep(5 * time.Millisecond)
	collected := 0
	for range 3 {
		st, err := gc.GC(bg)
		if err != nil {
			t.Fatal(err)
		}
		if st.SafePoint > tx.StartTs() {
			t.Fatalf("safe point %d passed the other process's transaction at %d", st.SafePoint, tx.StartTs())
		}
		collected += st.Cells
	}
	if collected == 0 {
		t.Fatal("GC collected nothing: the test proves nothing")
	}
	v, err := tx.Get(bg, "row", "c")
	if err != nil || string(v) != "old-value" {
		t.Fatalf("read %q, %v; want \"old-value\"", v, err)
	}
}

// beatBlocker drops the heartbeat writes of one process, as a network
// partition or a long pause would.
type beatBlocker struct {
	percolator.Store
	block atomic.Bool
}

func (b *beatBlocker) MutateRows(ctx context.Context, rows []percolator.RowMutation) error {
	if b.block.Load() {
		for _, r := range rows {
			if strings.HasPrefix(r.Row, "\x00meta/worker/") {
				return errors.New("injected: heartbeat lost")
			}
		}
	}
	return b.Store.MutateRows(ctx, rows)
}

// A process whose heartbeat lapsed may be counted dead by another
// process's GC, which then collects what its transactions read: those
// reads fail with ErrTooOld, never return a collected value's absence.
func TestLapsedProcessReadsFailTooOld(t *testing.T) {
	const ttl, skew = 300 * time.Millisecond, 50 * time.Millisecond
	blockers := make([]*beatBlocker, 2)
	opt := percolator.Options{GCGrace: time.Nanosecond, InlineMax: 4, LockTTL: ttl, ClockSkew: skew}
	dbs := openProcesses(t, 2, opt, func(i int, st percolator.Store) percolator.Store {
		blockers[i] = &beatBlocker{Store: st}
		return blockers[i]
	})
	reader, gc := dbs[0], dbs[1]
	set(t, gc, "row", "c", "old-value")
	time.Sleep(5 * time.Millisecond)
	tx, err := reader.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	blockers[0].block.Store(true)
	for i := range 5 {
		set(t, gc, "row", "c", fmt.Sprintf("new-value-%d", i))
	}
	time.Sleep(ttl + skew + 100*time.Millisecond) // the reader's beat is stale now
	collected := 0
	for range 3 {
		st, err := gc.GC(bg)
		if err != nil {
			t.Fatal(err)
		}
		collected += st.Cells
	}
	if collected == 0 {
		t.Fatal("GC collected nothing: the test proves nothing")
	}
	v, err := tx.Get(bg, "row", "c")
	if !errors.Is(err, percolator.ErrTooOld) {
		t.Fatalf("read %q, %v after GC collected it; want ErrTooOld", v, err)
	}
	blockers[0].block.Store(false)
}

// ViewAt at an old timestamp in one process races GC in another: either
// it is refused (ErrTooOld) or it reads exactly what was there, while GC
// runs over and over beside it.
func TestViewAtAcrossProcesses(t *testing.T) {
	// Heartbeats every 100ms: GC passes the reader's idle heartbeats soon.
	opt := percolator.Options{GCGrace: time.Nanosecond, InlineMax: 4, LockTTL: 400 * time.Millisecond}
	dbs := openProcesses(t, 2, opt, nil)
	reader, gc := dbs[0], dbs[1]
	type snap struct {
		ts   uint64
		want string
	}
	var snaps []snap
	for i := range 40 {
		v := fmt.Sprintf("value-%03d", i)
		set(t, gc, "row", "c", v)
		ts, err := gc.Oracle().Next(bg)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, snap{ts, v})
		time.Sleep(time.Millisecond)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	var cells atomic.Int64
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			set(t, gc, "row", "c", fmt.Sprintf("later-%d", i))
			st, err := gc.GC(bg)
			if err != nil {
				t.Error(err)
			}
			cells.Add(int64(st.Cells))
		}
	}()
	// Newest first: each ViewAt publishes its timestamp, GC catches up with
	// it, and an older one after it must be refused.
	read, refused := 0, 0
	for _, s := range slices.Backward(snaps) {
		err := reader.ViewAt(bg, s.ts, func(tx *percolator.Tx) error {
			time.Sleep(2 * time.Millisecond) // let GC passes run meanwhile
			v, err := tx.Get(bg, "row", "c")
			if err != nil {
				return err
			}
			if string(v) != s.want {
				return fmt.Errorf("ViewAt(%d) read %q, want %q", s.ts, v, s.want)
			}
			return nil
		})
		switch {
		case err == nil:
			read++
		case errors.Is(err, percolator.ErrTooOld):
			refused++
		default:
			t.Fatal(err)
		}
	}
	// Refused reads return at once: on a loaded machine they may all be
	// over before GC's first pass in the loop ends. Let it end.
	for deadline := time.Now().Add(10 * time.Second); cells.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	<-done
	t.Logf("%d snapshots read, %d refused; GC deleted %d cells meanwhile", read, refused, cells.Load())
	if refused == 0 || cells.Load() == 0 {
		t.Errorf("GC never caught up with the snapshots (%d refused, %d cells): the test proves nothing", refused, cells.Load())
	}
}

// Only one process at a time moves the safe point; the others' passes
// report Busy and do nothing.
func TestGCLease(t *testing.T) {
	dbs := openProcesses(t, 3, percolator.Options{GCGrace: time.Nanosecond}, nil)
	set(t, dbs[0], "row", "c", "v")
	release, err := percolator.TakeGCLease(dbs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range dbs {
		if st, err := db.GC(bg); err != nil || !st.Busy {
			t.Fatalf("GC while another pass holds the lease: %+v, %v; want Busy", st, err)
		}
	}
	release()
	if st, err := dbs[1].GC(bg); err != nil || st.Busy {
		t.Fatalf("GC after the lease was released: %+v, %v; want a pass", st, err)
	}
	var ran, busy atomic.Int64
	start := make(chan struct{})
	done := make(chan struct{})
	for _, db := range dbs {
		go func() {
			defer func() { done <- struct{}{} }()
			<-start
			for range 20 {
				st, err := db.GC(bg)
				if err != nil {
					t.Error(err)
					return
				}
				if st.Busy {
					busy.Add(1)
				} else {
					ran.Add(1)
				}
			}
		}()
	}
	close(start)
	for range dbs {
		<-done
	}
	t.Logf("%d passes ran, %d found the lease taken", ran.Load(), busy.Load())
	if ran.Load() == 0 {
		t.Error("no GC pass ran")
	}
}

// Processes that start at once on a new table all find the oracle's row
// far behind the clock. Each once moved it up by the whole gap, so eight
// processes put it eight clocks ahead (past 2^52, which Bigtable refuses);
// one at a time moves it now, and timestamps stay near the clock.
func TestOracleCatchUpOnce(t *testing.T) {
	dbs := openProcesses(t, 8, percolator.Options{}, nil)
	start := make(chan struct{})
	got := make(chan uint64, len(dbs))
	for _, db := range dbs {
		go func() {
			<-start
			ts, err := db.Oracle().Next(bg)
			if err != nil {
				t.Error(err)
			}
			got <- ts
		}()
	}
	close(start)
	for range dbs {
		ts := <-got
		if ahead := time.Until(percolator.TimeFromTs(ts)); ahead > time.Second {
			t.Errorf("timestamp %d is %v ahead of the clock", ts, ahead)
		}
	}
}
