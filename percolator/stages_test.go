package percolator_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// staged is a chain of three observers: P on column "p" marks its row
// done (cell "pdone") and notifies the row's "q" and the one row "sum"'s
// "s"; Q, a background observer, marks its row ("qdone"); S counts, in
// its snapshot, the rows P and Q marked. Each run is recorded.
type staged struct {
	mu   sync.Mutex
	runs map[string]int
	seen [][2]int // (P's marks, Q's marks) as each run of S saw them
	// (P's marks, Q's runs) when the Before of Q's stage ran
	before [][2]int
}

func (s *staged) observers() []percolator.Observer {
	s.runs = make(map[string]int)
	ran := func(name string) {
		s.mu.Lock()
		s.runs[name]++
		s.mu.Unlock()
	}
	return []percolator.Observer{
		{Name: "P", Column: "p", Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
			ran("P")
			if err := tx.Set(row, "pdone", []byte("1")); err != nil {
				return err
			}
			if err := tx.Notify(row, "q"); err != nil {
				return err
			}
			return tx.Notify("sum", "s")
		}},
		{Name: "Q", Column: "q", Background: true, Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
			ran("Q")
			return tx.Set(row, "qdone", []byte("1"))
		}},
		{Name: "S", Column: "s", Run: func(ctx context.Context, tx *percolator.Tx, row, _ string) error {
			ran("S")
			p, err := marks(ctx, tx, "pdone")
			if err != nil {
				return err
			}
			q, err := marks(ctx, tx, "qdone")
			if err != nil {
				return err
			}
			s.mu.Lock()
			s.seen = append(s.seen, [2]int{p, q})
			s.mu.Unlock()
			return nil
		}},
	}
}

// marks counts the rows with a cell col.
func marks(ctx context.Context, tx *percolator.Tx, col string) (int, error) {
	n := 0
	err := tx.Scan(ctx, "", "", col, func(_, c string, _ []byte) bool {
		if c == col {
			n++
		}
		return true
	})
	return n, err
}

func (s *staged) ran(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[name]
}

// stages are P's, Q's and S's; before Q's, P's marks are counted.
func (s *staged) stages(db *percolator.DB) []percolator.Stage {
	return []percolator.Stage{
		{Observers: []string{"P"}},
		{Observers: []string{"Q"}, Before: func(ctx context.Context) error {
			return db.View(ctx, func(tx *percolator.Tx) error {
				n, err := marks(ctx, tx, "pdone")
				s.mu.Lock()
				s.before = append(s.before, [2]int{n, s.runs["Q"]})
				s.mu.Unlock()
				return err
			})
		}},
		{Observers: []string{"S"}},
	}
}

// A staged worker runs no observer before the stages before its own are
// drained, whatever is notified when it starts, and also when a worker is
// stopped mid-stage and another takes over: S runs once, after every P
// and every Q, where unstaged it runs as P's runs come. Once drained, the
// worker runs every observer as soon as it is notified.
func TestStagesDrainInOrder(t *testing.T) {
	const rows, early = 200, 20
	db := openDB(t, percolator.Options{Weak: []string{"p", "q", "s"}})
	for i := range rows {
		if err := db.Notify(bg, fmt.Sprintf("r%03d", i), "p"); err != nil {
			t.Fatal(err)
		}
	}
	// Notifications of later stages there from the start wait too.
	for i := range early {
		if err := db.Notify(bg, fmt.Sprintf("e%03d", i), "q"); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Notify(bg, "sum", "s"); err != nil {
		t.Fatal(err)
	}

	// A first worker stopped mid-way through the first stage.
	var first staged
	w1, err := percolator.NewWorker(db, percolator.WorkerOptions{Stages: first.stages(db), Workers: 2}, first.observers()...)
	if err != nil {
		t.Fatal(err)
	}
	w1.Start()
	for first.ran("P") < rows/4 {
		time.Sleep(time.Millisecond)
	}
	w1.Close()
	if n := first.ran("Q") + first.ran("S"); n != 0 {
		t.Fatalf("Q and S ran %d times while P's stage was not drained", n)
	}

	var s staged
	w := startWorker(t, db, percolator.WorkerOptions{Stages: s.stages(db)}, s.observers()...)
	if !w.Staging() {
		t.Fatal("a worker with stages does not say it is staging")
	}
	waitIdle(t, w)
	for deadline := time.Now().Add(10 * time.Second); w.Staging(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the worker still stages 10 s after it was idle")
		}
	}
	if s.ran("S") != 1 || len(s.seen) != 1 {
		t.Fatalf("S ran %d times, want once: all its notifications waited for its stage", s.ran("S"))
	}
	if got := s.seen[0]; got != [2]int{rows, rows + early} {
		t.Errorf("S saw %d rows marked by P and %d by Q, want %d and %d", got[0], got[1], rows, rows+early)
	}
	if len(s.before) != 1 || s.before[0] != [2]int{rows, 0} {
		t.Errorf("Q's stage's Before saw (P's marks, Q's runs) %v, want once %v", s.before, [2]int{rows, 0})
	}

	// Drained: no more stages.
	if err := db.Notify(bg, "late", "p"); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, w)
	if s.ran("S") != 2 || s.seen[1][0] != rows+1 {
		t.Errorf("after the stages, S ran %d times and last saw %v, want twice, and P's %d marks", s.ran("S"), s.seen[len(s.seen)-1], rows+1)
	}
}

// A stage naming no observer of the worker is an error.
func TestStagesUnknownObserver(t *testing.T) {
	db := openDB(t, percolator.Options{Weak: []string{"p", "q", "s"}})
	var s staged
	_, err := percolator.NewWorker(db, percolator.WorkerOptions{Stages: []percolator.Stage{{Observers: []string{"P"}}, {Observers: []string{"X"}}}}, s.observers()...)
	if !errors.Is(err, percolator.ErrInvalid) {
		t.Fatalf("NewWorker with a stage naming X: %v, want ErrInvalid", err)
	}
}
