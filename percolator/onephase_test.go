package percolator_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
)

// callCounter is the Badger store counting the calls a commit makes.
type callCounter struct {
	*badger.Store
	checkAndMutate, mutateRows, rowsAt atomic.Int64
}

func (c *callCounter) CheckAndMutateRow(ctx context.Context, row string, predicate []percolator.Filter, ifMatch, ifNoMatch []percolator.Mutation) (bool, error) {
	c.checkAndMutate.Add(1)
	return c.Store.CheckAndMutateRow(ctx, row, predicate, ifMatch, ifNoMatch)
}

func (c *callCounter) MutateRows(ctx context.Context, rows []percolator.RowMutation) error {
	c.mutateRows.Add(1)
	return c.Store.MutateRows(ctx, rows)
}

func (c *callCounter) CheckAndMutateRowsAt(ctx context.Context, checks []percolator.RowPredicate, ts func() (uint64, error), ifNoMatch func(uint64) []percolator.RowMutation) (string, error) {
	c.rowsAt.Add(1)
	return c.Store.CheckAndMutateRowsAt(ctx, checks, ts, ifNoMatch)
}

// On an exclusive store a transaction of several rows commits in one store
// call, without locks: no prewrite, no commit of the primary and then of
// the secondaries. Its writes are all visible after, and a conflicting
// transaction loses whole.
func TestCommitOfRowsIsOneStoreCall(t *testing.T) {
	skipShared(t, "the one-step commit of an exclusive store")
	ctx := context.Background()
	st, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &callCounter{Store: st}
	db, err := percolator.Open(ctx, c, percolator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	rows := []string{"a", "b", "c", "d"}
	loser, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.checkAndMutate.Store(0)
	c.mutateRows.Store(0)
	if err := db.Update(ctx, func(tx *percolator.Tx) error {
		for i, r := range rows {
			if err := tx.Set(r, "v", []byte(fmt.Sprint(i))); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := [3]int64{c.rowsAt.Load(), c.checkAndMutate.Load(), c.mutateRows.Load()}; got != [3]int64{1, 0, 0} {
		t.Errorf("commit of %d rows: %d CheckAndMutateRowsAt, %d CheckAndMutateRow, %d MutateRows; want 1, 0, 0", len(rows), got[0], got[1], got[2])
	}
	for i, r := range rows {
		if v, _ := get(t, db, r, "v"); v != fmt.Sprint(i) {
			t.Errorf("%s:v = %q, want %d", r, v, i)
		}
	}
	if n, err := percolator.CountLocks(db); err != nil || n != 0 {
		t.Errorf("%d locks left (err %v)", n, err)
	}

	// A transaction that began before, writing "d" and "e": conflicts on
	// "d" and writes nothing, "e" included.
	for _, r := range []string{"e", "d"} {
		if err := loser.Set(r, "v", []byte("lost")); err != nil {
			t.Fatal(err)
		}
	}
	if err := loser.Commit(ctx); err == nil {
		t.Fatal("a transaction that began before the commit of d committed over it")
	}
	if v, ok := get(t, db, "e", "v"); ok {
		t.Errorf("e:v = %q after the losing commit, want none", v)
	}
	if v, _ := get(t, db, "d", "v"); v != "3" {
		t.Errorf("d:v = %q after the losing commit, want 3", v)
	}
}
