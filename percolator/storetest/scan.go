package storetest

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
)

// testReadRowsRanges checks [start, end) ranges over binary row keys that
// are prefixes of each other, ordered by bytes.
func testReadRowsRanges(t *testing.T, s percolator.Store) {
	keys := []string{"\x00", "a", "a\x00", "a\x00b", "ab", "b", "b\xff", "\xff", "\xff\xff"}
	for _, row := range keys {
		mutate(t, s, row, put(row, "d", "c", 10))
	}
	// Rows without cells of family d, and a row whose d cell was deleted.
	mutate(t, s, "a\x01", put("a\x01", "w", "c", 10))
	mutate(t, s, "aa", put("aa", "n", "c", 10))
	mutate(t, s, "ab\x00", put("ab\x00", "d", "c", 10))
	mutate(t, s, "ab\x00", del("d", "c", 10))

	tests := []struct {
		name       string
		start, end string
		want       []string
	}{
		{"All", "", "", keys},
		{"FromStart", "", "a", []string{"\x00"}},
		{"FromZeroByte", "\x00", "", keys},
		{"AfterZeroByte", "\x00\x00", "", keys[1:]},
		{"PrefixA", "a", "ab", []string{"a", "a\x00", "a\x00b"}},
		{"OnlyA", "a", "a\x00", []string{"a"}},
		{"ZeroSuffix", "a\x00", "a\x00b", []string{"a\x00"}},
		{"ZeroSuffixInclusive", "a\x00", "a\x00b\x00", []string{"a\x00", "a\x00b"}},
		{"FromMiddleToEnd", "a\x00b", "", []string{"a\x00b", "ab", "b", "b\xff", "\xff", "\xff\xff"}},
		{"StartBetweenRows", "aa", "b", []string{"ab"}},
		{"StartAfterPrefix", "a\x01", "b\x00", []string{"ab", "b"}},
		{"EndExclusive", "b", "b\xff", []string{"b"}},
		{"HighBytes", "b\xff", "\xff\xff", []string{"b\xff", "\xff"}},
		{"FromFF", "\xff", "", []string{"\xff", "\xff\xff"}},
		{"AfterLast", "\xff\xff\x00", "", nil},
		{"BeforeFirstEnd", "", "\x00", nil},
		{"EmptyRange", "ab\x00", "b", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var want []scanned
			for _, row := range tc.want {
				want = append(want, scanned{row, cells(row, k("d", "c", 10))})
			}
			checkRows(t, fmt.Sprintf("ReadRows(%q, %q, d)", tc.start, tc.end), readRows(t, s, tc.start, tc.end, fl{Family: "d"}), want, false)
		})
	}
	t.Run("AnyFamily", func(t *testing.T) {
		got := readRows(t, s, "a", "b", fl{Family: "d"}, fl{Family: "n"}, fl{Family: "w"})
		want := []scanned{
			{"a", cells("a", k("d", "c", 10))},
			{"a\x00", cells("a\x00", k("d", "c", 10))},
			{"a\x00b", cells("a\x00b", k("d", "c", 10))},
			{"a\x01", cells("a\x01", k("w", "c", 10))},
			{"aa", cells("aa", k("n", "c", 10))},
			{"ab", cells("ab", k("d", "c", 10))},
		}
		checkRows(t, "ReadRows(a, b, d|n|w)", got, want, false)
	})
}

// testReadRowsFilters checks that filters over families of different
// locality groups ("w" and "n") are merged into one call per row.
func testReadRowsFilters(t *testing.T, s percolator.Store) {
	fix := map[string][]key{
		"g/1": {k("w", "c", 10), k("w", "c", 20)},
		"g/2": {k("n", "c", 15)},
		"g/3": {k("n", "c", 5), k("w", "c", 7), k("d", "x", 1)},
		"g/4": {k("d", "x", 1)},
		"g/5": {k("l", "c", 3), k("w", "c", 40)},
		"g/6": {k("w", "c", 50), k("n", "d", 50), k("n", "c", 50)},
		"g":   {k("w", "c", 1), k("n", "c", 1)},
		"g0":  {k("w", "c", 1), k("n", "c", 1)},
		"f":   {k("w", "c", 1)},
	}
	for _, row := range slices.Sorted(maps.Keys(fix)) {
		ks := fix[row]
		var muts []percolator.Mutation
		for _, c := range ks {
			muts = append(muts, put(row, c.fam, c.col, c.ts))
		}
		mutate(t, s, row, muts...)
	}
	type r = scanned
	tests := []struct {
		name     string
		filters  []fl
		want     []scanned
		keysOnly bool
	}{
		{"WriteAndNotify", []fl{{Family: "w"}, {Family: "n"}}, []r{
			{"g/1", cells("g/1", k("w", "c", 20), k("w", "c", 10))},
			{"g/2", cells("g/2", k("n", "c", 15))},
			{"g/3", cells("g/3", k("n", "c", 5), k("w", "c", 7))},
			{"g/5", cells("g/5", k("w", "c", 40))},
			{"g/6", cells("g/6", k("n", "c", 50), k("n", "d", 50), k("w", "c", 50))},
		}, false},
		{"NotifyOnly", []fl{{Family: "n"}}, []r{
			{"g/2", cells("g/2", k("n", "c", 15))},
			{"g/3", cells("g/3", k("n", "c", 5))},
			{"g/6", cells("g/6", k("n", "c", 50), k("n", "d", 50))},
		}, false},
		{"NotifyColumn", []fl{{Family: "n", Column: "d"}}, []r{
			{"g/6", cells("g/6", k("n", "d", 50))},
		}, false},
		{"LatestWrite", []fl{{Family: "n"}, {Family: "w", Latest: true}}, []r{
			{"g/1", cells("g/1", k("w", "c", 20))},
			{"g/2", cells("g/2", k("n", "c", 15))},
			{"g/3", cells("g/3", k("n", "c", 5), k("w", "c", 7))},
			{"g/5", cells("g/5", k("w", "c", 40))},
			{"g/6", cells("g/6", k("n", "c", 50), k("n", "d", 50), k("w", "c", 50))},
		}, false},
		{"TsRanges", []fl{{Family: "w", MaxTs: 10}, {Family: "n", MinTs: 10, MaxTs: 49}}, []r{
			{"g/1", cells("g/1", k("w", "c", 10))},
			{"g/2", cells("g/2", k("n", "c", 15))},
			{"g/3", cells("g/3", k("w", "c", 7))},
		}, false},
		{"LatestMaxTs", []fl{{Family: "w", MaxTs: 15, Latest: true}}, []r{
			{"g/1", cells("g/1", k("w", "c", 10))},
			{"g/3", cells("g/3", k("w", "c", 7))},
		}, false},
		{"PercolatorScan", []fl{{Family: "w", MaxTs: 30, Latest: true}, {Family: "l", MaxTs: 30}}, []r{
			{"g/1", cells("g/1", k("w", "c", 20))},
			{"g/3", cells("g/3", k("w", "c", 7))},
			{"g/5", cells("g/5", k("l", "c", 3))},
		}, false},
		{"AllFamilies", allFamilies(), []r{
			{"g/1", cells("g/1", k("w", "c", 20), k("w", "c", 10))},
			{"g/2", cells("g/2", k("n", "c", 15))},
			{"g/3", cells("g/3", k("d", "x", 1), k("n", "c", 5), k("w", "c", 7))},
			{"g/4", cells("g/4", k("d", "x", 1))},
			{"g/5", cells("g/5", k("l", "c", 3), k("w", "c", 40))},
			{"g/6", cells("g/6", k("n", "c", 50), k("n", "d", 50), k("w", "c", 50))},
		}, false},
		{"KeysOnly", []fl{{Family: "w", KeysOnly: true}, {Family: "n", MaxTs: 20, KeysOnly: true}}, []r{
			{"g/1", cells("g/1", k("w", "c", 20), k("w", "c", 10))},
			{"g/2", cells("g/2", k("n", "c", 15))},
			{"g/3", cells("g/3", k("n", "c", 5), k("w", "c", 7))},
			{"g/5", cells("g/5", k("w", "c", 40))},
			{"g/6", cells("g/6", k("w", "c", 50))},
		}, true},
		{"NoMatch", []fl{{Family: "l", Column: "zz"}, {Family: "n", MinTs: 51}}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := readRows(t, s, "g/", "g0", tc.filters...)
			checkRows(t, fmt.Sprintf("ReadRows(g/, g0, %+v)", tc.filters), got, tc.want, tc.keysOnly)
		})
	}
	t.Run("KeysOnlyMixed", func(t *testing.T) {
		got := readRows(t, s, "g/", "g0", fl{Family: "w", KeysOnly: true}, fl{Family: "n", Column: "c"})
		want := []r{
			{"g/1", cells("g/1", k("w", "c", 20), k("w", "c", 10))},
			{"g/2", cells("g/2", k("n", "c", 15))},
			{"g/3", cells("g/3", k("n", "c", 5), k("w", "c", 7))},
			{"g/5", cells("g/5", k("w", "c", 40))},
			{"g/6", cells("g/6", k("n", "c", 50), k("w", "c", 50))},
		}
		checkRows(t, "ReadRows with KeysOnly on w only", got, want, true)
		for _, r := range got {
			for _, c := range r.cells {
				if c.Family == "n" && !bytes.Equal(c.Value, []byte(val(r.row, c.Family, c.Column, c.Ts))) {
					t.Errorf("row %q: n:%s@%d selected without KeysOnly has value %q, want %q", r.row, c.Column, c.Ts, c.Value, val(r.row, c.Family, c.Column, c.Ts))
				}
			}
		}
	})
}

// testReadRowsStop checks that the scan stops as soon as fn returns false.
func testReadRowsStop(t *testing.T, s percolator.Store) {
	var rows []string
	for i := range 10 {
		row := fmt.Sprintf("s/%d", i)
		rows = append(rows, row)
		fam := "w"
		if i%2 == 1 {
			fam = "n"
		}
		mutate(t, s, row, put(row, fam, "c", 10), put(row, "d", "c", 10))
	}
	filterSets := []struct {
		name    string
		filters []fl
	}{
		{"OneFamily", []fl{{Family: "d"}}},
		{"LocalityGroups", []fl{{Family: "w"}, {Family: "n"}}},
	}
	for _, fs := range filterSets {
		name, filters := fs.name, fs.filters
		for _, stopAt := range []int{1, 3, 4, 10} {
			t.Run(fmt.Sprintf("%s/StopAt%d", name, stopAt), func(t *testing.T) {
				var got []string
				err := s.ReadRows(t.Context(), "s/", "s0", func(row string, cs []percolator.Cell) bool {
					got = append(got, row)
					return len(got) < stopAt
				}, filters...)
				if err != nil {
					t.Fatalf("ReadRows stopped by fn: %v", err)
				}
				if fmt.Sprint(got) != fmt.Sprint(rows[:stopAt]) {
					t.Errorf("fn called for %q, want %q", got, rows[:stopAt])
				}
			})
		}
	}
}

// testReadRowsCellsOwned checks that the cells passed to fn are the caller's:
// they stay valid after fn returns and modifying them changes nothing.
func testReadRowsCellsOwned(t *testing.T, s percolator.Store) {
	var want []scanned
	for i := range 20 {
		row := fmt.Sprintf("o/%02d", i)
		mutate(t, s, row, put(row, "d", "a", 10), put(row, "d", "a", 20), put(row, "n", "b", 5))
		want = append(want, scanned{row, cells(row, k("d", "a", 20), k("d", "a", 10), k("n", "b", 5))})
	}
	var kept []scanned
	err := s.ReadRows(t.Context(), "o/", "o0", func(row string, cs []percolator.Cell) bool {
		kept = append(kept, scanned{row, cs})
		return true
	}, fl{Family: "d"}, fl{Family: "n"})
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, "cells kept from fn after the scan", kept, want, false)

	err = s.ReadRows(t.Context(), "o/", "o0", func(row string, cs []percolator.Cell) bool {
		for i := range cs {
			for j := range cs[i].Value {
				cs[i].Value[j] = '!'
			}
			cs[i].Ts++
		}
		return true
	}, fl{Family: "d"}, fl{Family: "n"})
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, "rows after modifying the cells passed to fn", readRows(t, s, "o/", "o0", fl{Family: "d"}, fl{Family: "n"}), want, false)
}
