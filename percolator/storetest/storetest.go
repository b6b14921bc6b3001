// Package storetest is the contract test suite of percolator.Store.
//
// A backend runs it from its own tests:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) percolator.Store {
//			s, err := Open(t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// The suite asserts only what store.go documents and Cloud Bigtable also
// guarantees, so the same suite runs against the embedded Badger store and
// the Bigtable (emulator) store. Cell timestamps written by the suite lie in
// [1, 2^52); filter bounds may also be 0 and percolator.MaxTs.
//
// Model is a reference implementation of the contract, which passes the
// suite. A backend's differential test applies random operations to the
// backend and to a Model and compares every result (package badger's
// TestDifferential).
package storetest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// Families is the schema every subtest creates with EnsureFamilies before it
// uses a store: Percolator's families ("d" data, "l" locks (sparse), "w"
// writes (newest indexed), "n" notifications in their own locality group,
// "m" metadata).
var Families = []percolator.Family{
	{Name: "d"},
	{Name: "l", Sparse: true},
	{Name: "w", Newest: true},
	{Name: "n", LocalityGroup: "notify"},
	{Name: "m"},
}

// TopTs is the largest cell timestamp the suite writes (2^52 - 1).
const TopTs = 1<<52 - 1

// hangTimeout bounds calls that must return (cancelled contexts, calls after
// a failed ts function).
const hangTimeout = 10 * time.Second

type suiteTest struct {
	name string
	fn   func(t *testing.T, s percolator.Store)
}

var suite = []suiteTest{
	{"EnsureFamilies", testEnsureFamilies},
	{"ReadRowFilters", testReadRowFilters},
	{"ReadRowColumns", testReadRowColumns},
	{"ReadRowUnknownRow", testReadRowUnknownRow},
	{"ReadRowKeysOnly", testReadRowKeysOnly},
	{"ValuesAreCopies", testValuesAreCopies},
	{"InputsNotRetained", testInputsNotRetained},
	{"EmptyValue", testEmptyValue},
	{"LargeValue", testLargeValue},
	{"TimestampBounds", testTimestampBounds},
	{"SetCellReplaces", testSetCellReplaces},
	{"DeleteCell", testDeleteCell},
	{"DeleteOlder", testDeleteOlder},
	{"ReadRowsRanges", testReadRowsRanges},
	{"ReadRowsFilters", testReadRowsFilters},
	{"ReadRowsStop", testReadRowsStop},
	{"ReadRowsCellsOwned", testReadRowsCellsOwned},
	{"ReadLists", testReadLists},
	{"CheckAndMutateRow", testCheckAndMutateRow},
	{"CheckAndMutateRowOneWinner", testCheckAndMutateRowOneWinner},
	{"MutateRows", testMutateRows},
	{"RowAtomicity", testRowAtomicity},
	{"Increment", testIncrement},
	{"IncrementConcurrent", testIncrementConcurrent},
	{"Exclusive", testExclusive},
	{"Compactor", testCompactor},
	{"CancelledContext", testCancelledContext},
	{"ColumnPrefix", testColumnPrefix},
	{"UnionDuplicates", testUnionDuplicates},
	{"ColumnMetacharacters", testColumnMetacharacters},
	{"ConditionalOutcome", testConditionalOutcome},
}

// Run runs the contract suite as subtests of t. open must return a new,
// empty store each time it is called. Run calls EnsureFamilies(Families) on
// it first and closes it when the subtest ends (via t.Cleanup registered
// after open returns, so cleanups that open registered, such as removing a
// t.TempDir, run after Close); open must not close the store itself.
//
// Optional interfaces (percolator.ExclusiveStore, percolator.Compactor,
// percolator.RowListReader, percolator.RangeReader) are tested when the
// store implements them and skipped otherwise.
func Run(t *testing.T, open func(t *testing.T) percolator.Store) {
	for _, st := range suite {
		t.Run(st.name, func(t *testing.T) {
			st.fn(t, newStore(t, open))
		})
	}
}

func newStore(t *testing.T, open func(t *testing.T) percolator.Store) percolator.Store {
	t.Helper()
	s := open(t)
	if s == nil {
		t.Fatal("open returned a nil Store")
	}
	t.Cleanup(func() {
		done := make(chan error, 1)
		go func() { done <- s.Close() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Close: %v", err)
			}
		case <-time.After(hangTimeout):
			t.Errorf("Close did not return within %v", hangTimeout)
		}
	})
	if err := s.EnsureFamilies(t.Context(), Families); err != nil {
		t.Fatalf("EnsureFamilies(%v): %v", Families, err)
	}
	return s
}

// --- mutations and cells ---------------------------------------------------

// val is the value the suite stores at (row, family, column, ts), so a cell
// read from the wrong row, column or version is detected by its value.
func val(row, fam, col string, ts uint64) string {
	return fmt.Sprintf("%q/%s:%s@%d", row, fam, col, ts)
}

// put sets (fam, col, ts) of row to val(row, fam, col, ts).
func put(row, fam, col string, ts uint64) percolator.Mutation {
	return setv(fam, col, ts, val(row, fam, col, ts))
}

// cell is the cell put(row, fam, col, ts) writes.
func cell(row, fam, col string, ts uint64) percolator.Cell {
	return percolator.Cell{Family: fam, Column: col, Ts: ts, Value: []byte(val(row, fam, col, ts))}
}

func setv(fam, col string, ts uint64, v string) percolator.Mutation {
	return percolator.Mutation{Op: percolator.SetCell, Family: fam, Column: col, Ts: ts, Value: []byte(v)}
}

func del(fam, col string, ts uint64) percolator.Mutation {
	return percolator.Mutation{Op: percolator.DeleteCell, Family: fam, Column: col, Ts: ts}
}

func delOlder(fam, col string, ts uint64) percolator.Mutation {
	return percolator.Mutation{Op: percolator.DeleteOlder, Family: fam, Column: col, Ts: ts}
}

// cells is a shorthand for a list of cells of one row.
func cells(row string, keys ...key) []percolator.Cell {
	out := make([]percolator.Cell, 0, len(keys))
	for _, k := range keys {
		out = append(out, cell(row, k.fam, k.col, k.ts))
	}
	return out
}

type key struct {
	fam, col string
	ts       uint64
}

func k(fam, col string, ts uint64) key { return key{fam, col, ts} }

// --- store helpers -----------------------------------------------------------

func mutate(t *testing.T, s percolator.Store, row string, muts ...percolator.Mutation) {
	t.Helper()
	if err := s.MutateRows(t.Context(), []percolator.RowMutation{{Row: row, Mutations: muts}}); err != nil {
		t.Fatalf("MutateRows(%q, %v): %v", row, muts, err)
	}
}

func readRow(t *testing.T, s percolator.Store, row string, filters ...percolator.Filter) []percolator.Cell {
	t.Helper()
	got, err := s.ReadRow(t.Context(), row, filters...)
	if err != nil {
		t.Fatalf("ReadRow(%q, %+v): %v", row, filters, err)
	}
	return got
}

// allFamilies selects every cell of a row.
func allFamilies() []percolator.Filter {
	fs := make([]percolator.Filter, len(Families))
	for i, f := range Families {
		fs[i] = percolator.Filter{Family: f.Name}
	}
	return fs
}

type scanned struct {
	row   string
	cells []percolator.Cell
}

func readRows(t *testing.T, s percolator.Store, start, end string, filters ...percolator.Filter) []scanned {
	t.Helper()
	var out []scanned
	err := s.ReadRows(t.Context(), start, end, func(row string, cs []percolator.Cell) bool {
		out = append(out, scanned{row, cs})
		return true
	}, filters...)
	if err != nil {
		t.Fatalf("ReadRows(%q, %q, %+v): %v", start, end, filters, err)
	}
	return out
}

// --- comparisons ---------------------------------------------------------------

func fmtCells(cs []percolator.Cell) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range cs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s:%q@%d=%q", c.Family, c.Column, c.Ts, c.Value)
	}
	b.WriteByte(']')
	return b.String()
}

func fmtRows(rs []scanned) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\n\t%q: %s", r.row, fmtCells(r.cells))
	}
	if len(rs) == 0 {
		b.WriteString(" (no rows)")
	}
	return b.String()
}

// sameCells reports whether got equals want in order, keys and values. With
// keysOnly, a value may also be empty (a store may strip it or not).
func sameCells(got, want []percolator.Cell, keysOnly bool) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Family != w.Family || g.Column != w.Column || g.Ts != w.Ts {
			return false
		}
		if !bytes.Equal(g.Value, w.Value) && !(keysOnly && len(g.Value) == 0) {
			return false
		}
	}
	return true
}

func checkCells(t *testing.T, what string, got, want []percolator.Cell) {
	t.Helper()
	if !sameCells(got, want, false) {
		t.Errorf("%s:\n\tgot  %s\n\twant %s", what, fmtCells(got), fmtCells(want))
	}
}

func checkKeys(t *testing.T, what string, got, want []percolator.Cell) {
	t.Helper()
	if !sameCells(got, want, true) {
		t.Errorf("%s (values may be empty):\n\tgot  %s\n\twant %s", what, fmtCells(got), fmtCells(want))
	}
}

func checkRows(t *testing.T, what string, got, want []scanned, keysOnly bool) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].row == want[i].row && sameCells(got[i].cells, want[i].cells, keysOnly)
	}
	if !ok {
		t.Errorf("%s:\ngot%s\nwant%s", what, fmtRows(got), fmtRows(want))
	}
}

func int64Value(v int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(v))
}

// returns fails t if fn does not return within hangTimeout. A call that hangs
// is left running.
func returns(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(hangTimeout):
		t.Fatalf("%s did not return within %v", what, hangTimeout)
	}
}

// --- EnsureFamilies --------------------------------------------------------------

func testEnsureFamilies(t *testing.T, s percolator.Store) {
	ctx := t.Context()
	mutate(t, s, "r", put("r", "d", "a", 10))
	if err := s.EnsureFamilies(ctx, Families); err != nil {
		t.Fatalf("second EnsureFamilies with the same families: %v", err)
	}
	if err := s.EnsureFamilies(ctx, Families[:2]); err != nil {
		t.Fatalf("EnsureFamilies with a subset of the families: %v", err)
	}
	more := append(append([]percolator.Family(nil), Families...),
		percolator.Family{Name: "x", LocalityGroup: "other"})
	if err := s.EnsureFamilies(ctx, more); err != nil {
		t.Fatalf("EnsureFamilies adding family x: %v", err)
	}
	mutate(t, s, "r", put("r", "x", "a", 20))
	checkCells(t, "row after adding family x", readRow(t, s, "r", percolator.Filter{Family: "d"}, percolator.Filter{Family: "x"}),
		cells("r", k("d", "a", 10), k("x", "a", 20)))
}
