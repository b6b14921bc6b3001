package rank_test

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// parsed stores pages as the parse observer does: the page's columns and
// rank.Refresh in one transaction, so the block rows hold their graph
// cells before any rank run.
func (m web) parsed(t testing.TB, db *percolator.DB, changes web) {
	t.Helper()
	maps.Copy(m, changes)
	urls := slices.Sorted(maps.Keys(changes))
	for len(urls) > 0 {
		n := min(len(urls), 100)
		batch := urls[:n]
		urls = urls[n:]
		err := db.Update(bg, func(tx *percolator.Tx) error {
			for _, url := range batch {
				if err := m.set(t, tx, url); err != nil {
					return err
				}
				if _, err := rank.Refresh(bg, tx, row(t, url)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// published writes the in: cells of every ok page's links, as the links
// observer does, by which a page whose standing changed finds the blocks
// linking to it (after the pages, as in a bulk load's first stage).
func (m web) published(t testing.TB, db *percolator.DB) {
	t.Helper()
	err := db.Update(bg, func(tx *percolator.Tx) error {
		for url, p := range m {
			if p.state != webtable.StateOK {
				continue
			}
			for _, l := range p.links {
				if err := tx.Set(row(t, l), webtable.InPrefix+row(t, url), []byte("to "+l)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Seeded, a bulk load's blocks each solve once, send nothing and write
// the fixed point; unseeded (the control), they solve again as what they
// send each other settles. A second seed over published values (pages
// changed since) keeps the runs exact.
func TestSeedOneRunABlock(t *testing.T) {
	const n = 400
	load := func(seed bool) (*percolator.DB, *percolator.Worker, web, int) {
		db := openDB(t)
		m := web{}
		m.parsed(t, db, randomWeb(rand.New(rand.NewPCG(7, 7)), n, 6))
		m.published(t, db)
		blocks := 0
		if seed {
			var err error
			if blocks, err = rank.Seed(bg, db, rank.Options{}); err != nil {
				t.Fatal(err)
			}
		}
		w := startWorker(t, db)
		waitIdle(t, w)
		return db, w, m, blocks
	}
	runs := func(w *percolator.Worker) (block, outside int64) {
		for _, s := range w.Stats() {
			switch s.Name {
			case "rank":
				block = s.Runs
			case "rank-outside":
				outside = s.Runs
			}
		}
		return block, outside
	}

	db, w, m, blocks := load(true)
	if blocks < 10 {
		t.Fatalf("seeded %d blocks, want the 21 of the web (less its empty ones)", blocks)
	}
	if e, where := maxRelErr(values(t, db), batch(t, db)); e > 1e-6 {
		t.Fatalf("seeded: %s off by %.2g from the batch", where, e)
	}
	block, outside := runs(w)
	if block != int64(blocks) || outside != 0 {
		t.Errorf("seeded: %d block runs and %d rank-outside runs for %d blocks, want one a block", block, outside, blocks)
	}

	_, control, _, _ := load(false)
	if cb, co := runs(control); cb+co <= int64(blocks) {
		t.Errorf("unseeded control: %d block runs and %d rank-outside runs for %d blocks: the test shows nothing", cb, co, blocks)
	}

	// Pages change; a seed over the published values, then the runs.
	m.parsed(t, db, edit(rand.New(rand.NewPCG(8, 8)), m, n, 40))
	if _, err := rank.Seed(bg, db, rank.Options{}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, w)
	// Within what a run guarantees: PublishThreshold (0.2%) and Epsilon.
	if d := rank.Compare(values(t, db), batch(t, db), 0.01); len(d) > 0 {
		t.Fatalf("seeded again after changes: incremental and batch disagree: %v", d)
	}
}
