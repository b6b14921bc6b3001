package badger_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
)

// readLatest reads the newest version of (fam, col) of row at or below bound.
func readLatest(t *testing.T, s *badger.Store, row, fam, col string, bound uint64) string {
	t.Helper()
	cells, err := s.ReadRow(context.Background(), row, percolator.Filter{Family: fam, Column: col, MaxTs: bound, Latest: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) == 0 {
		return "<none>"
	}
	return fmt.Sprintf("%s@%d", cells[0].Value, cells[0].Ts)
}

// The stripes cache the newest version of columns of Newest families ("w"):
// writes above every version set it, other writes and deletions of the
// newest version drop it, reads at the top fill it in, and a read through
// it returns what a read of the versions would.
func TestNewestCache(t *testing.T) {
	s := open(t, t.TempDir(), badger.Options{})
	cached := func() string {
		ts, ok := s.CachedVersion("r", "w", "c")
		if !ok {
			return "-"
		}
		return fmt.Sprint(ts)
	}
	step := func(what, want string) {
		t.Helper()
		if got := cached(); got != want {
			t.Fatalf("%s: cached %s, want %s", what, got, want)
		}
	}
	step("nothing written", "-")
	mutate(t, s, "r", set("w", "c", 10, "a"))
	step("write at 10", "10")
	if got := readLatest(t, s, "r", "w", "c", percolator.MaxTs); got != "a@10" {
		t.Fatalf("read %s", got)
	}
	if got := readLatest(t, s, "r", "w", "c", 9); got != "<none>" {
		t.Fatalf("read at 9: %s", got)
	}
	mutate(t, s, "r", set("w", "c", 5, "old"))
	step("a late write of an older version", "-")
	if got := readLatest(t, s, "r", "w", "c", percolator.MaxTs); got != "a@10" {
		t.Fatalf("read %s", got)
	}
	step("a read at the top", "10")
	mutate(t, s, "r", set("d", "c", 50, "x"))
	mutate(t, s, "r", set("w", "c", 20, "b"))
	step("a write below another family's newer version", "-")
	readLatest(t, s, "r", "w", "c", percolator.MaxTs)
	step("a read at the top", "20")
	mutate(t, s, "r", del("w", "c", 10))
	step("deleting an older version", "20")
	mutate(t, s, "r", del("w", "c", 20))
	step("deleting the newest", "-")
	if got := readLatest(t, s, "r", "w", "c", percolator.MaxTs); got != "old@5" {
		t.Fatalf("read %s, want old@5", got)
	}
	step("a read that met a deleted version's marker", "-")
	mutate(t, s, "r", set("w", "c", 60, "c"))
	step("write at 60", "60")
	mutate(t, s, "r", delOlder("w", "c", 61))
	step("deleting every version", "-")
	if got := readLatest(t, s, "r", "w", "c", percolator.MaxTs); got != "<none>" {
		t.Fatalf("read %s", got)
	}
	step("a read that found nothing", "-")
}

// Readers of a column that writers keep rewriting never see a version
// older than one they saw before, nor a value that is not the version's.
func TestNewestConcurrent(t *testing.T) {
	s := open(t, "", badger.Options{})
	const writers, readers, writes = 2, 4, 300
	var wg sync.WaitGroup
	var next atomic.Uint64
	for range writers {
		wg.Go(func() {
			for range writes {
				ts := next.Add(1)
				mutate(t, s, "r", set("w", "c", ts, fmt.Sprint(ts)))
			}
		})
	}
	errs := make(chan error, readers)
	for range readers {
		wg.Go(func() {
			var last uint64
			for range 2 * writes {
				cells, err := s.ReadRow(context.Background(), "r", percolator.Filter{Family: "w", Column: "c", MaxTs: percolator.MaxTs, Latest: true})
				if err != nil {
					errs <- err
					return
				}
				if len(cells) == 0 {
					continue
				}
				c := cells[0]
				if c.Ts < last || string(c.Value) != fmt.Sprint(c.Ts) {
					errs <- fmt.Errorf("read %q@%d after @%d", c.Value, c.Ts, last)
					return
				}
				last = c.Ts
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, want := readLatest(t, s, "r", "w", "c", percolator.MaxTs), fmt.Sprintf("%d@%d", next.Load(), next.Load()); got != want {
		t.Fatalf("final read %s, want %s", got, want)
	}
}

// Random writes, deletions and reads of one family declared Newest and
// one not, with reopens: every read agrees.
func TestNewestAgrees(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, badger.Options{})
	fams := []string{"w", "d"} // "w" is Newest, "d" not
	rng := rand.New(rand.NewPCG(11, 12))
	cols := []string{"a", "b", "c"}
	rows := []string{"r1", "r2"}
	for step := range 2000 {
		row, col := rows[rng.IntN(len(rows))], cols[rng.IntN(len(cols))]
		// Mostly above every version so far (the common case, where the
		// entry knows the newest), sometimes below.
		ts := uint64(max(1, step+rng.IntN(10)-3))
		var m percolator.Mutation
		switch k := rng.IntN(60); {
		case k < 36:
			m = set("", col, ts, fmt.Sprint("v", step))
			if rng.IntN(10) == 0 {
				m.Value = nil
			}
		case k < 48:
			m = del("", col, ts)
		case k < 58:
			m = delOlder("", col, ts)
		case k < 60:
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = open(t, dir, badger.Options{})
			continue
		}
		for _, f := range fams {
			m.Family = f
			mutate(t, s, row, m)
		}
		for range 3 {
			row, col := rows[rng.IntN(len(rows))], cols[rng.IntN(len(cols))]
			bound := uint64(max(0, step+rng.IntN(20)-15))
			if rng.IntN(2) == 0 {
				bound = percolator.MaxTs
			}
			if w, d := readLatest(t, s, row, "w", col, bound), readLatest(t, s, row, "d", col, bound); w != d {
				t.Fatalf("step %d: %s %s at %d: Newest family reads %s, plain %s", step, row, col, bound, w, d)
			}
		}
	}
}

// Many rows, most sharing a stripe with others, and rows with more columns
// than a stripe caches: each column's cached version is its own, evicted
// columns are read as before, and every read returns the column's newest
// version, before and after newer writes of other columns.
func TestNewestManyColumns(t *testing.T) {
	s := open(t, "", badger.Options{})
	const rows, cols = 300, 80 // 80 columns > the 64 slots of a stripe
	row := func(i int) string { return fmt.Sprintf("row%d", i) }
	col := func(j int) string { return fmt.Sprintf("c%d", j) }
	want := make(map[[2]int]uint64)
	ts := uint64(1)
	write := func(i, j int) {
		ts++
		mutate(t, s, row(i), set("w", col(j), ts, fmt.Sprint(ts)))
		want[[2]int{i, j}] = ts
	}
	for i := range rows {
		for j := range 2 {
			write(i, j)
		}
	}
	for j := range cols {
		write(0, j)
	}
	check := func(what string) {
		t.Helper()
		for k, v := range want {
			i, j := k[0], k[1]
			if got, w := readLatest(t, s, row(i), "w", col(j), percolator.MaxTs), fmt.Sprintf("%d@%d", v, v); got != w {
				t.Fatalf("%s: %s %s read %s, want %s", what, row(i), col(j), got, w)
			}
			if c, ok := s.CachedVersion(row(i), "w", col(j)); ok && c != v {
				t.Fatalf("%s: %s %s cached at %d, newest %d", what, row(i), col(j), c, v)
			}
		}
	}
	check("first writes")
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		if r.IntN(4) == 0 {
			write(0, r.IntN(cols))
		} else {
			write(r.IntN(rows), r.IntN(2))
		}
	}
	check("rewrites")
	check("reads again, through what the reads cached")
}
