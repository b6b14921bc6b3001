package percolator_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// startWorker starts a worker with fast idle polling, closed at cleanup.
func startWorker(t testing.TB, db *percolator.DB, opt percolator.WorkerOptions, obs ...percolator.Observer) *percolator.Worker {
	t.Helper()
	if opt.IdleMax == 0 {
		opt.IdleMin, opt.IdleMax = time.Millisecond, 20*time.Millisecond
	}
	w, err := percolator.NewWorker(db, opt, obs...)
	if err != nil {
		t.Fatal(err)
	}
	w.Start()
	t.Cleanup(w.Close)
	return w
}

func waitIdle(t testing.TB, ws ...*percolator.Worker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, 60*time.Second)
	defer cancel()
	for _, w := range ws {
		if err := w.WaitIdle(ctx); err != nil {
			t.Fatalf("WaitIdle: %v", err)
		}
	}
}

// copyObserver writes f(value of col) to out.
func copyObserver(name, col, out string, f func(string) string) percolator.Observer {
	return percolator.Observer{Name: name, Column: col, Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
		v, err := tx.Get(ctx, row, col)
		if err != nil {
			return err
		}
		return tx.Set(row, out, []byte(f(string(v))))
	}}
}

func total(ws []*percolator.Worker, name string) (s percolator.ObserverStats) {
	for _, w := range ws {
		for _, x := range w.Stats() {
			if x.Name == name {
				s.Add(x)
				s.Pending += x.Pending
			}
		}
	}
	return s
}

// At most one observer transaction commits per change, even with several
// workers (each its own lock service, like separate machines) racing for a
// few hot rows. Slow observers and one-slot pools make runs queue up behind
// each other, so a run often starts after another worker already handled
// its notification: the ack column must stop it.
func TestAtMostOneCommitPerChange(t *testing.T) {
	db := openDB(t, percolator.Options{Observed: []string{"in"}})
	obs := percolator.Observer{Name: "count", Column: "in", Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
		v, err := tx.Get(ctx, row, col)
		if err != nil {
			return err
		}
		c, err := tx.Get(ctx, row, "runs:"+string(v))
		if err != nil {
			return err
		}
		time.Sleep(time.Millisecond)
		n, _ := strconv.Atoi(string(c))
		return tx.Set(row, "runs:"+string(v), []byte(strconv.Itoa(n+1)))
	}}
	var ws []*percolator.Worker
	for range 4 {
		ws = append(ws, startWorker(t, db, percolator.WorkerOptions{Scanners: 2, Workers: 1}, obs))
	}
	const rows, changes = 4, 60
	for i := 1; i <= changes; i++ {
		for r := range rows {
			set(t, db, fmt.Sprint("hot", r), "in", strconv.Itoa(i))
		}
		time.Sleep(time.Millisecond)
	}
	waitIdle(t, ws...)

	processed := 0
	err := db.View(bg, func(tx *percolator.Tx) error {
		return tx.Scan(bg, "hot", "hot\xff", "runs:", func(row, col string, v []byte) bool {
			if string(v) != "1" {
				t.Errorf("%s change %s processed by %s committed runs, want at most 1", row, col, v)
			}
			processed++
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	for r := range rows {
		if v, _ := get(t, db, fmt.Sprint("hot", r), "runs:"+strconv.Itoa(changes)); v != "1" {
			t.Fatalf("hot%d: last change processed %q times, want 1", r, v)
		}
	}
	s := total(ws, "count")
	if s.Commits != int64(processed) || s.Commits > rows*changes {
		t.Fatalf("%d commits for %d processed changes (%d changes made)", s.Commits, processed, rows*changes)
	}
	t.Logf("%d changes, %d runs committed, %d conflicted, %d found acknowledged", rows*changes, s.Commits, s.Conflicts, s.Nothing)
}

// Many writes before the worker runs collapse into one run that sees the
// last value.
func TestMessageCollapsing(t *testing.T) {
	db := openDB(t, percolator.Options{Observed: []string{"in"}})
	for i := 1; i <= 100; i++ {
		set(t, db, "r", "in", strconv.Itoa(i))
	}
	w := startWorker(t, db, percolator.WorkerOptions{}, copyObserver("copy", "in", "out", func(s string) string { return s }))
	waitIdle(t, w)
	if v, _ := get(t, db, "r", "out"); v != "100" {
		t.Fatalf("out = %q, want the last value 100", v)
	}
	if s := total([]*percolator.Worker{w}, "copy"); s.Commits > 3 {
		t.Fatalf("%d runs for 100 writes: no collapsing", s.Commits)
	}
	if p, _ := db.Pending(bg); p["in"] != 0 {
		t.Fatalf("%d notifications left", p["in"])
	}
}

// A worker killed in the middle of observer transactions loses nothing: a
// new worker runs the observer for every change, also after the process
// restarts with notifications pending.
func TestNoLostWork(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	opt := percolator.Options{Observed: []string{"in"}}
	db, err := percolator.Open(bg, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 50
	for i := range rows {
		set(t, db, fmt.Sprintf("r%02d", i), "in", fmt.Sprint("v", i))
	}
	entered := make(chan struct{}, rows)
	blocking := percolator.Observer{Name: "copy", Column: "in", Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
		v, _ := tx.Get(ctx, row, col)
		tx.Set(row, "out", v)
		entered <- struct{}{}
		<-ctx.Done() // the worker dies with the transaction open
		return ctx.Err()
	}}
	w1, err := percolator.NewWorker(db, percolator.WorkerOptions{Workers: 4}, blocking)
	if err != nil {
		t.Fatal(err)
	}
	w1.Start()
	<-entered
	w1.Close()

	// The process dies too; a new one finds the notifications.
	db.Close()
	st.Close()
	st = openStore(t, dir)
	defer st.Close()
	db, err = percolator.Open(bg, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if p, _ := db.Pending(bg); p["in"] != rows {
		t.Fatalf("%d notifications after restart, want %d", p["in"], rows)
	}
	w2, err := percolator.NewWorker(db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: 20 * time.Millisecond},
		copyObserver("copy", "in", "out", func(s string) string { return s }))
	if err != nil {
		t.Fatal(err)
	}
	w2.Start()
	defer w2.Close() // before the store closes
	waitIdle(t, w2)
	for i := range rows {
		if v, _ := get(t, db, fmt.Sprintf("r%02d", i), "out"); v != fmt.Sprint("v", i) {
			t.Fatalf("r%02d out = %q", i, v)
		}
	}
}

// Observer A writes b, observer B writes c: after WaitIdle, c reflects
// every input, including inputs rewritten while observers run on them.
func TestObserverChain(t *testing.T) {
	db := openDB(t, percolator.Options{Observed: []string{"a", "b"}})
	slow := func(f func(string) string) func(string) string {
		return func(s string) string { time.Sleep(200 * time.Microsecond); return f(s) }
	}
	w := startWorker(t, db, percolator.WorkerOptions{Scanners: 3},
		copyObserver("A", "a", "b", slow(func(s string) string { return s + "!" })),
		copyObserver("B", "b", "c", slow(func(s string) string { return s + "?" })))
	const rows = 40
	for round := 0; round < 30; round++ {
		// One multi-row transaction per round, slow between prewrite and
		// commit: its notifications are visible before its writes are.
		tx, _ := db.Begin(bg)
		for i := round % 3; i < rows; i += 3 {
			tx.Set(fmt.Sprintf("row%03d", i), "a", []byte(fmt.Sprint(round, "-", i)))
		}
		percolator.SetCrash(tx, func(p percolator.CrashPoint) bool {
			if p == percolator.CrashAfterPrewrites {
				time.Sleep(2 * time.Millisecond)
			}
			return false
		})
		if err := tx.Commit(bg); err != nil {
			t.Fatal(err)
		}
	}
	waitIdle(t, w)
	for i := range rows {
		a, _ := get(t, db, fmt.Sprintf("row%03d", i), "a")
		if c, _ := get(t, db, fmt.Sprintf("row%03d", i), "c"); c != a+"!?" {
			t.Fatalf("row%03d: a = %q but c = %q", i, a, c)
		}
	}
}

// 64 goroutines notify one hot row at once: no notifier conflicts, the
// observer runs, and nothing is left.
func TestWeakNotificationsUnderContention(t *testing.T) {
	db := openDB(t, percolator.Options{Weak: []string{"cluster"}})
	var runs atomic.Int64
	w := startWorker(t, db, percolator.WorkerOptions{}, percolator.Observer{Name: "recluster", Column: "cluster",
		Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
			runs.Add(1)
			v, err := tx.Get(ctx, row, "members")
			if err != nil {
				return err
			}
			n, _ := strconv.Atoi(string(v))
			return tx.Set(row, "members", []byte(strconv.Itoa(n+1)))
		}})
	var wg sync.WaitGroup
	var errs atomic.Int64
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if err := db.Notify(bg, "hot", "cluster"); err != nil {
					errs.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	waitIdle(t, w)
	if errs.Load() != 0 {
		t.Fatalf("%d notifications failed", errs.Load())
	}
	s := total([]*percolator.Worker{w}, "recluster")
	if s.Commits == 0 || s.Commits > 640 {
		t.Fatalf("%d runs committed for 640 weak notifications", s.Commits)
	}
	if p, _ := db.Pending(bg); p["cluster"] != 0 {
		t.Fatalf("%d weak notifications left", p["cluster"])
	}
	t.Logf("640 weak notifications → %d runs committed, %d conflicts", s.Commits, s.Conflicts)

	if err := db.Update(bg, func(tx *percolator.Tx) error { return tx.Set("hot", "cluster", nil) }); !errors.Is(err, percolator.ErrInvalid) {
		t.Fatalf("writing a weak column: %v, want ErrInvalid", err)
	}
	if err := db.Notify(bg, "hot", "members"); !errors.Is(err, percolator.ErrInvalid) {
		t.Fatalf("weak Notify of a normal column: %v, want ErrInvalid", err)
	}
}

// A failing (or panicking) observer is retried, then parked with its last
// error, while the rest of the chain keeps going; Retry brings it back.
func TestFailingObserverIsParked(t *testing.T) {
	db := openDB(t, percolator.Options{Observed: []string{"a", "bad"}})
	var healed atomic.Bool
	bad := percolator.Observer{Name: "bad", Column: "bad", Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
		if healed.Load() {
			return tx.Set(row, "fixed", []byte("yes"))
		}
		if row == "r0" {
			panic("observer bug")
		}
		return errors.New("cannot parse")
	}}
	w := startWorker(t, db, percolator.WorkerOptions{MaxFailures: 3, RetryBase: time.Millisecond},
		bad, copyObserver("A", "a", "b", func(s string) string { return s + "!" }))
	for i := range 10 {
		err := db.Update(bg, func(tx *percolator.Tx) error {
			tx.Set(fmt.Sprintf("r%d", i), "bad", []byte("x"))
			return tx.Set(fmt.Sprintf("r%d", i), "a", []byte("x"))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	waitIdle(t, w)
	for i := range 10 {
		if v, _ := get(t, db, fmt.Sprintf("r%d", i), "b"); v != "x!" {
			t.Fatalf("r%d: healthy observer did not run (b = %q)", i, v)
		}
	}
	failed, err := db.Failed(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 10 {
		t.Fatalf("%d parked failures, want 10", len(failed))
	}
	for _, f := range failed {
		want := "cannot parse"
		if f.Row == "r0" {
			want = "panicked: observer bug"
		}
		if f.Observer != "bad" || f.Column != "bad" || f.Attempts != 3 || !strings.Contains(f.Error, want) {
			t.Fatalf("failure %+v, want 3 attempts with %q", f, want)
		}
	}

	healed.Store(true)
	for _, f := range failed {
		if err := db.Retry(bg, f); err != nil {
			t.Fatal(err)
		}
	}
	waitIdle(t, w)
	for i := range 10 {
		if v, _ := get(t, db, fmt.Sprintf("r%d", i), "fixed"); v != "yes" {
			t.Fatalf("r%d not processed after Retry", i)
		}
	}
	if failed, _ := db.Failed(bg); len(failed) != 0 {
		t.Fatalf("%d failures left after Retry", len(failed))
	}
}

func TestNewWorkerRejectsBadObservers(t *testing.T) {
	db := openDB(t, percolator.Options{Observed: []string{"a"}})
	noop := func(context.Context, *percolator.Tx, string, string) error { return nil }
	for name, obs := range map[string][]percolator.Observer{
		"two on one column": {{Name: "x", Column: "a", Run: noop}, {Name: "y", Column: "a", Run: noop}},
		"unobserved column": {{Name: "x", Column: "nope", Run: noop}},
		"no run func":       {{Name: "x", Column: "a"}},
	} {
		if _, err := percolator.NewWorker(db, percolator.WorkerOptions{}, obs...); !errors.Is(err, percolator.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// BenchmarkNotifications: observer runs per second over 100k dirty rows,
// for one trivial observer and for a chain of three.
func BenchmarkNotifications(b *testing.B) {
	for _, chain := range []int{1, 3} {
		b.Run(fmt.Sprintf("chain=%d", chain), func(b *testing.B) {
			cols := []string{"c0", "c1", "c2", "c3"}[:chain+1]
			var obs []percolator.Observer
			for i := 0; i < chain; i++ {
				if i == chain-1 {
					obs = append(obs, percolator.Observer{Name: cols[i], Column: cols[i], Run: func(context.Context, *percolator.Tx, string, string) error { return nil }})
				} else {
					obs = append(obs, copyObserver(cols[i], cols[i], cols[i+1], func(s string) string { return s }))
				}
			}
			const rows = 100_000
			for b.Loop() {
				b.StopTimer()
				db := openDB(b, percolator.Options{Observed: cols[:chain]})
				for base := 0; base < rows; base += 1000 {
					err := db.Update(bg, func(tx *percolator.Tx) error {
						for i := base; i < base+1000; i++ {
							tx.Set(fmt.Sprintf("row/%07d", i), "c0", []byte("v"))
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				w := startWorker(b, db, percolator.WorkerOptions{}, obs...)
				waitIdle(b, w)
				w.Close()
			}
			b.ReportMetric(float64(rows*chain*b.N)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}

// A weak notification set by Tx.Notify appears with the commit, also when
// the writer dies right after the commit point: the lock sweep rolls the
// notifying row forward and the observer runs.
func TestTxNotifySurvivesCrash(t *testing.T) {
	db := openDB(t, percolator.Options{Weak: []string{"w"}})
	w := startWorker(t, db, percolator.WorkerOptions{}, percolator.Observer{Name: "seen", Column: "w",
		Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
			v, err := tx.Get(ctx, "a", "x")
			if err != nil {
				return err
			}
			return tx.Set(row, "seen", v)
		}})
	tx, _ := db.Begin(bg)
	tx.Set("a", "x", []byte("1"))
	if err := tx.Notify("b", "w"); err != nil {
		t.Fatal(err)
	}
	percolator.SetCrash(tx, func(p percolator.CrashPoint) bool { return p == percolator.CrashAfterPrimaryCommit })
	if err := tx.Commit(bg); !errors.Is(err, percolator.ErrCrashed) {
		t.Fatal(err)
	}
	waitIdle(t, w)
	if v, _ := get(t, db, "b", "seen"); v != "1" {
		t.Fatalf("observer saw %q, want the committed write", v)
	}

	// An aborted transaction notifies nothing.
	tx, _ = db.Begin(bg)
	tx.Set("a", "x", []byte("2"))
	tx.Notify("c", "w")
	tx.Rollback()
	waitIdle(t, w)
	if _, ok := get(t, db, "c", "seen"); ok {
		t.Fatal("a rolled-back transaction's notification ran")
	}
	if err := tx.Notify("c", "x"); err == nil {
		t.Fatal("Notify after Rollback accepted")
	}
}

// Transactions notifying one hot row with Tx.Notify never conflict.
func TestTxNotifyHotRowNoConflicts(t *testing.T) {
	db := openDB(t, percolator.Options{Weak: []string{"w"}})
	var wg sync.WaitGroup
	var conflicts atomic.Int64
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx, _ := db.Begin(bg)
			tx.Set(fmt.Sprint("src", g), "c", []byte("x"))
			tx.Notify("hot", "w")
			if err := tx.Commit(bg); err != nil {
				conflicts.Add(1)
			}
		}()
	}
	wg.Wait()
	if conflicts.Load() != 0 {
		t.Fatalf("%d of 64 notifying transactions failed", conflicts.Load())
	}
	if p, _ := db.Pending(bg); p["w"] != 1 {
		t.Fatalf("pending %v, want one notification of hot/w", p)
	}
}

// The queue gauge follows the scans while the worker runs, and rises while
// a pass waits for a busy pool: the notifications are there before the
// worker starts, so its first pass finds all five and blocks handing them
// to the one busy runner.
func TestPendingGauge(t *testing.T) {
	db := openDB(t, percolator.Options{Observed: []string{"in"}})
	for i := range 5 {
		set(t, db, fmt.Sprint("r", i), "in", "x")
	}
	release := make(chan struct{})
	w := startWorker(t, db, percolator.WorkerOptions{Workers: 1}, percolator.Observer{Name: "slow", Column: "in",
		Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		}})
	deadline := time.Now().Add(10 * time.Second)
	for total([]*percolator.Worker{w}, "slow").Pending < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("pending gauge %d while 5 notifications waited", total([]*percolator.Worker{w}, "slow").Pending)
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	waitIdle(t, w)
	if p := total([]*percolator.Worker{w}, "slow").Pending; p != 0 {
		t.Fatalf("pending gauge %d after the work ran, want 0", p)
	}
}

// A backlog of background work does not hold up foreground notifications:
// with 400 slow background runs queued, notifications set afterwards on
// rows spread among theirs finish while most of the backlog still waits,
// and every background notification runs in the end.
func TestBackgroundDoesNotHoldUpForeground(t *testing.T) {
	db := openDB(t, percolator.Options{Weak: []string{"bg", "fg"}})
	const n = 400
	var bgRuns atomic.Int64
	ranBg := make(map[string]int)
	var mu sync.Mutex
	var fgDone sync.WaitGroup
	fgAt := make(map[string]int64) // background runs done when a foreground one ran
	slow := percolator.Observer{Name: "slow", Column: "bg", Background: true,
		Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
			time.Sleep(5 * time.Millisecond)
			mu.Lock()
			ranBg[row]++
			mu.Unlock()
			bgRuns.Add(1)
			return tx.Set(row, "out", []byte("bg"))
		}}
	quick := percolator.Observer{Name: "quick", Column: "fg",
		Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
			mu.Lock()
			if _, ok := fgAt[row]; !ok {
				fgAt[row] = bgRuns.Load()
				fgDone.Done()
			}
			mu.Unlock()
			return tx.Set(row, "out", []byte("fg"))
		}}
	for i := range n {
		if err := db.Notify(bg, fmt.Sprintf("r%03d", i), "bg"); err != nil {
			t.Fatal(err)
		}
	}
	w := startWorker(t, db, percolator.WorkerOptions{Workers: 1, Background: 1}, slow, quick)
	for bgRuns.Load() < 5 {
		time.Sleep(time.Millisecond)
	}
	for i := range 5 {
		fgDone.Add(1)
		if err := db.Notify(bg, fmt.Sprintf("r%03d.fg", 37+i*80), "fg"); err != nil {
			t.Fatal(err)
		}
	}
	fgDone.Wait()
	mu.Lock()
	for row, at := range fgAt {
		if at >= n/2 {
			t.Errorf("%s ran after %d of %d background runs", row, at, n)
		}
	}
	mu.Unlock()
	waitIdle(t, w)
	if len(ranBg) != n {
		t.Fatalf("%d of %d background rows ran", len(ranBg), n)
	}
	t.Logf("foreground runs after %v background runs of %d; %d background runs in all", fgAt, n, bgRuns.Load())
}

// countingStore counts the scans of the notify family: scanner passes.
type countingStore struct {
	*badger.Store
	passes atomic.Int64
}

func (s *countingStore) ReadRows(ctx context.Context, start, end string, fn func(string, []percolator.Cell) bool, filters ...percolator.Filter) error {
	if len(filters) == 1 && filters[0].Family == "n" && start != "" && end == "" {
		s.passes.Add(1)
	}
	return s.Store.ReadRows(ctx, start, end, fn, filters...)
}

// Idle scanners stay idle: after a wake-up and the work it brought, they
// back off to IdleMax instead of waking each other again and again (a
// wake-up passed from scanner to scanner once kept every scanner of an idle
// worker scanning the whole notify group without pause). The test drives
// the scanners' clock: every idle wait is handed to it, and ends when it
// says.
func TestIdleScannersSettle(t *testing.T) {
	const (
		scanners         = 4
		idleMin, idleMax = 10 * time.Millisecond, 200 * time.Millisecond
	)
	st := &countingStore{Store: openStore(t, t.TempDir())}
	db := percolatortest.OpenOn(t, st, percolator.Options{Weak: []string{"c"}})
	var runs atomic.Int64
	done := make(chan struct{}) // closed by the third run
	w, err := percolator.NewWorker(db, percolator.WorkerOptions{Scanners: scanners, IdleMin: idleMin, IdleMax: idleMax},
		percolator.Observer{Name: "o", Column: "c", Run: func(context.Context, *percolator.Tx, string, string) error {
			if runs.Add(1) == 3 {
				close(done)
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	type wait struct {
		d    time.Duration
		over chan struct{}
	}
	waits := make(chan wait)
	percolator.SetIdleWait(w, func(ctx context.Context, d time.Duration) error {
		wt := wait{d, make(chan struct{})}
		select {
		case waits <- wt:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-wt.over:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	w.Start()
	t.Cleanup(w.Close)
	next := func() wait {
		t.Helper()
		select {
		case wt := <-waits:
			return wt
		case <-time.After(10 * time.Second):
			t.Fatal("no scanner waits")
			return wait{}
		}
	}

	for i := range 3 {
		if err := db.Notify(bg, fmt.Sprintf("r%d", i), "c"); err != nil {
			t.Fatal(err)
		}
	}
	// Time passes for the scanners while the work is done, and until the
	// worker is idle: a notification is deleted after its run, and a pass
	// that still finds one (the runs are fast, the scanners' clock faster)
	// starts its scanner over from IdleMin.
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case wt := <-waits:
				close(wt.over)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the notifications did not run")
	}
	waitIdle(t, w)
	close(stop)
	<-stopped

	// Then every pass is followed by a wait, and the waits grow to IdleMax
	// (five doublings) and stay there. The scanners take turns: a scanner
	// whose wait has not ended cannot pass.
	const rounds = 12
	before := st.passes.Load()
	var ds []time.Duration
	for range rounds * scanners {
		wt := next()
		ds = append(ds, wt.d)
		close(wt.over)
	}
	// Each released scanner may be in its next pass.
	if n := st.passes.Load() - before; n > rounds*scanners+scanners {
		t.Errorf("%d passes for %d idle waits of %d scanners", n, rounds*scanners, scanners)
	}
	for _, d := range ds[len(ds)-2*scanners:] {
		if d != idleMax {
			t.Fatalf("idle waits %v: the last %d are not all IdleMax (%v)", ds, 2*scanners, idleMax)
		}
	}
}

// blindStore hides the notify family from scanner passes: only what the
// worker's follower is told of gets run. It counts the follower's reads.
type blindStore struct {
	*badger.Store
	reads atomic.Int64
}

func (s *blindStore) ReadRow(ctx context.Context, row string, filters ...percolator.Filter) ([]percolator.Cell, error) {
	if len(filters) == 1 && filters[0].Family == "n" {
		s.reads.Add(1)
	}
	return s.Store.ReadRow(ctx, row, filters...)
}

func (s *blindStore) ReadRows(ctx context.Context, start, end string, fn func(string, []percolator.Cell) bool, filters ...percolator.Filter) error {
	if len(filters) == 1 && filters[0].Family == "n" && filters[0].Column == "" {
		return nil
	}
	return s.Store.ReadRows(ctx, start, end, fn, filters...)
}

// A notification set by this process runs without waiting for a scanner
// pass: the worker is told the row. A row told while a run on it is in
// flight is looked at again when that run ends, since the run may have
// read the row before the new write.
func TestFollowNotifiedRows(t *testing.T) {
	st := &blindStore{Store: openStore(t, t.TempDir())}
	db := percolatortest.OpenOn(t, st, percolator.Options{Observed: []string{"a", "b"}, Weak: []string{"w"}})
	var mu sync.Mutex
	runs := make(map[string][]string) // row → values of b seen by its runs
	hold, held := make(chan struct{}), make(chan struct{})
	w, err := percolator.NewWorker(db, percolator.WorkerOptions{},
		percolator.Observer{Name: "oa", Column: "a", Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
			return tx.Set(row, "b", []byte("from a"))
		}},
		percolator.Observer{Name: "ob", Column: "b", Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
			v, err := tx.Get(ctx, row, "b")
			if err != nil {
				return err
			}
			mu.Lock()
			first := len(runs[row]) == 0
			runs[row] = append(runs[row], string(v))
			mu.Unlock()
			if row == "slow" {
				if first {
					close(held)
					select {
					case <-hold:
					case <-ctx.Done(): // the worker closes: the test failed
					}
				}
				return nil // no write that would tell the worker the row again
			}
			return tx.Notify(row, "w")
		}},
		percolator.Observer{Name: "ow", Column: "w", Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
			mu.Lock()
			runs["w:"+row] = append(runs["w:"+row], "")
			mu.Unlock()
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	w.Start()
	t.Cleanup(w.Close)
	count := func(row string) int {
		mu.Lock()
		defer mu.Unlock()
		return len(runs[row])
	}
	wait := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !done(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("%s: runs %v", what, runs)
			}
		}
	}

	// A chain: a strong notification, the one its observer's write sets,
	// and a weak one.
	for i := range 10 {
		set(t, db, fmt.Sprintf("r%d", i), "a", "x")
	}
	wait("chain", func() bool {
		for i := range 10 {
			if count(fmt.Sprintf("w:r%d", i)) == 0 {
				return false
			}
		}
		return true
	})

	// A write to a row whose run is in flight.
	set(t, db, "slow", "b", "1")
	<-held
	reads := st.reads.Load()
	set(t, db, "slow", "b", "2")
	wait("the worker's finding the row busy", func() bool { return percolator.HintedLater(w, "slow") })
	if st.reads.Load() == reads {
		t.Error("the worker found the row busy without reading it")
	}
	close(hold)
	wait("busy row", func() bool { return count("slow") == 2 })
	mu.Lock()
	defer mu.Unlock()
	if got := runs["slow"]; got[0] != "1" || got[1] != "2" {
		t.Errorf("runs on a busy row saw %q, want [1 2]", got)
	}
}

// Watch tells of commits to rows with the prefix, and of no others.
func TestWatch(t *testing.T) {
	db := openDB(t, percolator.Options{})
	ch, stop := db.Watch("q/")
	told := func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	set(t, db, "r", "c", "1")
	if told() {
		t.Error("told of a commit to another row")
	}
	set(t, db, "q/1", "c", "1")
	set(t, db, "q/2", "c", "1")
	if !told() {
		t.Error("not told of commits to q/1 and q/2")
	}
	if told() {
		t.Error("told twice for commits before a look")
	}
	tx, err := db.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"a", "q/3"} { // two rows: two-phase commit
		if err := tx.Set(r, "c", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(bg); err != nil {
		t.Fatal(err)
	}
	if !told() {
		t.Error("not told of a two-phase commit to q/3")
	}
	stop()
	set(t, db, "q/4", "c", "1")
	if told() {
		t.Error("told after stop")
	}
}

// On a shared store the rows a transaction only notifies are prewritten
// together, with one call, and their notifications still come with the
// commit and only then: none when the transaction dies before its commit
// point, all of them when it dies after it.
func TestTxNotifyManyRows(t *testing.T) {
	calls := new(percolatortest.Calls)
	st := percolatortest.SharedCounting(openStore(t, t.TempDir()), calls)
	db := percolatortest.OpenOn(t, st, percolator.Options{Weak: []string{"w"}, LockTTL: 100 * time.Millisecond})
	var mu sync.Mutex
	seen := make(map[string]string)
	var w *percolator.Worker
	const n = 20
	notify := func(value string, crash percolator.CrashPoint) error {
		tx, err := db.Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		tx.Set("src", "x", []byte(value))
		for i := range n {
			if err := tx.Notify(fmt.Sprintf("t%02d", i), "w"); err != nil {
				t.Fatal(err)
			}
		}
		if crash != 0 {
			percolator.SetCrash(tx, func(p percolator.CrashPoint) bool { return p == crash })
		}
		return tx.Commit(bg)
	}
	check := func(want string) {
		t.Helper()
		waitIdle(t, w)
		mu.Lock()
		defer mu.Unlock()
		for i := range n {
			if r := fmt.Sprintf("t%02d", i); seen[r] != want {
				t.Errorf("%s: observer saw %q, want %q", r, seen[r], want)
			}
		}
		clear(seen)
	}

	cams, mutates := calls.CheckAndMutateRow.Load(), calls.MutateRows.Load()
	if err := notify("1", 0); err != nil {
		t.Fatal(err)
	}
	cams, mutates = calls.CheckAndMutateRow.Load()-cams, calls.MutateRows.Load()-mutates
	t.Logf("a transaction notifying %d rows: %d conditional mutations, %d MutateRows", n, cams, mutates)
	if cams != 2 || mutates != 3 {
		t.Errorf("a transaction notifying %d rows: %d conditional mutations and %d MutateRows, want 2 (the primary's prewrite and commit) and 3 (the lock index entry, the notified rows' prewrite, the secondaries' commit)", n, cams, mutates)
	}
	// The worker after the count: its own calls (leases, beats) stay out.
	w = startWorker(t, db, percolator.WorkerOptions{}, percolator.Observer{Name: "seen", Column: "w",
		Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
			v, err := tx.Get(ctx, "src", "x")
			mu.Lock()
			seen[row] = string(v)
			mu.Unlock()
			return err
		}})
	check("1")

	if err := notify("2", percolator.CrashAfterPrewrites); !errors.Is(err, percolator.ErrCrashed) {
		t.Fatalf("Commit = %v, want the crash", err)
	}
	if _, err := db.CleanLocks(bg); err != nil { // rolls it back once the TTL passed
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := db.CleanLocks(bg); err != nil {
		t.Fatal(err)
	}
	check("")

	if err := notify("3", percolator.CrashAfterPrimaryCommit); !errors.Is(err, percolator.ErrCrashed) {
		t.Fatalf("Commit = %v, want the crash", err)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := db.CleanLocks(bg); err != nil { // rolls it forward
		t.Fatal(err)
	}
	check("3")
}
