package storetest

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
)

type muts = []percolator.Mutation

// The write tests give every case its own row. Fixture values are those of a
// row named "f" whatever the row, so expectations can be written once.
const fx = "f"

func fput(fam, col string, ts uint64) percolator.Mutation { return put(fx, fam, col, ts) }

// testDeleteCell checks that DeleteCell deletes exactly one version.
func testDeleteCell(t *testing.T, s percolator.Store) {
	fixture := muts{fput("d", "a", 10), fput("d", "a", 20), fput("d", "a", 30), fput("d", "b", 30), fput("w", "a", 30)}
	a30, a20, a10, b30, wa30 := k("d", "a", 30), k("d", "a", 20), k("d", "a", 10), k("d", "b", 30), k("w", "a", 30)
	tests := []struct {
		name   string
		calls  []muts // each applied by its own MutateRows call, after the fixture
		want   []key  // families d and w
		latest []key  // d:a with Latest
	}{
		{"Newest", []muts{{del("d", "a", 30)}}, []key{a20, a10, b30, wa30}, []key{a20}},
		{"Middle", []muts{{del("d", "a", 20)}}, []key{a30, a10, b30, wa30}, []key{a30}},
		{"Oldest", []muts{{del("d", "a", 10)}}, []key{a30, a20, b30, wa30}, []key{a30}},
		{"NonExistentVersion", []muts{{del("d", "a", 25)}}, []key{a30, a20, a10, b30, wa30}, []key{a30}},
		{"NonExistentColumn", []muts{{del("d", "zz", 30)}}, []key{a30, a20, a10, b30, wa30}, []key{a30}},
		{"FamilyWithoutCells", []muts{{del("l", "a", 30)}}, []key{a30, a20, a10, b30, wa30}, []key{a30}},
		{"OtherColumnsKept", []muts{{del("d", "b", 30)}}, []key{a30, a20, a10, wa30}, []key{a30}},
		{"OtherFamiliesKept", []muts{{del("w", "a", 30)}}, []key{a30, a20, a10, b30}, []key{a30}},
		{"Twice", []muts{{del("d", "a", 30)}, {del("d", "a", 30)}}, []key{a20, a10, b30, wa30}, []key{a20}},
		{"TwoNewestInOneCall", []muts{{del("d", "a", 30), del("d", "a", 20)}}, []key{a10, b30, wa30}, []key{a10}},
		{"AllVersions", []muts{{del("d", "a", 10), del("d", "a", 30), del("d", "a", 20)}}, []key{b30, wa30}, nil},
		{"AllVersionsOneByOne", []muts{{del("d", "a", 30)}, {del("d", "a", 20)}, {del("d", "a", 10)}}, []key{b30, wa30}, nil},
		{"DeleteThenSetSameTs", []muts{{del("d", "a", 30)}, {fput("d", "a", 30)}}, []key{a30, a20, a10, b30, wa30}, []key{a30}},
		{"DeleteOldThenSetSameTs", []muts{{del("d", "a", 10)}, {fput("d", "a", 10)}}, []key{a30, a20, a10, b30, wa30}, []key{a30}},
		{"DeleteThenSetNewer", []muts{{del("d", "a", 30)}, {fput("d", "a", 40)}}, []key{k("d", "a", 40), a20, a10, b30, wa30}, []key{k("d", "a", 40)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := "del/" + tc.name
			mutate(t, s, row, fixture...)
			for _, c := range tc.calls {
				mutate(t, s, row, c...)
			}
			checkCells(t, "families d and w", readRow(t, s, row, fl{Family: "d"}, fl{Family: "w"}), cells(fx, tc.want...))
			checkCells(t, "d:a Latest", readRow(t, s, row, fl{Family: "d", Column: "a", Latest: true}), cells(fx, tc.latest...))
		})
	}
	t.Run("MissingRow", func(t *testing.T) {
		mutate(t, s, "del/missing", del("d", "a", 10))
		checkCells(t, "row", readRow(t, s, "del/missing", allFamilies()...), nil)
	})
	t.Run("ReSetValue", func(t *testing.T) {
		const row = "del/reset"
		mutate(t, s, row, fixture...)
		mutate(t, s, row, del("d", "a", 20))
		mutate(t, s, row, setv("d", "a", 20, "again"))
		checkCells(t, "d:a", readRow(t, s, row, fl{Family: "d", Column: "a"}), []percolator.Cell{
			cell(fx, "d", "a", 30), {Family: "d", Column: "a", Ts: 20, Value: []byte("again")}, cell(fx, "d", "a", 10),
		})
		checkCells(t, "d:a Latest at 25", readRow(t, s, row, fl{Family: "d", Column: "a", MaxTs: 25, Latest: true}), []percolator.Cell{
			{Family: "d", Column: "a", Ts: 20, Value: []byte("again")},
		})
	})
}

// testDeleteOlder checks that DeleteOlder(ts) deletes the versions below ts
// and keeps those at or above it.
func testDeleteOlder(t *testing.T, s percolator.Store) {
	fixture := muts{fput("d", "a", 10), fput("d", "a", 20), fput("d", "a", 30), fput("d", "b", 10), fput("w", "a", 10)}
	a30, a20, a10, b10, wa10 := k("d", "a", 30), k("d", "a", 20), k("d", "a", 10), k("d", "b", 10), k("w", "a", 10)
	tests := []struct {
		name   string
		calls  []muts
		want   []key // families d and w
		latest []key // d:a with Latest
		// latest25 is d:a with Latest and MaxTs 25.
		latest25 []key
	}{
		{"Middle", []muts{{delOlder("d", "a", 20)}}, []key{a30, a20, b10, wa10}, []key{a30}, []key{a20}},
		{"BetweenVersions", []muts{{delOlder("d", "a", 25)}}, []key{a30, b10, wa10}, []key{a30}, nil},
		{"KeepsEqual", []muts{{delOlder("d", "a", 10)}}, []key{a30, a20, a10, b10, wa10}, []key{a30}, []key{a20}},
		{"One", []muts{{delOlder("d", "a", 1)}}, []key{a30, a20, a10, b10, wa10}, []key{a30}, []key{a20}},
		{"KeepsNewest", []muts{{delOlder("d", "a", 30)}}, []key{a30, b10, wa10}, []key{a30}, nil},
		{"AboveAll", []muts{{delOlder("d", "a", 31)}}, []key{b10, wa10}, nil, nil},
		{"Top", []muts{{delOlder("d", "a", TopTs)}}, []key{b10, wa10}, nil, nil},
		{"MaxTs", []muts{{delOlder("d", "a", percolator.MaxTs)}}, []key{b10, wa10}, nil, nil},
		{"OtherFamily", []muts{{delOlder("w", "a", 31)}}, []key{a30, a20, a10, b10}, []key{a30}, []key{a20}},
		{"NonExistentColumn", []muts{{delOlder("d", "zz", 100)}}, []key{a30, a20, a10, b10, wa10}, []key{a30}, []key{a20}},
		{"Twice", []muts{{delOlder("d", "a", 15)}, {delOlder("d", "a", 25)}}, []key{a30, b10, wa10}, []key{a30}, nil},
		{"LowerAfterHigher", []muts{{delOlder("d", "a", 25)}, {delOlder("d", "a", 15)}}, []key{a30, b10, wa10}, []key{a30}, nil},
		{"ThenSetAtTs", []muts{{delOlder("d", "a", 25)}, {fput("d", "a", 25)}}, []key{a30, k("d", "a", 25), b10, wa10}, []key{a30}, []key{k("d", "a", 25)}},
		{"ThenSetNewer", []muts{{delOlder("d", "a", 31)}, {fput("d", "a", 40)}}, []key{k("d", "a", 40), b10, wa10}, []key{k("d", "a", 40)}, nil},
		{"WithDeleteCell", []muts{{del("d", "a", 30), delOlder("d", "a", 20)}}, []key{a20, b10, wa10}, []key{a20}, []key{a20}},
		{"SeveralColumns", []muts{{delOlder("d", "a", 20), delOlder("d", "b", 20), delOlder("w", "a", 11)}}, []key{a30, a20}, []key{a30}, []key{a20}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := "older/" + tc.name
			mutate(t, s, row, fixture...)
			for _, c := range tc.calls {
				mutate(t, s, row, c...)
			}
			checkCells(t, "families d and w", readRow(t, s, row, fl{Family: "d"}, fl{Family: "w"}), cells(fx, tc.want...))
			checkCells(t, "d:a Latest", readRow(t, s, row, fl{Family: "d", Column: "a", Latest: true}), cells(fx, tc.latest...))
			checkCells(t, "d:a Latest MaxTs 25", readRow(t, s, row, fl{Family: "d", Column: "a", MaxTs: 25, Latest: true}), cells(fx, tc.latest25...))
		})
	}
	t.Run("MissingRow", func(t *testing.T) {
		mutate(t, s, "older/missing", delOlder("d", "a", 10))
		checkCells(t, "row", readRow(t, s, "older/missing", allFamilies()...), nil)
	})
}

// testMutateRows checks that MutateRows applies every row's mutations.
func testMutateRows(t *testing.T, s percolator.Store) {
	ctx := t.Context()
	mutate(t, s, "m2", fput("d", "a", 10), fput("d", "a", 20), fput("d", "a", 30))
	mutate(t, s, "m3", fput("l", "c", 5), fput("d", "c", 5))
	mutate(t, s, "m4", fput("n", "c", 1), fput("n", "c", 2), fput("w", "c", 1))
	err := s.MutateRows(ctx, []percolator.RowMutation{
		{Row: "m4", Mutations: muts{delOlder("n", "c", percolator.MaxTs)}},
		{Row: "m1", Mutations: muts{fput("d", "a", 10), fput("w", "a", 10), fput("n", "a", 10), fput("l", "a", 10), fput("m", "a", 10)}},
		{Row: "m3", Mutations: muts{del("l", "c", 5), fput("w", "c", 7)}},
		{Row: "m2", Mutations: muts{del("d", "a", 20), fput("d", "a", 40), delOlder("d", "a", 15)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]key{
		"m1": {k("d", "a", 10), k("l", "a", 10), k("m", "a", 10), k("n", "a", 10), k("w", "a", 10)},
		"m2": {k("d", "a", 40), k("d", "a", 30)},
		"m3": {k("d", "c", 5), k("w", "c", 7)},
		"m4": {k("w", "c", 1)},
	}
	for _, row := range []string{"m1", "m2", "m3", "m4"} {
		checkCells(t, "row "+row, readRow(t, s, row, allFamilies()...), cells(fx, want[row]...))
	}

	t.Run("ManyRows", func(t *testing.T) {
		const n = 300
		var rms []percolator.RowMutation
		var wantRows []scanned
		for i := range n {
			row := fmt.Sprintf("many/%03d", i)
			wantRows = append(wantRows, scanned{row, cells(row, k("d", "c", uint64(i+1)), k("n", "c", 7))})
		}
		for i := range n {
			j := (i * 7) % n // not in row order
			row := wantRows[j].row
			rms = append(rms, percolator.RowMutation{Row: row, Mutations: muts{put(row, "n", "c", 7), put(row, "d", "c", uint64(j+1))}})
		}
		if err := s.MutateRows(ctx, rms); err != nil {
			t.Fatal(err)
		}
		checkRows(t, "ReadRows after MutateRows", readRows(t, s, "many/", "many0", fl{Family: "d"}, fl{Family: "n"}), wantRows, false)
	})
}

// testCheckAndMutateRow checks which mutations CheckAndMutateRow applies and
// what it reports, one row per case.
func testCheckAndMutateRow(t *testing.T, s percolator.Store) {
	runCheckAndMutateRow(t, s, checkAndMutateCases())
}

// testCheckAndMutateRowRecognizable runs the cases of testCheckAndMutateRow
// whose outcome a store can recognize in the row after the fact (see
// RunConditional).
func testCheckAndMutateRowRecognizable(t *testing.T, s percolator.Store) {
	var cases []checkAndMutateCase
	for _, tc := range checkAndMutateCases() {
		if recognizable(tc.ifMatch) && recognizable(tc.ifNoMatch) {
			cases = append(cases, tc)
		}
	}
	runCheckAndMutateRow(t, s, cases)
}

// recognizable reports whether a branch is empty or sets a cell.
func recognizable(branch muts) bool {
	if len(branch) == 0 {
		return true
	}
	for _, m := range branch {
		if m.Op == percolator.SetCell {
			return true
		}
	}
	return false
}

type checkAndMutateCase struct {
	name               string
	setup              []muts
	pred               []fl
	ifMatch, ifNoMatch muts
	matched            bool
	want               []key // all families, after
}

func checkAndMutateCases() []checkAndMutateCase {
	lc10, wc10, dc10 := fput("l", "c", 10), fput("w", "c", 10), fput("d", "c", 10)
	return []checkAndMutateCase{
		{"MatchedAppliesIfMatch", []muts{{lc10}}, []fl{{Family: "l", Column: "c"}},
			muts{fput("w", "c", 20), del("l", "c", 10)}, muts{fput("d", "x", 1)},
			true, []key{k("w", "c", 20)}},
		{"NotMatchedAppliesIfNoMatch", nil, []fl{{Family: "l", Column: "c"}},
			muts{fput("w", "c", 20)}, muts{lc10, dc10},
			false, []key{k("d", "c", 10), k("l", "c", 10)}},
		{"RowWithOtherCells", []muts{{dc10, fput("w", "c", 5)}}, []fl{{Family: "l"}},
			muts{fput("w", "x", 1)}, muts{lc10},
			false, []key{k("d", "c", 10), k("l", "c", 10), k("w", "c", 5)}},
		{"OtherColumn", []muts{{fput("l", "a", 10)}}, []fl{{Family: "l", Column: "c"}},
			muts{fput("w", "x", 1)}, muts{lc10},
			false, []key{k("l", "a", 10), k("l", "c", 10)}},
		{"AnyColumn", []muts{{fput("l", "a", 10)}}, []fl{{Family: "l"}},
			muts{fput("w", "x", 1)}, muts{lc10},
			true, []key{k("l", "a", 10), k("w", "x", 1)}},
		{"UnionMatchesFirst", []muts{{lc10}}, []fl{{Family: "l", Column: "c"}, {Family: "w", Column: "c"}},
			muts{fput("d", "m", 1)}, muts{fput("d", "n", 1)},
			true, []key{k("d", "m", 1), k("l", "c", 10)}},
		{"UnionMatchesSecond", []muts{{wc10}}, []fl{{Family: "l", Column: "c"}, {Family: "w", Column: "c"}},
			muts{fput("d", "m", 1)}, muts{fput("d", "n", 1)},
			true, []key{k("d", "m", 1), k("w", "c", 10)}},
		{"UnionMatchesNone", []muts{{dc10}}, []fl{{Family: "l", Column: "c"}, {Family: "w", Column: "c"}},
			muts{fput("d", "m", 1)}, muts{fput("d", "n", 1)},
			false, []key{k("d", "c", 10), k("d", "n", 1)}},
		{"MinTsExcludesOlder", []muts{{wc10}}, []fl{{Family: "w", Column: "c", MinTs: 11}},
			muts{fput("d", "m", 1)}, muts{fput("d", "n", 1)},
			false, []key{k("d", "n", 1), k("w", "c", 10)}},
		{"MinTsInclusive", []muts{{wc10}}, []fl{{Family: "w", Column: "c", MinTs: 10}},
			muts{fput("d", "m", 1)}, muts{fput("d", "n", 1)},
			true, []key{k("d", "m", 1), k("w", "c", 10)}},
		{"MaxTsExcludesNewer", []muts{{wc10}}, []fl{{Family: "w", Column: "c", MaxTs: 9}},
			muts{fput("d", "m", 1)}, muts{fput("d", "n", 1)},
			false, []key{k("d", "n", 1), k("w", "c", 10)}},
		{"MaxTsInclusive", []muts{{wc10}}, []fl{{Family: "w", Column: "c", MaxTs: 10}},
			muts{fput("d", "m", 1)}, muts{fput("d", "n", 1)},
			true, []key{k("d", "m", 1), k("w", "c", 10)}},
		{"ExactTsMissing", []muts{{lc10, fput("l", "c", 20)}}, []fl{{Family: "l", Column: "c", MinTs: 15, MaxTs: 15}},
			muts{fput("d", "m", 1)}, muts{fput("d", "n", 1)},
			false, []key{k("d", "n", 1), k("l", "c", 20), k("l", "c", 10)}},
		{"ExactTsPresent", []muts{{lc10, fput("l", "c", 20)}}, []fl{{Family: "l", Column: "c", MinTs: 20, MaxTs: 20, KeysOnly: true}},
			muts{del("l", "c", 20)}, muts{fput("d", "n", 1)},
			true, []key{k("l", "c", 10)}},
		{"LatestPredicate", []muts{{lc10, fput("l", "c", 20)}}, []fl{{Family: "l", Latest: true}},
			muts{fput("d", "m", 1)}, muts{fput("d", "n", 1)},
			true, []key{k("d", "m", 1), k("l", "c", 20), k("l", "c", 10)}},
		{"LatestPredicateWithMaxTs", []muts{{fput("l", "c", 20)}}, []fl{{Family: "l", MaxTs: 15, Latest: true}},
			muts{fput("d", "m", 1)}, muts{fput("d", "n", 1)},
			false, []key{k("d", "n", 1), k("l", "c", 20)}},
		{"DeletedCellDoesNotMatch", []muts{{lc10}, {del("l", "c", 10)}}, []fl{{Family: "l", Column: "c"}},
			muts{fput("d", "m", 1)}, muts{fput("d", "n", 1)},
			false, []key{k("d", "n", 1)}},
		{"DeletedOlderDoesNotMatch", []muts{{lc10, fput("l", "c", 20)}, {delOlder("l", "c", 21)}}, []fl{{Family: "l"}},
			muts{fput("d", "m", 1)}, muts{fput("d", "n", 1)},
			false, []key{k("d", "n", 1)}},
		{"OlderVersionMatchesAfterDeleteCell", []muts{{lc10, fput("l", "c", 20)}, {del("l", "c", 20)}}, []fl{{Family: "l", Column: "c"}},
			muts{fput("d", "m", 1)}, muts{fput("d", "n", 1)},
			true, []key{k("d", "m", 1), k("l", "c", 10)}},
		{"MatchedWithoutIfMatch", []muts{{lc10}}, []fl{{Family: "l"}},
			nil, muts{fput("d", "n", 1)},
			true, []key{k("l", "c", 10)}},
		{"NotMatchedWithoutIfNoMatch", []muts{{dc10}}, []fl{{Family: "l"}},
			muts{fput("d", "m", 1)}, nil,
			false, []key{k("d", "c", 10)}},
		{"NotMatchedWithoutIfNoMatchEmptyRow", nil, []fl{{Family: "l"}},
			muts{fput("d", "m", 1)}, nil,
			false, nil},
		// Percolator's prewrite: no lock at any ts and no write at or after
		// the start ts (here 12; the write committed at 10 is older).
		{"PrewriteNoConflict", []muts{{wc10, fput("d", "c", 8)}},
			[]fl{{Family: "l", Column: "c", KeysOnly: true}, {Family: "w", Column: "c", MinTs: 12, KeysOnly: true}},
			nil, muts{fput("d", "c", 12), fput("l", "c", 12)},
			false, []key{k("d", "c", 12), k("d", "c", 8), k("l", "c", 12), k("w", "c", 10)}},
		{"PrewriteWriteConflict", []muts{{wc10, fput("d", "c", 8)}},
			[]fl{{Family: "l", Column: "c", KeysOnly: true}, {Family: "w", Column: "c", MinTs: 9, KeysOnly: true}},
			nil, muts{fput("d", "c", 9), fput("l", "c", 9)},
			true, []key{k("d", "c", 8), k("w", "c", 10)}},
		// Percolator's primary commit: the lock at the start ts is still there.
		{"CommitPrimary", []muts{{fput("d", "c", 12), fput("l", "c", 12), fput("d", "a", 10), fput("d", "a", 20), fput("d", "a", 30)}},
			[]fl{{Family: "l", Column: "c", MinTs: 12, MaxTs: 12, KeysOnly: true}},
			muts{fput("w", "c", 15), del("l", "c", 12), delOlder("d", "a", 20), fput("n", "c", 15)}, nil,
			true, []key{k("d", "a", 30), k("d", "a", 20), k("d", "c", 12), k("n", "c", 15), k("w", "c", 15)}},
		{"AcrossLocalityGroups", []muts{{fput("n", "c", 1)}}, []fl{{Family: "n"}},
			muts{fput("w", "c", 2), fput("n", "c", 2), fput("l", "c", 2), fput("d", "c", 2), fput("m", "c", 2)}, muts{fput("d", "x", 1)},
			true, []key{k("d", "c", 2), k("l", "c", 2), k("m", "c", 2), k("n", "c", 2), k("n", "c", 1), k("w", "c", 2)}},
		{"OtherLocalityGroupNotMatched", []muts{{fput("w", "c", 1)}}, []fl{{Family: "n"}},
			muts{fput("d", "x", 1)}, muts{fput("n", "c", 2), fput("w", "c", 2)},
			false, []key{k("n", "c", 2), k("w", "c", 2), k("w", "c", 1)}},
	}
}

func runCheckAndMutateRow(t *testing.T, s percolator.Store, tests []checkAndMutateCase) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := "cam/" + tc.name
			for _, m := range tc.setup {
				mutate(t, s, row, m...)
			}
			matched, err := s.CheckAndMutateRow(t.Context(), row, tc.pred, tc.ifMatch, tc.ifNoMatch)
			if err != nil {
				t.Fatalf("CheckAndMutateRow: %v", err)
			}
			if matched != tc.matched {
				t.Errorf("CheckAndMutateRow matched = %v, want %v", matched, tc.matched)
			}
			checkCells(t, "row after CheckAndMutateRow", readRow(t, s, row, allFamilies()...), cells(fx, tc.want...))
		})
	}
}

// testIncrement checks Increment's arithmetic and where the result is read.
func testIncrement(t *testing.T, s percolator.Store) {
	ctx := t.Context()
	inc := func(row, fam, col string, delta, want int64) {
		t.Helper()
		got, err := s.Increment(ctx, row, fam, col, delta)
		if err != nil {
			t.Fatalf("Increment(%q, %s:%s, %d): %v", row, fam, col, delta, err)
		}
		if got != want {
			t.Errorf("Increment(%q, %s:%s, %d) = %d, want %d", row, fam, col, delta, got, want)
		}
		cs := readRow(t, s, row, fl{Family: fam, Column: col, Latest: true})
		if len(cs) != 1 || len(cs[0].Value) != 8 || int64(binary.BigEndian.Uint64(cs[0].Value)) != want {
			t.Errorf("newest %s:%s after Increment = %s, want the big-endian int64 %d", fam, col, fmtCells(cs), want)
		}
	}
	inc("ctr", "m", "a", 5, 5) // a missing cell counts as 0
	inc("ctr", "m", "a", -7, -2)
	inc("ctr", "m", "a", 0, -2)
	inc("ctr", "m", "a", 1<<40, 1<<40-2)
	inc("ctr", "m", "b", 1, 1) // columns are independent
	inc("ctr2", "m", "a", 3, 3)
	inc("ctr", "n", "a", 2, 2) // so are families
	inc("ctr", "m", "a", 2, 1<<40)

	// A value written by SetCell.
	mutate(t, s, "ctr", percolator.Mutation{Op: percolator.SetCell, Family: "m", Column: "set", Ts: 10, Value: int64Value(41)})
	inc("ctr", "m", "set", 1, 42)
	mutate(t, s, "ctr", percolator.Mutation{Op: percolator.SetCell, Family: "m", Column: "neg", Ts: 10, Value: int64Value(-10)})
	inc("ctr", "m", "neg", 3, -7)

	// The increments leave other cells of the row alone.
	mutate(t, s, "ctr3", fput("d", "a", 10), fput("m", "b", 10))
	inc("ctr3", "m", "a", 9, 9)
	checkCells(t, "other cells of the row", readRow(t, s, "ctr3", fl{Family: "d"}, fl{Family: "m", Column: "b"}), cells(fx, k("d", "a", 10), k("m", "b", 10)))
}
