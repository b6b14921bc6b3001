package badger_test

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	bdb "github.com/dgraph-io/badger/v4"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/percolator/badger"
)

// benchStore returns an on-disk store whose row "r" has ten versions of
// w:c, d:c and l:c.
func benchStore(b *testing.B) *badger.Store {
	s := open(b, b.TempDir(), badger.Options{})
	for ts := uint64(1); ts <= 10; ts++ {
		mutate(b, s, "r", set("w", "c", ts*10, "write record"), set("d", "c", ts*10, "some data value"), set("l", "c", ts*10, "lock"))
	}
	return s
}

// BenchmarkReadRowLatest is Percolator's hot read: the newest write record
// at or below a timestamp. Compare BenchmarkRawGet.
func BenchmarkReadRowLatest(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	for _, maxTs := range []uint64{0, 55} {
		b.Run(fmt.Sprintf("MaxTs=%d", maxTs), func(b *testing.B) {
			f := percolator.Filter{Family: "w", Column: "c", MaxTs: maxTs, Latest: true}
			for b.Loop() {
				cs, err := s.ReadRow(ctx, "r", f)
				if err != nil || len(cs) != 1 {
					b.Fatal(cs, err)
				}
			}
		})
	}
}

// BenchmarkRawGet is the Badger read under BenchmarkReadRowLatest.
func BenchmarkRawGet(b *testing.B) {
	s := benchStore(b)
	key := badger.CellKey("", "r", "w", "c")
	for b.Loop() {
		txn := s.DB().NewTransactionAt(math.MaxUint64, false)
		item, err := txn.Get(key)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := item.ValueCopy(nil); err != nil {
			b.Fatal(err)
		}
		txn.Discard()
	}
}

// BenchmarkReadRowSparse reads a lock, from memory.
func BenchmarkReadRowSparse(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	f := percolator.Filter{Family: "l", Column: "c", Latest: true}
	for b.Loop() {
		if cs, err := s.ReadRow(ctx, "r", f); err != nil || len(cs) != 1 {
			b.Fatal(cs, err)
		}
	}
}

// BenchmarkReadRowVersions reads every version of a column (an iterator).
func BenchmarkReadRowVersions(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	f := percolator.Filter{Family: "d", Column: "c"}
	for b.Loop() {
		if cs, err := s.ReadRow(ctx, "r", f); err != nil || len(cs) != 10 {
			b.Fatal(cs, err)
		}
	}
}

// BenchmarkMutateRows writes a data cell and a write record to a new row per
// call. Compare BenchmarkRawWriteBatch.
func BenchmarkMutateRows(b *testing.B) {
	s := open(b, b.TempDir(), badger.Options{})
	ctx := context.Background()
	var n atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			err := s.MutateRows(ctx, []percolator.RowMutation{{Row: fmt.Sprint("r", i), Mutations: []percolator.Mutation{
				set("d", "c", i, "some data value"), set("w", "c", i, "write record"),
			}}})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRawWriteBatch is the Badger write under BenchmarkMutateRows.
func BenchmarkRawWriteBatch(b *testing.B) {
	s := open(b, b.TempDir(), badger.Options{})
	var n atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			wb := s.DB().NewManagedWriteBatch()
			row := fmt.Sprint("r", i)
			if err := wb.SetEntryAt(bdb.NewEntry(badger.CellKey("", row, "d", "c"), []byte("some data value")), i+1); err != nil {
				b.Fatal(err)
			}
			if err := wb.SetEntryAt(bdb.NewEntry(badger.CellKey("", row, "w", "c"), []byte("write record")), i+1); err != nil {
				b.Fatal(err)
			}
			if err := wb.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPrewriteCommit writes a lock and data, then replaces the lock
// with a write record, as a two-phase commit does to each row.
func BenchmarkPrewriteCommit(b *testing.B) {
	s := open(b, b.TempDir(), badger.Options{})
	ctx := context.Background()
	var n atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := 2 * n.Add(1)
			row := fmt.Sprint("r", i%4096)
			matched, err := s.CheckAndMutateRow(ctx, row, []percolator.Filter{{Family: "l", Column: "c"}, {Family: "w", Column: "c", MinTs: i}},
				nil, []percolator.Mutation{set("d", "c", i, "some data value"), set("l", "c", i, "lock")})
			if err != nil || matched {
				b.Fatal(matched, err)
			}
			err = s.MutateRows(ctx, []percolator.RowMutation{{Row: row, Mutations: []percolator.Mutation{
				set("w", "c", i+1, "write record"), del("l", "c", i),
			}}})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCheckAndMutateRowAt is a single-row commit: check for a lock,
// take a timestamp, write data and write record.
func BenchmarkCheckAndMutateRowAt(b *testing.B) {
	s := open(b, b.TempDir(), badger.Options{})
	ctx := context.Background()
	var oracle atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			start := oracle.Add(1)
			row := fmt.Sprint("r", start%1024)
			_, err := s.CheckAndMutateRowAt(ctx, row,
				[]percolator.Filter{{Family: "l", Column: "c"}, {Family: "w", Column: "c", MinTs: start}},
				func() (uint64, error) { return oracle.Add(1), nil },
				func(ts uint64) []percolator.Mutation {
					return []percolator.Mutation{set("d", "c", start, "some data value"), set("w", "c", ts, "write record")}
				})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReadRowsUnderWrites scans 10,000 rows while a writer rewrites
// random ones, as the notification scanners do while observers commit: a
// row written since the scan's iterator was made costs a new iterator.
func BenchmarkReadRowsUnderWrites(b *testing.B) {
	s := open(b, b.TempDir(), badger.Options{})
	ctx := context.Background()
	const rows = 10000
	for i := range rows {
		mutate(b, s, fmt.Sprintf("r%05d", i), set("d", "c", 1, "some data value"))
	}
	var ts atomic.Uint64
	ts.Store(1)
	done := make(chan struct{})
	writer := make(chan struct{})
	go func() {
		defer close(writer)
		for i := 0; ; i = (i + 7919) % rows {
			select {
			case <-done:
				return
			default:
			}
			t := ts.Add(1)
			err := s.MutateRows(ctx, []percolator.RowMutation{{Row: fmt.Sprintf("r%05d", i), Mutations: []percolator.Mutation{
				set("d", "c", t, "some data value"), delOlder("d", "c", t)}}})
			if err != nil {
				b.Error(err)
				return
			}
		}
	}()
	for b.Loop() {
		n := 0
		err := s.ReadRows(ctx, "", "", func(string, []percolator.Cell) bool { n++; return true }, percolator.Filter{Family: "d"})
		if err != nil || n != rows {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
	close(done)
	<-writer
	b.ReportMetric(float64(ts.Load())/b.Elapsed().Seconds(), "writes/s")
}
