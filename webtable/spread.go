package webtable

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"

	"github.com/caffeine-go/caffeine/percolator"
)

// The spread of the queues. Keys that start with a timestamp send every
// write of a table to one place (one Bigtable tablet), so a table's export
// queues are cut into Spread buckets by a hash of the page row (SpreadOf):
// a row's entries stay in one bucket, in version order, and readers read
// each bucket in order and merge them by version. The spread is a property
// of the table, recorded once in SchemaRow, so every process agrees on it.
const (
	// SchemaRow holds the table's layout. Written once, by the first
	// process that needs it (Spread); never changed afterwards.
	SchemaRow = "!schema"
	// SchemaSpread is, in SchemaRow, the number of buckets of the export
	// queues (decimal, 1 to MaxSpread). A table without it has one (the
	// layout of tables made before it existed).
	SchemaSpread = "schema:spread"
)

// MaxSpread bounds a table's spread: the bucket is two hex digits.
const MaxSpread = 256

// DefaultSpread is the spread of a new table whose store other processes
// reach (Cloud Bigtable). A table on an ExclusiveStore (embedded Badger:
// one process, one disk) gets 1, the layout without a bucket segment.
const DefaultSpread = 16

// ErrSpread is returned for a spread outside 1 to MaxSpread, in the table
// or asked for.
var ErrSpread = errors.New("webtable: bad queue spread")

// SpreadOf returns the bucket of page row in a table of spread n: 0 when
// n ≤ 1.
func SpreadOf(row string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(row))
	return int(h.Sum32() % uint32(n))
}

// spreads caches the spread of each DB this process opened (*DB → int):
// it never changes once recorded.
var spreads sync.Map

// Spread returns the spread of db's table, recording it first if the table
// has none: DefaultSpread for a new table on a shared store, 1 for one on
// an ExclusiveStore or for a table that already has queue or frontier
// entries (made before the spread existed: its keys stay as they are). It
// reads the table once per db. It is safe for concurrent use.
func Spread(ctx context.Context, db *percolator.DB) (int, error) {
	return InitSpread(ctx, db, defaultSpread(db))
}

func defaultSpread(db *percolator.DB) int {
	if _, ok := db.Store().(percolator.ExclusiveStore); ok {
		return 1
	}
	return DefaultSpread
}

// SpreadTx is Spread within tx, a read-write transaction: when the table
// has no spread yet, tx records it, and final is false: the spread holds
// only if tx commits.
func SpreadTx(ctx context.Context, tx *percolator.Tx) (n int, final bool, err error) {
	db := tx.DB()
	if v, ok := spreads.Load(db); ok {
		return v.(int), true, nil
	}
	n, recorded, err := spreadIn(ctx, tx, defaultSpread(db))
	if err != nil || recorded {
		return n, false, err
	}
	v, _ := spreads.LoadOrStore(db, n)
	return v.(int), true, nil
}

// InitSpread is Spread with n as the spread of a new table (tests use it
// to spread a Badger table). A table that has a spread keeps it.
func InitSpread(ctx context.Context, db *percolator.DB, n int) (int, error) {
	if v, ok := spreads.Load(db); ok {
		return v.(int), nil
	}
	if n < 1 || n > MaxSpread {
		return 0, fmt.Errorf("%w: %d", ErrSpread, n)
	}
	var got int
	err := db.Update(ctx, func(tx *percolator.Tx) error {
		var err error
		got, _, err = spreadIn(ctx, tx, n)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("webtable: queue spread: %w", err)
	}
	v, _ := spreads.LoadOrStore(db, got)
	return v.(int), nil
}

// spreadIn returns the table's spread as tx sees it. When the table has
// none it records one in tx (which must then commit), and recorded is
// true: n if the table has no export queue entry nor frontier row yet,
// else 1. Two transactions that record it conflict, so every process ends
// up with the same.
func spreadIn(ctx context.Context, tx *percolator.Tx, n int) (_ int, recorded bool, err error) {
	v, err := tx.Get(ctx, SchemaRow, SchemaSpread)
	if err != nil {
		return 0, false, err
	}
	if v != nil {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > MaxSpread {
			return 0, false, fmt.Errorf("%w: %q in the table", ErrSpread, v)
		}
		return n, false, nil
	}
	used := false
	for _, r := range []struct{ start, end, col string }{
		// "!export/" and every named queue, "!export.NAME/".
		{"!export", "!exporu", ExportDoc},
		{DuePrefix, DuePrefix + "\xff", DuePage},
	} {
		err := tx.Scan(ctx, r.start, r.end, r.col, func(string, string, []byte) bool {
			used = true
			return false
		})
		if err != nil {
			return 0, false, err
		}
	}
	if used {
		n = 1
	}
	if err := tx.Set(SchemaRow, SchemaSpread, []byte(strconv.Itoa(n))); err != nil {
		return 0, false, err
	}
	return n, true, nil
}
