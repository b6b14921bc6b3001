package rank_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
	"github.com/caffeine-go/caffeine/webtable"
)

// sectionWeb returns n pages in one section of one host (a flat site),
// each with about deg links within it, some to other sections.
func sectionWeb(rng *rand.Rand, n, deg int) web {
	m := web{}
	for i := range n {
		var links []string
		for range rng.IntN(2*deg + 1) {
			switch rng.IntN(10) {
			case 0:
				links = append(links, pageURL(rng.IntN(n)))
			default:
				links = append(links, flatURL(rng.IntN(n)))
			}
		}
		m[flatURL(i)] = ok(links...)
	}
	return m
}

func flatURL(i int) string { return fmt.Sprintf("http://flat.test/docs/p%d.html", i) }

// checkBlocks fails unless the incremental values agree with the batch,
// rank.Check finds nothing, every block row holds at most limit pages,
// and some section is split.
func checkBlocks(t *testing.T, db *percolator.DB, what string, limit int) {
	t.Helper()
	err := db.View(bg, func(tx *percolator.Tx) error {
		bad, err := rank.Check(bg, tx, 10)
		if err != nil {
			return err
		}
		if len(bad) > 0 {
			t.Errorf("%s: %s", what, strings.Join(bad, "\n"))
		}
		pages, split, err := rank.BlockRows(bg, tx)
		if err != nil {
			return err
		}
		for b, n := range pages {
			if n > limit {
				t.Errorf("%s: block row %s holds %d pages, more than %d", what, b, n, limit)
			}
		}
		if len(split) == 0 {
			t.Errorf("%s: no section split", what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := rank.Compare(values(t, db), batch(t, db), 0.01); len(d) > 0 {
		if len(d) > 10 {
			d = d[:10]
		}
		t.Fatalf("%s: incremental and batch disagree: %v", what, d)
	}
}

// A section that grows splits into blocks of at most the limit as it
// grows, while it is edited, and the values still agree with the batch.
func TestSplitGrowingSection(t *testing.T) {
	const limit = 16
	t.Cleanup(rank.SetSplit(limit, 4*limit, 10)) // after the worker stops
	n, rounds := 200, 2                          // at most 100 flat pages a round: one transaction
	if raceEnabled || testing.Short() {
		n = 120
	}
	rng := rand.New(rand.NewPCG(3, 4))
	db := openDB(t)
	w := startWorker(t, db)
	m := web{}
	all := sectionWeb(rng, n, 6)
	for i := range rounds {
		// The pages of a round in one transaction a host (rank alone
		// does not tell the linkers of a page written after them: the
		// links observer does), other hosts first.
		other, flat := web{}, web{}
		for j := i * n / rounds / 7; j < (i+1)*n/rounds/7; j++ {
			other[pageURL(j)] = randomPage(rng, n/7, 4)
		}
		for j := i * n / rounds; j < (i+1)*n/rounds; j++ {
			flat[flatURL(j)] = all[flatURL(j)]
		}
		m.write(t, db, other)
		m.write(t, db, flat)
		waitIdle(t, w)
		checkBlocks(t, db, fmt.Sprintf("round %d", i), limit)
		m.write(t, db, edit(rng, m, n/7, 5))
		waitIdle(t, w)
		checkBlocks(t, db, fmt.Sprintf("round %d edited", i), limit)
	}
}

// A section grown big before blocks split by size (an earlier release's
// table) is split by Init and drained a few pages a run; pages written
// meanwhile into the old block by transactions that read the section
// before it split are drained too; the values agree with the batch.
func TestSplitMigratesBigBlock(t *testing.T) {
	n := 300
	if raceEnabled || testing.Short() {
		n = 100
	}
	rng := rand.New(rand.NewPCG(9, 10))
	db := openDB(t)
	m := web{}
	w := startWorker(t, db)
	m.write(t, db, sectionWeb(rng, n, 6))
	waitIdle(t, w)
	w.Close()

	const limit = 20
	t.Cleanup(rank.SetSplit(limit, 2*limit, 7))
	if _, err := rank.Init(bg, db); err != nil {
		t.Fatal(err)
	}
	w = startWorker(t, db)
	waitIdle(t, w)
	checkBlocks(t, db, "after Init", limit)
	w.Close()

	// Writers that read the section before it split: new pages, pages
	// gone, and a page moving, into the old block row.
	restore := rank.SetIgnoreSplits()
	changes := web{}
	for i := n; i < n+30; i++ {
		changes[flatURL(i)] = ok(flatURL(rng.IntN(n)), flatURL(i-1))
	}
	for i := range 5 {
		changes[flatURL(i)] = gone()
	}
	changes[flatURL(5)] = redirect(flatURL(6))
	before := m.edges(t)
	maps.Copy(m, changes)
	after := m.edges(t)
	err := db.Update(bg, func(tx *percolator.Tx) error {
		for url := range changes {
			if err := m.set(t, tx, url); err != nil {
				return err
			}
			if _, err := rank.Refresh(bg, tx, row(t, url)); err != nil {
				return err
			}
		}
		return nil
	})
	restore()
	if err != nil {
		t.Fatal(err)
	}
	// The linkers of the pages that changed look again (as the links
	// observer has them do).
	err = db.Update(bg, func(tx *percolator.Tx) error {
		for r, out := range before {
			if !slices.Equal(out, after[r]) {
				if err := rank.Touch(tx, r); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w = startWorker(t, db)
	waitIdle(t, w)
	checkBlocks(t, db, "after stale writes", limit)
}

// readCounter is a store that records the block rows its point reads
// ask for and how many columns each read asks for at most.
type readCounter struct {
	percolator.Store
	mu    sync.Mutex
	reads map[string]int // block row → point reads
	cols  int            // the most columns one point read of a block row asked for
}

func (s *readCounter) ReadRow(ctx context.Context, row string, filters ...percolator.Filter) ([]percolator.Cell, error) {
	if strings.HasPrefix(row, rank.BlockPrefix) {
		cols := make(map[string]bool)
		for _, f := range filters {
			cols[f.Column+f.ColumnPrefix] = true
		}
		s.mu.Lock()
		s.reads[row]++
		s.cols = max(s.cols, len(cols))
		s.mu.Unlock()
	}
	return s.Store.ReadRow(ctx, row, filters...)
}

func (s *readCounter) reset() (reads map[string]int, cols int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	reads, cols = s.reads, s.cols
	s.reads, s.cols = make(map[string]int), 0
	return reads, cols
}

// A page's parse (Refresh) reads no more of its section's block row than
// its own cells, and a links run (Linked) none of it, on a store where
// every read is a round trip (percolator prefetches there): the block
// row is the section's biggest, and the primary of its parses. Which
// blocks a split section has is read from a row of its own.
func TestSectionReadsSkipBlockRow(t *testing.T) {
	st, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rc := &readCounter{Store: percolatortest.Shared(st), reads: make(map[string]int)}
	db := percolatortest.OpenOn(t, rc, percolator.Options{Observed: webtable.Observed, Weak: webtable.Weak})
	m := web{}
	for i := range 40 {
		m[flatURL(i)] = ok(flatURL((i+1)%40), flatURL(0))
	}
	for i := range 40 {
		rc.reset()
		err := db.Update(bg, func(tx *percolator.Tx) error {
			if err := m.set(t, tx, flatURL(i)); err != nil {
				return err
			}
			_, err := rank.Refresh(bg, tx, row(t, flatURL(i)))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		reads, cols := rc.reset()
		if n := reads[rank.BlockPrefix+"test.flat:http/docs"]; n > 2 || cols > 1 {
			t.Fatalf("page %d: Refresh read the block row %d times, up to %d columns at once (%v)", i, n, cols, reads)
		}
		err = db.Update(bg, func(tx *percolator.Tx) error { return rank.Linked(bg, tx, row(t, flatURL(i))) })
		if err != nil {
			t.Fatal(err)
		}
		if reads, _ := rc.reset(); len(reads) > 0 {
			t.Fatalf("page %d: Linked read block rows %v", i, reads)
		}
	}
}

// A table whose split sections keep their leaves in their block rows
// (before directory rows held them) is moved to directory rows by Init
// and goes on: the values agree with the batch after more pages.
func TestSplitMovesLeavesToDirectory(t *testing.T) {
	const limit = 16
	t.Cleanup(rank.SetSplit(limit, 4*limit, 10))
	rng := rand.New(rand.NewPCG(5, 6))
	db := openDB(t)
	m := web{}
	all := sectionWeb(rng, 80, 4)
	first := web{}
	for i := range 60 {
		first[flatURL(i)] = all[flatURL(i)]
	}
	w := startWorker(t, db)
	m.write(t, db, first)
	waitIdle(t, w)
	checkBlocks(t, db, "split", limit)
	w.Close()

	if err := rank.MoveSplitsBack(bg, db); err != nil {
		t.Fatal(err)
	}
	if _, err := rank.Init(bg, db); err != nil {
		t.Fatal(err)
	}
	w = startWorker(t, db)
	more := web{}
	for i := 60; i < 80; i++ {
		more[flatURL(i)] = all[flatURL(i)]
	}
	m.write(t, db, more)
	waitIdle(t, w)
	checkBlocks(t, db, "after Init and more pages", limit)
}
