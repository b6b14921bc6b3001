package rank_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// A table written without the rank graph (as by an earlier release, with
// its leftover columns) is brought into blocks by Init, after which the
// observer agrees with the batch; Init on a current table changes nothing.
func TestInitOldTable(t *testing.T) {
	db := openDB(t)
	m := randomWeb(rand.New(rand.NewPCG(5, 6)), 120, 6)
	nodes := 0
	err := db.Update(bg, func(tx *percolator.Tx) error {
		for url, p := range m {
			if err := m.set(t, tx, url); err != nil {
				return err
			}
			if p.state == webtable.StateOK || p.state == webtable.StateRedirect {
				nodes++
			}
			r := row(t, url)
			for _, c := range []string{"rank:residual", "rank:pushed", "rin:x:1"} {
				if err := tx.Set(r, c, []byte("0")); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := rank.Init(bg, db)
	if err != nil {
		t.Fatal(err)
	}
	if n != nodes {
		t.Errorf("Init changed %d pages, want %d", n, nodes)
	}
	w := startWorker(t, db)
	waitIdle(t, w)
	if d := rank.Compare(values(t, db), batch(t, db), 0.01); len(d) > 0 {
		t.Fatalf("after Init: %v", d)
	}
	err = db.View(bg, func(tx *percolator.Tx) error {
		for url := range m {
			err := tx.Scan(bg, row(t, url), row(t, url)+"\x00", "r", func(_, col string, _ []byte) bool {
				if col != webtable.Rank {
					t.Errorf("%s: %s left", url, col)
				}
				return true
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := rank.Init(bg, db); err != nil || n != 0 {
		t.Fatalf("Init again = %d, %v; want 0", n, err)
	}
}

// A table whose blocks are whole hosts (as before blocks were split by
// directory) is moved into directory blocks by Init: the host blocks drop
// the pages they no longer own, and the observer then agrees with the
// batch again.
func TestInitSplitsHostBlocks(t *testing.T) {
	db := openDB(t)
	m := randomWeb(rand.New(rand.NewPCG(7, 8)), 150, 5)
	restore := rank.SetHostBlocks()
	err := db.Update(bg, func(tx *percolator.Tx) error {
		for url := range m {
			if err := m.set(t, tx, url); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		restore()
		t.Fatal(err)
	}
	if _, err := rank.Init(bg, db); err != nil {
		restore()
		t.Fatal(err)
	}
	w := startWorker(t, db)
	waitIdle(t, w)
	w.Close()
	restore()

	if d := rank.Compare(values(t, db), batch(t, db), 0.01); len(d) > 0 {
		t.Fatalf("host blocks disagree with the batch: %v", d)
	}
	n, err := rank.Init(bg, db)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("Init moved nothing out of the host blocks")
	}
	w = startWorker(t, db)
	waitIdle(t, w)
	if d := rank.Compare(values(t, db), batch(t, db), 0.01); len(d) > 0 {
		t.Fatalf("after splitting: %v", d)
	}
	err = db.View(bg, func(tx *percolator.Tx) error {
		return tx.Scan(bg, rank.BlockPrefix, "!rank0", "r", func(b, col string, _ []byte) bool {
			if strings.Count(b[len(rank.BlockPrefix):], "/") == 0 && strings.HasPrefix(col, "rg:") && strings.Count(col, "/") > 1 {
				t.Errorf("host block %s still holds %s", b, col)
			}
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := rank.Init(bg, db); err != nil || n != 0 {
		t.Fatalf("Init again = %d, %v; want 0", n, err)
	}
}
