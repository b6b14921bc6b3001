package percolator_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	bdb "github.com/dgraph-io/badger/v4"

	"github.com/caffeine-go/caffeine/percolator"
)

// BenchmarkFigure8 repeats the paper's Figure 8 on one machine: raw Badger
// point reads and single-key writes against Percolator transactions that
// read one cell, or write one cell and commit. Both sides use the same DB
// holding the same number of 64-byte values, so data size and cache state
// are the same. Ratios: raw_read/txn_read and raw_write/txn_write ns/op.
func BenchmarkFigure8(b *testing.B) {
	const keys = 100_000
	st := openStore(b, b.TempDir())
	defer st.Close()
	db, err := percolator.Open(bg, st, percolator.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
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

	b.Run("raw_read", func(b *testing.B) {
		r := rand.New(rand.NewPCG(1, 1))
		for b.Loop() {
			txn := raw.NewTransactionAt(math.MaxUint64, false)
			item, err := txn.Get(rawKey(r.IntN(keys)))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := item.ValueCopy(nil); err != nil {
				b.Fatal(err)
			}
			txn.Discard()
		}
	})
	b.Run("txn_read", func(b *testing.B) {
		r := rand.New(rand.NewPCG(1, 1))
		for b.Loop() {
			err := db.View(bg, func(tx *percolator.Tx) error {
				v, err := tx.Get(bg, row(r.IntN(keys)), "c")
				if v == nil && err == nil {
					err = fmt.Errorf("missing")
				}
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw_write", func(b *testing.B) {
		r := rand.New(rand.NewPCG(2, 2))
		for b.Loop() {
			txn := raw.NewTransactionAt(math.MaxUint64, true)
			if err := txn.Set(rawKey(r.IntN(keys)), val); err != nil {
				b.Fatal(err)
			}
			if err := txn.CommitAt(version.Add(1), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("txn_write", func(b *testing.B) {
		r := rand.New(rand.NewPCG(2, 2))
		for b.Loop() {
			err := db.Update(bg, func(tx *percolator.Tx) error {
				return tx.Set(row(r.IntN(keys)), "c", val)
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
