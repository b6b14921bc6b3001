package storetest

import (
	"fmt"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
)

// testReadLists checks the optional list reads against the plain ones:
// ReadRowList (percolator.RowListReader) as a ReadRow a row, ReadRanges
// (percolator.RangeReader) as a ReadRows a range, in row order, with
// rows that hold nothing the filters select left out, several filters,
// and an early stop.
func testReadLists(t *testing.T, s percolator.Store) {
	rl, rowsOK := s.(percolator.RowListReader)
	rr, rangesOK := s.(percolator.RangeReader)
	if !rowsOK && !rangesOK {
		t.Skip("the store reads no lists")
	}
	rows := []string{"a", "a\x00", "ab", "b/1", "b/2", "b/3", "c", "d/x", "d/y", "e"}
	for i, row := range rows {
		mutate(t, s, row, put(row, "d", "c", 10), put(row, "d", "c", 20), put(row, "w", fmt.Sprint(i%3), 10))
	}
	mutate(t, s, "only-m", put("only-m", "m", "c", 10))
	filters := []percolator.Filter{
		{Family: "d", Column: "c", Latest: true},
		{Family: "w", Column: "1", KeysOnly: true},
		{Family: "w", Column: "2"},
	}
	if rowsOK {
		t.Run("ReadRowList", func(t *testing.T) {
			list := []string{"a", "a\x00", "b/2", "b/3", "d/y", "e", "missing", "only-m"}
			for _, stopAt := range []int{0, 1, 3} {
				var want []scanned
				for _, r := range list {
					if cs := readRow(t, s, r, filters...); len(cs) > 0 {
						want = append(want, scanned{r, cs})
					}
				}
				if stopAt > 0 {
					want = want[:stopAt]
				}
				var got []scanned
				err := rl.ReadRowList(t.Context(), list, func(row string, cs []percolator.Cell) bool {
					got = append(got, scanned{row, cs})
					return len(got) != stopAt
				}, filters...)
				if err != nil {
					t.Fatal(err)
				}
				checkRows(t, fmt.Sprintf("ReadRowList(%q) stopping at %d", list, stopAt), got, want, true)
			}
		})
	}
	if rangesOK {
		t.Run("ReadRanges", func(t *testing.T) {
			ranges := []percolator.KeyRange{{Start: "", End: "a\x00"}, {Start: "ab", End: "ab"}, {Start: "b/", End: "b0"}, {Start: "d/y", End: "d/z"}, {Start: "e", End: ""}}
			for _, stopAt := range []int{0, 1, 4} {
				var want []scanned
				for _, r := range ranges {
					want = append(want, readRows(t, s, r.Start, r.End, filters...)...)
				}
				if stopAt > 0 {
					want = want[:stopAt]
				}
				var got []scanned
				err := rr.ReadRanges(t.Context(), ranges, func(row string, cs []percolator.Cell) bool {
					got = append(got, scanned{row, cs})
					return len(got) != stopAt
				}, filters...)
				if err != nil {
					t.Fatal(err)
				}
				checkRows(t, fmt.Sprintf("ReadRanges(%q) stopping at %d", ranges, stopAt), got, want, true)
			}
		})
	}
}
