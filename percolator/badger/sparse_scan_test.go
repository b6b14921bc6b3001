package badger

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// Tests of scans of sparse families, which read the in-memory copy
// (readRowsMirror) instead of Badger (readRowsBadger).

// sparseScanFamilies has sparse families in two locality groups, one of
// them shared with a plain family whose keys interleave with theirs.
var sparseScanFamilies = []percolator.Family{
	{Name: "a", LocalityGroup: "lock"},
	{Name: "d"},
	{Name: "l", LocalityGroup: "lock", Sparse: true},
	{Name: "m", LocalityGroup: "lock", Sparse: true},
	{Name: "p", LocalityGroup: "other", Sparse: true},
}

// openSparseScan opens a store in dir ("" in memory) with
// sparseScanFamilies, closed when the test ends.
func openSparseScan(tb testing.TB, dir string) *Store {
	tb.Helper()
	s, err := Open(dir, Options{InMemory: dir == ""})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	if err := s.EnsureFamilies(context.Background(), sparseScanFamilies); err != nil {
		tb.Fatal(err)
	}
	return s
}

// scanFunc is ReadRows or one of its paths.
type scanFunc func(ctx context.Context, start, end string, fn func(string, []percolator.Cell) bool, fs ...percolator.Filter) error

// viaBadger is ReadRows forced to read Badger, as it does for families
// that are not sparse.
func (s *Store) viaBadger(ctx context.Context, start, end string, fn func(string, []percolator.Cell) bool, fs ...percolator.Filter) error {
	ps, err := plan(s.families(), fs)
	if err != nil || len(ps) == 0 || (end != "" && end <= start) {
		return err
	}
	return s.readRowsBadger(ctx, start, end, ps, fn)
}

// scanText runs scan and formats what fn saw, one row a line, stopping
// after stop rows if stop > 0.
func scanText(tb testing.TB, scan scanFunc, start, end string, stop int, fs ...percolator.Filter) string {
	tb.Helper()
	var b strings.Builder
	n := 0
	err := scan(context.Background(), start, end, func(row string, cs []percolator.Cell) bool {
		fmt.Fprintf(&b, "%q:", row)
		for _, c := range cs {
			fmt.Fprintf(&b, " %s:%q@%d=%q", c.Family, c.Column, c.Ts, c.Value)
		}
		b.WriteByte('\n')
		n++
		return stop == 0 || n < stop
	}, fs...)
	if err != nil {
		tb.Fatalf("scan [%q, %q) %+v: %v", start, end, fs, err)
	}
	return b.String()
}

// countCursors counts the cursors ReadRows makes until the test ends.
func countCursors(tb testing.TB) *atomic.Int64 {
	var n atomic.Int64
	testHookScanCursor = func() { n.Add(1) }
	tb.Cleanup(func() { testHookScanCursor = nil })
	return &n
}

var (
	sparseScanRows = []string{"\x00", "\x00\x00", "\x00\x01", "r", "r\x00", "r\x00\x00", "r\x00a", "r0", "ra", "s", "s\xff", "\xff"}
	sparseScanCols = []string{"\x00", "c", "c\x00", "ca", "cb", "d"}
	// sparseScanBounds are the scan bounds: the rows, bytes around them,
	// and "" (for end, unbounded).
	sparseScanBounds = append([]string{"", "\x00\x00\x00", "q", "r\x00\x00\x00", "r\x01", "zz"}, sparseScanRows...)
)

// randMutation returns a random mutation of family fam.
func randMutation(rnd *rand.Rand, fam string) percolator.Mutation {
	m := percolator.Mutation{
		Family: fam,
		Column: sparseScanCols[rnd.IntN(len(sparseScanCols))],
		Ts:     1 + rnd.Uint64N(30),
	}
	switch r := rnd.IntN(10); {
	case r < 6:
		m.Op = percolator.SetCell
		if rnd.IntN(4) > 0 {
			m.Value = fmt.Appendf(nil, "v%d", rnd.IntN(100))
		}
	case r < 9:
		m.Op = percolator.DeleteCell
	default:
		m.Op = percolator.DeleteOlder
	}
	return m
}

// randFilters returns one to three random filters of the sparse families.
func randFilters(rnd *rand.Rand) []percolator.Filter {
	fams := []string{"l", "l", "m", "p"}
	fs := make([]percolator.Filter, 1+rnd.IntN(3))
	for i := range fs {
		f := percolator.Filter{Family: fams[rnd.IntN(len(fams))]}
		switch rnd.IntN(4) {
		case 0:
			f.Column = sparseScanCols[rnd.IntN(len(sparseScanCols))]
		case 1:
			f.ColumnPrefix = sparseScanCols[rnd.IntN(len(sparseScanCols))][:1]
		}
		if rnd.IntN(3) == 0 {
			f.MinTs = rnd.Uint64N(30)
		}
		if rnd.IntN(3) == 0 {
			f.MaxTs = rnd.Uint64N(32)
		}
		f.Latest = rnd.IntN(3) == 0
		f.KeysOnly = rnd.IntN(3) == 0
		fs[i] = f
	}
	return fs
}

// TestScanSparseDifferential writes and deletes random cells of sparse and
// plain families, and compares scans of sparse families from memory
// (ReadRows) with the same scans read from Badger, over random ranges and
// filters, including scans that stop early. A reopening in the middle
// reloads the in-memory copy. BADGER_DIFF_SEED chooses the seed.
func TestScanSparseDifferential(t *testing.T) {
	seed := rand.Uint64()
	if s := os.Getenv("BADGER_DIFF_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("BADGER_DIFF_SEED: %v", err)
		}
	}
	t.Logf("seed %d (BADGER_DIFF_SEED=%d to repeat)", seed, seed)
	rnd := rand.New(rand.NewPCG(seed, 1))
	dir := t.TempDir()
	s := openSparseScan(t, dir)
	cursors := countCursors(t)
	ctx := context.Background()
	fams := []string{"a", "d", "l", "l", "m", "p"}
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	for round := range rounds {
		if round == rounds/2 {
			s.Close()
			s = openSparseScan(t, dir)
		}
		for range 20 {
			var rms []percolator.RowMutation
			for range 1 + rnd.IntN(3) {
				rm := percolator.RowMutation{Row: sparseScanRows[rnd.IntN(len(sparseScanRows))]}
				for range 1 + rnd.IntN(4) {
					rm.Mutations = append(rm.Mutations, randMutation(rnd, fams[rnd.IntN(len(fams))]))
				}
				rms = append(rms, rm)
			}
			if err := s.MutateRows(ctx, rms); err != nil {
				t.Fatal(err)
			}
		}
		for range 30 {
			start := sparseScanBounds[rnd.IntN(len(sparseScanBounds))]
			end := sparseScanBounds[rnd.IntN(len(sparseScanBounds))]
			stop := 0
			if rnd.IntN(4) == 0 {
				stop = 1 + rnd.IntN(3)
			}
			fs := randFilters(rnd)
			cursors.Store(0)
			got := scanText(t, s.ReadRows, start, end, stop, fs...)
			if n := cursors.Load(); n != 0 {
				t.Fatalf("a scan of sparse families made %d cursors", n)
			}
			if want := scanText(t, s.viaBadger, start, end, stop, fs...); got != want {
				t.Fatalf("round %d: scan [%q, %q) stop %d %+v:\nmemory:\n%sBadger:\n%s", round, start, end, stop, fs, got, want)
			}
		}
	}
	if err := s.CheckSparse(); err != nil {
		t.Fatal(err)
	}
}

// TestScanSparseSkipsDeleted writes and deletes 50,000 lock cells, leaving
// ten: a scan of the lock family returns the ten without a Badger iterator,
// which would walk every deleted version.
func TestScanSparseSkipsDeleted(t *testing.T) {
	s := openSparseScan(t, t.TempDir())
	live := writeDeleted(t, s, "l", 50000, 10)
	cursors := countCursors(t)
	f := percolator.Filter{Family: "l"}
	got := scanText(t, s.ReadRows, "", "", 0, f)
	if n := cursors.Load(); n != 0 {
		t.Errorf("the scan made %d cursors, want none", n)
	}
	if want := scanText(t, s.viaBadger, "", "", 0, f); got != want {
		t.Errorf("memory:\n%sBadger:\n%s", got, want)
	}
	if n := strings.Count(got, "\n"); n != live {
		t.Errorf("%d rows with locks, want %d:\n%s", n, live, got)
	}
	if n := cursors.Load(); n != 1 {
		t.Errorf("the scan of Badger made %d cursors, want 1", n)
	}
}

// writeDeleted writes n cells of family (fam:c, on rows of their own, as
// Percolator's prewrites write locks and its commits notifications) and
// deletes all but live of them, in batches, and returns live.
func writeDeleted(tb testing.TB, s *Store, fam string, n, live int) int {
	tb.Helper()
	ctx := context.Background()
	const batch = 1000
	for op := range 2 {
		for i := 0; i < n; i += batch {
			var rms []percolator.RowMutation
			for j := i; j < min(i+batch, n); j++ {
				m := percolator.Mutation{Op: percolator.SetCell, Family: fam, Column: "c", Ts: uint64(j + 1), Value: []byte("primary lock of some page")}
				if op == 1 {
					if j%(n/live) == 0 {
						continue
					}
					m = percolator.Mutation{Op: percolator.DeleteCell, Family: fam, Column: "c", Ts: uint64(j + 1)}
				}
				rms = append(rms, percolator.RowMutation{Row: fmt.Sprintf("page%06d", j), Mutations: []percolator.Mutation{m}})
			}
			if err := s.MutateRows(ctx, rms); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return live
}

// TestScanSparseAtomicity scans sparse families while writers set and
// delete two cells of a row together and single-row commits create rows:
// every row a scan returns must hold both cells of a write or neither, and
// every commit whose timestamp was taken before the scan began must be
// seen.
func TestScanSparseAtomicity(t *testing.T) {
	s := openSparseScan(t, "")
	ctx := context.Background()
	scans := 300
	if testing.Short() {
		scans = 50
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	var ts atomic.Uint64
	for w := range 3 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(w), 3))
			for !done.Load() {
				if err := pairWrite(ctx, s, rnd, ts.Add(1)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// Commits take timestamps from their own clock, so that the rows with
	// a timestamp at or below its reading before a scan are all due.
	var clock atomic.Uint64
	const commits = 3000
	wg.Go(func() {
		for i := 0; i < commits && !done.Load(); i++ {
			row := fmt.Sprintf("commit%05d", i)
			_, err := s.CheckAndMutateRowAt(ctx, row, []percolator.Filter{{Family: "p"}},
				func() (uint64, error) { return clock.Add(1), nil },
				func(ts uint64) []percolator.Mutation {
					return []percolator.Mutation{{Op: percolator.SetCell, Family: "p", Column: "c", Ts: ts}}
				})
			if err != nil {
				t.Error(err)
				return
			}
		}
	})
	for i := range scans {
		taken := clock.Load()
		var seen uint64
		err := s.ReadRows(ctx, "", "", func(row string, cs []percolator.Cell) bool {
			if strings.HasPrefix(row, "commit") {
				for _, c := range cs {
					if c.Ts <= taken {
						seen++
					}
				}
				return true
			}
			if err := checkPair(row, cs); err != nil {
				t.Errorf("scan %d: %v", i, err)
				return false
			}
			return true
		}, percolator.Filter{Family: "l"}, percolator.Filter{Family: "m"}, percolator.Filter{Family: "p"})
		if err != nil {
			t.Fatal(err)
		}
		if seen != taken {
			t.Errorf("scan %d saw %d commits with timestamps taken before it, want %d", i, seen, taken)
		}
		if t.Failed() {
			break
		}
	}
	done.Store(true)
	wg.Wait()
	t.Logf("%d pair writes, %d commits", ts.Load(), clock.Load())
}

// TestScanSparseWaitsForWriter holds a stripe for writing, as a write does
// while it updates the in-memory copy, and gives it its first sparse cell:
// a scan must wait for the writer, though the stripe's sequence number
// does not tell yet that it holds sparse cells, and then see the cell.
func TestScanSparseWaitsForWriter(t *testing.T) {
	s := openSparseScan(t, "")
	st := s.stripe("row")
	st.lock()
	st.setSparse("row", famCol{"l", "c"}, []version{{ts: 5, val: []byte("v")}})
	type result struct {
		rows []string
		err  error
	}
	done := make(chan result)
	go func() {
		var r result
		r.err = s.ReadRows(context.Background(), "", "", func(row string, cs []percolator.Cell) bool {
			r.rows = append(r.rows, row)
			return true
		}, percolator.Filter{Family: "l"})
		done <- r
	}()
	select {
	case r := <-done:
		st.unlock()
		t.Fatalf("the scan did not wait for the writer: rows %q, %v", r.rows, r.err)
	case <-time.After(50 * time.Millisecond):
	}
	st.unlock()
	if r := <-done; r.err != nil || !slices.Equal(r.rows, []string{"row"}) {
		t.Errorf("the scan found rows %q, %v; want [\"row\"]", r.rows, r.err)
	}
}

// pairWrite sets or deletes, at random, the cells l:x and m:y of a few
// rows at ts, both in one mutation of the row; a deletion deletes every
// version of both.
func pairWrite(ctx context.Context, s *Store, rnd *rand.Rand, ts uint64) error {
	var rms []percolator.RowMutation
	for range 1 + rnd.IntN(3) {
		row := fmt.Sprintf("row%03d", rnd.IntN(200))
		var ms []percolator.Mutation
		if rnd.IntN(2) == 0 {
			v := []byte(row)
			ms = []percolator.Mutation{
				{Op: percolator.SetCell, Family: "l", Column: "x", Ts: ts, Value: v},
				{Op: percolator.SetCell, Family: "m", Column: "y", Ts: ts, Value: v},
			}
		} else {
			ms = []percolator.Mutation{
				{Op: percolator.DeleteOlder, Family: "l", Column: "x", Ts: ts},
				{Op: percolator.DeleteOlder, Family: "m", Column: "y", Ts: ts},
			}
		}
		rms = append(rms, percolator.RowMutation{Row: row, Mutations: ms})
	}
	return s.MutateRows(ctx, rms)
}

// checkPair checks the cells of a row that pairWrite writes: l:x and m:y
// at the same timestamps, with the row as value.
func checkPair(row string, cs []percolator.Cell) error {
	var x, y []uint64
	for _, c := range cs {
		if string(c.Value) != row {
			return fmt.Errorf("row %s: cell %+v", row, c)
		}
		switch c.Family + ":" + c.Column {
		case "l:x":
			x = append(x, c.Ts)
		case "m:y":
			y = append(y, c.Ts)
		default:
			return fmt.Errorf("row %s: cell %+v", row, c)
		}
	}
	if len(x) == 0 || !slices.Equal(x, y) {
		return fmt.Errorf("row %s: l:x at %v, m:y at %v", row, x, y)
	}
	return nil
}

// BenchmarkScanSparseAfterDeletes scans the lock family of a store where
// 20,000 locks were taken and released and ten are live, from memory (what
// ReadRows does) and from Badger (what it did before), which walks the
// deleted versions until compaction drops them.
func BenchmarkScanSparseAfterDeletes(b *testing.B) {
	s := openSparseScan(b, b.TempDir())
	live := writeDeleted(b, s, "l", 20000, 10)
	ctx := context.Background()
	f := percolator.Filter{Family: "l"}
	for _, sc := range []struct {
		name string
		scan scanFunc
	}{{"memory", s.ReadRows}, {"badger", s.viaBadger}} {
		b.Run(sc.name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				err := sc.scan(ctx, "", "", func(string, []percolator.Cell) bool { n++; return true }, f)
				if err != nil || n != live {
					b.Fatal(n, err)
				}
			}
		})
	}
}
