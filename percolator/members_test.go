package percolator_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// Partitioned scanning (members.go): several DBs over one shared store
// stand for processes on one Bigtable table. The first DB is a loader that
// runs no worker, so every notification reaches the workers through their
// scanners, never as a hint.

// runLog records which worker ran the observer on which row.
type runLog struct {
	mu    sync.Mutex
	byRow map[string]map[int]int // row → worker → runs
	runs  map[int]int            // worker → runs
}

func newRunLog() *runLog {
	return &runLog{byRow: make(map[string]map[int]int), runs: make(map[int]int)}
}

// observer is worker i's observer: it logs its run and copies in to out,
// slowly enough that two workers running one row would overlap.
func (l *runLog) observer(i int) percolator.Observer {
	return percolator.Observer{Name: "mark", Column: "in", Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
		l.mu.Lock()
		if l.byRow[row] == nil {
			l.byRow[row] = make(map[int]int)
		}
		l.byRow[row][i]++
		l.runs[i]++
		l.mu.Unlock()
		v, err := tx.Get(ctx, row, col)
		if err != nil {
			return err
		}
		time.Sleep(time.Millisecond)
		return tx.Set(row, "out", v)
	}}
}

func (l *runLog) count(i int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.runs[i]
}

// shared opens n DBs over one shared store, closed at cleanup after the
// workers (which tests register later, so their cleanups run first).
func shared(t testing.TB, st percolator.Store, n int, opt percolator.Options) []*percolator.DB {
	t.Helper()
	t.Cleanup(func() { st.Close() })
	var dbs []*percolator.DB
	for range n {
		db, err := percolator.Open(bg, st, opt)
		if err != nil {
			t.Fatal(err)
		}
		dbs = append(dbs, db)
	}
	t.Cleanup(func() {
		if err := percolatortest.Check(bg, dbs[0]); err != nil {
			t.Error(err)
		}
		for _, db := range dbs {
			db.Close()
		}
	})
	return dbs
}

func startMarker(t testing.TB, db *percolator.DB, l *runLog, i int) *percolator.Worker {
	return startWorker(t, db, percolator.WorkerOptions{Workers: 4, IdleMin: time.Millisecond, IdleMax: 20 * time.Millisecond}, l.observer(i))
}

// waitMembers waits until every worker sees n members.
func waitMembers(t testing.TB, n int, ws ...*percolator.Worker) time.Duration {
	t.Helper()
	start := time.Now()
	for _, w := range ws {
		for w.Members() != n {
			if time.Since(start) > 30*time.Second {
				t.Fatalf("a worker sees %d members after %v, want %d", w.Members(), time.Since(start), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return time.Since(start)
}

// notifyRows writes in on rows p000… through the loader, 20 rows a
// transaction.
func notifyRows(t testing.TB, loader *percolator.DB, prefix string, n int) {
	t.Helper()
	for i := 0; i < n; i += 20 {
		err := loader.Update(bg, func(tx *percolator.Tx) error {
			for j := i; j < min(i+20, n); j++ {
				if err := tx.Set(fmt.Sprintf("%s%03d", prefix, j), "in", []byte(fmt.Sprint("v", j))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkRuns checks that every row was processed (its notification gone,
// the observer run), and, if once, that one worker ran it once. It returns the rows each worker ran.
func checkRuns(t *testing.T, db *percolator.DB, l *runLog, prefix string, n int, once bool) map[int]int {
	t.Helper()
	// The store, not a transaction, says what is left: which DB's
	// snapshot sees which commit is the oracle's business, not this test's.
	if p, err := db.Pending(bg); err != nil || p["in"] != 0 {
		t.Fatalf("%d notifications left (%v)", p["in"], err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range n {
		if row := fmt.Sprintf("%s%03d", prefix, i); len(l.byRow[row]) == 0 {
			t.Fatalf("%s: the observer never ran", row)
		}
	}
	share := make(map[int]int)
	twice := 0
	for row, by := range l.byRow {
		if !strings.HasPrefix(row, prefix) {
			continue
		}
		for i, runs := range by {
			share[i]++
			if once && (len(by) > 1 || runs > 1) {
				twice++
				if twice <= 5 {
					t.Errorf("%s run by workers %v (worker → runs), want one run by one worker", row, by)
				}
				break
			}
		}
	}
	if twice > 0 {
		t.Errorf("%d of %d rows run more than once", twice, n)
	}
	return share
}

// With stable membership, three workers on three DBs over one shared
// store split the notified rows: every row runs once, on one worker, and
// each worker gets a fair share.
func TestPartitionSplitsRows(t *testing.T) {
	st := percolatortest.Shared(openStore(t, t.TempDir()))
	dbs := shared(t, st, 4, percolator.Options{Observed: []string{"in"}})
	l := newRunLog()
	var ws []*percolator.Worker
	for i := 1; i <= 3; i++ {
		ws = append(ws, startMarker(t, dbs[i], l, i))
	}
	waitMembers(t, 3, ws...)
	const n = 600
	notifyRows(t, dbs[0], "p", n)
	waitIdle(t, ws[0])
	share := checkRuns(t, dbs[0], l, "p", n, true)
	for i := 1; i <= 3; i++ {
		if share[i] < n/6 {
			t.Errorf("worker %d ran %d of %d rows, want about a third", i, share[i], n)
		}
	}
	t.Logf("rows per worker: %v", share)
}

// A worker that dies without leaving keeps its rows until its beat is
// stale; then the others run them.
func TestPartitionDeadMemberRowsTakenOver(t *testing.T) {
	st := percolatortest.Shared(openStore(t, t.TempDir()))
	const ttl, skew = 500 * time.Millisecond, time.Second
	dbs := shared(t, st, 4, percolator.Options{Observed: []string{"in"}, LockTTL: ttl, ClockSkew: skew})
	l := newRunLog()
	var ws []*percolator.Worker
	for i := 1; i <= 3; i++ {
		ws = append(ws, startMarker(t, dbs[i], l, i))
	}
	waitMembers(t, 3, ws...)
	percolator.KillWorker(ws[2])
	killed := time.Now()
	const n = 300
	notifyRows(t, dbs[0], "d", n)
	waitIdle(t, ws[0])
	took := time.Since(killed)
	share := checkRuns(t, dbs[0], l, "d", n, false)
	if share[3] != 0 {
		t.Errorf("the dead worker ran %d rows", share[3])
	}
	if share[1] == 0 || share[2] == 0 {
		t.Errorf("rows per worker %v: the live ones should share the dead one's", share)
	}
	// Its beat was at most ttl/4 old when it died: its rows waited for
	// the rest of the ttl and the clock skew margin.
	if took < skew {
		t.Errorf("all rows ran %v after the death: the dead worker's rows did not wait for its beat to go stale", took)
	}
	waitMembers(t, 2, ws[:2]...)
	t.Logf("rows per worker: %v; all run %v after the death (LockTTL %v, ClockSkew %v)", share, took.Round(time.Millisecond), ttl, skew)
}

// A worker that joins takes a share of the rows; one that closes leaves
// its row, and the others take its share at once, without waiting for
// its beat to go stale.
func TestPartitionJoinAndLeave(t *testing.T) {
	st := percolatortest.Shared(openStore(t, t.TempDir()))
	dbs := shared(t, st, 4, percolator.Options{Observed: []string{"in"}, LockTTL: time.Minute})
	l := newRunLog()
	ws := []*percolator.Worker{startMarker(t, dbs[1], l, 1), startMarker(t, dbs[2], l, 2)}
	waitMembers(t, 2, ws...)
	ws = append(ws, startMarker(t, dbs[3], l, 3))
	t.Logf("all see the new worker after %v", waitMembers(t, 3, ws...).Round(time.Millisecond))
	const n = 300
	notifyRows(t, dbs[0], "j", n)
	waitIdle(t, ws[0])
	share := checkRuns(t, dbs[0], l, "j", n, true)
	if share[3] < n/6 {
		t.Errorf("the new worker ran %d of %d rows, want about a third", share[3], n)
	}
	t.Logf("rows per worker: %v", share)

	ws[2].Close()
	if d := waitMembers(t, 2, ws[:2]...); d > 10*time.Second {
		t.Errorf("the others saw the worker leave after %v, as if they waited for its beat to go stale", d)
	}
	notifyRows(t, dbs[0], "k", n)
	waitIdle(t, ws[0])
	before := l.count(3)
	share = checkRuns(t, dbs[0], l, "k", n, true)
	if share[3] != 0 || l.count(3) != before {
		t.Errorf("the closed worker ran %d rows", share[3])
	}
	t.Logf("after it left, rows per worker: %v", share)
}

// Workers of different observers share each observer's rows only with
// the workers that run it: a row notified for two observers runs both,
// each once.
func TestPartitionByObserver(t *testing.T) {
	st := percolatortest.Shared(openStore(t, t.TempDir()))
	dbs := shared(t, st, 4, percolator.Options{Observed: []string{"in", "other"}})
	l := newRunLog()
	var mu sync.Mutex
	others := make(map[string]int)
	other := percolator.Observer{Name: "other", Column: "other", Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
		mu.Lock()
		others[row]++
		mu.Unlock()
		return tx.Set(row, "other-out", []byte("x"))
	}}
	opt := percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: 20 * time.Millisecond}
	ws := []*percolator.Worker{
		startMarker(t, dbs[1], l, 1),
		startMarker(t, dbs[2], l, 2),
		startWorker(t, dbs[3], opt, other), // alone with "other"
	}
	waitMembers(t, 3, ws...)
	const n = 200
	notifyRows(t, dbs[0], "o", n)
	for i := range n {
		if err := dbs[0].Update(bg, func(tx *percolator.Tx) error {
			return tx.Set(fmt.Sprintf("o%03d", i), "other", []byte("y"))
		}); err != nil {
			t.Fatal(err)
		}
	}
	waitIdle(t, ws...)
	share := checkRuns(t, dbs[0], l, "o", n, true)
	if share[1] == 0 || share[2] == 0 {
		t.Errorf("rows per worker %v: both workers of mark should run some", share)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(others) != n {
		t.Errorf("other ran on %d of %d rows: the lone worker of other must own them all", len(others), n)
	}
}

// Two workers on two DBs over one table of the Bigtable emulator split the
// rows a third DB notifies.
func TestPartitionBigtable(t *testing.T) {
	dbs := shared(t, bigtableStore(t, "partition"), 3, percolator.Options{Observed: []string{"in"}})
	l := newRunLog()
	ws := []*percolator.Worker{startMarker(t, dbs[1], l, 1), startMarker(t, dbs[2], l, 2)}
	waitMembers(t, 2, ws...)
	const n = 200
	notifyRows(t, dbs[0], "b", n)
	waitIdle(t, ws[0])
	share := checkRuns(t, dbs[0], l, "b", n, true)
	if share[1] < n/4 || share[2] < n/4 {
		t.Errorf("rows per worker %v, want about half each", share)
	}
	t.Logf("rows per worker: %v", share)
}

// On an ExclusiveStore there is one process: workers register nothing
// and each scans every row.
func TestExclusiveStoreHasNoMembers(t *testing.T) {
	db, st := percolatortest.Open(t, percolator.Options{Observed: []string{"in"}})
	if db.Store() != percolator.Store(st) {
		t.Skip("opened on a shared store")
	}
	l := newRunLog()
	w := startMarker(t, db, l, 1)
	notifyRows(t, db, "x", 20)
	waitIdle(t, w)
	if w.Members() != 1 {
		t.Errorf("Members = %d, want 1", w.Members())
	}
	var dump bytes.Buffer
	if err := db.Dump(bg, &dump, percolator.MemberPrefix, percolator.MemberPrefix[:len(percolator.MemberPrefix)-1]+"0"); err != nil {
		t.Fatal(err)
	}
	if dump.Len() > 0 {
		t.Errorf("member rows on an exclusive store:\n%s", dump.String())
	}
}

// BenchmarkSharedScan: three workers on three DBs over one shared store
// run the observer on 3,000 rows a loader notifies (150 transactions; 1 ms
// of work a run), with their scans partitioned and, for comparison, each
// scanning every row as before. It reports observer runs and conflicts per
// row, and how long after the load the table is idle (the timer runs only
// then: the loader's own time is the same in both).
func BenchmarkSharedScan(b *testing.B) {
	for _, partitioned := range []bool{true, false} {
		b.Run(fmt.Sprint("partitioned=", partitioned), func(b *testing.B) {
			st := percolatortest.Shared(openStore(b, b.TempDir()))
			dbs := shared(b, st, 4, percolator.Options{Observed: []string{"in"}})
			l := newRunLog()
			var ws []*percolator.Worker
			for i := 1; i <= 3; i++ {
				w, err := percolator.NewWorker(dbs[i], percolator.WorkerOptions{Workers: 4, IdleMin: time.Millisecond, IdleMax: 20 * time.Millisecond}, l.observer(i))
				if err != nil {
					b.Fatal(err)
				}
				if !partitioned {
					percolator.NoPartition(w)
				}
				w.Start()
				b.Cleanup(w.Close)
				ws = append(ws, w)
			}
			if partitioned {
				waitMembers(b, 3, ws...)
			}
			const n = 3000
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				notifyRows(b, dbs[0], fmt.Sprintf("b%d/", i), n)
				b.StartTimer()
				waitIdle(b, ws[0])
			}
			b.StopTimer()
			var runs, conflicts int64
			for i, w := range ws {
				runs += int64(l.count(i + 1))
				for _, s := range w.Stats() {
					conflicts += s.Conflicts
				}
			}
			rows := float64(b.N * n)
			b.ReportMetric(float64(runs)/rows, "runs/row")
			b.ReportMetric(float64(conflicts)/rows, "conflicts/row")
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms-to-idle")
		})
	}
}
