package storetest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
)

// fl abbreviates percolator.Filter in tables.
type fl = percolator.Filter

// testReadRowFilters pins down Filter semantics on one row: family, column,
// inclusive timestamp bounds, MaxTs 0 and percolator.MaxTs as "no bound",
// Latest as the newest version within the bounds, unions and sort order.
func testReadRowFilters(t *testing.T, s percolator.Store) {
	const row = "r"
	mutate(t, s, row,
		put(row, "d", "a", 10), put(row, "d", "a", 20), put(row, "d", "a", 30),
		put(row, "d", "b", 15), put(row, "d", "b", 25),
		put(row, "l", "c", 20),
		put(row, "m", "x", 1),
		put(row, "n", "c", 30),
		put(row, "w", "c", 22), put(row, "w", "b", 22),
	)
	// An unrelated row next to it must not leak in.
	mutate(t, s, "r\x00", put("r\x00", "d", "a", 10))
	mutate(t, s, "q", put("q", "d", "a", 40))

	a30, a20, a10 := k("d", "a", 30), k("d", "a", 20), k("d", "a", 10)
	b25, b15 := k("d", "b", 25), k("d", "b", 15)
	l20, m1, n30 := k("l", "c", 20), k("m", "x", 1), k("n", "c", 30)
	wb22, wc22 := k("w", "b", 22), k("w", "c", 22)

	tests := []struct {
		name    string
		filters []fl
		want    []key
	}{
		{"Family", []fl{{Family: "d"}}, []key{a30, a20, a10, b25, b15}},
		{"FamilyOtherGroup", []fl{{Family: "n"}}, []key{n30}},
		{"FamilyTwoColumns", []fl{{Family: "w"}}, []key{wb22, wc22}},
		{"Column", []fl{{Family: "d", Column: "a"}}, []key{a30, a20, a10}},
		{"ColumnOther", []fl{{Family: "d", Column: "b"}}, []key{b25, b15}},
		{"ColumnOfOtherFamily", []fl{{Family: "l", Column: "a"}}, nil},
		{"UnknownColumn", []fl{{Family: "d", Column: "zz"}}, nil},
		{"FamilyWithoutCellsInRow", []fl{{Family: "w", Column: "a"}}, nil},
		{"MinTsInclusive", []fl{{Family: "d", MinTs: 20}}, []key{a30, a20, b25}},
		{"MaxTsInclusive", []fl{{Family: "d", MaxTs: 20}}, []key{a20, a10, b15}},
		{"MinAndMaxTs", []fl{{Family: "d", MinTs: 15, MaxTs: 25}}, []key{a20, b25, b15}},
		{"ExactTs", []fl{{Family: "d", MinTs: 20, MaxTs: 20}}, []key{a20}},
		{"ExactTsColumn", []fl{{Family: "d", Column: "b", MinTs: 25, MaxTs: 25}}, []key{b25}},
		{"ExactTsMissing", []fl{{Family: "d", MinTs: 21, MaxTs: 21}}, nil},
		{"RangeBetweenVersions", []fl{{Family: "d", MinTs: 26, MaxTs: 29}}, nil},
		{"MinTsAboveAll", []fl{{Family: "d", MinTs: 31}}, nil},
		{"MaxTsBelowAll", []fl{{Family: "d", MaxTs: 9}}, nil},
		{"MaxTsZeroIsUnbounded", []fl{{Family: "d", MinTs: 25, MaxTs: 0}}, []key{a30, b25}},
		{"MaxTsMaxIsUnbounded", []fl{{Family: "d", MinTs: 25, MaxTs: percolator.MaxTs}}, []key{a30, b25}},
		{"MaxTsTopTs", []fl{{Family: "d", MinTs: 25, MaxTs: TopTs}}, []key{a30, b25}},
		{"Latest", []fl{{Family: "d", Latest: true}}, []key{a30, b25}},
		{"LatestColumn", []fl{{Family: "d", Column: "a", Latest: true}}, []key{a30}},
		{"LatestMaxTs", []fl{{Family: "d", MaxTs: 22, Latest: true}}, []key{a20, b15}},
		{"LatestMaxTsExact", []fl{{Family: "d", MaxTs: 25, Latest: true}}, []key{a20, b25}},
		{"LatestMaxTsOnlyOneColumn", []fl{{Family: "d", MaxTs: 12, Latest: true}}, []key{a10}},
		{"LatestMinAndMaxTs", []fl{{Family: "d", MinTs: 21, MaxTs: 26, Latest: true}}, []key{b25}},
		{"LatestMinTs", []fl{{Family: "d", MinTs: 11, Latest: true}}, []key{a30, b25}},
		{"LatestNothingInRange", []fl{{Family: "d", MaxTs: 5, Latest: true}}, nil},
		{"LatestMaxTsZero", []fl{{Family: "d", Column: "a", MaxTs: 0, Latest: true}}, []key{a30}},
		{"Union", []fl{{Family: "d", Column: "a", Latest: true}, {Family: "l"}}, []key{a30, l20}},
		{"UnionSortedNotInFilterOrder", []fl{{Family: "w"}, {Family: "n"}, {Family: "d", Column: "b"}}, []key{b25, b15, n30, wb22, wc22}},
		{"UnionAllFamilies", allFamilies(), []key{a30, a20, a10, b25, b15, l20, m1, n30, wb22, wc22}},
		{"UnionTsRangesOfOneColumn", []fl{{Family: "d", Column: "a", MaxTs: 10}, {Family: "d", Column: "a", MinTs: 30}}, []key{a30, a10}},
		{"UnionLatestPerFilter", []fl{{Family: "d", Column: "a", MaxTs: 15, Latest: true}, {Family: "d", Column: "a", Latest: true}}, []key{a30, a10}},
		{"UnionLatestAndAll", []fl{{Family: "d", Latest: true}, {Family: "w"}}, []key{a30, b25, wb22, wc22}},
		{"UnionWithEmptyFilter", []fl{{Family: "d", Column: "b"}, {Family: "w", Column: "zz"}}, []key{b25, b15}},
		{"UnionNothing", []fl{{Family: "w", Column: "zz"}, {Family: "d", MinTs: 31}}, nil},
		// The contract says union: a cell matched by several filters is
		// returned once (a Bigtable interleave would emit it twice, so a
		// Bigtable backend has to drop the duplicates).
		{"OverlappingFiltersNoDuplicates", []fl{{Family: "d"}, {Family: "d", Column: "a"}, {Family: "d", MinTs: 20, MaxTs: 20}}, []key{a30, a20, a10, b25, b15}},
		{"OverlappingLatest", []fl{{Family: "d", Latest: true}, {Family: "d", Column: "a", MinTs: 30}}, []key{a30, b25}},
		// Percolator's snapshot read of one column.
		{"PercolatorGet", []fl{{Family: "l", Column: "c", MaxTs: 21}, {Family: "w", Column: "c", MaxTs: 21, Latest: true}}, []key{l20}},
		{"PercolatorGetLater", []fl{{Family: "l", Column: "c", MaxTs: 23}, {Family: "w", Column: "c", MaxTs: 23, Latest: true}}, []key{l20, wc22}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkCells(t, "ReadRow", readRow(t, s, row, tc.filters...), cells(row, tc.want...))
		})
	}
}

// testReadRowColumns checks that a column filter selects exactly one column,
// even when the column name is a prefix of others or contains characters
// that are special in regular expressions, and that columns sort by bytes.
func testReadRowColumns(t *testing.T, s percolator.Store) {
	const row = "cols"
	cols := []string{"a", "a+", "a.c", "aa", "ab", "abc", "b", "(a)", "a|b", "[a]", "a*", "\\a", "^a$", "B", "0"}
	var muts []percolator.Mutation
	for _, c := range cols {
		muts = append(muts, put(row, "d", c, 10))
	}
	mutate(t, s, row, muts...)

	sorted := []string{"(a)", "0", "B", "[a]", "\\a", "^a$", "a", "a*", "a+", "a.c", "aa", "ab", "abc", "a|b", "b"}
	var all []key
	for _, c := range sorted {
		all = append(all, k("d", c, 10))
	}
	checkCells(t, "family d, columns sorted by bytes", readRow(t, s, row, fl{Family: "d"}), cells(row, all...))

	for _, c := range cols {
		t.Run(c, func(t *testing.T) {
			checkCells(t, "column "+c, readRow(t, s, row, fl{Family: "d", Column: c}), cells(row, k("d", c, 10)))
		})
	}
	t.Run("UnionOfColumns", func(t *testing.T) {
		checkCells(t, "union", readRow(t, s, row, fl{Family: "d", Column: "b"}, fl{Family: "d", Column: "a.c"}, fl{Family: "d", Column: "a"}),
			cells(row, k("d", "a", 10), k("d", "a.c", 10), k("d", "b", 10)))
	})
	t.Run("MissingColumnLikePattern", func(t *testing.T) {
		checkCells(t, "column a.", readRow(t, s, row, fl{Family: "d", Column: "a."}), nil)
		checkCells(t, "column .*", readRow(t, s, row, fl{Family: "d", Column: ".*"}), nil)
	})
}

func testReadRowUnknownRow(t *testing.T, s percolator.Store) {
	mutate(t, s, "b", put("b", "d", "a", 10))
	for _, row := range []string{"a", "bb", "b\x00", "c", "\xff"} {
		if got := readRow(t, s, row, allFamilies()...); len(got) != 0 {
			t.Errorf("ReadRow(%q) of a row never written = %s, want no cells", row, fmtCells(got))
		}
	}
	// A row whose cells were all deleted reads like an unknown row.
	mutate(t, s, "gone", put("gone", "d", "a", 10), put("gone", "w", "a", 20))
	mutate(t, s, "gone", del("d", "a", 10), delOlder("w", "a", 21))
	if got := readRow(t, s, "gone", allFamilies()...); len(got) != 0 {
		t.Errorf("ReadRow of a row whose cells were all deleted = %s, want no cells", fmtCells(got))
	}
}

func testReadRowKeysOnly(t *testing.T, s percolator.Store) {
	const row = "r"
	mutate(t, s, row, put(row, "l", "c", 10), put(row, "l", "c", 20), put(row, "w", "c", 15), put(row, "n", "c", 5))
	checkKeys(t, "KeysOnly", readRow(t, s, row, fl{Family: "l", KeysOnly: true}),
		cells(row, k("l", "c", 20), k("l", "c", 10)))
	checkKeys(t, "KeysOnly Latest exact ts", readRow(t, s, row, fl{Family: "l", Column: "c", MinTs: 10, MaxTs: 10, Latest: true, KeysOnly: true}),
		cells(row, k("l", "c", 10)))
	// A KeysOnly filter does not strip the values selected by other filters.
	got := readRow(t, s, row, fl{Family: "l", KeysOnly: true}, fl{Family: "n"}, fl{Family: "w", Column: "c", MinTs: 15, KeysOnly: true})
	checkKeys(t, "KeysOnly union", got, cells(row, k("l", "c", 20), k("l", "c", 10), k("n", "c", 5), k("w", "c", 15)))
	if len(got) == 4 && !bytes.Equal(got[2].Value, []byte(val(row, "n", "c", 5))) {
		t.Errorf("value of n:c@5 selected by a filter without KeysOnly = %q, want %q", got[2].Value, val(row, "n", "c", 5))
	}
}

// testValuesAreCopies checks that the caller owns what ReadRow and
// CheckAndMutateRow's reads return.
func testValuesAreCopies(t *testing.T, s percolator.Store) {
	const row = "r"
	mutate(t, s, row, put(row, "d", "a", 10), put(row, "d", "a", 20), put(row, "w", "a", 5))
	want := cells(row, k("d", "a", 20), k("d", "a", 10), k("w", "a", 5))
	for range 2 {
		got := readRow(t, s, row, fl{Family: "d"}, fl{Family: "w"})
		checkCells(t, "ReadRow", got, want)
		for j := range got {
			for b := range got[j].Value {
				got[j].Value[b] ^= 0xff
			}
			got[j].Value = append(got[j].Value[:0], "overwritten"...)
			got[j].Ts = 999
			got[j].Family = "x"
		}
	}
	checkCells(t, "ReadRow after modifying earlier results", readRow(t, s, row, fl{Family: "d"}, fl{Family: "w"}), want)

	// Latest and KeysOnly paths too.
	got := readRow(t, s, row, fl{Family: "d", Latest: true})
	for j := range got {
		clear(got[j].Value)
	}
	checkCells(t, "Latest after modifying earlier results", readRow(t, s, row, fl{Family: "d", Latest: true}), cells(row, k("d", "a", 20)))
}

// testInputsNotRetained checks that a store does not keep referencing the
// slices passed to it once a call has returned.
func testInputsNotRetained(t *testing.T, s percolator.Store) {
	ctx := t.Context()
	v := []byte("original")
	muts := []percolator.Mutation{{Op: percolator.SetCell, Family: "d", Column: "a", Ts: 10, Value: v}}
	rows := []percolator.RowMutation{{Row: "r1", Mutations: muts}}
	if err := s.MutateRows(ctx, rows); err != nil {
		t.Fatal(err)
	}
	copy(v, "CHANGED!")
	muts[0].Ts = 11
	rows[0].Row = "zz"

	v2 := []byte("original")
	ifNoMatch := []percolator.Mutation{{Op: percolator.SetCell, Family: "d", Column: "a", Ts: 10, Value: v2}}
	if _, err := s.CheckAndMutateRow(ctx, "r2", []fl{{Family: "l"}}, nil, ifNoMatch); err != nil {
		t.Fatal(err)
	}
	copy(v2, "CHANGED!")
	ifNoMatch[0].Ts = 11

	for _, row := range []string{"r1", "r2"} {
		checkCells(t, row, readRow(t, s, row, fl{Family: "d"}),
			[]percolator.Cell{{Family: "d", Column: "a", Ts: 10, Value: []byte("original")}})
	}
	if got := readRow(t, s, "zz", allFamilies()...); len(got) != 0 {
		t.Errorf("row zz = %s, want no cells", fmtCells(got))
	}
}

// testEmptyValue checks that a cell with an empty value exists and differs
// from a missing cell.
func testEmptyValue(t *testing.T, s percolator.Store) {
	const row = "r"
	mutate(t, s, row,
		percolator.Mutation{Op: percolator.SetCell, Family: "d", Column: "nil", Ts: 10},
		percolator.Mutation{Op: percolator.SetCell, Family: "d", Column: "empty", Ts: 10, Value: []byte{}},
		percolator.Mutation{Op: percolator.SetCell, Family: "d", Column: "zero", Ts: 10, Value: []byte{0}},
	)
	want := []percolator.Cell{
		{Family: "d", Column: "empty", Ts: 10},
		{Family: "d", Column: "nil", Ts: 10},
		{Family: "d", Column: "zero", Ts: 10, Value: []byte{0}},
	}
	checkCells(t, "empty values", readRow(t, s, row, fl{Family: "d"}), want)
	checkCells(t, "missing column", readRow(t, s, row, fl{Family: "d", Column: "missing"}), nil)
	checkCells(t, "Latest empty value", readRow(t, s, row, fl{Family: "d", Column: "empty", Latest: true}), want[:1])

	// An empty value matches a predicate.
	matched, err := s.CheckAndMutateRow(t.Context(), row, []fl{{Family: "d", Column: "nil"}}, []percolator.Mutation{put(row, "w", "m", 1)}, []percolator.Mutation{put(row, "w", "n", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if !matched {
		t.Errorf("predicate on a cell with an empty value did not match")
	}
	// An empty value is a newer version that hides the older one under Latest.
	mutate(t, s, row, put(row, "d", "v", 10), percolator.Mutation{Op: percolator.SetCell, Family: "d", Column: "v", Ts: 20})
	checkCells(t, "Latest is the empty newer version", readRow(t, s, row, fl{Family: "d", Column: "v", Latest: true}),
		[]percolator.Cell{{Family: "d", Column: "v", Ts: 20}})
}

func testLargeValue(t *testing.T, s percolator.Store) {
	const row = "big"
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	big[len(big)-1] = 0xff
	mutate(t, s, row, setv("d", "a", 10, string(big)), put(row, "d", "a", 20), setv("d", "b", 10, strings.Repeat("x", 100<<10)))
	got := readRow(t, s, row, fl{Family: "d", Column: "a", MaxTs: 15})
	if len(got) != 1 || !bytes.Equal(got[0].Value, big) {
		t.Fatalf("1 MiB value did not read back (got %d cells)", len(got))
	}
	got = readRow(t, s, row, fl{Family: "d"})
	if len(got) != 3 || len(got[2].Value) != 100<<10 {
		t.Fatalf("ReadRow of family d: got %d cells, want 3 with a 100 KiB value last", len(got))
	}
}

// testTimestampBounds writes the smallest and largest timestamps the suite
// uses (1 and 2^52-1).
func testTimestampBounds(t *testing.T, s percolator.Store) {
	const row = "ts"
	mutate(t, s, row, put(row, "d", "a", 1), put(row, "d", "a", 2), put(row, "d", "a", TopTs-1), put(row, "d", "a", TopTs))
	lo, lo2, hi1, hi := k("d", "a", 1), k("d", "a", 2), k("d", "a", TopTs-1), k("d", "a", TopTs)
	tests := []struct {
		name   string
		filter fl
		want   []key
	}{
		{"All", fl{Family: "d"}, []key{hi, hi1, lo2, lo}},
		{"MaxTs", fl{Family: "d", MaxTs: percolator.MaxTs}, []key{hi, hi1, lo2, lo}},
		{"MinTsTop", fl{Family: "d", MinTs: TopTs}, []key{hi}},
		{"ExactTop", fl{Family: "d", MinTs: TopTs, MaxTs: TopTs}, []key{hi}},
		{"BelowTop", fl{Family: "d", MaxTs: TopTs - 1}, []key{hi1, lo2, lo}},
		{"MaxTsOne", fl{Family: "d", MaxTs: 1}, []key{lo}},
		{"ExactOne", fl{Family: "d", MinTs: 1, MaxTs: 1}, []key{lo}},
		{"MinTsZero", fl{Family: "d", MinTs: 0, MaxTs: 2}, []key{lo2, lo}},
		{"Middle", fl{Family: "d", MinTs: 3, MaxTs: TopTs - 2}, nil},
		{"Latest", fl{Family: "d", Latest: true}, []key{hi}},
		{"LatestBelowTop", fl{Family: "d", MaxTs: TopTs - 2, Latest: true}, []key{lo2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkCells(t, "ReadRow", readRow(t, s, row, tc.filter), cells(row, tc.want...))
		})
	}
	t.Run("Delete", func(t *testing.T) {
		mutate(t, s, row, del("d", "a", TopTs), delOlder("d", "a", 2))
		checkCells(t, "after deleting the top version and versions below 2", readRow(t, s, row, fl{Family: "d"}), cells(row, hi1, lo2))
	})
}

// testSetCellReplaces checks that SetCell at an existing timestamp replaces
// that version and leaves the others.
func testSetCellReplaces(t *testing.T, s percolator.Store) {
	const row = "r"
	mutate(t, s, row, put(row, "d", "a", 10), put(row, "d", "a", 20), put(row, "d", "b", 20))
	mutate(t, s, row, setv("d", "a", 20, "replaced"))
	want := []percolator.Cell{
		{Family: "d", Column: "a", Ts: 20, Value: []byte("replaced")},
		cell(row, "d", "a", 10),
		cell(row, "d", "b", 20),
	}
	checkCells(t, "after replacing d:a@20", readRow(t, s, row, fl{Family: "d"}), want)
	checkCells(t, "Latest after replacing", readRow(t, s, row, fl{Family: "d", Column: "a", Latest: true}), want[:1])

	// Replacing again, with a shorter value.
	mutate(t, s, row, setv("d", "a", 10, "longer value"))
	mutate(t, s, row, setv("d", "a", 10, "y"))
	checkCells(t, "after replacing d:a@10 twice", readRow(t, s, row, fl{Family: "d", Column: "a", MaxTs: 10}),
		[]percolator.Cell{{Family: "d", Column: "a", Ts: 10, Value: []byte("y")}})

	// Replacing with CheckAndMutateRow.
	if _, err := s.CheckAndMutateRow(t.Context(), row, []fl{{Family: "d", Column: "b"}}, []percolator.Mutation{setv("d", "b", 20, "cam")}, nil); err != nil {
		t.Fatal(err)
	}
	checkCells(t, "after replacing d:b@20 by CheckAndMutateRow", readRow(t, s, row, fl{Family: "d", Column: "b"}),
		[]percolator.Cell{{Family: "d", Column: "b", Ts: 20, Value: []byte("cam")}})
}
