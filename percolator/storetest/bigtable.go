package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
)

// The cases in this file come from the ways a store on the Cloud Bigtable
// API can get the contract wrong: Interleave returns a cell once per filter
// that matches it, column filters are regular expressions unless a column
// range is used, timestamps are converted to microseconds, and a
// conditional mutation can fail with an unknown outcome.

// RunConditional runs the conditional-mutation cases whose outcome a store
// can tell from the row after the fact (each branch is empty or sets a
// cell): the cases of CheckAndMutateRow and ConditionalOutcome. A backend runs it on a connection that fails calls
// with an unknown outcome, to test how it decides them.
func RunConditional(t *testing.T, open func(t *testing.T) percolator.Store) {
	for _, st := range []suiteTest{
		{"CheckAndMutateRow", testCheckAndMutateRowRecognizable},
		{"ConditionalOutcome", testConditionalOutcome},
	} {
		t.Run(st.name, func(t *testing.T) {
			st.fn(t, newStore(t, open))
		})
	}
}

// testUnionDuplicates checks that a cell matched by several filters of a
// union is returned once, with its value when any matching filter keeps
// values, in ReadRow, ReadRows and as a predicate.
func testUnionDuplicates(t *testing.T, s percolator.Store) {
	const row = "dup"
	mutate(t, s, row, put(row, "w", "a", 10), put(row, "w", "a", 20), put(row, "w", "b", TopTs), put(row, "l", "a", 5))
	all := cells(row, k("l", "a", 5), k("w", "a", 20), k("w", "a", 10), k("w", "b", TopTs))
	tests := []struct {
		name     string
		fs       []fl
		want     []percolator.Cell
		keysOnly bool
	}{
		{"SameFilterTwice", []fl{{Family: "w"}, {Family: "w"}}, all[1:], false},
		{"FamilyAndColumn", []fl{{Family: "w"}, {Family: "w", Column: "a"}}, all[1:], false},
		{"FamilyAndPrefix", []fl{{Family: "w", ColumnPrefix: "b"}, {Family: "w"}, {Family: "l"}}, all, false},
		{"LatestAndAll", []fl{{Family: "w", Latest: true}, {Family: "w", MinTs: 10}}, all[1:], false},
		{"OverlappingRanges", []fl{{Family: "w", MaxTs: 20}, {Family: "w", MinTs: 10, MaxTs: TopTs}}, all[1:], false},
		{"KeysOnlyAndValues", []fl{{Family: "w", KeysOnly: true}, {Family: "w", Column: "a"}, {Family: "w", Column: "b"}}, all[1:], false},
		{"ValuesAndKeysOnly", []fl{{Family: "w", Column: "a"}, {Family: "w", KeysOnly: true}, {Family: "w", Column: "b"}}, all[1:], false},
		{"KeysOnlyTwice", []fl{{Family: "w", KeysOnly: true}, {Family: "w", Column: "a", KeysOnly: true}}, all[1:], true},
		{"TopTs", []fl{{Family: "w", Column: "b", MinTs: TopTs}, {Family: "w", Column: "b", MaxTs: TopTs}}, all[3:], false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := readRow(t, s, row, tc.fs...)
			rows := readRows(t, s, "", "", tc.fs...)
			if tc.keysOnly {
				checkKeys(t, "ReadRow", got, tc.want)
			} else {
				checkCells(t, "ReadRow", got, tc.want)
			}
			checkRows(t, "ReadRows", rows, []scanned{{row, tc.want}}, tc.keysOnly)
			matched, err := s.CheckAndMutateRow(t.Context(), row, tc.fs, nil, nil)
			if err != nil || !matched {
				t.Errorf("CheckAndMutateRow with the union as predicate = %v, %v; want true, nil", matched, err)
			}
		})
	}
}

// metaColumns are column names with regular expression metacharacters; a
// store that matched columns by an unquoted pattern would mix them up.
var metaColumns = []string{
	".", ".*", "a", "a+", "a.b", "a|b", "aab", "acb", "b", "(a)", "[a]", `\`, `\d`, "^a$", "a$", "{1}", "?", "a\nb", "\xff", "\xff\xff",
}

// testColumnMetacharacters checks exact columns and prefixes whose names
// are regular expression syntax, in ReadRow, ReadRows, predicates and
// deletions.
func testColumnMetacharacters(t *testing.T, s percolator.Store) {
	const row = "meta"
	var ms []percolator.Mutation
	for i, c := range metaColumns {
		ms = append(ms, put(row, "d", c, uint64(i+1)))
	}
	mutate(t, s, row, ms...)
	for i, c := range metaColumns {
		want := cells(row, k("d", c, uint64(i+1)))
		checkCells(t, fmt.Sprintf("ReadRow of column %q", c), readRow(t, s, row, fl{Family: "d", Column: c}), want)
		checkRows(t, fmt.Sprintf("ReadRows of column %q", c), readRows(t, s, "", "", fl{Family: "d", Column: c}), []scanned{{row, want}}, false)
		var wantPrefix []percolator.Cell
		for j, o := range metaColumns {
			if len(o) >= len(c) && o[:len(c)] == c {
				wantPrefix = append(wantPrefix, cell(row, "d", o, uint64(j+1)))
			}
		}
		sortCells(wantPrefix)
		checkCells(t, fmt.Sprintf("ReadRow of prefix %q", c), readRow(t, s, row, fl{Family: "d", ColumnPrefix: c}), wantPrefix)
		// Predicate on the exact timestamp of another column's version.
		other := uint64((i+1)%len(metaColumns) + 1)
		matched, err := s.CheckAndMutateRow(t.Context(), row, []fl{{Family: "d", Column: c, MinTs: other, MaxTs: other}}, nil, nil)
		if err != nil || matched {
			t.Errorf("CheckAndMutateRow on column %q at another column's timestamp = %v, %v; want false, nil", c, matched, err)
		}
	}
	// Deleting one column leaves the columns its name would match as a
	// pattern.
	mutate(t, s, row, delOlder("d", ".*", percolator.MaxTs), del("d", "a+", 4))
	var want []percolator.Cell
	for i, c := range metaColumns {
		if c != ".*" && c != "a+" {
			want = append(want, cell(row, "d", c, uint64(i+1)))
		}
	}
	sortCells(want)
	checkCells(t, "row after deleting columns .* and a+", readRow(t, s, row, fl{Family: "d"}), want)
}

func sortCells(cs []percolator.Cell) {
	slices.SortFunc(cs, compareCells)
}

// testConditionalOutcome runs Percolator's use of conditional mutations
// from several goroutines on one row: take a lock if there is none and no
// newer write (prewrite), then replace it by a write record if it is still
// there (commit). Every reported outcome must be the one applied: a
// winner's lock is there, and its commit finds it; at the end the write
// records are exactly the winners'.
func testConditionalOutcome(t *testing.T, s percolator.Store) {
	const goroutines, iterations, row = 4, 25, "outcome"
	ctx := t.Context()
	var mu sync.Mutex
	committed := make(map[uint64]string) // commit ts → writer
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range iterations {
				start := uint64(1000*(i+1) + 10*g)
				id := fmt.Sprintf("g%d/%d", g, i)
				matched, err := s.CheckAndMutateRow(ctx, row,
					[]fl{{Family: "l", Column: "c", KeysOnly: true}, {Family: "w", Column: "c", MinTs: start, KeysOnly: true}},
					nil, muts{setv("l", "c", start, id), setv("d", "c", start, id)})
				if err != nil {
					t.Errorf("%s: prewrite: %v", id, err)
					return
				}
				if matched {
					continue
				}
				commit := start + 5
				matched, err = s.CheckAndMutateRow(ctx, row,
					[]fl{{Family: "l", Column: "c", MinTs: start, MaxTs: start, KeysOnly: true}},
					muts{setv("w", "c", commit, id), del("l", "c", start)}, nil)
				if err != nil {
					t.Errorf("%s: commit: %v", id, err)
					return
				}
				if !matched {
					t.Errorf("%s: won the lock at %d but the commit did not find it", id, start)
					return
				}
				mu.Lock()
				committed[commit] = id
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var want []percolator.Cell
	for ts, id := range committed {
		want = append(want, percolator.Cell{Family: "w", Column: "c", Ts: ts, Value: []byte(id)})
	}
	sortCells(want)
	checkCells(t, "write records after the race", readRow(t, s, row, fl{Family: "w"}), want)
	checkCells(t, "locks after the race", readRow(t, s, row, fl{Family: "l"}), nil)
	if len(committed) == 0 {
		t.Error("no goroutine committed")
	}
}
