package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/observers"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
)

// A worker whose table is closed under it stops the engine, and Run says
// why, instead of running on with nothing indexed.
func TestRunReturnsWorkerFailure(t *testing.T) {
	e, err := Open(context.Background(), Config{Dir: t.TempDir(), Observers: observers.Chain(), NoFeeder: true, GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close() // fails: the table is closed already
	// The engine's worker, but one that takes its table for dead at once.
	if e.Worker, err = percolator.NewWorker(e.DB, percolator.WorkerOptions{IdleMin: time.Millisecond, IdleMax: 10 * time.Millisecond, StopAfter: 50 * time.Millisecond}, observers.Chain()...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	time.Sleep(100 * time.Millisecond)
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if ctx.Err() != nil {
		t.Fatal("Run ran on with its table closed")
	}
	if !errors.Is(err, percolator.ErrStoreFailing) || !errors.Is(err, badger.ErrClosed) {
		t.Fatalf("Run = %v, want the worker's ErrStoreFailing wrapping badger.ErrClosed", err)
	}
}
