package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// testCancelledContext checks that calls with a cancelled or expired context
// return (with an error or not), keep rows atomic, and leave the store
// usable.
func testCancelledContext(t *testing.T, s percolator.Store) {
	for i := range 50 {
		row := fmt.Sprintf("ctx/%02d", i)
		mutate(t, s, row, fput("d", "a", 10))
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel2()

	es, exclusive := s.(percolator.ExclusiveStore)
	c, compactor := s.(percolator.Compactor)
	two := func(ts uint64) muts { return muts{fput("l", "c", ts), fput("w", "c", ts)} }
	for _, cc := range []struct {
		name string
		ctx  context.Context
	}{{"Cancelled", cancelled}, {"Expired", expired}} {
		ctx := cc.ctx
		t.Run(cc.name, func(t *testing.T) {
			calls := []struct {
				name string
				fn   func()
			}{
				{"EnsureFamilies", func() { s.EnsureFamilies(ctx, Families) }},
				{"ReadRow", func() { s.ReadRow(ctx, "ctx/00", fl{Family: "d"}) }},
				{"ReadRows", func() {
					s.ReadRows(ctx, "", "", func(string, []percolator.Cell) bool { return true }, fl{Family: "d"}, fl{Family: "n"})
				}},
				{"CheckAndMutateRow", func() { s.CheckAndMutateRow(ctx, "ctx/cam/"+cc.name, []fl{{Family: "l"}}, nil, two(1)) }},
				{"MutateRows", func() {
					s.MutateRows(ctx, []percolator.RowMutation{{Row: "ctx/mr/" + cc.name, Mutations: two(1)}, {Row: "ctx/mr2/" + cc.name, Mutations: two(1)}})
				}},
				{"Increment", func() { s.Increment(ctx, "ctx/inc", "m", "c", 1) }},
			}
			if exclusive {
				calls = append(calls, struct {
					name string
					fn   func()
				}{"CheckAndMutateRowAt", func() {
					es.CheckAndMutateRowAt(ctx, "ctx/camat/"+cc.name, []fl{{Family: "l"}}, func() (uint64, error) { return 1, nil }, two)
				}})
			}
			if compactor {
				calls = append(calls, struct {
					name string
					fn   func()
				}{"Compact", func() { c.Compact(ctx, 1) }})
			}
			for _, call := range calls {
				t.Run(call.name, func(t *testing.T) { returns(t, call.name, call.fn) })
			}
			for _, row := range []string{"ctx/cam/", "ctx/mr/", "ctx/mr2/", "ctx/camat/"} {
				checkAllOrNothing(t, s, row+cc.name, 1)
			}
		})
	}

	t.Run("CancelDuringReadRows", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		returns(t, "ReadRows cancelled by fn", func() {
			s.ReadRows(ctx, "ctx/", "ctx0", func(string, []percolator.Cell) bool {
				cancel()
				return true
			}, fl{Family: "d"})
		})
	})

	t.Run("CancelDuringTs", func(t *testing.T) {
		if !exclusive {
			t.Skip("the store does not implement percolator.ExclusiveStore")
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		returns(t, "CheckAndMutateRowAt cancelled in ts", func() {
			es.CheckAndMutateRowAt(ctx, "ctx/ts", []fl{{Family: "l"}}, func() (uint64, error) {
				cancel()
				return 3, nil
			}, two)
		})
		checkAllOrNothing(t, s, "ctx/ts", 3)
	})

	t.Run("StillUsable", func(t *testing.T) {
		mutate(t, s, "ctx/00", fput("d", "a", 20))
		checkCells(t, "row after cancelled calls", readRow(t, s, "ctx/00", fl{Family: "d"}), cells(fx, k("d", "a", 20), k("d", "a", 10)))
		if _, err := s.Increment(t.Context(), "ctx/inc2", "m", "c", 1); err != nil {
			t.Fatal(err)
		}
		matched, err := s.CheckAndMutateRow(t.Context(), "ctx/01", []fl{{Family: "d"}}, muts{fput("w", "c", 11)}, nil)
		if err != nil || !matched {
			t.Fatalf("CheckAndMutateRow after cancelled calls: matched = %v, err = %v", matched, err)
		}
		got := readRows(t, s, "ctx/", "ctx/\xff", fl{Family: "d", MaxTs: 10})
		if len(got) != 50 {
			t.Errorf("ReadRows after cancelled calls returned %d rows, want 50", len(got))
		}
	})
}

// checkAllOrNothing checks that row holds both l:c@ts and w:c@ts, or neither.
func checkAllOrNothing(t *testing.T, s percolator.Store, row string, ts uint64) {
	t.Helper()
	got := readRow(t, s, row, allFamilies()...)
	if len(got) != 0 && !sameCells(got, cells(fx, k("l", "c", ts), k("w", "c", ts)), false) {
		t.Errorf("row %q after a call with a cancelled context = %s, want both l:c@%d and w:c@%d or nothing", row, fmtCells(got), ts, ts)
	}
}
