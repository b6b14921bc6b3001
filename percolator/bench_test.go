package percolator_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	bdb "github.com/dgraph-io/badger/v4"

	"github.com/caffeine-go/caffeine/percolator"
)

// figure8 holds the paper's Figure 8 operations on one Badger store: raw
// point reads and single-key writes, and Percolator transactions that read
// one cell, or write one cell and commit. Both sides use the same DB
// holding the same number of 64-byte values, so data size and cache state
// are the same.
type figure8 struct {
	rawRead, txnRead, rawWrite, txnWrite func(r *rand.Rand) error
}

func newFigure8(b *testing.B) *figure8 {
	const keys = 100_000
	st := openStore(b, b.TempDir())
	b.Cleanup(func() { st.Close() })
	db, err := percolator.Open(bg, st, percolator.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	raw := st.DB()
	val := make([]byte, 64)
	rawKey := func(i int) []byte { return fmt.Appendf(nil, "raw/%08d", i) }
	row := func(i int) string { return fmt.Sprintf("row/%08d", i) }

	var version atomic.Uint64
	version.Store(1)
	wb := raw.NewManagedWriteBatch()
	for i := range keys {
		wb.SetEntryAt(bdb.NewEntry(rawKey(i), val), 1)
	}
	if err := wb.Flush(); err != nil {
		b.Fatal(err)
	}
	for base := 0; base < keys; base += 1000 {
		err := db.Update(bg, func(tx *percolator.Tx) error {
			for i := base; i < base+1000; i++ {
				tx.Set(row(i), "c", val)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return &figure8{
		rawRead: func(r *rand.Rand) error {
			txn := raw.NewTransactionAt(math.MaxUint64, false)
			defer txn.Discard()
			item, err := txn.Get(rawKey(r.IntN(keys)))
			if err != nil {
				return err
			}
			_, err = item.ValueCopy(nil)
			return err
		},
		txnRead: func(r *rand.Rand) error {
			return db.View(bg, func(tx *percolator.Tx) error {
				v, err := tx.Get(bg, row(r.IntN(keys)), "c")
				if v == nil && err == nil {
					err = fmt.Errorf("missing")
				}
				return err
			})
		},
		rawWrite: func(r *rand.Rand) error {
			txn := raw.NewTransactionAt(math.MaxUint64, true)
			defer txn.Discard()
			if err := txn.Set(rawKey(r.IntN(keys)), val); err != nil {
				return err
			}
			return txn.CommitAt(version.Add(1), nil)
		},
		txnWrite: func(r *rand.Rand) error {
			return db.Update(bg, func(tx *percolator.Tx) error {
				return tx.Set(row(r.IntN(keys)), "c", val)
			})
		},
	}
}

// BenchmarkFigure8 repeats the paper's Figure 8 one operation a
// sub-benchmark. Ratios: raw_read/txn_read and raw_write/txn_write ns/op;
// BenchmarkFigure8Ratio measures them side by side.
func BenchmarkFigure8(b *testing.B) {
	f := newFigure8(b)
	for _, op := range []struct {
		name string
		fn   func(*rand.Rand) error
		seed uint64
	}{
		{"raw_read", f.rawRead, 1},
		{"txn_read", f.txnRead, 1},
		{"raw_write", f.rawWrite, 2},
		{"txn_write", f.txnWrite, 2},
	} {
		b.Run(op.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(op.seed, op.seed))
			for b.Loop() {
				if err := op.fn(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFigure8Ratio measures the Figure 8 ratios interleaved: each
// round times blocks of raw and transactional operations on the same keys
// in the order raw, txn, txn, raw, so both sides see the same machine load
// and cache state. It reports the
// median over rounds of raw ns/op ÷ transactional ns/op (1 = as fast as
// raw Badger) as read_ratio and write_ratio, and the median ns/op of each
// side. Reads go first, on the data as loaded (writes would change what
// the reads find); b.N is the number of rounds of each.
func BenchmarkFigure8Ratio(b *testing.B) {
	const block = 1000
	f := newFigure8(b)
	var reads, writes, rr, tr, rw, tw []float64
	timeBlock := func(fn func(*rand.Rand) error, seed uint64) float64 {
		r := rand.New(rand.NewPCG(seed, seed))
		start := time.Now()
		for range block {
			if err := fn(r); err != nil {
				b.Fatal(err)
			}
		}
		return float64(time.Since(start).Nanoseconds()) / block
	}
	// pair times raw, txn, txn, raw (ABBA): whatever drifts over the round
	// (a memtable filling, a compaction, another process) hits both sides
	// alike.
	pair := func(raw, txn func(*rand.Rand) error, seed uint64) (float64, float64) {
		r := timeBlock(raw, seed)
		t := timeBlock(txn, seed)
		t += timeBlock(txn, seed+1)
		r += timeBlock(raw, seed+1)
		return r / 2, t / 2
	}
	// Reads first, on the data as loaded; then writes.
	for i := range b.N {
		r, t := pair(f.rawRead, f.txnRead, uint64(2*i))
		reads, rr, tr = append(reads, r/t), append(rr, r), append(tr, t)
	}
	for i := range b.N {
		r, t := pair(f.rawWrite, f.txnWrite, uint64(2*i))
		writes, rw, tw = append(writes, r/t), append(rw, r), append(tw, t)
	}
	b.ReportMetric(median(reads), "read_ratio")
	b.ReportMetric(median(writes), "write_ratio")
	b.ReportMetric(median(rr), "raw_read_ns")
	b.ReportMetric(median(tr), "txn_read_ns")
	b.ReportMetric(median(rw), "raw_write_ns")
	b.ReportMetric(median(tw), "txn_write_ns")
	b.ReportMetric(0, "ns/op")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
