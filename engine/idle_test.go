package engine

import (
	"context"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// workerStill lets the idle look skip reading the notifications only when
// the worker runs nothing and ran nothing since the previous look: never
// while an observer runs, never at the first look after a run.
func TestWorkerStill(t *testing.T) {
	e, ctx, release, started := heldEngine(t)
	if !e.workerStill() {
		t.Error("a worker that never ran is not still")
	}
	startRun(t, e, ctx, started)
	if e.workerStill() {
		t.Error("still while an observer runs")
	}
	close(release)
	for e.Worker.Inflight() > 0 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if e.workerStill() {
		t.Error("still at the first look after a run")
	}
	if !e.workerStill() {
		t.Error("not still at the second look, with nothing run since the first")
	}
}

// heldEngine runs an engine, until cleanup, whose one observer (on
// webtable.DocDirty) holds every run until release is closed; started
// gets a token as a run begins. ctx is the engine's, done at cleanup or
// after 30 s.
func heldEngine(t *testing.T) (e *Engine, ctx context.Context, release, started chan struct{}) {
	t.Helper()
	release, started = make(chan struct{}), make(chan struct{}, 1)
	obs := percolator.Observer{Name: "block", Column: webtable.DocDirty, Run: func(ctx context.Context, _ *percolator.Tx, _, _ string) error {
		select {
		case started <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}}
	e, err := Open(context.Background(), Config{Dir: t.TempDir(), Observers: []percolator.Observer{obs}, NoFeeder: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return e, ctx, release, started
}

// A Stats computed while the engine worked says busy; once the work is
// over, Stats says idle within about a second, however long the busy one
// was to be served again (its scan of a big table took long). A process
// that did nothing since keeps serving the busy one.
func TestStatsTurnIdleBeforeExpiry(t *testing.T) {
	e, ctx, release, started := heldEngine(t)
	startRun(t, e, ctx, started)
	s, err := e.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Idle {
		t.Fatal("idle while an observer runs")
	}
	e.statsMu.Lock()
	e.statsKeep = time.Hour // as after a count that took 400 s
	work := e.statsWork
	e.statsMu.Unlock()

	// Nothing done since: the busy Stats stands, and no look is made.
	for range 3 {
		if s, err := e.Stats(ctx); err != nil || s.Idle {
			t.Fatalf("nothing done since the busy Stats: idle %v, err %v", s.Idle, err)
		}
	}
	e.statsMu.Lock()
	looked := !e.nextLook.IsZero()
	e.statsMu.Unlock()
	if looked {
		t.Error("looked at the table with nothing done since the busy Stats")
	}

	close(release)
	began := time.Now()
	for {
		s, err := e.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.Idle {
			break
		}
		if time.Since(began) > 5*time.Second {
			t.Fatal("Stats not idle 5 s after the last work")
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	if e.statsWork == work {
		t.Error("the idle Stats was not computed afresh")
	}
}

// startRun notifies heldEngine's observer and returns once its run has
// begun (and holds until release is closed).
func startRun(t *testing.T, e *Engine, ctx context.Context, started <-chan struct{}) {
	t.Helper()
	if err := e.DB.Notify(ctx, "r", webtable.DocDirty); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the observer never ran")
	}
}
