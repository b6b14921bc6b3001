package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
)

// testColumnPrefix checks filters limited to the columns beginning with a
// prefix, alone and in unions, in ReadRow and ReadRows, including the
// sparse family, prefixes with 0x00 bytes, and rows with no such column.
func testColumnPrefix(t *testing.T, s percolator.Store) {
	cols := []string{"a", "an", "an:1", "an:2", "an\x00x", "anz", "b", "in:x", "in:y", "in\x00"}
	slices.Sort(cols) // the order stores return columns in
	for _, row := range []string{"r1", "r2"} {
		var ms []percolator.Mutation
		for _, c := range cols {
			ms = append(ms, put(row, "w", c, 10), put(row, "l", c, 10))
		}
		mutate(t, s, row, ms...)
	}
	mutate(t, s, "r3", put("r3", "w", "zzz", 10)) // no column with any prefix below

	want := func(fs ...percolator.Filter) string {
		var out []string
		for _, fam := range []string{"l", "w"} {
			for _, c := range cols {
				cl := percolator.Cell{Family: fam, Column: c, Ts: 10}
				for _, f := range fs {
					if f.Matches(cl) {
						out = append(out, fam+":"+c)
						break
					}
				}
			}
		}
		return fmt.Sprintf("%q", out)
	}
	got := func(cells []percolator.Cell) string {
		var out []string
		for _, c := range cells {
			out = append(out, c.Family+":"+c.Column)
		}
		return fmt.Sprintf("%q", out)
	}
	tests := []struct {
		name string
		fs   []percolator.Filter
	}{
		{"Prefix", []percolator.Filter{{Family: "w", ColumnPrefix: "an"}}},
		{"PrefixWithColon", []percolator.Filter{{Family: "w", ColumnPrefix: "an:"}}},
		{"PrefixWithNUL", []percolator.Filter{{Family: "w", ColumnPrefix: "an\x00"}}},
		{"WholeColumnAsPrefix", []percolator.Filter{{Family: "w", ColumnPrefix: "b"}}},
		{"NoMatch", []percolator.Filter{{Family: "w", ColumnPrefix: "q"}}},
		{"SparseFamily", []percolator.Filter{{Family: "l", ColumnPrefix: "in"}}},
		{"TwoFamilies", []percolator.Filter{{Family: "w", ColumnPrefix: "in:"}, {Family: "l", ColumnPrefix: "in:"}}},
		{"DifferentPrefixesOneFamily", []percolator.Filter{{Family: "w", ColumnPrefix: "in"}, {Family: "w", ColumnPrefix: "an:"}}},
		{"ColumnWinsOverPrefix", []percolator.Filter{{Family: "w", Column: "b", ColumnPrefix: "an"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := want(tc.fs...)
			if g := got(readRow(t, s, "r1", tc.fs...)); g != w {
				t.Errorf("ReadRow: %s\nwant %s", g, w)
			}
			rows := readRows(t, s, "r", "", tc.fs...)
			for _, r := range rows {
				if r.row == "r3" {
					t.Errorf("ReadRows returned r3, which has no matching column: %v", r.cells)
				}
				if g := got(r.cells); g != w {
					t.Errorf("ReadRows row %q: %s\nwant %s", r.row, g, w)
				}
			}
			if w != "[]" && len(rows) != 2 {
				t.Errorf("ReadRows: %d rows, want r1 and r2", len(rows))
			}
		})
	}
}
