package percolator_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// cancelAt cancels a context when the store is asked for its nth
// conditional mutation, then makes it. Embedding the interface hides the
// Badger store's ExclusiveStore, so every commit is two-phase.
type cancelAt struct {
	percolator.Store
	n      int32
	calls  atomic.Int32
	cancel context.CancelFunc
}

func (s *cancelAt) CheckAndMutateRow(ctx context.Context, row string, pred []percolator.Filter, ifMatch, ifNoMatch []percolator.Mutation) (bool, error) {
	// The oracle's calls (it moves its row up to the clock) do not count.
	if !strings.HasPrefix(row, "\x00meta/") && s.calls.Add(1) == s.n {
		s.cancel()
	}
	return s.Store.CheckAndMutateRow(ctx, row, pred, ifMatch, ifNoMatch)
}

// A transaction whose context ends after its prewrites, at its commit
// point, finishes its commit rather than leaving locks that readers of a
// live writer would wait for (percolatortest checks that none is left).
func TestCommitFinishesAfterPrewrites(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Calls: the primary's prewrite, the secondary's, the commit point.
	st := &cancelAt{Store: openStore(t, t.TempDir()), n: 3, cancel: cancel}
	db := percolatortest.OpenOn(t, st, percolator.Options{})
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx.Set("r1", "c", []byte("1"))
	tx.Set("r2", "c", []byte("2"))
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("Commit = %v, want the commit finished", err)
	}
	if ctx.Err() == nil {
		t.Fatal("the context was not cancelled at the commit point: the test did not test it")
	}
	if got, _ := get(t, db, "r2", "c"); got != "2" {
		t.Errorf("r2 = %q, want 2", got)
	}
}
