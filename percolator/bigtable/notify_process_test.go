package bigtable_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/bigtable"
)

// markObserver copies in to out, slowly enough that a kill lands among
// runs.
var markObserver = percolator.Observer{Name: "mark", Column: "in", Run: func(ctx context.Context, tx *percolator.Tx, row, col string) error {
	v, err := tx.Get(ctx, row, col)
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Millisecond)
	return tx.Set(row, "out", v)
}}

// markChild runs a worker of markObserver until its stdin closes.
func markChild(ctx context.Context, db *percolator.DB) error {
	w, err := percolator.NewWorker(db, percolator.WorkerOptions{Workers: 4, IdleMin: 5 * time.Millisecond, IdleMax: 100 * time.Millisecond}, markObserver)
	if err != nil {
		return err
	}
	w.Start()
	defer w.Close()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
	}
	return in.Err()
}

// TestNotifyProcessesKilled runs the observer in three worker processes
// on one table, each scanning only the buckets it owns, while this
// process notifies rows; one worker process is killed with SIGKILL (its
// member row stays until its beat is stale), another joins later and one
// leaves: every notification is still observed, and none is left.
func TestNotifyProcessesKilled(t *testing.T) {
	table := newTable(t)
	ctx := t.Context()
	st, err := bigtable.Open(ctx, bigtable.Config{Project: project, Instance: instance, Table: table})
	if err != nil {
		t.Fatal(err)
	}
	opt := processOptions
	opt.Observed = []string{"in"}
	db, err := percolator.Open(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer db.Close()
	var kids []*child
	for range 3 {
		kids = append(kids, startChild(t, "mark", table))
	}
	const rounds, perRound = 8, 40
	for r := range rounds {
		err := db.Update(ctx, func(tx *percolator.Tx) error {
			for i := range perRound {
				if err := tx.Set(fmt.Sprintf("r%d/%03d", r, i), "in", []byte(fmt.Sprint(r, i))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		switch r {
		case 2: // a crash: its rows wait for its beat to go stale
			kids[0].cmd.Process.Signal(os.Kill)
			kids[0].cmd.Wait()
		case 4: // a join
			kids[0] = startChild(t, "mark", table)
		case 6: // a leave: its member row goes at once
			kids[1].in.Close()
			if err := kids[1].cmd.Wait(); err != nil {
				t.Errorf("leaving worker: %v", err)
			}
			kids = kids[:1+copy(kids[1:], kids[2:])]
		}
		time.Sleep(300 * time.Millisecond)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		left, missing := 0, 0
		p, err := db.Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		left = p["in"]
		err = db.View(ctx, func(tx *percolator.Tx) error {
			missing = 0
			for r := range rounds {
				for i := range perRound {
					v, err := tx.Get(ctx, fmt.Sprintf("r%d/%03d", r, i), "out")
					if err != nil {
						return err
					}
					if string(v) != fmt.Sprint(r, i) {
						missing++
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if left == 0 && missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d notifications left and %d of %d rows not observed after a minute", left, missing, rounds*perRound)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, c := range kids {
		c.in.Close()
		if err := c.cmd.Wait(); err != nil {
			t.Errorf("worker process: %v", err)
		}
	}
}
