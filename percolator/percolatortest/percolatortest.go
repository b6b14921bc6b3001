// Package percolatortest opens Percolator tables for tests and checks,
// when a test ends, that it left its table clean, as bbolt's
// internal/btesting does: no transaction still running, no lock left in
// the table, and Close succeeding.
package percolatortest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
	"github.com/caffeine-go/caffeine/percolator/storetest"
)

// Open opens a DB with opt on a new Badger store in t.TempDir(). When the
// test ends it checks the table (see Check), then closes the DB and the
// store, failing t if anything is left or Close fails. Cleanups registered
// after Open (closing a worker, say) run before it.
//
// With CAFFEINE_TEST_SHARED_STORE=1 in the environment, the DB is opened
// on Shared(store), as on a table other processes can reach.
func Open(t testing.TB, opt percolator.Options) (*percolator.DB, *badger.Store) {
	t.Helper()
	st, err := badger.Open(t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv(EnvShared) == "1" {
		return OpenOn(t, Shared(st), opt), st
	}
	return OpenOn(t, st, opt), st
}

// EnvShared is the environment variable that makes Open hide the
// ExclusiveStore of its Badger store (see Shared).
const EnvShared = "CAFFEINE_TEST_SHARED_STORE"

// Shared returns st as a store other processes could reach, as Bigtable
// is: it hides percolator.ExclusiveStore (and the store's other optional
// methods but Compactor), so the DB commits every transaction in two
// phases and decides locks by heartbeats and TTLs. It reads lists of rows
// and of ranges (percolator.RowListReader, RangeReader) as Bigtable does,
// a row or a range at a time here, so that transactions read as they do
// there. Closing it closes st.
func Shared(st percolator.Store) percolator.Store { return SharedCounting(st, nil) }

// Calls counts the calls a store received, by method (a list read counts
// as one call, not as the reads that make it).
type Calls struct {
	ReadRow, ReadRows, ReadRowList, ReadRanges, CheckAndMutateRow, MutateRows atomic.Int64
}

// SharedCounting is Shared(st) counting its calls in c (if not nil).
func SharedCounting(st percolator.Store, c *Calls) percolator.Store {
	s := shared{st, c}
	if cp, ok := st.(percolator.Compactor); ok {
		return sharedCompactor{s, cp}
	}
	return s
}

type shared struct {
	percolator.Store
	calls *Calls
}

func (s shared) ReadRow(ctx context.Context, row string, filters ...percolator.Filter) ([]percolator.Cell, error) {
	if s.calls != nil {
		s.calls.ReadRow.Add(1)
	}
	return s.Store.ReadRow(ctx, row, filters...)
}

func (s shared) ReadRows(ctx context.Context, start, end string, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	if s.calls != nil {
		s.calls.ReadRows.Add(1)
	}
	return s.Store.ReadRows(ctx, start, end, fn, filters...)
}

func (s shared) CheckAndMutateRow(ctx context.Context, row string, predicate []percolator.Filter, ifMatch, ifNoMatch []percolator.Mutation) (bool, error) {
	if s.calls != nil {
		s.calls.CheckAndMutateRow.Add(1)
	}
	return s.Store.CheckAndMutateRow(ctx, row, predicate, ifMatch, ifNoMatch)
}

func (s shared) MutateRows(ctx context.Context, rows []percolator.RowMutation) error {
	if s.calls != nil {
		s.calls.MutateRows.Add(1)
	}
	return s.Store.MutateRows(ctx, rows)
}

// ReadRowList implements percolator.RowListReader with a ReadRow a row.
func (s shared) ReadRowList(ctx context.Context, rows []string, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	if s.calls != nil {
		s.calls.ReadRowList.Add(1)
	}
	return storetest.RowByRow(ctx, s.Store, rows, fn, filters...)
}

// ReadRanges implements percolator.RangeReader with a ReadRows a range.
func (s shared) ReadRanges(ctx context.Context, ranges []percolator.KeyRange, fn func(row string, cells []percolator.Cell) bool, filters ...percolator.Filter) error {
	if s.calls != nil {
		s.calls.ReadRanges.Add(1)
	}
	return storetest.RangeByRange(ctx, s.Store, ranges, fn, filters...)
}

type sharedCompactor struct {
	shared
	percolator.Compactor
}

// OpenOn opens a DB with opt on st, which it takes over: at cleanup it
// checks the table, then closes the DB and st, as Open does. Tests that
// wrap a store (to count or hide calls) pass the wrapper.
func OpenOn(t testing.TB, st percolator.Store, opt percolator.Options) *percolator.DB {
	t.Helper()
	db, err := percolator.Open(context.Background(), st, opt)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		t.Helper()
		if err := Check(context.Background(), db); err != nil {
			t.Error(err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("percolatortest: close db: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("percolatortest: close store: %v", err)
		}
	})
	return db
}

// Check returns an error if a transaction of db is still running or a lock
// is left in its table, and nil if the table is clean. Locks of writers
// that died are left too: a test that kills a writer cleans up after it
// (DB.CleanLocks) before it ends.
func Check(ctx context.Context, db *percolator.DB) error {
	var problems []string
	if n := db.Running(); n > 0 {
		problems = append(problems, fmt.Sprintf("%d transactions still running (begun and neither committed nor rolled back)", n))
	}
	locks, err := db.Locks(ctx)
	if err != nil {
		return fmt.Errorf("percolatortest: %w", err)
	}
	if len(locks) > 0 {
		const show = 5
		var b strings.Builder
		fmt.Fprintf(&b, "%d locks left in the table:", len(locks))
		for i, l := range locks {
			if i == show {
				fmt.Fprintf(&b, " …")
				break
			}
			fmt.Fprintf(&b, " %q %q@%d (primary %v, writer %s)", l.Row, l.Column, l.StartTs, l.Primary, l.Writer)
		}
		problems = append(problems, b.String())
	}
	if len(problems) > 0 {
		return fmt.Errorf("percolatortest: table not clean: %s", strings.Join(problems, "; "))
	}
	return nil
}
