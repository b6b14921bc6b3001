package percolator_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// chain is two observers feeding a delayed background observer B (column
// "cb", row "b"): A, itself background and delayed, on column "a", and F,
// foreground, on column "f". Each records when it ran.
type chain struct {
	mu   sync.Mutex
	runs map[string][]time.Time // by observer name
}

func (c *chain) observers(delay time.Duration) []percolator.Observer {
	c.runs = make(map[string][]time.Time)
	record := func(name string, next bool) func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
		return func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
			c.mu.Lock()
			c.runs[name] = append(c.runs[name], time.Now())
			c.mu.Unlock()
			if next {
				return tx.Notify("b", "cb")
			}
			return nil
		}
	}
	return []percolator.Observer{
		{Name: "F", Column: "f", Run: record("F", true)},
		{Name: "A", Column: "a", Background: true, Delay: delay, MaxDelay: time.Minute, Run: record("A", true)},
		{Name: "B", Column: "cb", Background: true, Delay: delay, MaxDelay: time.Minute, Run: record("B", false)},
	}
}

func (c *chain) ran(name string) []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.runs[name]...)
}

// A delayed background observer notified only by another one's runs
// does not wait its own Delay once the worker has settled, and it waits
// for every run of the observer before it: two runs of A, half a Delay
// apart, both notifying B's row, make one run of B soon after the second.
func TestChainedBackgroundSkipsSecondDelay(t *testing.T) {
	const delay = 2 * time.Second
	db := openDB(t, percolator.Options{Weak: []string{"a", "cb", "f"}})
	var c chain
	w := startWorker(t, db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: time.Minute}, c.observers(delay)...)
	for _, row := range []string{"a1", "a2"} {
		if err := db.Notify(bg, row, "a"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay / 2)
	}
	waitIdle(t, w)
	a, b := c.ran("A"), c.ran("B")
	if len(a) != 2 || len(b) != 1 {
		t.Fatalf("A ran %d times and B %d, want 2 and 1 (B waits for A's second run)", len(a), len(b))
	}
	if b[0].Before(a[1]) {
		t.Fatalf("B ran %v before A's second run", a[1].Sub(b[0]))
	}
	if after := b[0].Sub(a[1]); after >= delay/2 {
		t.Errorf("B ran %v after A's last run, want well within its Delay %v", after, delay)
	}
}

// A notification the foreground wrote still waits the whole Delay, which
// is what gathers the anchors of pages arriving one by one.
func TestChainedForegroundKeepsDelay(t *testing.T) {
	const delay = time.Second
	db := openDB(t, percolator.Options{Weak: []string{"a", "cb", "f"}})
	var c chain
	w := startWorker(t, db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: time.Minute}, c.observers(delay)...)
	if err := db.Notify(bg, "f1", "f"); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, w)
	f, b := c.ran("F"), c.ran("B")
	if len(f) != 1 || len(b) != 1 {
		t.Fatalf("F ran %d times and B %d, want 1 and 1", len(f), len(b))
	}
	if after := b[0].Sub(f[0]); after < delay-2*time.Millisecond {
		t.Errorf("B ran %v after F, want ≥ its Delay %v", after, delay)
	}
}

// A run of an observer that covers a column (Observer.Covers) answers the
// notifications of that column its task saw on the row, older than its
// start: B's notification waiting for its Delay goes with F's run, and
// one written after F's run still runs B.
func TestCoversAnswersWaitingNotifications(t *testing.T) {
	const delay = 500 * time.Millisecond
	db := openDB(t, percolator.Options{Weak: []string{"cb", "f"}})
	var c chain
	obs := c.observers(delay)
	f, b := obs[0], obs[2]
	f.Covers = []string{"cb"}
	f.Run = func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
		c.mu.Lock()
		c.runs["F"] = append(c.runs["F"], time.Now())
		c.mu.Unlock()
		return tx.Set(row, "out", []byte("x"))
	}
	w := startWorker(t, db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: time.Minute}, f, b)
	if err := db.Notify(bg, "r", "cb"); err != nil {
		t.Fatal(err)
	}
	if err := db.Notify(bg, "r", "f"); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, w)
	if f, b := c.ran("F"), c.ran("B"); len(f) != 1 || len(b) != 0 {
		t.Fatalf("F ran %d times and B %d, want 1 and 0 (F covers B's notification)", len(f), len(b))
	}
	if err := db.Notify(bg, "r", "cb"); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, w)
	if b := c.ran("B"); len(b) != 1 {
		t.Fatalf("B ran %d times after a notification newer than F's run, want 1", len(b))
	}
}

func TestCoversMustBeWeak(t *testing.T) {
	db := openDB(t, percolator.Options{Observed: []string{"s"}, Weak: []string{"f"}})
	_, err := percolator.NewWorker(db, percolator.WorkerOptions{}, percolator.Observer{Name: "F", Column: "f", Covers: []string{"s"},
		Run: func(context.Context, *percolator.Tx, string, string) error { return nil }})
	if err == nil {
		t.Fatal("NewWorker accepted an observer covering a column that is not weak")
	}
}
