package storetest

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

var errOracle = errors.New("storetest: oracle unavailable")

// testExclusive tests percolator.ExclusiveStore.CheckAndMutateRowAt.
func testExclusive(t *testing.T, s percolator.Store) {
	es, ok := s.(percolator.ExclusiveStore)
	if !ok {
		t.Skip("the store does not implement percolator.ExclusiveStore")
	}
	ctx := t.Context()
	lockPred := []fl{{Family: "l", Column: "c"}}

	// call runs CheckAndMutateRowAt with a ts function returning ts, err and
	// counts the calls of ts and ifNoMatch.
	type counts struct{ ts, build atomic.Int32 }
	call := func(t *testing.T, row string, pred []fl, ts uint64, tsErr error, build func(uint64) muts) (bool, *counts, error) {
		t.Helper()
		var c counts
		matched, err := es.CheckAndMutateRowAt(ctx, row, pred,
			func() (uint64, error) {
				c.ts.Add(1)
				return ts, tsErr
			},
			func(got uint64) muts {
				c.build.Add(1)
				if got != ts {
					t.Errorf("ifNoMatch called with ts %d, want %d (the value ts returned)", got, ts)
				}
				return build(got)
			})
		return matched, &c, err
	}
	lockAndWrite := func(ts uint64) muts { return muts{fput("l", "c", ts), fput("w", "c", ts)} }

	t.Run("Matched", func(t *testing.T) {
		const row = "x/matched"
		mutate(t, s, row, fput("l", "c", 5))
		matched, c, err := call(t, row, lockPred, 7, nil, lockAndWrite)
		if err != nil {
			t.Fatal(err)
		}
		if !matched {
			t.Errorf("matched = false, want true")
		}
		if c.ts.Load() != 0 || c.build.Load() != 0 {
			t.Errorf("predicate matched, yet ts was called %d times and ifNoMatch %d times, want 0", c.ts.Load(), c.build.Load())
		}
		checkCells(t, "row", readRow(t, s, row, allFamilies()...), cells(fx, k("l", "c", 5)))
	})

	t.Run("NotMatched", func(t *testing.T) {
		const row = "x/notmatched"
		mutate(t, s, row, fput("d", "a", 1), fput("l", "x", 3))
		matched, c, err := call(t, row, lockPred, 42, nil, lockAndWrite)
		if err != nil {
			t.Fatal(err)
		}
		if matched {
			t.Errorf("matched = true, want false")
		}
		if c.ts.Load() != 1 || c.build.Load() != 1 {
			t.Errorf("ts called %d times and ifNoMatch %d times, want 1 each", c.ts.Load(), c.build.Load())
		}
		checkCells(t, "row", readRow(t, s, row, allFamilies()...), cells(fx, k("d", "a", 1), k("l", "c", 42), k("l", "x", 3), k("w", "c", 42)))
	})

	t.Run("TsRangePredicate", func(t *testing.T) {
		const row = "x/tsrange"
		mutate(t, s, row, fput("w", "c", 10))
		// Percolator's conflict check with start ts 11: the write at 10 is older.
		pred := []fl{{Family: "l", Column: "c", KeysOnly: true}, {Family: "w", Column: "c", MinTs: 11, KeysOnly: true}}
		matched, c, err := call(t, row, pred, 50, nil, lockAndWrite)
		if err != nil || matched || c.ts.Load() != 1 {
			t.Errorf("predicate not matching the older write: matched = %v, err = %v, ts calls = %d; want false, nil, 1", matched, err, c.ts.Load())
		}
		// Start ts 10: conflicts with the write at 10 and with the lock at 50.
		pred[1].MinTs = 10
		matched, c, err = call(t, row, pred, 60, nil, lockAndWrite)
		if err != nil || !matched || c.ts.Load() != 0 {
			t.Errorf("predicate matching: matched = %v, err = %v, ts calls = %d; want true, nil, 0", matched, err, c.ts.Load())
		}
		checkCells(t, "row", readRow(t, s, row, allFamilies()...), cells(fx, k("l", "c", 50), k("w", "c", 50), k("w", "c", 10)))
	})

	t.Run("TsError", func(t *testing.T) {
		const row = "x/tserror"
		mutate(t, s, row, fput("d", "a", 1))
		matched, c, err := call(t, row, lockPred, 8, errOracle, lockAndWrite)
		if err == nil {
			t.Errorf("CheckAndMutateRowAt with a failing ts returned (matched=%v, nil), want an error", matched)
		}
		if c.ts.Load() != 1 {
			t.Errorf("ts called %d times, want 1", c.ts.Load())
		}
		// The row is not left held.
		var got []percolator.Cell
		var rerr error
		returns(t, "ReadRow after a failed ts", func() { got, rerr = s.ReadRow(ctx, row, allFamilies()...) })
		if rerr != nil {
			t.Fatal(rerr)
		}
		checkCells(t, "row after the failed call", got, cells(fx, k("d", "a", 1)))
		returns(t, "CheckAndMutateRowAt after a failed ts", func() {
			matched, _, err = call(t, row, lockPred, 9, nil, lockAndWrite)
		})
		if err != nil || matched {
			t.Errorf("CheckAndMutateRowAt after a failed ts: matched = %v, err = %v; want false, nil", matched, err)
		}
		checkCells(t, "row", readRow(t, s, row, allFamilies()...), cells(fx, k("d", "a", 1), k("l", "c", 9), k("w", "c", 9)))
	})

	t.Run("Rows", func(t *testing.T) { testExclusiveRows(t, es) })
	t.Run("HoldsRow", func(t *testing.T) { testExclusiveHoldsRow(t, es) })
	t.Run("OneWinner", func(t *testing.T) { testExclusiveOneWinner(t, es) })
	t.Run("ReadsAfterTs", func(t *testing.T) { testExclusiveReadsAfterTs(t, es) })
}

// testExclusiveHoldsRow starts reads of the row while ts is running (ts then
// sleeps 20ms): they must return the state after the mutation.
func testExclusiveHoldsRow(t *testing.T, es percolator.ExclusiveStore) {
	ctx := t.Context()
	const row, commitTs = "x/held", 77
	mutate(t, es, row, fput("d", "a", 1))
	type result struct {
		how     string
		cells   []percolator.Cell
		matched bool
		err     error
	}
	results := make(chan result, 3)
	readers := []func(){
		func() {
			cs, err := es.ReadRow(ctx, row, fl{Family: "l"}, fl{Family: "w"})
			results <- result{how: "ReadRow", cells: cs, err: err}
		},
		func() {
			var cs []percolator.Cell
			err := es.ReadRows(ctx, row, row+"\x00", func(_ string, c []percolator.Cell) bool {
				cs = c
				return true
			}, fl{Family: "l"}, fl{Family: "w"})
			results <- result{how: "ReadRows", cells: cs, err: err}
		},
		func() {
			// A competing CheckAndMutateRow must see the lock written.
			matched, err := es.CheckAndMutateRow(ctx, row, []fl{{Family: "l", Column: "c"}}, muts{fput("d", "b", 1)}, muts{fput("d", "z", 1)})
			results <- result{how: "CheckAndMutateRow", matched: matched, err: err}
		},
	}
	var tsCalls atomic.Int32
	matched, err := es.CheckAndMutateRowAt(ctx, row, []fl{{Family: "l", Column: "c"}},
		func() (uint64, error) {
			if tsCalls.Add(1) > 1 {
				return commitTs, nil
			}
			var started sync.WaitGroup
			for _, r := range readers {
				started.Add(1)
				go func() {
					started.Done()
					r()
				}()
			}
			started.Wait()
			time.Sleep(20 * time.Millisecond)
			return commitTs, nil
		},
		func(ts uint64) muts { return muts{fput("l", "c", ts), fput("w", "c", ts)} })
	if err != nil {
		t.Fatal(err)
	}
	if matched {
		t.Fatal("matched = true, want false")
	}
	want := cells(fx, k("l", "c", commitTs), k("w", "c", commitTs))
	for range readers {
		select {
		case r := <-results:
			switch {
			case r.err != nil:
				t.Errorf("%s started while the row was held: %v", r.how, r.err)
			case r.how == "CheckAndMutateRow":
				if !r.matched {
					t.Errorf("CheckAndMutateRow started while the row was held did not see the lock written (matched = false)")
				}
			default:
				if !sameCells(r.cells, want, false) {
					t.Errorf("%s started while the row was held returned %s, want the state after the mutation %s", r.how, fmtCells(r.cells), fmtCells(want))
				}
			}
		case <-time.After(hangTimeout):
			t.Fatalf("reads started while the row was held did not return within %v", hangTimeout)
		}
	}
	checkCells(t, "final row", readRow(t, es, row, allFamilies()...), cells(fx, k("d", "a", 1), k("d", "b", 1), k("l", "c", commitTs), k("w", "c", commitTs)))
}

// testExclusiveOneWinner races CheckAndMutateRowAt calls taking the same
// lock: per round ts is called exactly once, by the one call not matching.
func testExclusiveOneWinner(t *testing.T, es percolator.ExclusiveStore) {
	const goroutines, rounds = 16, 50
	ctx := t.Context()
	var oracle atomic.Uint64
	oracle.Store(100)
	for r := range rounds {
		row := fmt.Sprintf("x/race/%02d", r)
		start := make(chan struct{})
		var wg sync.WaitGroup
		var tsCalls, notMatched, winner atomic.Int32
		var handed, built atomic.Uint64
		for g := range goroutines {
			wg.Go(func() {
				<-start
				matched, err := es.CheckAndMutateRowAt(ctx, row, []fl{{Family: "l", Column: "c"}},
					func() (uint64, error) {
						tsCalls.Add(1)
						ts := oracle.Add(1)
						handed.Store(ts)
						return ts, nil
					},
					func(ts uint64) muts {
						built.Store(ts)
						return muts{setv("l", "c", ts, fmt.Sprint(g))}
					})
				if err != nil {
					t.Errorf("round %d goroutine %d: %v", r, g, err)
					return
				}
				if !matched {
					notMatched.Add(1)
					winner.Store(int32(g))
				}
			})
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			return
		}
		if n, c := notMatched.Load(), tsCalls.Load(); n != 1 || c != 1 {
			t.Fatalf("round %d: %d calls saw matched=false and ts was called %d times, want 1 and 1", r, n, c)
		}
		if built.Load() != handed.Load() {
			t.Fatalf("round %d: ifNoMatch got ts %d, ts returned %d", r, built.Load(), handed.Load())
		}
		want := []percolator.Cell{{Family: "l", Column: "c", Ts: handed.Load(), Value: []byte(fmt.Sprint(winner.Load()))}}
		if got := readRow(t, es, row, fl{Family: "l"}); !sameCells(got, want, false) {
			t.Fatalf("round %d: lock = %s, want %s", r, fmtCells(got), fmtCells(want))
		}
	}
}

// testExclusiveReadsAfterTs checks the property Percolator needs from
// CheckAndMutateRowAt: a read that begins after the commit timestamp was
// allocated (its own timestamp, from the same oracle, is larger) sees the
// commit. Writers lock rows with timestamps from an oracle; readers take a
// timestamp from the oracle, then read a row; afterwards every read with a
// larger timestamp than the row's lock must have seen it.
func testExclusiveReadsAfterTs(t *testing.T, es percolator.ExclusiveStore) {
	const rows, writers, readers = 64, 4, 3
	ctx := t.Context()
	rowKey := func(i int) string { return fmt.Sprintf("x/oracle/%02d", i) }
	var oracle atomic.Uint64
	oracle.Store(1000)
	var writeTs, tsCalls [rows]atomic.Uint64

	type observation struct {
		how      string
		row      int
		readTs   uint64
		seenTs   uint64 // 0: no lock seen
		seenMany bool
	}
	var mu sync.Mutex
	var obs []observation
	record := func(o observation) {
		mu.Lock()
		obs = append(obs, o)
		mu.Unlock()
	}
	lockTs := func(cs []percolator.Cell) (uint64, bool) {
		if len(cs) == 0 {
			return 0, false
		}
		return cs[0].Ts, len(cs) > 1
	}

	var done atomic.Bool
	var wwg, rwg sync.WaitGroup
	for w := range writers {
		wwg.Go(func() {
			for j := range rows {
				i := (j*5 + w*17) % rows
				_, err := es.CheckAndMutateRowAt(ctx, rowKey(i), []fl{{Family: "l", Column: "c"}},
					func() (uint64, error) {
						ts := oracle.Add(1)
						tsCalls[i].Add(1)
						writeTs[i].Store(ts)
						runtime.Gosched()
						return ts, nil
					},
					func(ts uint64) muts { return muts{fput("l", "c", ts)} })
				if err != nil {
					t.Errorf("writer %d row %d: %v", w, i, err)
					return
				}
			}
		})
	}
	for r := range readers {
		rwg.Go(func() {
			for j := 0; !done.Load(); j++ {
				i := (j*7 + r*13) % rows
				readTs := oracle.Add(1)
				cs, err := es.ReadRow(ctx, rowKey(i), fl{Family: "l", Column: "c"})
				if err != nil {
					t.Errorf("ReadRow: %v", err)
					return
				}
				ts, many := lockTs(cs)
				record(observation{"ReadRow", i, readTs, ts, many})
			}
		})
	}
	rwg.Go(func() {
		for !done.Load() {
			readTs := oracle.Add(1)
			seen := make(map[int]observation)
			err := es.ReadRows(ctx, "x/oracle/", "x/oracle0", func(row string, cs []percolator.Cell) bool {
				var i int
				if _, err := fmt.Sscanf(row, "x/oracle/%02d", &i); err != nil || i < 0 || i >= rows {
					t.Errorf("ReadRows returned row %q outside the range", row)
					return false
				}
				ts, many := lockTs(cs)
				seen[i] = observation{"ReadRows", i, readTs, ts, many}
				return true
			}, fl{Family: "l", Column: "c"})
			if err != nil {
				t.Errorf("ReadRows: %v", err)
				return
			}
			for i := range rows {
				o, ok := seen[i]
				if !ok {
					o = observation{"ReadRows", i, readTs, 0, false}
				}
				record(o)
			}
		}
	})
	wwg.Wait()
	done.Store(true)
	rwg.Wait()
	if t.Failed() {
		return
	}
	for i := range rows {
		if n := tsCalls[i].Load(); n != 1 {
			t.Errorf("row %d: ts called %d times, want 1", i, n)
		}
	}
	bad := 0
	for _, o := range obs {
		w := writeTs[o.row].Load()
		switch {
		case o.seenMany:
			t.Errorf("%s of row %d at %d saw several locks", o.how, o.row, o.readTs)
		case o.seenTs != 0 && o.seenTs != w:
			t.Errorf("%s of row %d at %d saw a lock at %d, but the lock was written at %d", o.how, o.row, o.readTs, o.seenTs, w)
		case w < o.readTs && o.seenTs != w:
			t.Errorf("%s of row %d began after its lock's ts %d was allocated (read ts %d) but did not see the lock", o.how, o.row, w, o.readTs)
		default:
			continue
		}
		if bad++; bad >= 10 {
			t.Fatalf("too many failures")
		}
	}
	for i := range rows {
		want := cells(fx, k("l", "c", writeTs[i].Load()))
		checkCells(t, "lock of "+rowKey(i), readRow(t, es, rowKey(i), allFamilies()...), want)
	}
}

// testExclusiveRows tests CheckAndMutateRowsAt: a predicate matching in
// any row applies nothing; else every row's mutations are applied; a
// mutation of a row not checked, or a failing ts, applies nothing.
func testExclusiveRows(t *testing.T, es percolator.ExclusiveStore) {
	ctx := t.Context()
	lockPred := []fl{{Family: "l", Column: "c"}}
	rows := []string{"x/rows/a", "x/rows/b", "x/rows/c"}
	var tsCalls, builds int
	call := func(checks []percolator.RowPredicate, ts uint64, tsErr error, extra string) (string, error) {
		tsCalls, builds = 0, 0
		return es.CheckAndMutateRowsAt(ctx, checks,
			func() (uint64, error) {
				tsCalls++
				return ts, tsErr
			},
			func(got uint64) []percolator.RowMutation {
				builds++
				var rm []percolator.RowMutation
				for _, c := range checks {
					rm = append(rm, percolator.RowMutation{Row: c.Row, Mutations: muts{fput("l", "c", got), fput("w", "c", got)}})
				}
				if extra != "" {
					rm = append(rm, percolator.RowMutation{Row: extra, Mutations: muts{fput("w", "c", got)}})
				}
				return rm
			})
	}
	checks := func(rows ...string) []percolator.RowPredicate {
		var cs []percolator.RowPredicate
		for _, r := range rows {
			cs = append(cs, percolator.RowPredicate{Row: r, Filters: lockPred})
		}
		return cs
	}
	for _, r := range rows {
		mutate(t, es, r, fput("d", "a", 1))
	}
	mutate(t, es, rows[2], fput("l", "c", 5))
	before := cells(fx, k("d", "a", 1))

	// The third row's lock matches: nothing is applied.
	matched, err := call(checks(rows...), 7, nil, "")
	if err != nil || matched != rows[2] || tsCalls != 0 || builds != 0 {
		t.Errorf("a lock in the third row: matched %q, err %v, ts calls %d, builds %d; want %q, nil, 0, 0", matched, err, tsCalls, builds, rows[2])
	}
	for _, r := range rows[:2] {
		checkCells(t, r+" after a match", readRow(t, es, r, allFamilies()...), before)
	}

	// A failing ts applies nothing.
	if _, err := call(checks(rows[:2]...), 8, errOracle, ""); err == nil {
		t.Error("a failing ts: no error")
	}
	// A mutation of a row not checked is refused, and nothing is applied.
	if _, err := call(checks(rows[:2]...), 9, nil, "x/rows/unchecked"); err == nil {
		t.Error("a mutation of a row not checked: no error")
	}
	for _, r := range rows[:2] {
		checkCells(t, r+" after refused calls", readRow(t, es, r, allFamilies()...), before)
	}
	checkCells(t, "the row not checked", readRow(t, es, "x/rows/unchecked", allFamilies()...), nil)

	// No match: every row is written at the timestamp taken.
	matched, err = call(checks(rows[:2]...), 10, nil, "")
	if err != nil || matched != "" || tsCalls != 1 || builds != 1 {
		t.Fatalf("no match: matched %q, err %v, ts calls %d, builds %d; want \"\", nil, 1, 1", matched, err, tsCalls, builds)
	}
	for _, r := range rows[:2] {
		checkCells(t, r, readRow(t, es, r, allFamilies()...), cells(fx, k("d", "a", 1), k("l", "c", 10), k("w", "c", 10)))
	}
}
