package percolator_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// paced runs a foreground observer taking 20 ms a run, with the given
// Pace, on a row notified every 5 ms for a second, and returns the
// starts and ends of its runs and when the last notification was
// written.
func paced(t *testing.T, pace int) (starts, ends []time.Time, last time.Time) {
	t.Helper()
	db := openDB(t, percolator.Options{Weak: []string{"c"}})
	var mu sync.Mutex
	w := startWorker(t, db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: time.Minute},
		percolator.Observer{Name: "paced", Column: "c", Pace: pace,
			Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
				began := time.Now()
				time.Sleep(20 * time.Millisecond)
				mu.Lock()
				starts, ends = append(starts, began), append(ends, time.Now())
				mu.Unlock()
				return nil
			}})
	for began := time.Now(); time.Since(began) < time.Second; {
		if err := db.Notify(bg, "block", "c"); err != nil {
			t.Fatal(err)
		}
		last = time.Now()
		time.Sleep(5 * time.Millisecond)
	}
	waitIdle(t, w)
	mu.Lock()
	defer mu.Unlock()
	return starts, ends, last
}

// A row notified again and again runs its paced observer Pace × a run's
// time apart, and nothing is lost: a run begins after the last
// notification. Without Pace the runs come back to back.
func TestObserverPaceSpacesRuns(t *testing.T) {
	const pace = 4
	starts, ends, last := paced(t, pace)
	if n := len(starts); n == 0 || !starts[n-1].After(last) {
		t.Fatalf("no run began after the last notification (%d runs)", n)
	}
	for i := 1; i < len(starts); i++ {
		// 4 × (20 ms + the transaction), less the scheduler's slack.
		if gap := starts[i].Sub(ends[i-1]); gap < 60*time.Millisecond {
			t.Errorf("run %d began %v after run %d ended, want ≥ ~%d × 20 ms", i, gap, i-1, pace)
		}
	}
	bare, _, _ := paced(t, 0)
	if len(bare) < 2*len(starts) {
		t.Errorf("%d runs unpaced, %d paced: want the pace to halve them at least", len(bare), len(starts))
	}
	t.Logf("runs in a second of notifications every 5 ms: %d paced, %d unpaced", len(starts), len(bare))
}

func TestObserverPaceForegroundOnly(t *testing.T) {
	db := openDB(t, percolator.Options{Weak: []string{"c"}})
	for _, o := range []percolator.Observer{
		{Name: "x", Column: "c", Background: true, Pace: 4},
		{Name: "x", Column: "c", Pace: -1},
	} {
		o.Run = func(context.Context, *percolator.Tx, string, string) error { return nil }
		if _, err := percolator.NewWorker(db, percolator.WorkerOptions{}, o); err == nil {
			t.Errorf("NewWorker accepted Pace %d (background %v)", o.Pace, o.Background)
		}
	}
}
