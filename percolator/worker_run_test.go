package percolator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
)

// Run runs the worker until its context ends, then closes it: an observer
// runs while it does, none after, and Run returns nil.
func TestWorkerRun(t *testing.T) {
	db := openDB(t, percolator.Options{Observed: []string{"a"}})
	ran := make(chan string, 10)
	w, err := percolator.NewWorker(db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: 10 * time.Millisecond},
		percolator.Observer{Name: "oa", Column: "a", Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
			ran <- row
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	set(t, db, "r1", "a", "x")
	if row := <-ran; row != "r1" {
		t.Fatalf("ran on %q", row)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	set(t, db, "r2", "a", "x") // after Run returned: nothing runs it
	select {
	case row := <-ran:
		t.Fatalf("ran on %q after Run returned", row)
	case <-time.After(50 * time.Millisecond):
	}
}

// A weak observer's run that writes nothing commits nothing (its ack is
// never read): it counts as a run and as empty, not as a commit, and its
// notification is gone.
func TestWeakRunWritingNothingIsEmpty(t *testing.T) {
	db := openDB(t, percolator.Options{Weak: []string{"c"}})
	o := percolator.Observer{Name: "reader", Column: "c", Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
		_, err := tx.Get(ctx, row, "d:x")
		return err
	}}
	w := startWorker(t, db, percolator.WorkerOptions{}, o)
	if err := db.Notify(bg, "r", "c"); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, w)
	s := total([]*percolator.Worker{w}, "reader")
	if s.Runs != 1 || s.Empty != 1 || s.Commits != 0 {
		t.Fatalf("runs %d, empty %d, commits %d; want 1, 1, 0", s.Runs, s.Empty, s.Commits)
	}
}

// TestEmptyRunTellsWatchers: a run that commits nothing still deletes its
// notification, and a watcher counting pending notifications (the
// engine's status, its idle check) must hear of it; else its count stands
// until it looks again on its own (a minute, in cmd/search).
func TestEmptyRunTellsWatchers(t *testing.T) {
	db := openDB(t, percolator.Options{Weak: []string{"c"}})
	release := make(chan struct{})
	o := percolator.Observer{Name: "reader", Column: "c", Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
		<-release
		_, err := tx.Get(ctx, row, "d:x")
		return err
	}}
	w := startWorker(t, db, percolator.WorkerOptions{}, o)
	changed, stop := db.Watch("")
	defer stop()
	if err := db.Notify(bg, "r", "c"); err != nil {
		t.Fatal(err)
	}
	select { // a token from before the run (Notify gives none today)
	case <-changed:
	default:
	}
	close(release)
	waitIdle(t, w)
	if s := total([]*percolator.Worker{w}, "reader"); s.Empty != 1 {
		t.Fatalf("%d empty runs, want 1", s.Empty)
	}
	select {
	case <-changed:
	default:
		t.Fatal("the notification was deleted and the watcher was not told")
	}
}

// A worker whose store is closed under it stops once its passes have
// failed for StopAfter, and Run returns why: the store's error, wrapped in
// ErrStoreFailing.
func TestWorkerRunStopsOnDeadStore(t *testing.T) {
	st := openStore(t, t.TempDir())
	db, err := percolator.Open(context.Background(), st, percolator.Options{Observed: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ran := make(chan string, 10)
	w, err := percolator.NewWorker(db, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: 10 * time.Millisecond, StopAfter: 100 * time.Millisecond},
		percolator.Observer{Name: "oa", Column: "a", Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
			ran <- row
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	set(t, db, "r1", "a", "x")
	if row := <-ran; row != "r1" {
		t.Fatalf("ran on %q", row)
	}
	select {
	case err := <-done:
		t.Fatalf("Run returned %v on a live store", err)
	case <-time.After(300 * time.Millisecond): // thrice StopAfter: passes succeed meanwhile
	}
	closed := time.Now()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, percolator.ErrStoreFailing) || !errors.Is(err, badger.ErrClosed) {
			t.Fatalf("Run = %v, want ErrStoreFailing wrapping badger.ErrClosed", err)
		}
		if took := time.Since(closed); took < 100*time.Millisecond {
			t.Fatalf("Run returned %s after the store closed, before StopAfter", took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run still running 10s after its store closed")
	}
}
