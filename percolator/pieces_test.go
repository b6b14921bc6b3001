package percolator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// wideTx writes n cells of row a (the primary's row) and m of row b, each
// column name long (as a page's row in a column is), to val.
func wideTx(t *testing.T, db *percolator.DB, n, m int, val string) *percolator.Tx {
	t.Helper()
	tx, err := db.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := tx.Set("a", wideCol(i), []byte(val)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range m {
		if err := tx.Set("b", wideCol(i), []byte(val)); err != nil {
			t.Fatal(err)
		}
	}
	return tx
}

func wideCol(i int) string {
	return fmt.Sprintf("rg:com.example.www:https/reference/%s/page%05d.html", strings.Repeat("x", 40), i)
}

// checkWide fails unless every cell wideTx writes reads want.
func checkWide(t *testing.T, db *percolator.DB, n, m int, want string) {
	t.Helper()
	err := db.View(bg, func(tx *percolator.Tx) error {
		for _, r := range []struct {
			row string
			n   int
		}{{"a", n}, {"b", m}} {
			for i := range r.n {
				v, err := tx.Get(bg, r.row, wideCol(i))
				if err != nil {
					return err
				}
				if string(v) != want {
					return fmt.Errorf("%s %s = %q, want %q", r.row, wideCol(i), v, want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A transaction that writes more cells of a row than one conditional
// mutation checks (percolator.PredicateLimiter; a count of cells on any
// store) prewrites the row in pieces: it commits, a conflict in a later
// piece leaves no lock, and a crash before or after the commit point
// rolls the pieces back or forward as one transaction.
func TestWideRowPrewritesInPieces(t *testing.T) {
	percolator.SetMaxPieceCells(t, 7)
	calls := new(percolatortest.Calls)
	st := percolatortest.SharedCounting(openStore(t, t.TempDir()), calls)
	db := percolatortest.OpenOn(t, st, percolator.Options{LockTTL: 100 * time.Millisecond})
	const n, m = 30, 20

	cams := calls.CheckAndMutateRow.Load()
	if err := wideTx(t, db, n, m, "1").Commit(bg); err != nil {
		t.Fatal(err)
	}
	// 5 pieces of a, 3 of b, the commit point.
	if got := calls.CheckAndMutateRow.Load() - cams; got != 5+3+1 {
		t.Errorf("a commit of %d and %d cells in pieces of 7: %d conditional mutations, want 9", n, m, got)
	}
	checkWide(t, db, n, m, "1")

	// A write committed after the transaction began, in its row's fourth
	// piece: the first three were locked, and are rolled back.
	late := wideTx(t, db, n, m, "2")
	if err := db.Update(bg, func(tx *percolator.Tx) error { return tx.Set("a", wideCol(24), []byte("1")) }); err != nil {
		t.Fatal(err)
	}
	if err := late.Commit(bg); !errors.Is(err, percolator.ErrConflict) {
		t.Fatalf("Commit = %v, want a conflict", err)
	}
	if n, err := percolator.CountLocks(db); err != nil || n != 0 {
		t.Fatalf("after the conflict: %d locks (%v), want none", n, err)
	}
	if n, err := percolator.LockIndexEntries(db); err != nil || n != 0 {
		t.Fatalf("after the conflict: %d lock index entries (%v), want none", n, err)
	}
	checkWide(t, db, n, m, "1")

	for _, c := range []struct {
		crash percolator.CrashPoint
		want  string
	}{
		{percolator.CrashAfterPrewrites, "1"},
		{percolator.CrashAfterPrimaryCommit, "3"},
		{percolator.CrashMidSecondaries, "3"},
	} {
		tx := wideTx(t, db, n, m, "3")
		percolator.SetCrash(tx, func(p percolator.CrashPoint) bool { return p == c.crash })
		if err := tx.Commit(bg); !errors.Is(err, percolator.ErrCrashed) {
			t.Fatalf("Commit = %v, want the injected crash", err)
		}
		time.Sleep(150 * time.Millisecond) // past the lock TTL
		checkWide(t, db, n, m, c.want)
		if c.want == "1" {
			continue
		}
		// Back to "1" for the next case.
		if err := wideTx(t, db, n, m, "1").Commit(bg); err != nil {
			t.Fatal(err)
		}
	}
}

// On the emulator, a transaction writing thousands of cells of one row
// (as a PageRank section's split moves its pages, or an export moves a
// hub's inbound links): its predicate, one filter of about a column's
// length twice a cell, would pass Cloud Bigtable's 20 KB and protobuf's
// nesting limit on the emulator; in pieces it commits and reads back.
func TestWideRowBigtable(t *testing.T) {
	db := percolatortest.OpenOn(t, bigtableStore(t, "widerow"), percolator.Options{})
	const n, m = 3000, 500
	if err := wideTx(t, db, n, m, "1").Commit(bg); err != nil {
		t.Fatal(err)
	}
	checkWide(t, db, n, m, "1")
	if err := wideTx(t, db, n, m, "2").Commit(bg); err != nil {
		t.Fatal(err)
	}
	checkWide(t, db, n, m, "2")
}

// slowCAM delays every conditional mutation of its store.
type slowCAM struct {
	percolator.Store
	d time.Duration
}

func (s slowCAM) CheckAndMutateRow(ctx context.Context, row string, predicate []percolator.Filter, ifMatch, ifNoMatch []percolator.Mutation) (bool, error) {
	time.Sleep(s.d)
	return s.Store.CheckAndMutateRow(ctx, row, predicate, ifMatch, ifNoMatch)
}

// A row prewritten in pieces for longer than the lock TTL keeps its
// primary lock fresh between the pieces: a reader meeting the primary
// lock meanwhile waits for the live writer instead of rolling it back,
// and the transaction commits.
func TestWidePrewriteKeepsPrimaryFresh(t *testing.T) {
	percolator.SetMaxPieceCells(t, 5)
	st := slowCAM{percolatortest.Shared(openStore(t, t.TempDir())), 25 * time.Millisecond}
	db := percolatortest.OpenOn(t, st, percolator.Options{LockTTL: 100 * time.Millisecond})
	const n = 60 // 12 pieces: some 300 ms of prewrites
	tx := wideTx(t, db, n, 0, "1")
	stop := make(chan struct{})
	read := make(chan int)
	go func() {
		reads := 0
		defer func() { read <- reads }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			db.View(bg, func(tx *percolator.Tx) error {
				_, err := tx.Get(bg, "a", wideCol(0))
				return err
			})
			reads++
		}
	}()
	err := tx.Commit(bg)
	close(stop)
	if reads := <-read; reads < 5 {
		t.Fatalf("only %d reads during the commit", reads)
	}
	if err != nil {
		t.Fatalf("Commit = %v; want the writer kept alive", err)
	}
	checkWide(t, db, n, 0, "1")
}
