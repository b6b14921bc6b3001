package storetest

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
)

// testCheckAndMutateRowOneWinner races goroutines taking the same lock with
// CheckAndMutateRow: per round exactly one sees matched=false, and the lock
// stored is that one's.
func testCheckAndMutateRowOneWinner(t *testing.T, s percolator.Store) {
	const goroutines, rounds = 32, 100
	ctx := t.Context()
	pred := []fl{{Family: "l", Column: "c"}}
	for r := range rounds {
		row := fmt.Sprintf("race/%03d", r)
		start := make(chan struct{})
		var wg sync.WaitGroup
		var winners atomic.Int32
		var winner atomic.Int32
		for g := range goroutines {
			wg.Go(func() {
				lock := percolator.Mutation{Op: percolator.SetCell, Family: "l", Column: "c", Ts: uint64(g + 1), Value: []byte{byte(g)}}
				<-start
				matched, err := s.CheckAndMutateRow(ctx, row, pred, nil, muts{lock})
				if err != nil {
					t.Errorf("round %d goroutine %d: CheckAndMutateRow: %v", r, g, err)
					return
				}
				if !matched {
					winners.Add(1)
					winner.Store(int32(g))
				}
			})
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			return
		}
		if n := winners.Load(); n != 1 {
			t.Fatalf("round %d: %d of %d goroutines saw matched=false, want exactly 1", r, n, goroutines)
		}
		g := winner.Load()
		want := []percolator.Cell{{Family: "l", Column: "c", Ts: uint64(g + 1), Value: []byte{byte(g)}}}
		got := readRow(t, s, row, fl{Family: "l"})
		if !sameCells(got, want, false) {
			t.Fatalf("round %d: lock = %s, want the winner's (goroutine %d) %s", r, fmtCells(got), g, fmtCells(want))
		}
	}
}

// testIncrementConcurrent checks that concurrent increments are atomic: every
// increment returns a distinct value and none is lost.
func testIncrementConcurrent(t *testing.T, s percolator.Store) {
	const goroutines, per = 16, 200
	ctx := t.Context()
	results := make([][]int64, goroutines)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			<-start
			for range per {
				v, err := s.Increment(ctx, "ctr", "m", "c", 1)
				if err != nil {
					t.Errorf("goroutine %d: Increment: %v", g, err)
					return
				}
				if n := len(results[g]); n > 0 && v <= results[g][n-1] {
					t.Errorf("goroutine %d: Increment returned %d after %d", g, v, results[g][n-1])
				}
				results[g] = append(results[g], v)
			}
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}
	all := slices.Concat(results...)
	slices.Sort(all)
	for i, v := range all {
		if v != int64(i+1) {
			t.Fatalf("sorted results of %d increments by 1: position %d is %d, want %d (lost or duplicated increments)", len(all), i, v, i+1)
		}
	}
	cs := readRow(t, s, "ctr", fl{Family: "m", Column: "c", Latest: true})
	if len(cs) != 1 || len(cs[0].Value) != 8 || binary.BigEndian.Uint64(cs[0].Value) != goroutines*per {
		t.Errorf("counter after %d increments = %s, want %d", goroutines*per, fmtCells(cs), goroutines*per)
	}
}

// testRowAtomicity checks that reads see each row mutation entirely or not at
// all, across families in different locality groups. Every write replaces
// the single version of d:c, l:c, n:c and w:c by version i.
func testRowAtomicity(t *testing.T, s percolator.Store) {
	const row, writes = "atomic", 300
	ctx := t.Context()
	fams := []string{"d", "l", "n", "w"}
	step := func(i uint64) muts {
		var ms muts
		for _, f := range fams {
			ms = append(ms, put(row, f, "c", i), delOlder(f, "c", i))
		}
		return ms
	}
	mutate(t, s, row, step(1)...)
	filters := []fl{{Family: "d"}, {Family: "l"}, {Family: "n"}, {Family: "w"}}
	check := func(how string, cs []percolator.Cell) bool {
		if len(cs) == len(fams) {
			want := make([]percolator.Cell, len(fams))
			for i, f := range fams {
				want[i] = cell(row, f, "c", cs[0].Ts)
			}
			if sameCells(cs, want, false) {
				return true
			}
		}
		t.Errorf("%s saw a partial row mutation: %s", how, fmtCells(cs))
		return false
	}

	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		defer done.Store(true)
		for i := uint64(2); i <= writes; i++ {
			var err error
			if i%2 == 0 {
				err = s.MutateRows(ctx, []percolator.RowMutation{{Row: row, Mutations: step(i)}})
			} else {
				var matched bool
				matched, err = s.CheckAndMutateRow(ctx, row, []fl{{Family: "l", Column: "c", MinTs: i - 1, MaxTs: i - 1}}, step(i), nil)
				if err == nil && !matched {
					t.Errorf("write %d: lock of write %d not found", i, i-1)
					return
				}
			}
			if err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
		}
	})
	wg.Go(func() {
		for !done.Load() {
			cs, err := s.ReadRow(ctx, row, filters...)
			if err != nil {
				t.Errorf("ReadRow: %v", err)
				return
			}
			if !check("ReadRow", cs) {
				return
			}
		}
	})
	wg.Go(func() {
		for !done.Load() {
			ok, seen := true, false
			err := s.ReadRows(ctx, row, row+"\x00", func(r string, cs []percolator.Cell) bool {
				seen = true
				ok = check("ReadRows", cs)
				return ok
			}, filters...)
			if err != nil {
				t.Errorf("ReadRows: %v", err)
				return
			}
			if !seen {
				t.Errorf("ReadRows did not return row %q, which always has cells", row)
				return
			}
			if !ok {
				return
			}
		}
	})
	wg.Wait()
	if !t.Failed() {
		checkCells(t, "final row", readRow(t, s, row, filters...), cells(row, k("d", "c", writes), k("l", "c", writes), k("n", "c", writes), k("w", "c", writes)))
	}
}
