package percolator_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/percolatortest"
)

// percolatortest.Check, which every openDB runs at cleanup, finds a
// transaction left running and the locks of an abandoned commit, and
// passes once they are gone.
func TestCleanTableCheck(t *testing.T) {
	db := openDB(t, percolator.Options{})
	if err := percolatortest.Check(bg, db); err != nil {
		t.Fatalf("fresh table: %v", err)
	}

	tx, err := db.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	if n := db.Running(); n != 1 {
		t.Errorf("Running = %d with one transaction begun, want 1", n)
	}
	if err := percolatortest.Check(bg, db); err == nil || !strings.Contains(err.Error(), "1 transactions still running") {
		t.Errorf("Check with a transaction running = %v", err)
	}
	tx.Rollback()

	// A commit abandoned after its prewrites leaves two locks.
	tx, err = db.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"a", "b"} {
		if err := tx.Set(row, "c", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	percolator.SetCrash(tx, func(p percolator.CrashPoint) bool { return p == percolator.CrashAfterPrewrites })
	if err := tx.Commit(bg); !errors.Is(err, percolator.ErrCrashed) {
		t.Fatalf("Commit = %v, want ErrCrashed", err)
	}
	locks, err := db.Locks(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(locks) != 2 || !locks[0].Primary == !locks[1].Primary || locks[0].StartTs != tx.StartTs() {
		t.Errorf("Locks = %+v, want the primary and the secondary of the transaction at %d", locks, tx.StartTs())
	}
	if n := db.Running(); n != 0 {
		t.Errorf("Running = %d after the abandoned commit, want 0", n)
	}
	if err := percolatortest.Check(bg, db); err == nil || !strings.Contains(err.Error(), "2 locks left") {
		t.Errorf("Check with locks left = %v", err)
	}
	// The transaction is not registered: its locks are a crash's, which
	// CleanLocks resolves.
	if n, err := db.CleanLocks(bg); err != nil || n != 2 {
		t.Fatalf("CleanLocks = %d, %v; want 2 resolved", n, err)
	}
	if err := percolatortest.Check(bg, db); err != nil {
		t.Errorf("after CleanLocks: %v", err)
	}
}
