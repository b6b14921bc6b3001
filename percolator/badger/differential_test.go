package badger_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/storetest"
)

// The differential test applies one random sequence of operations to a
// Badger store on disk and to storetest.Model, and compares every result,
// in the manner of pebble's metamorphic tests. The Badger store is closed
// and reopened at random points (which rebuilds the sparse mirror and
// empties the newest-version cache) and compacted (which drops what
// tombstones hide), and its whole content is compared after each.
//
// BADGER_DIFF_SEED chooses the seed (a random one otherwise; a failure
// prints it) and BADGER_DIFF_OPS the number of operations.

// diffFamilies covers every kind of family: plain, sparse (kept in memory
// too), newest-indexed, another locality group, and one for counters.
var diffFamilies = []percolator.Family{
	{Name: "d"},
	{Name: "l", LocalityGroup: "lock", Sparse: true},
	{Name: "w", Newest: true},
	{Name: "n", LocalityGroup: "notify"},
	{Name: "c"},
}

var (
	diffRows = []string{"r", "r0", "r00", "r01", "r1", "r10", "r2", "s", "s\x00", "t"}
	diffCols = []string{"a", "ab", "abc", "b", "c"}
	// diffFams weights the families with paths of their own, the sparse
	// mirror and the newest-version cache; "c" holds counters only.
	diffFams = []string{"d", "l", "l", "w", "w", "w", "n"}
)

const diffTopTs = 40 // timestamps are mostly in [1, diffTopTs]

func TestDifferential(t *testing.T) { testDifferential(t, 0) }

// TestDifferentialCrashes also crashes writes at every step of their way
// into Badger (crashMutate).
func TestDifferentialCrashes(t *testing.T) { testDifferential(t, -1) }

// TestDifferentialBlobs stores nearly every value as a blob.
func TestDifferentialBlobs(t *testing.T) { testDifferential(t, 2) }

// testDifferential runs the differential test on a store with
// Options.BlobBytes blobBytes.
func testDifferential(t *testing.T, blobBytes int64) {
	seed := rand.Uint64()
	if s := os.Getenv("BADGER_DIFF_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("BADGER_DIFF_SEED: %v", err)
		}
	}
	ops := 3000
	if testing.Short() {
		ops = 500
	}
	if s := os.Getenv("BADGER_DIFF_OPS"); s != "" {
		var err error
		if ops, err = strconv.Atoi(s); err != nil {
			t.Fatalf("BADGER_DIFF_OPS: %v", err)
		}
	}
	t.Logf("seed %d, %d operations (BADGER_DIFF_SEED=%d to repeat)", seed, ops, seed)
	d := newDiff(t, seed, blobBytes)
	d.crashes = blobBytes < 0
	for i := range ops {
		d.step(i)
		if t.Failed() {
			t.Fatalf("after operation %d; repeat with BADGER_DIFF_SEED=%d BADGER_DIFF_OPS=%d", i, seed, ops)
		}
	}
	d.compareAll("end")
	if t.Failed() {
		t.Fatalf("at the end; repeat with BADGER_DIFF_SEED=%d BADGER_DIFF_OPS=%d", seed, ops)
	}
}

type diff struct {
	t     *testing.T
	rnd   *rand.Rand
	dir   string
	st    *badger.Store
	model *storetest.Model
	// floor is, per column, the timestamp of its last DeleteOlder: the
	// contract does not support writing below it afterwards.
	floor map[colID]uint64
	// safe is the last Compact's safe timestamp: no write goes below it and
	// no read bounded below it happens after.
	safe uint64
	log  []string // the last operations, shown on failure
	blob int64    // the store's Options.BlobBytes
	// crashes enables crashMutate; the store keeps no blobs then (a crash
	// may leave a blob unreferenced, by design).
	crashes bool
}

type colID struct{ row, fam, col string }

func newDiff(t *testing.T, seed uint64, blobBytes int64) *diff {
	d := &diff{
		t:     t,
		blob:  blobBytes,
		rnd:   rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		dir:   t.TempDir(),
		model: storetest.NewModel(),
		floor: make(map[colID]uint64),
	}
	d.open()
	t.Cleanup(func() {
		if d.st != nil {
			d.st.Close()
		}
	})
	if err := d.model.EnsureFamilies(context.Background(), diffFamilies); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *diff) open() {
	st, err := badger.Open(d.dir, badger.Options{MemTableSize: 1 << 20, BlobBytes: d.blob})
	if err != nil {
		d.t.Fatal(err)
	}
	d.st = st
	if err := st.EnsureFamilies(context.Background(), diffFamilies); err != nil {
		d.t.Fatal(err)
	}
}

func (d *diff) record(format string, a ...any) {
	const keep = 20
	if len(d.log) == keep {
		d.log = d.log[1:]
	}
	d.log = append(d.log, fmt.Sprintf(format, a...))
}

func (d *diff) fail(format string, a ...any) {
	d.t.Helper()
	d.t.Errorf("%s\nlast operations:\n  %s", fmt.Sprintf(format, a...), strings.Join(d.log, "\n  "))
}

// step runs operation i, chosen at random.
func (d *diff) step(i int) {
	ctx := context.Background()
	switch n := d.rnd.IntN(100); {
	case n < 30:
		d.mutateRows(ctx)
	case n < 50:
		d.readRow(ctx)
	case n < 62:
		d.readRows(ctx)
	case n < 72:
		d.checkAndMutate(ctx)
	case n < 76:
		d.checkAndMutateAt(ctx)
	case n < 80:
		d.checkAndMutateRowsAt(ctx)
	case n < 86:
		d.increment(ctx)
	case n < 88:
		d.invalid(ctx)
	case n < 89:
		d.reopen()
	case n < 90 && d.crashes:
		d.crashMutate(ctx)
	case n < 91:
		if d.rnd.IntN(2) == 0 {
			d.compact(ctx)
		}
	default:
		d.compareRow(ctx, d.row())
	}
	if i%250 == 249 {
		d.compareAll(fmt.Sprintf("after operation %d", i))
	}
}

func (d *diff) row() string { return diffRows[d.rnd.IntN(len(diffRows))] }
func (d *diff) col() string { return diffCols[d.rnd.IntN(len(diffCols))] }
func (d *diff) fam() string { return diffFams[d.rnd.IntN(len(diffFams))] }

// ts returns a timestamp a write to c may use, or false if none.
func (d *diff) ts(c colID) (uint64, bool) {
	lo := max(d.floor[c], d.safe, 1)
	if d.rnd.IntN(20) == 0 && lo <= storetest.TopTs {
		return storetest.TopTs - uint64(d.rnd.IntN(2)), true
	}
	if lo > diffTopTs {
		return 0, false
	}
	return lo + uint64(d.rnd.IntN(int(diffTopTs-lo+1))), true
}

// value returns a random value: often empty, sometimes long.
func (d *diff) value() []byte {
	switch d.rnd.IntN(10) {
	case 0, 1:
		return nil
	case 2:
		return bytes.Repeat([]byte{byte(d.rnd.IntN(256))}, 1+d.rnd.IntN(4096))
	}
	return []byte(fmt.Sprintf("v%d", d.rnd.IntN(1000)))
}

// existing returns the timestamps the model holds for column c.
func (d *diff) existing(c colID) []uint64 {
	cells, err := d.model.ReadRow(context.Background(), c.row, percolator.Filter{Family: c.fam, Column: c.col, KeysOnly: true})
	if err != nil {
		d.t.Fatal(err)
	}
	ts := make([]uint64, len(cells))
	for i, c := range cells {
		ts[i] = c.Ts
	}
	return ts
}

// mutations returns 1 to 4 random valid mutations of row, and updates the
// floors they set.
func (d *diff) mutations(row string) []percolator.Mutation {
	var muts []percolator.Mutation
	for range 1 + d.rnd.IntN(4) {
		c := colID{row, d.fam(), d.col()}
		m := percolator.Mutation{Family: c.fam, Column: c.col}
		switch n := d.rnd.IntN(10); {
		case n < 6:
			ts, ok := d.ts(c)
			if !ok {
				continue
			}
			m.Op, m.Ts, m.Value = percolator.SetCell, ts, d.value()
		case n < 8:
			m.Op = percolator.DeleteCell
			if vs := d.existing(c); len(vs) > 0 && d.rnd.IntN(4) > 0 {
				m.Ts = vs[d.rnd.IntN(len(vs))]
			} else {
				m.Ts = 1 + uint64(d.rnd.IntN(diffTopTs))
			}
		default:
			m.Op = percolator.DeleteOlder
			switch vs := d.existing(c); {
			case d.rnd.IntN(20) == 0:
				m.Ts = percolator.MaxTs
			case len(vs) > 0 && d.rnd.IntN(2) == 0:
				m.Ts = vs[d.rnd.IntN(len(vs))] + uint64(d.rnd.IntN(2))
			default:
				m.Ts = 1 + uint64(d.rnd.IntN(diffTopTs/2))
			}
			d.floor[c] = max(d.floor[c], m.Ts)
		}
		muts = append(muts, m)
	}
	return muts
}

// filters returns 1 to 3 random filters; counters are read without bounds.
func (d *diff) filters() []percolator.Filter {
	fs := make([]percolator.Filter, 1+d.rnd.IntN(3))
	for i := range fs {
		f := percolator.Filter{Family: d.fam()}
		if d.rnd.IntN(12) == 0 {
			f.Family = "c"
		}
		switch d.rnd.IntN(3) {
		case 0:
			f.Column = d.col()
		case 1:
			c := d.col()
			f.ColumnPrefix = c[:min(len(c), 1+d.rnd.IntN(2))]
		}
		if f.Family != "c" {
			if d.rnd.IntN(3) == 0 {
				f.MinTs = uint64(d.rnd.IntN(diffTopTs))
			}
			if d.rnd.IntN(3) == 0 {
				f.MaxTs = max(d.safe, uint64(d.rnd.IntN(diffTopTs+1)))
			}
		}
		f.Latest = d.rnd.IntN(3) == 0
		f.KeysOnly = d.rnd.IntN(4) == 0
		fs[i] = f
	}
	return fs
}

func (d *diff) mutateRows(ctx context.Context) {
	rows := make([]percolator.RowMutation, 1+d.rnd.IntN(3))
	for i := range rows {
		rows[i].Row = d.row()
		rows[i].Mutations = d.mutations(rows[i].Row)
	}
	d.record("MutateRows %v", rows)
	err, werr := d.st.MutateRows(ctx, rows), d.model.MutateRows(ctx, rows)
	if err != nil || werr != nil {
		d.fail("MutateRows(%v) = %v, model %v", rows, err, werr)
	}
}

// pointFilters returns the filters of a Percolator point read: a column or
// two, each read as of a timestamp, often the newest version only.
func (d *diff) pointFilters() []percolator.Filter {
	fs := make([]percolator.Filter, 1+d.rnd.IntN(2))
	for i := range fs {
		fs[i] = percolator.Filter{Family: d.fam(), Column: d.col(), Latest: d.rnd.IntN(4) > 0, KeysOnly: d.rnd.IntN(4) == 0}
		if d.rnd.IntN(2) == 0 {
			fs[i].MaxTs = max(d.safe, uint64(d.rnd.IntN(diffTopTs+1)))
		}
	}
	return fs
}

func (d *diff) readRow(ctx context.Context) {
	row, fs := d.row(), d.filters()
	if d.rnd.IntN(2) == 0 {
		fs = d.pointFilters()
	}
	d.record("ReadRow %q %+v", row, fs)
	want, werr := d.model.ReadRow(ctx, row, fs...)
	var got []percolator.Cell
	var err error
	if d.rnd.IntN(2) == 0 {
		got, err = d.st.ReadRow(ctx, row, fs...)
	} else {
		// The pooled path: a reused slice whose old cells must not show.
		junk := make([]percolator.Cell, 1+d.rnd.IntN(8))
		for i := range junk {
			junk[i] = percolator.Cell{Family: "x", Column: "junk", Ts: 7, Value: []byte("junk")}
		}
		got, err = d.st.AppendRow(ctx, junk[:0], row, fs)
	}
	if err != nil || werr != nil {
		d.fail("ReadRow(%q, %+v) = %v, model %v", row, fs, err, werr)
		return
	}
	if !sameResult(got, want, fs) {
		d.fail("ReadRow(%q, %+v)\n got %s\nwant %s", row, fs, showCells(got), showCells(want))
	}
}

type rowCells struct {
	row   string
	cells []percolator.Cell
}

func scan(ctx context.Context, s percolator.Store, start, end string, limit int, fs []percolator.Filter) ([]rowCells, error) {
	var out []rowCells
	err := s.ReadRows(ctx, start, end, func(row string, cells []percolator.Cell) bool {
		out = append(out, rowCells{row, cells})
		return len(out) < limit
	}, fs...)
	return out, err
}

func (d *diff) readRows(ctx context.Context) {
	start, end := "", ""
	if d.rnd.IntN(3) > 0 {
		start = d.row()
	}
	if d.rnd.IntN(2) == 0 {
		end = d.row()
	}
	limit := len(diffRows) + 1
	if d.rnd.IntN(4) == 0 {
		limit = 1 + d.rnd.IntN(3)
	}
	fs := d.filters()
	d.record("ReadRows [%q, %q) limit %d %+v", start, end, limit, fs)
	got, err := scan(ctx, d.st, start, end, limit, fs)
	want, werr := scan(ctx, d.model, start, end, limit, fs)
	if err != nil || werr != nil {
		d.fail("ReadRows(%q, %q, %+v) = %v, model %v", start, end, fs, err, werr)
		return
	}
	if !sameRows(got, want, fs) {
		d.fail("ReadRows(%q, %q, limit %d, %+v)\n got %s\nwant %s", start, end, limit, fs, showRows(got), showRows(want))
	}
}

func (d *diff) checkAndMutate(ctx context.Context) {
	row := d.row()
	pred := d.filters()
	ifMatch, ifNoMatch := d.mutations(row), d.mutations(row)
	if d.rnd.IntN(4) == 0 {
		ifMatch = nil
	}
	d.record("CheckAndMutateRow %q %+v %v / %v", row, pred, ifMatch, ifNoMatch)
	got, err := d.st.CheckAndMutateRow(ctx, row, pred, ifMatch, ifNoMatch)
	want, werr := d.model.CheckAndMutateRow(ctx, row, pred, ifMatch, ifNoMatch)
	if err != nil || werr != nil || got != want {
		d.fail("CheckAndMutateRow(%q, %+v) = %v, %v; model %v, %v", row, pred, got, err, want, werr)
	}
}

// checkAndMutateAt is Percolator's one-step commit: if no lock, write the
// lock and the write record at a timestamp taken while the row is held.
// The timestamp function fails sometimes; then nothing is written.
func (d *diff) checkAndMutateAt(ctx context.Context) {
	row, col := d.row(), d.col()
	pred := []percolator.Filter{{Family: "l", Column: col}}
	if d.rnd.IntN(3) == 0 {
		pred = d.filters()
	}
	ts, ok := d.ts(colID{row, "w", col})
	if lts, lok := d.ts(colID{row, "l", col}); !ok || !lok || lts > ts {
		return
	}
	fail := d.rnd.IntN(8) == 0
	build := func(ts uint64) []percolator.Mutation {
		return []percolator.Mutation{
			{Op: percolator.SetCell, Family: "l", Column: col, Ts: ts, Value: []byte("lock")},
			{Op: percolator.SetCell, Family: "w", Column: col, Ts: ts, Value: d.value()},
		}
	}
	muts := build(ts)
	d.record("CheckAndMutateRowAt %q %+v ts %d fail %v: %v", row, pred, ts, fail, muts)
	errTs := errors.New("no timestamp")
	tsFn := func() (uint64, error) {
		if fail {
			return 0, errTs
		}
		return ts, nil
	}
	fixed := func(uint64) []percolator.Mutation { return muts }
	got, err := d.st.CheckAndMutateRowAt(ctx, row, pred, tsFn, fixed)
	want, werr := d.model.CheckAndMutateRowAt(ctx, row, pred, tsFn, fixed)
	if got != want || (err == nil) != (werr == nil) || (err != nil && !errors.Is(err, errTs)) {
		d.fail("CheckAndMutateRowAt(%q, %+v, fail %v) = %v, %v; model %v, %v", row, pred, fail, got, err, want, werr)
	}
}

// checkAndMutateRowsAt is Percolator's one-step commit of several rows:
// if no row has a lock, write the locks and write records of all at a
// timestamp taken while the rows are held.
func (d *diff) checkAndMutateRowsAt(ctx context.Context) {
	n := 1 + d.rnd.IntN(4)
	var checks []percolator.RowPredicate
	var rows []percolator.RowMutation
	ts := uint64(0)
	seen := map[string]bool{}
	for range n {
		row, col := d.row(), d.col()
		if seen[row] {
			continue
		}
		seen[row] = true
		pred := []percolator.Filter{{Family: "l", Column: col}}
		if d.rnd.IntN(3) == 0 {
			pred = d.filters()
		}
		wts, ok := d.ts(colID{row, "w", col})
		if lts, lok := d.ts(colID{row, "l", col}); !ok || !lok || lts > wts {
			return
		}
		ts = max(ts, wts)
		checks = append(checks, percolator.RowPredicate{Row: row, Filters: pred})
		rows = append(rows, percolator.RowMutation{Row: row, Mutations: []percolator.Mutation{
			{Op: percolator.SetCell, Family: "l", Column: col, Value: []byte("lock")},
			{Op: percolator.SetCell, Family: "w", Column: col, Value: d.value()},
		}})
	}
	for _, r := range rows {
		for i := range r.Mutations {
			r.Mutations[i].Ts = ts // one timestamp for the commit, above every row's
		}
	}
	fail := d.rnd.IntN(8) == 0
	d.record("CheckAndMutateRowsAt %+v ts %d fail %v: %v", checks, ts, fail, rows)
	errTs := errors.New("no timestamp")
	tsFn := func() (uint64, error) {
		if fail {
			return 0, errTs
		}
		return ts, nil
	}
	fixed := func(uint64) []percolator.RowMutation { return rows }
	got, err := d.st.CheckAndMutateRowsAt(ctx, checks, tsFn, fixed)
	want, werr := d.model.CheckAndMutateRowsAt(ctx, checks, tsFn, fixed)
	if got != want || (err == nil) != (werr == nil) || (err != nil && !errors.Is(err, errTs)) {
		d.fail("CheckAndMutateRowsAt(%+v, fail %v) = %q, %v; model %q, %v", checks, fail, got, err, want, werr)
	}
}

func (d *diff) increment(ctx context.Context) {
	row, col := d.row(), d.col()
	delta := int64(d.rnd.IntN(21) - 10)
	d.record("Increment %q c:%s %d", row, col, delta)
	got, err := d.st.Increment(ctx, row, "c", col, delta)
	want, werr := d.model.Increment(ctx, row, "c", col, delta)
	if err != nil || werr != nil || got != want {
		d.fail("Increment(%q, c:%s, %d) = %d, %v; model %d, %v", row, col, delta, got, err, want, werr)
	}
}

// invalid writes one row with a mutation that is invalid among valid
// ones: both stores refuse the whole row.
func (d *diff) invalid(ctx context.Context) {
	row := d.row()
	muts := d.mutations(row)
	bad := percolator.Mutation{Op: percolator.SetCell, Family: "nosuch", Column: "a", Ts: 1}
	if d.rnd.IntN(2) == 0 {
		bad = percolator.Mutation{Op: percolator.MutationOp(9), Family: "d", Column: "a", Ts: 1}
	}
	muts = slices.Insert(muts, d.rnd.IntN(len(muts)+1), bad)
	d.record("invalid MutateRows %q %v", row, muts)
	rows := []percolator.RowMutation{{Row: row, Mutations: muts}}
	err, werr := d.st.MutateRows(ctx, rows), d.model.MutateRows(ctx, rows)
	if err == nil || werr == nil {
		d.fail("MutateRows(%q, %v) = %v, model %v; want errors", row, muts, err, werr)
	}
	d.compareRow(ctx, row)
}

func (d *diff) reopen() {
	d.record("reopen")
	if err := d.st.Close(); err != nil {
		d.fail("Close: %v", err)
	}
	d.st = nil
	d.open()
	d.compareAll("after reopen")
}

func (d *diff) compact(ctx context.Context) {
	d.safe = min(d.safe+uint64(d.rnd.IntN(6)), diffTopTs)
	d.record("Compact %d", d.safe)
	if err := d.st.Compact(ctx, d.safe); err != nil {
		d.fail("Compact(%d): %v", d.safe, err)
	}
	d.compareAll(fmt.Sprintf("after Compact(%d)", d.safe))
}

var errCrash = errors.New("injected crash")

// crashMutate runs a MutateRows that a crash cuts short at a random step
// of its way into Badger (in a write batch, after a random subset of its
// entries), sometimes logged as a write too large for a transaction, then
// reopens the store. The write must be all there or not at all, and there
// if MutateRows returned nil. If it is not there, it is written again, so
// that store and model go on alike.
func (d *diff) crashMutate(ctx context.Context) {
	rows := make([]percolator.RowMutation, 1+d.rnd.IntN(3))
	for i := range rows {
		rows[i].Row = d.row()
		rows[i].Mutations = d.mutations(rows[i].Row)
	}
	logged := d.rnd.IntN(3) == 0
	stopAt := d.rnd.IntN(5)
	mask := d.rnd.Uint64()
	d.record("crash at step %d (logged %v, mask %x): MutateRows %v", stopAt, logged, mask, rows)
	fs := allFilters()
	before, err := scan(ctx, d.st, "", "", len(diffRows)+1, fs)
	if err != nil {
		d.fail("scan: %v", err)
		return
	}
	badger.SetForceLogged(d.t, logged)
	badger.SetWriteStepHook(d.t, func(i int, batch bool, n int) (func(int) bool, error) {
		if i != stopAt {
			return nil, nil
		}
		return func(j int) bool { return mask>>(j%64)&1 == 1 }, errCrash
	})
	err = d.st.MutateRows(ctx, rows)
	badger.SetWriteStepHook(d.t, nil)
	badger.SetForceLogged(d.t, false)
	if err != nil && !errors.Is(err, errCrash) {
		d.fail("MutateRows(%v) = %v", rows, err)
		return
	}
	if err := d.st.Close(); err != nil {
		d.fail("Close: %v", err)
	}
	d.st = nil
	d.open()
	if n, err := d.st.LiveIntents(); err != nil || n != 0 {
		d.fail("after reopen: %d intents live (%v)", n, err)
	}
	got, gerr := scan(ctx, d.st, "", "", len(diffRows)+1, fs)
	if werr := d.model.MutateRows(ctx, rows); werr != nil || gerr != nil {
		d.fail("scan %v, model MutateRows %v", gerr, werr)
		return
	}
	want, werr := scan(ctx, d.model, "", "", len(diffRows)+1, fs)
	if werr != nil {
		d.fail("model scan: %v", werr)
		return
	}
	switch {
	case sameRows(got, want, fs):
	case err != nil && sameRows(got, before, fs):
		// Lost whole: write it again.
		if err := d.st.MutateRows(ctx, rows); err != nil {
			d.fail("MutateRows(%v) again: %v", rows, err)
		}
	default:
		d.fail("after a crash at step %d (MutateRows = %v): neither the write whole nor nothing of it\n got %s\nwant %s\n  or %s", stopAt, err, showRows(got), showRows(want), showRows(before))
	}
	d.compareAll("after a crash")
}

// allFilters selects every cell of every family.
func allFilters() []percolator.Filter {
	fs := make([]percolator.Filter, len(diffFamilies))
	for i, f := range diffFamilies {
		fs[i] = percolator.Filter{Family: f.Name}
	}
	return fs
}

func (d *diff) compareRow(ctx context.Context, row string) {
	fs := allFilters()
	got, err := d.st.ReadRow(ctx, row, fs...)
	want, werr := d.model.ReadRow(ctx, row, fs...)
	if err != nil || werr != nil {
		d.fail("ReadRow(%q) = %v, model %v", row, err, werr)
		return
	}
	if !sameResult(got, want, fs) {
		d.fail("row %q\n got %s\nwant %s", row, showCells(got), showCells(want))
	}
}

// compareAll compares the whole table, and the sparse mirror with Badger.
func (d *diff) compareAll(when string) {
	ctx := context.Background()
	fs := allFilters()
	got, err := scan(ctx, d.st, "", "", len(diffRows)+1, fs)
	want, werr := scan(ctx, d.model, "", "", len(diffRows)+1, fs)
	if err != nil || werr != nil {
		d.fail("%s: scan = %v, model %v", when, err, werr)
		return
	}
	if !sameRows(got, want, fs) {
		d.fail("%s: table\n got %s\nwant %s", when, showRows(got), showRows(want))
	}
	if err := d.st.CheckBlobs(); err != nil {
		msg := err.Error()
		if len(msg) > 2000 {
			msg = msg[:2000] + "…"
		}
		d.fail("%s: blobs: %s", when, msg)
	}
	if err := d.st.CheckSparse(); err != nil {
		msg := err.Error()
		if len(msg) > 2000 {
			msg = msg[:2000] + "…"
		}
		d.fail("%s: sparse mirror: %s", when, msg)
	}
}

// sameResult reports whether got matches want, read with fs. Counter
// cells are compared without their timestamps, which the store chooses. A
// value is compared unless a KeysOnly filter may have left it out.
func sameResult(got, want []percolator.Cell, fs []percolator.Filter) bool {
	if len(got) != len(want) {
		return false
	}
	keysOnly := slices.ContainsFunc(fs, func(f percolator.Filter) bool { return f.KeysOnly })
	for i := range got {
		g, w := got[i], want[i]
		if g.Family != w.Family || g.Column != w.Column || (g.Ts != w.Ts && g.Family != "c") {
			return false
		}
		if (len(w.Value) > 0 || !keysOnly) && !bytes.Equal(g.Value, w.Value) {
			return false
		}
	}
	return true
}

func sameRows(got, want []rowCells, fs []percolator.Filter) bool {
	return slices.EqualFunc(got, want, func(g, w rowCells) bool {
		return g.row == w.row && sameResult(g.cells, w.cells, fs)
	})
}

func showRows(rs []rowCells) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\n  %q: %s", r.row, showCells(r.cells))
	}
	return b.String()
}

// showCells formats cells as "fam:col@ts=value ...", long values cut.
func showCells(cs []percolator.Cell) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(' ')
		}
		v := string(c.Value)
		if len(v) > 12 {
			v = fmt.Sprintf("%.12q…(%d bytes)", v, len(v))
		}
		fmt.Fprintf(&b, "%s:%s@%d=%s", c.Family, c.Column, c.Ts, v)
	}
	return b.String()
}
