package percolator_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// delayed is a background observer with a Delay that records when it ran
// on each row.
type delayed struct {
	mu   sync.Mutex
	runs map[string][]time.Time
}

func (d *delayed) observer(delay, maxDelay time.Duration) percolator.Observer {
	d.runs = make(map[string][]time.Time)
	return percolator.Observer{Name: "delayed", Column: "c", Background: true, Delay: delay, MaxDelay: maxDelay,
		Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
			d.mu.Lock()
			d.runs[row] = append(d.runs[row], time.Now())
			d.mu.Unlock()
			return nil
		}}
}

func (d *delayed) ran(row string) []time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Time(nil), d.runs[row]...)
}

// A burst of notifications of a row runs its delayed observer once, Delay
// after the last of them; the scanner comes back for it then although its
// idle wait is far longer.
func TestObserverDelayCoalesces(t *testing.T) {
	const delay = 300 * time.Millisecond
	db := openDB(t, percolator.Options{Weak: []string{"c"}})
	var d delayed
	w := startWorker(t, db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: time.Minute}, d.observer(delay, time.Minute))
	var last time.Time
	for range 10 {
		if err := db.Notify(bg, "a", "c"); err != nil {
			t.Fatal(err)
		}
		last = time.Now()
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(d.ran("a")) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	waitIdle(t, w)
	runs := d.ran("a")
	if len(runs) != 1 {
		t.Fatalf("10 notifications in a burst ran the observer %d times, want 1", len(runs))
	}
	// Timestamps have millisecond resolution.
	if early := runs[0].Sub(last); early < delay-2*time.Millisecond {
		t.Errorf("ran %v after the last notification, want ≥ %v", early, delay)
	}
}

// A row notified again and again runs at least every MaxDelay: the delay
// coalesces, it never starves.
func TestObserverMaxDelayBounds(t *testing.T) {
	const (
		delay, maxDelay = 200 * time.Millisecond, 400 * time.Millisecond
		notifying       = 3 * time.Second
	)
	db := openDB(t, percolator.Options{Weak: []string{"c"}})
	var d delayed
	w := startWorker(t, db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: time.Minute}, d.observer(delay, maxDelay))
	began := time.Now()
	notified := 0
	for time.Since(began) < notifying {
		if err := db.Notify(bg, "b", "c"); err != nil {
			t.Fatal(err)
		}
		notified++
		time.Sleep(20 * time.Millisecond)
	}
	during := len(d.ran("b"))
	waitIdle(t, w)
	all := len(d.ran("b"))
	// Every MaxDelay at most (plus scheduling): ~7 runs in 3 s; a quiet
	// Delay never came while notifying.
	if during < 2 {
		t.Errorf("%d runs while the row was notified every 20 ms for %v, want ≥ 2 (MaxDelay %v)", during, notifying, maxDelay)
	}
	if all > int(notifying/maxDelay)+2 {
		t.Errorf("%d runs for %d notifications in %v, want ≤ %d (coalesced by MaxDelay %v)", all, notified, notifying, int(notifying/maxDelay)+2, maxDelay)
	}
	t.Logf("%d notifications, %d runs while notifying, %d in all", notified, during, all)
}

func TestObserverNegativeDelay(t *testing.T) {
	db := openDB(t, percolator.Options{Weak: []string{"c"}})
	_, err := percolator.NewWorker(db, percolator.WorkerOptions{}, percolator.Observer{Name: "x", Column: "c", Delay: -time.Second,
		Run: func(context.Context, *percolator.Tx, string, string) error { return nil }})
	if err == nil {
		t.Fatal("NewWorker accepted a negative Delay")
	}
}

// busyForeground notifies a new row of the foreground observer's column
// every 5 ms for d; each run takes 20 ms and the worker runs two at a
// time, so a backlog grows throughout. It returns when the last foreground
// run ended.
func busyForeground(t *testing.T, db *percolator.DB, w *percolator.Worker, ended func() time.Time, d time.Duration, during func()) time.Time {
	t.Helper()
	began := time.Now()
	for i := 0; time.Since(began) < d; i++ {
		if err := db.Notify(bg, fmt.Sprintf("f%d", i), "f"); err != nil {
			t.Fatal(err)
		}
		if during != nil {
			during()
		}
		time.Sleep(5 * time.Millisecond)
	}
	waitIdle(t, w)
	return ended()
}

// slowForeground is a foreground observer of column f taking 20 ms a run;
// ended reports when its last run ended.
func slowForeground() (o percolator.Observer, ended func() time.Time) {
	var mu sync.Mutex
	var last time.Time
	o = percolator.Observer{Name: "slow", Column: "f", Run: func(context.Context, *percolator.Tx, string, string) error {
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		last = time.Now()
		mu.Unlock()
		return nil
	}}
	return o, func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

// A background observer with a Delay yields to the foreground: a row
// notified again and again while the foreground has a backlog is run
// once, after the backlog, however short its Delay.
func TestBackgroundYieldsToForeground(t *testing.T) {
	db := openDB(t, percolator.Options{Weak: []string{"c", "f"}})
	var d delayed
	fg, ended := slowForeground()
	w := startWorker(t, db, percolator.WorkerOptions{Workers: 2}, d.observer(50*time.Millisecond, time.Minute), fg)
	waves := 0
	last := busyForeground(t, db, w, ended, time.Second, func() {
		if waves++; waves%20 == 0 { // a wave every ~100 ms, each still for longer than Delay
			if err := db.Notify(bg, "a", "c"); err != nil {
				t.Fatal(err)
			}
		}
	})
	runs := d.ran("a")
	if len(runs) != 1 {
		t.Fatalf("%d waves while the foreground ran made %d background runs, want 1", waves/20, len(runs))
	}
	if runs[0].Before(last) {
		t.Errorf("the background run came %v before the foreground's last run ended", last.Sub(runs[0]))
	}
}

// MaxDelay bounds the wait for the foreground: a row held while the
// foreground's backlog lasts runs MaxDelay after its notification.
func TestBackgroundYieldBounded(t *testing.T) {
	const maxDelay = 300 * time.Millisecond
	db := openDB(t, percolator.Options{Weak: []string{"c", "f"}})
	var d delayed
	fg, ended := slowForeground()
	w := startWorker(t, db, percolator.WorkerOptions{Workers: 2}, d.observer(50*time.Millisecond, maxDelay), fg)
	notified := time.Now()
	if err := db.Notify(bg, "a", "c"); err != nil {
		t.Fatal(err)
	}
	last := busyForeground(t, db, w, ended, time.Second, nil)
	runs := d.ran("a")
	if len(runs) != 1 {
		t.Fatalf("%d background runs, want 1", len(runs))
	}
	if !runs[0].Before(last) {
		t.Errorf("the background run waited for the foreground to end (%v after the notification), want within MaxDelay %v", runs[0].Sub(notified), maxDelay)
	}
	if early := runs[0].Sub(notified); early < maxDelay-2*time.Millisecond {
		t.Errorf("ran %v after the notification while the foreground ran, want ≥ MaxDelay %v", early, maxDelay)
	}
}

// Backlog counts the foreground tasks found and not yet running: many
// while rows notified at once wait for two goroutines, none once idle.
func TestWorkerBacklog(t *testing.T) {
	db := openDB(t, percolator.Options{Weak: []string{"f"}})
	fg, _ := slowForeground()
	w := startWorker(t, db, percolator.WorkerOptions{Workers: 2}, fg)
	for i := range 50 {
		if err := db.Notify(bg, fmt.Sprintf("f%d", i), "f"); err != nil {
			t.Fatal(err)
		}
	}
	most := 0
	for deadline := time.Now().Add(10 * time.Second); most < 20 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		most = max(most, w.Backlog())
	}
	if most < 20 {
		t.Errorf("backlog at most %d with 50 rows notified and 2 goroutines, want ≥ 20", most)
	}
	waitIdle(t, w)
	if n := w.Backlog(); n != 0 {
		t.Errorf("backlog %d once idle, want 0", n)
	}
}
