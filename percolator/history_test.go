package percolator_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// TestHistory records every transaction of a random workload (reads, writes
// of unique values, commits abandoned at every step) and checks the history
// against snapshot isolation: each read saw exactly the last value committed
// before the reader's start timestamp, two committed writers of one key never
// overlap, and the final state is the last committed write of every key.
func TestHistory(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, percolator.Options{})
	const keys = 24
	key := func(i int) (string, string) { return fmt.Sprintf("h/%02d", i/2), fmt.Sprintf("k%02d", i) }

	type txnRec struct {
		start, commit uint64
		committed     bool
		reads         map[int]string // "" = missing
		writes        map[int]string
	}
	var (
		mu   sync.Mutex
		hist []txnRec
		wg   sync.WaitGroup
		errs = make(chan error, 8)
	)
	deadline := time.Now().Add(1500 * time.Millisecond)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for n := 0; time.Now().Before(deadline); n++ {
				tx, err := db.Begin(ctx)
				if err != nil {
					errs <- err
					return
				}
				rec := txnRec{start: tx.StartTs(), reads: map[int]string{}, writes: map[int]string{}}
				crash := percolator.CrashPoint(0)
				if r.IntN(8) == 0 {
					crash = percolator.CrashPoint(1 + r.IntN(4))
					percolator.SetCrash(tx, func(p percolator.CrashPoint) bool { return p == crash })
				}
				for range 1 + r.IntN(3) {
					k := r.IntN(keys)
					row, col := key(k)
					v, err := tx.Get(ctx, row, col)
					if errors.Is(err, percolator.ErrLocked) {
						tx.Rollback()
						rec.reads = nil
						break
					}
					if err != nil {
						errs <- err
						return
					}
					rec.reads[k] = string(v)
				}
				if rec.reads == nil {
					continue
				}
				for range 1 + r.IntN(2) {
					k := r.IntN(keys)
					v := fmt.Sprintf("g%d-%d", g, n)
					row, col := key(k)
					tx.Set(row, col, []byte(v))
					rec.writes[k] = v
				}
				err = tx.Commit(ctx)
				switch {
				case err == nil:
					rec.committed, rec.commit = true, tx.CommitTs()
				case errors.Is(err, percolator.ErrCrashed):
					if crash >= percolator.CrashAfterPrimaryCommit {
						rec.committed, rec.commit = true, tx.CommitTs()
					}
				case errors.Is(err, percolator.ErrConflict):
				default:
					errs <- err
					return
				}
				mu.Lock()
				hist = append(hist, rec)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// Committed writes per key, in commit order.
	type version struct {
		start, commit uint64
		value         string
	}
	byKey := make(map[int][]version)
	committed := 0
	for _, h := range hist {
		if !h.committed {
			continue
		}
		committed++
		for k, v := range h.writes {
			byKey[k] = append(byKey[k], version{h.start, h.commit, v})
		}
	}
	for k := range byKey {
		slices.SortFunc(byKey[k], func(a, b version) int { return int(a.commit - b.commit) })
		vs := byKey[k]
		for i := 1; i < len(vs); i++ {
			if vs[i].start < vs[i-1].commit {
				t.Errorf("key %d: writers [%d,%d] and [%d,%d] overlap: lost update", k, vs[i-1].start, vs[i-1].commit, vs[i].start, vs[i].commit)
			}
		}
	}
	expect := func(k int, at uint64) string {
		want := ""
		for _, v := range byKey[k] {
			if v.commit < at {
				want = v.value
			}
		}
		return want
	}
	reads := 0
	for _, h := range hist {
		for k, got := range h.reads {
			reads++
			if want := expect(k, h.start); got != want {
				t.Errorf("txn@%d read key %d = %q, want %q (last committed before it)", h.start, k, got, want)
			}
		}
	}
	for k := 0; k < keys; k++ {
		row, col := key(k)
		got, _ := get(t, db, row, col)
		if want := expect(k, ^uint64(0)); got != want {
			t.Errorf("final key %d = %q, want %q", k, got, want)
		}
	}
	t.Logf("%d transactions, %d committed, %d reads checked", len(hist), committed, reads)
	if committed < 50 || reads < 100 {
		t.Fatalf("too little history to check")
	}
}
