package rank_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/caffeine-go/caffeine/observers/rank"
	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// TestLaterValueOfUnelectedPage: a page that no election has counted yet
// (no webtable.ClusterSize: in a bulk load, its cluster's election waits
// for another member's first value, or has not run) tells no election of
// a later value: the election that first counts it reads its value. A
// rank run writing that value must then conflict with such an election
// running concurrently, which read the older value, else the election's
// choice would rest on a value no one tells it has changed.
func TestLaterValueOfUnelectedPage(t *testing.T) {
	db := openDB(t)
	w := startWorker(t, db)
	a, b, c := "http://site.test/a", "http://site.test/b", "http://site.test/c"
	m := web{}
	m.write(t, db, web{a: ok(b), b: ok(a)})
	ra := row(t, a)
	err := db.Update(bg, func(tx *percolator.Tx) error {
		if err := tx.Set(ra, webtable.Hash, []byte("h")); err != nil {
			return err
		}
		return rank.Touch(tx, ra)
	})
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, w)
	first := rankOf(t, db, ra)
	if first == 0 {
		t.Fatal("a has no PageRank")
	}

	// The election that first counts a begins: it reads a's value.
	elect, err := db.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer elect.Rollback()
	if v, err := elect.Get(bg, ra, webtable.Rank); err != nil || v == nil {
		t.Fatalf("the election's read of a's PageRank: %q, %v", v, err)
	}
	if err := elect.Set(ra, webtable.ClusterSize, []byte("2")); err != nil {
		t.Fatal(err)
	}

	// A new linker moves a's value; rank writes it.
	m.write(t, db, web{c: ok(a)})
	waitIdle(t, w)
	if later := rankOf(t, db, ra); later <= first {
		t.Fatalf("a's PageRank %g after a new linker, was %g", later, first)
	}
	pending, err := db.Pending(bg)
	if err != nil {
		t.Fatal(err)
	}
	if n := pending[webtable.DupRanked]; n != 0 {
		t.Errorf("%d %s notifications for a page no election has counted, want none", n, webtable.DupRanked)
	}
	if err := elect.Commit(bg); !errors.Is(err, percolator.ErrConflict) {
		t.Fatalf("the election's commit after rank wrote a's new value: %v, want a conflict", err)
	}
}

func rankOf(t *testing.T, db *percolator.DB, r string) float64 {
	t.Helper()
	var v []byte
	err := db.View(bg, func(tx *percolator.Tx) error {
		var err error
		v, err = tx.Get(bg, r, webtable.Rank)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := strconv.ParseFloat(string(v), 64)
	return f
}
