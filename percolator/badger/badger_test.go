package badger_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bdb "github.com/dgraph-io/badger/v4"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) percolator.Store {
		s, err := badger.Open(t.TempDir(), badger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestStoreSmallCache runs the contract suite with a memory budget small
// enough that memtables flush, blocks are evicted and table indexes are
// read back from disk (Options.CacheBytes).
func TestStoreSmallCache(t *testing.T) {
	storetest.Run(t, func(t *testing.T) percolator.Store {
		s, err := badger.Open(t.TempDir(), badger.Options{CacheBytes: 4 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// open opens a store in dir (in memory if dir is "") with the contract
// suite's families, closed when the test ends.
func open(t testing.TB, dir string, opt badger.Options) *badger.Store {
	t.Helper()
	opt.InMemory = dir == ""
	s, err := badger.Open(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.EnsureFamilies(context.Background(), storetest.Families); err != nil {
		t.Fatal(err)
	}
	return s
}

func set(fam, col string, ts uint64, v string) percolator.Mutation {
	return percolator.Mutation{Op: percolator.SetCell, Family: fam, Column: col, Ts: ts, Value: []byte(v)}
}

func del(fam, col string, ts uint64) percolator.Mutation {
	return percolator.Mutation{Op: percolator.DeleteCell, Family: fam, Column: col, Ts: ts}
}

func delOlder(fam, col string, ts uint64) percolator.Mutation {
	return percolator.Mutation{Op: percolator.DeleteOlder, Family: fam, Column: col, Ts: ts}
}

func mutate(t testing.TB, s percolator.Store, row string, muts ...percolator.Mutation) {
	t.Helper()
	if err := s.MutateRows(context.Background(), []percolator.RowMutation{{Row: row, Mutations: muts}}); err != nil {
		t.Fatalf("MutateRows(%q, %v): %v", row, muts, err)
	}
}

func read(t testing.TB, s percolator.Store, row string, fs ...percolator.Filter) []percolator.Cell {
	t.Helper()
	cs, err := s.ReadRow(context.Background(), row, fs...)
	if err != nil {
		t.Fatalf("ReadRow(%q, %v): %v", row, fs, err)
	}
	return cs
}

// show formats cells as "fam:col@ts=value ...".
func show(cs []percolator.Cell) string {
	var b bytes.Buffer
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%s@%d=%s", c.Family, c.Column, c.Ts, c.Value)
	}
	return b.String()
}

func check(t testing.TB, what string, got []percolator.Cell, want string) {
	t.Helper()
	if g := show(got); g != want {
		t.Errorf("%s:\n got  %s\n want %s", what, g, want)
	}
}

// rawVersion is one Badger version of a key.
type rawVersion struct {
	ver  uint64
	tomb bool
	meta byte
}

func (r rawVersion) String() string {
	if r.tomb {
		return fmt.Sprintf("%d:tomb", r.ver)
	}
	return fmt.Sprintf("%d:%d", r.ver, r.meta)
}

// raw returns every Badger version of the cell key, newest first.
func raw(t testing.TB, s *badger.Store, key []byte) string {
	t.Helper()
	txn := s.DB().NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	it := txn.NewKeyIterator(key, bdb.IteratorOptions{})
	defer it.Close()
	var vs []string
	for it.Seek(key); it.Valid(); it.Next() {
		it := it.Item()
		vs = append(vs, rawVersion{it.Version(), it.IsDeletedOrExpired(), it.UserMeta()}.String())
	}
	return fmt.Sprint(vs)
}

func compact(t testing.TB, s *badger.Store, safeTs uint64) {
	t.Helper()
	if err := s.Compact(context.Background(), safeTs); err != nil {
		t.Fatalf("Compact(%d): %v", safeTs, err)
	}
	if err := s.CheckSparse(); err != nil {
		t.Fatal(err)
	}
}

var (
	latest = func(fam, col string) percolator.Filter {
		return percolator.Filter{Family: fam, Column: col, Latest: true}
	}
	latestAt = func(fam, col string, maxTs uint64) percolator.Filter {
		return percolator.Filter{Family: fam, Column: col, MaxTs: maxTs, Latest: true}
	}
	all = func(fam string) percolator.Filter { return percolator.Filter{Family: fam} }
)

// TestOneWinner races CheckAndMutateRow on fresh rows: the predicate and the
// write it guards are one atomic step, so exactly one caller per row sees
// no match.
func TestOneWinner(t *testing.T) {
	const workers = 64
	rounds := 200
	if testing.Short() {
		rounds = 50
	}
	for _, fam := range []string{"l", "d"} { // sparse and not
		t.Run(fam, func(t *testing.T) {
			s := open(t, t.TempDir(), badger.Options{})
			ctx := context.Background()
			for r := range rounds {
				row := fmt.Sprintf("r%d", r)
				var winners atomic.Int32
				var wg sync.WaitGroup
				for w := range workers {
					wg.Go(func() {
						matched, err := s.CheckAndMutateRow(ctx, row,
							[]percolator.Filter{{Family: fam, Column: "c"}}, nil,
							[]percolator.Mutation{set(fam, "c", uint64(w+1), "x")})
						if err != nil {
							t.Error(err)
						}
						if !matched {
							winners.Add(1)
						}
					})
				}
				wg.Wait()
				if n := winners.Load(); n != 1 {
					t.Fatalf("round %d: %d callers saw no match, want 1", r, n)
				}
				if got := read(t, s, row, all(fam)); len(got) != 1 {
					t.Fatalf("round %d: row holds %s, want one cell", r, show(got))
				}
			}
			if err := s.CheckSparse(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDeleteEncoding checks which Badger entries deletions write and that
// every read path (Latest point read, its fallback, scans) agrees.
func TestDeleteEncoding(t *testing.T) {
	s := open(t, t.TempDir(), badger.Options{})
	const row = "r"
	key := func(col string) []byte { return badger.CellKey("", row, "d", col) }

	// The only version: a tombstone.
	mutate(t, s, row, set("d", "a", 10, "a10"))
	mutate(t, s, row, del("d", "a", 10))
	if got, want := raw(t, s, key("a")), "[11:tomb]"; got != want {
		t.Errorf("d:a after deleting its only version: %s, want %s", got, want)
	}
	check(t, "d:a Latest", read(t, s, row, latest("d", "a")), "")

	// An older version stays: a marker, and Latest falls back to a scan.
	mutate(t, s, row, set("d", "b", 10, "b10"), set("d", "b", 20, "b20"))
	mutate(t, s, row, del("d", "b", 20))
	if got, want := raw(t, s, key("b")), fmt.Sprintf("[21:%d 11:%d]", badger.MetaDeleted, badger.MetaLive); got != want {
		t.Errorf("d:b after deleting the newer version: %s, want %s", got, want)
	}
	check(t, "d:b Latest", read(t, s, row, latest("d", "b")), "d:b@10=b10")
	check(t, "d:b Latest at 15", read(t, s, row, latestAt("d", "b", 15)), "d:b@10=b10")
	check(t, "d:b Latest at 9", read(t, s, row, latestAt("d", "b", 9)), "")
	check(t, "d:b all", read(t, s, row, percolator.Filter{Family: "d", Column: "b"}), "d:b@10=b10")
	// Deleting the last one now writes a tombstone.
	mutate(t, s, row, del("d", "b", 10))
	if got, want := raw(t, s, key("b")), fmt.Sprintf("[21:%d 11:tomb]", badger.MetaDeleted); got != want {
		t.Errorf("d:b after deleting both: %s, want %s", got, want)
	}
	check(t, "d:b Latest after deleting both", read(t, s, row, latest("d", "b")), "")

	// Deleting a missing version writes nothing.
	mutate(t, s, row, del("d", "c", 10))
	if got := raw(t, s, key("c")); got != "[]" {
		t.Errorf("d:c after deleting a missing version: %s, want nothing", got)
	}

	// DeleteOlder tombstones every version it deletes, so reads bounded
	// below the deletion timestamp see it too.
	mutate(t, s, row, set("d", "e", 10, "e10"), set("d", "e", 20, "e20"), set("d", "e", 30, "e30"))
	mutate(t, s, row, delOlder("d", "e", 25))
	if got, want := raw(t, s, key("e")), "[31:0 21:tomb 11:tomb]"; got != want {
		t.Errorf("d:e after DeleteOlder(25): %s, want %s", got, want)
	}
	check(t, "d:e Latest", read(t, s, row, latest("d", "e")), "d:e@30=e30")
	check(t, "d:e Latest at 25", read(t, s, row, latestAt("d", "e", 25)), "")
	check(t, "d:e Latest at 15", read(t, s, row, latestAt("d", "e", 15)), "")
	check(t, "d:e all", read(t, s, row, all("d")), "d:e@30=e30")

	// The same through ReadRows.
	var scanned []percolator.Cell
	err := s.ReadRows(context.Background(), "", "", func(r string, cs []percolator.Cell) bool {
		scanned = append(scanned, cs...)
		return true
	}, all("d"), percolator.Filter{Family: "d", Column: "e", MaxTs: 25})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "ReadRows", scanned, "d:e@30=e30")
}

// AppendRow reads what ReadRow reads, into the caller's slice when it has
// room.
func TestAppendRow(t *testing.T) {
	s := open(t, t.TempDir(), badger.Options{})
	ctx := context.Background()
	mutate(t, s, "r", set("w", "c", 10, "w10"), set("w", "c", 20, "w20"), set("l", "c", 15, "lock"), set("d", "c", 10, "d10"))
	mutate(t, s, "r", del("w", "c", 20))
	for _, fs := range [][]percolator.Filter{
		{latest("w", "c")},
		{latestAt("w", "c", 19), {Family: "l", Column: "c", MaxTs: 19}},
		{latestAt("w", "c", 9), {Family: "l", Column: "c", MaxTs: 9}},
		{{Family: "d", Column: "c", MinTs: 10, MaxTs: 10}},
		{all("w"), all("l")},
	} {
		want := read(t, s, "r", fs...)
		buf := make([]percolator.Cell, 1, 4)
		buf[0].Column = "stale"
		got, err := s.AppendRow(ctx, buf, "r", fs)
		if err != nil {
			t.Fatal(err)
		}
		check(t, fmt.Sprintf("AppendRow(%v)", fs), got, show(want))
		if len(got) > 0 && &got[0] != &buf[:1][0] {
			t.Errorf("AppendRow(%v) did not reuse dst", fs)
		}
	}
}

// TestWriteBelowTombstone writes a cell below a tombstone of the same column
// (a transaction with an older start timestamp writing after a newer one
// was rolled back). Compaction would drop it with the tombstone unless the
// write neutralized the tombstone.
func TestWriteBelowTombstone(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, badger.Options{})
	const row = "r"
	for _, fam := range []string{"d", "l"} {
		mutate(t, s, row, set(fam, "x", 50, "x50"))
		mutate(t, s, row, del(fam, "x", 50))
	}
	// Push the tombstones down the tree, below where the new cells go.
	compact(t, s, 10)
	for _, fam := range []string{"d", "l"} {
		if got, want := raw(t, s, badger.CellKey("", row, fam, "x")), "[51:tomb]"; got != want {
			t.Fatalf("%s:x: %s, want %s", fam, got, want)
		}
		mutate(t, s, row, set(fam, "x", 20, "x20"))
		if got, want := raw(t, s, badger.CellKey("", row, fam, "x")), fmt.Sprintf("[51:%d 21:%d]", badger.MetaDeleted, badger.MetaLive); got != want {
			t.Errorf("%s:x after writing below the tombstone: %s, want %s", fam, got, want)
		}
	}
	compact(t, s, 100)
	want := "d:x@20=x20 l:x@20=x20"
	check(t, "after compaction", read(t, s, row, latest("d", "x"), latest("l", "x")), want)
	s.Close()
	s = open(t, dir, badger.Options{})
	check(t, "after reopening", read(t, s, row, latest("d", "x"), latest("l", "x")), want)
	// A tombstone written since the open is neutralized too.
	mutate(t, s, row, set("d", "y", 50, "y50"))
	mutate(t, s, row, del("d", "y", 50))
	mutate(t, s, row, set("d", "y", 20, "y20"), set("d", "y", 10, "y10"))
	compact(t, s, 100)
	check(t, "d:y", read(t, s, row, percolator.Filter{Family: "d", Column: "y"}), "d:y@20=y20 d:y@10=y10")
}

// TestCompactDropsDeleted checks that compaction really drops what
// deletions hide once below the safe timestamp, and nothing else.
func TestCompactDropsDeleted(t *testing.T) {
	s := open(t, t.TempDir(), badger.Options{})
	const row = "r"
	mutate(t, s, row, set("d", "a", 10, "a10"), set("d", "b", 10, "b10"), set("d", "b", 20, "b20"),
		set("d", "c", 10, "c10"), set("d", "c", 20, "c20"), set("d", "e", 5, ""))
	mutate(t, s, row, del("d", "a", 10), delOlder("d", "b", 20), del("d", "c", 20))
	compact(t, s, 15) // below b's tombstone at version 11? no: 11 <= 15, so it goes.
	for _, tc := range []struct{ col, want string }{
		{"a", "[]"},
		{"b", "[21:0]"},
		{"c", fmt.Sprintf("[21:%d 11:0]", badger.MetaDeleted)},
		{"e", fmt.Sprintf("[6:%d]", badger.MetaEmpty)},
	} {
		if got := raw(t, s, badger.CellKey("", row, "d", tc.col)); got != tc.want {
			t.Errorf("d:%s after compaction: %s, want %s", tc.col, got, tc.want)
		}
	}
	// The empty value is still there once in a table (Badger takes an empty
	// value without meta bits for a missing key there).
	check(t, "row", read(t, s, row, all("d")), "d:b@20=b20 d:c@10=c10 d:e@5=")
	check(t, "d:e Latest", read(t, s, row, latest("d", "e")), "d:e@5=")
}

// TestDiscardLetsCompactionsDrop checks that Discard alone lets Badger's
// own compactions drop what deletions hide below its timestamp (and
// that without it they keep it), that it never moves down, and that it
// leaves what is deleted above it.
func TestDiscardLetsCompactionsDrop(t *testing.T) {
	s := open(t, t.TempDir(), badger.Options{})
	const row = "r"
	mutate(t, s, row, set("d", "a", 10, "a10"), set("d", "b", 30, "b30"), set("d", "c", 10, "c10"))
	mutate(t, s, row, del("d", "a", 10), del("d", "b", 30))
	key := func(col string) []byte { return badger.CellKey("", row, "d", col) }
	compactions := func() {
		t.Helper()
		if err := s.Compactions(); err != nil {
			t.Fatal(err)
		}
	}
	compactions()
	if got := raw(t, s, key("a")); got == "[]" {
		t.Fatal("d:a dropped before any Discard")
	}
	s.Discard(15)
	s.Discard(5) // no lower
	// A write within the table's keys, for the next compaction to merge
	// that table again, as a load's writes keep doing.
	mutate(t, s, row, set("d", "a2", 40, "a40"))
	compactions()
	if got := raw(t, s, key("a")); got != "[]" {
		t.Errorf("d:a, deleted at 10, after Discard(15) and compactions: %s, want []", got)
	}
	if got := raw(t, s, key("b")); got == "[]" {
		t.Error("d:b, deleted at 30, dropped after Discard(15)")
	}
	check(t, "row", read(t, s, row, all("d")), "d:a2@40=a40 d:c@10=c10")
}

// TestSparse checks that the in-memory copy of sparse families follows
// writes, survives reopening and follows a change of the Sparse flag.
func TestSparse(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, badger.Options{})
	ctx := context.Background()
	for i := range 50 {
		row := fmt.Sprintf("r%02d", i)
		mutate(t, s, row, set("l", "c", 10, "l10"), set("l", "c", 20, "l20"), set("l", "e", 5, ""), set("d", "c", 10, "d10"))
		switch i % 4 {
		case 1:
			mutate(t, s, row, del("l", "c", 20))
		case 2:
			mutate(t, s, row, delOlder("l", "c", 20), del("l", "e", 5))
		case 3:
			mutate(t, s, row, set("l", "c", 15, "l15"), del("l", "c", 10), delOlder("l", "c", 11))
		}
	}
	want := make(map[string]string)
	for i := range 50 {
		row := fmt.Sprintf("r%02d", i)
		want[row] = show(read(t, s, row, all("l")))
	}
	check(t, "r01", read(t, s, "r01", all("l")), "l:c@10=l10 l:e@5=")
	check(t, "r02", read(t, s, "r02", all("l")), "l:c@20=l20")
	check(t, "r03", read(t, s, "r03", all("l")), "l:c@20=l20 l:c@15=l15 l:e@5=")
	if err := s.CheckSparse(); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = open(t, dir, badger.Options{})
	if err := s.CheckSparse(); err != nil {
		t.Fatal(err)
	}
	for row, w := range want {
		check(t, row+" after reopening", read(t, s, row, all("l")), w)
	}

	// Make "d" sparse and "l" not: reads must not change.
	fams := slices.Clone(storetest.Families)
	for i := range fams {
		fams[i].Sparse = fams[i].Name == "d"
	}
	if err := s.EnsureFamilies(ctx, fams); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckSparse(); err != nil {
		t.Fatal(err)
	}
	for row, w := range want {
		check(t, row+" with l not sparse", read(t, s, row, all("l")), w)
		check(t, row+" with d sparse", read(t, s, row, all("d")), "d:c@10=d10")
	}
}

// TestLocalityGroups checks that a locality group's keys are a range of
// their own, and a scan of a family reads only its group.
func TestLocalityGroups(t *testing.T) {
	s := open(t, t.TempDir(), badger.Options{})
	ctx := context.Background()
	var rows []percolator.RowMutation
	for i := range 2000 {
		rows = append(rows, percolator.RowMutation{Row: fmt.Sprintf("row%04d", i), Mutations: []percolator.Mutation{
			set("d", "c", 1, "v"), set("w", "c", 2, "v"), set("l", "c", 1, "v"),
		}})
	}
	rows = append(rows, percolator.RowMutation{Row: "row1000", Mutations: []percolator.Mutation{set("n", "c", 3, "dirty")}})
	if err := s.MutateRows(ctx, rows); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := s.ReadRows(ctx, "", "", func(row string, cs []percolator.Cell) bool {
		got = append(got, row+" "+show(cs))
		return true
	}, all("n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"row1000 n:c@3=dirty"}; !slices.Equal(got, want) {
		t.Errorf("scan of n: %q, want %q", got, want)
	}

	// A scan across groups merges their rows.
	got = nil
	err = s.ReadRows(ctx, "row0999", "row1002", func(row string, cs []percolator.Cell) bool {
		got = append(got, row+" "+show(cs))
		return true
	}, all("w"), all("n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"row0999 w:c@2=v", "row1000 n:c@3=dirty w:c@2=v", "row1001 w:c@2=v"}; !slices.Equal(got, want) {
		t.Errorf("scan of n and w: %q, want %q", got, want)
	}

	// In Badger, the notify group's keys are one contiguous range.
	txn := s.DB().NewTransactionAt(math.MaxUint64, false)
	defer txn.Discard()
	it := txn.NewIterator(bdb.IteratorOptions{})
	defer it.Close()
	notify := badger.GroupPrefix("notify")
	var runs, n int
	in := false
	for it.Rewind(); it.Valid(); it.Next() {
		k := it.Item().Key()
		if bytes.HasPrefix(k, notify) != in {
			in = !in
			if in {
				runs++
			}
		}
		if in {
			n++
		}
	}
	if runs != 1 || n != 1 {
		t.Errorf("notify keys: %d in %d runs, want 1 in 1", n, runs)
	}
}

// TestScanAtomicity scans rows spanning two locality groups while writers
// rewrite them (and create new ones) row by row: every row a scan returns
// must hold one write's cells, in both groups.
func TestScanAtomicity(t *testing.T) {
	s := open(t, t.TempDir(), badger.Options{MemTableSize: 1 << 20}) // memtables rotate under the scans
	ctx := context.Background()
	const rows = 200
	scans := 300
	if testing.Short() {
		scans = 50
	}
	write := func(rnd *rand.Rand, ts uint64) error {
		var rms []percolator.RowMutation
		for range 1 + rnd.IntN(4) {
			row := fmt.Sprintf("row%03d", rnd.IntN(rows))
			rms = append(rms, percolator.RowMutation{Row: row, Mutations: []percolator.Mutation{
				set("d", "a", ts, row), set("d", "b", ts, row), set("n", "x", ts, row),
				delOlder("d", "a", ts), delOlder("d", "b", ts), delOlder("n", "x", ts),
			}})
		}
		return s.MutateRows(ctx, rms)
	}
	var ts atomic.Uint64
	var done atomic.Bool
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(w), 7))
			for !done.Load() {
				if err := write(rnd, ts.Add(1)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	fs := []percolator.Filter{{Family: "d"}, {Family: "n"}}
	for i := range scans {
		err := s.ReadRows(ctx, "", "", func(row string, cs []percolator.Cell) bool {
			// Writers race, so a row may hold several versions, but
			// every write put all three columns.
			byCol := make(map[string][]uint64)
			for _, c := range cs {
				if string(c.Value) != row {
					t.Errorf("scan %d: row %s: %s", i, row, show(cs))
					return false
				}
				byCol[c.Family+":"+c.Column] = append(byCol[c.Family+":"+c.Column], c.Ts)
			}
			a := byCol["d:a"]
			if len(byCol) != 3 || len(a) == 0 || !slices.Equal(a, byCol["d:b"]) || !slices.Equal(a, byCol["n:x"]) {
				t.Errorf("scan %d: row %s: %s", i, row, show(cs))
				return false
			}
			return true
		}, fs...)
		if err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			break
		}
	}
	done.Store(true)
	wg.Wait()
	t.Logf("%d writes", ts.Load())
}

// TestScanAcrossMemtables writes a row, across two locality groups, after
// a scan made its first group's cursor and the memtable filled up: the
// write is in a memtable the first cursor does not read, and the scan must
// still see it whole. TestScanAtomicity finds this about once in 50 runs.
func TestScanAcrossMemtables(t *testing.T) {
	s := open(t, t.TempDir(), badger.Options{MemTableSize: 1 << 20})
	ctx := context.Background()
	write := func(row string, ts uint64) {
		t.Helper()
		err := s.MutateRows(ctx, []percolator.RowMutation{{Row: row, Mutations: []percolator.Mutation{
			set("d", "a", ts, row), set("n", "x", ts, row), delOlder("d", "a", ts), delOlder("n", "x", ts),
		}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	write("b", 1)
	ts := uint64(2)
	once := false
	badger.SetScanCursorHook(t, func() {
		if once {
			return
		}
		once = true
		// Fill the memtable so that the next write goes to a new one.
		big := strings.Repeat("x", 64<<10)
		for i := range 40 {
			err := s.MutateRows(ctx, []percolator.RowMutation{{Row: fmt.Sprintf("a%02d", i), Mutations: []percolator.Mutation{
				set("d", "a", ts, big)}}})
			if err != nil {
				t.Fatal(err)
			}
			ts++
		}
		write("b", ts)
	})
	var got string
	err := s.ReadRows(ctx, "b", "", func(row string, cs []percolator.Cell) bool {
		got = show(cs)
		return false
	}, percolator.Filter{Family: "d"}, percolator.Filter{Family: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("d:a@%d=b n:x@%d=b", ts, ts); got != want {
		t.Errorf("row b: %s, want %s", got, want)
	}
}

// TestPointReadAtomicity reads columns of rows, without sparse cells, while
// writers rewrite them: a point read, which first tries without the row's
// lock, must see each write whole. Writes alternate between one version
// (one Badger transaction) and several (a write batch).
func TestPointReadAtomicity(t *testing.T) {
	s := open(t, t.TempDir(), badger.Options{MemTableSize: 1 << 20}) // memtables rotate under the reads
	ctx := context.Background()
	const rows = 4
	reads := 10000
	if testing.Short() {
		reads = 500
	}
	var ts atomic.Uint64
	var done atomic.Bool
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(w), 9))
			for !done.Load() {
				i := ts.Add(1)
				row := fmt.Sprint("row", rnd.IntN(rows))
				v := fmt.Sprint(i)
				muts := []percolator.Mutation{set("d", "a", i, v), set("w", "b", i, v), set("n", "c", i, v)}
				if i%2 == 1 {
					// Several versions, and deletions: a marker above
					// d:a@i, and tombstones below w:b@i.
					muts = append(muts, set("d", "a", 1<<40, v), del("d", "a", 1<<40), delOlder("w", "b", i))
				}
				if err := s.MutateRows(ctx, []percolator.RowMutation{{Row: row, Mutations: muts}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	fs := []percolator.Filter{{Family: "d", Column: "a", Latest: true}, {Family: "n", Column: "c", Latest: true}, {Family: "w", Column: "b", Latest: true}}
	for i := range reads {
		row := fmt.Sprint("row", i%rows)
		cs, err := s.ReadRow(ctx, row, fs...)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) == 0 {
			continue
		}
		if len(cs) != 3 || cs[1].Ts != cs[0].Ts || cs[2].Ts != cs[0].Ts ||
			string(cs[1].Value) != string(cs[0].Value) || string(cs[2].Value) != string(cs[0].Value) {
			t.Fatalf("read %d: row %s: %s", i, row, show(cs))
		}
	}
	done.Store(true)
	wg.Wait()
	t.Logf("%d writes", ts.Load())
}

func TestIncrement(t *testing.T) {
	s := open(t, t.TempDir(), badger.Options{})
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if _, err := s.Increment(ctx, "ctr", "m", "n", 2); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	n, err := s.Increment(ctx, "ctr", "m", "n", -600)
	if err != nil || n != 1000 {
		t.Fatalf("Increment = %d, %v; want 1000", n, err)
	}
	// The counter is replaced in place.
	if got, want := raw(t, s, badger.CellKey("", "ctr", "m", "n")), "[2:0]"; got != want {
		t.Errorf("counter versions: %s, want %s", got, want)
	}
	mutate(t, s, "ctr", set("m", "s", 7, "short"))
	if _, err := s.Increment(ctx, "ctr", "m", "s", 1); !errors.Is(err, badger.ErrNotCounter) {
		t.Errorf("Increment of a 5-byte cell: %v, want ErrNotCounter", err)
	}
	// It takes the newest cell and keeps its timestamp.
	mutate(t, s, "ctr", percolator.Mutation{Op: percolator.SetCell, Family: "m", Column: "t", Ts: 40, Value: binary.BigEndian.AppendUint64(nil, 5)})
	if n, err := s.Increment(ctx, "ctr", "m", "t", 1); err != nil || n != 6 {
		t.Fatalf("Increment = %d, %v; want 6", n, err)
	}
	check(t, "m:t", read(t, s, "ctr", all("m")), "m:n@1=\x00\x00\x00\x00\x00\x00\x03\xe8 m:s@7=short m:t@40=\x00\x00\x00\x00\x00\x00\x00\x06")
}

func TestFamilies(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, badger.Options{})
	ctx := context.Background()
	err := s.EnsureFamilies(ctx, []percolator.Family{{Name: "d", LocalityGroup: "other"}})
	if !errors.Is(err, badger.ErrFamilyConflict) {
		t.Errorf("moving d to another group: %v, want ErrFamilyConflict", err)
	}
	if _, err := s.ReadRow(ctx, "r", all("zz")); !errors.Is(err, badger.ErrUnknownFamily) {
		t.Errorf("ReadRow of an unknown family: %v, want ErrUnknownFamily", err)
	}
	err = s.MutateRows(ctx, []percolator.RowMutation{{Row: "r", Mutations: []percolator.Mutation{set("d", "a", 1, "v"), set("zz", "a", 1, "v")}}})
	if !errors.Is(err, badger.ErrUnknownFamily) {
		t.Errorf("MutateRows with an unknown family: %v, want ErrUnknownFamily", err)
	}
	check(t, "row after a rejected MutateRows", read(t, s, "r", all("d")), "")
	// Families persist.
	s.Close()
	s, err = badger.Open(dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mutate(t, s, "r", set("n", "a", 1, "v"))
	check(t, "row", read(t, s, "r", all("n")), "n:a@1=v")
}

// TestCompactBounded overwrites one cell again and again, deleting the
// older versions every 1000 writes as Percolator's GC would, and checks that
// compaction keeps the store small.
func TestCompactBounded(t *testing.T) {
	n := 50000
	if testing.Short() {
		n = 20000
	}
	s := open(t, t.TempDir(), badger.Options{MemTableSize: 1 << 20})
	rnd := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 100) // incompressible
	for i := 1; i <= n; i++ {
		for j := range val {
			val[j] = byte(rnd.Uint32())
		}
		muts := []percolator.Mutation{{Op: percolator.SetCell, Family: "w", Column: "c", Ts: uint64(i), Value: val}}
		if i%1000 == 0 {
			muts = append(muts, delOlder("w", "c", uint64(i)))
		}
		mutate(t, s, "hot", muts...)
		if i%10000 == 0 {
			// Memtables are flushed in the background: wait for them.
			before, _ := s.Size()
			for deadline := time.Now().Add(5 * time.Second); before < 64<<10 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
				before, _ = s.Size()
			}
			compact(t, s, uint64(i))
			after, vlog := s.Size()
			t.Logf("after %d writes: compaction took the LSM from %d to %d bytes (value log %d)", i, before, after, vlog)
			if before < 64<<10 {
				t.Errorf("after %d writes: LSM holds %d bytes before compaction: the test measures nothing", i, before)
			}
			if after > 4<<10 {
				t.Errorf("after %d writes: LSM holds %d bytes after compaction", i, after)
			}
		}
	}
	if got, want := raw(t, s, badger.CellKey("", "hot", "w", "c")), fmt.Sprintf("[%d:0]", n+1); got != want {
		t.Errorf("versions after compaction: %s, want %s", got, want)
	}
	check(t, "cell", read(t, s, "hot", percolator.Filter{Family: "w", KeysOnly: true}), fmt.Sprintf("w:c@%d=", n))
}

// A closed store answers with ErrClosed instead of crashing.
func TestUseAfterClose(t *testing.T) {
	st, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureFamilies(t.Context(), storetest.Families); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := st.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := st.ReadRow(t.Context(), "r", percolator.Filter{Family: "d"}); !errors.Is(err, badger.ErrClosed) {
		t.Errorf("ReadRow after Close: %v", err)
	}
	err = st.ReadRows(t.Context(), "", "", func(string, []percolator.Cell) bool { return true }, percolator.Filter{Family: "d"})
	if !errors.Is(err, badger.ErrClosed) {
		t.Errorf("ReadRows after Close: %v", err)
	}
	if err := st.MutateRows(t.Context(), []percolator.RowMutation{{Row: "r"}}); !errors.Is(err, badger.ErrClosed) {
		t.Errorf("MutateRows after Close: %v", err)
	}
	if _, err := st.Increment(t.Context(), "r", "m", "c", 1); !errors.Is(err, badger.ErrClosed) {
		t.Errorf("Increment after Close: %v", err)
	}
}

// A one-phase commit asks for its timestamp while the store holds its
// row's lock. When the oracle's range is used up, the refill writes the
// oracle's row: if that row shares the lock (one chance in 4096 per
// refill), a refill made there would wait for itself forever. This
// happened in a 100,000-page run. Commits to a row that shares the
// oracle's lock, with a range of two timestamps, must all finish.
func TestOneRowCommitsRefillTheOracle(t *testing.T) {
	const oracleRow = "\x00meta/oracle" // percolator's
	bg := context.Background()
	st, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	row := ""
	for i := 0; row == ""; i++ {
		if r := fmt.Sprint("r", i); st.SameStripe(r, oracleRow) {
			row = r
		}
	}
	db, err := percolator.Open(bg, st, percolator.Options{OracleWindow: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	done := make(chan error, 1)
	go func() {
		for i := range 300 {
			err := db.Update(bg, func(tx *percolator.Tx) error {
				return tx.Set(row, "c", fmt.Append(nil, i))
			})
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("one-row commits deadlocked: the oracle refilled under the row's lock")
	}
}
