package bigtable_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
)

// bigValue returns n pseudo-random bytes of seed (random, so no layer can
// shrink them by compression).
func bigValue(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestBigCells writes pages of 20 MB through the percolator layer and reads
// them back one by one (a point read) and all together (a scan of the
// rows, as a batch recomputation reads them), far above gRPC's default
// 4 MB receive limit.
func TestBigCells(t *testing.T) {
	const size = 20 << 20
	ctx := context.Background()
	db, err := percolator.Open(ctx, open(t), percolator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pages := map[string][]byte{}
	for i := range 3 {
		row := fmt.Sprintf("page%d", i)
		pages[row] = bigValue(uint64(i), size+i)
		if err := db.Update(ctx, func(tx *percolator.Tx) error {
			return tx.Set(row, "raw:body", pages[row])
		}); err != nil {
			t.Fatalf("write %s: %v", row, err)
		}
	}
	err = db.View(ctx, func(tx *percolator.Tx) error {
		for row, want := range pages {
			got, err := tx.Get(ctx, row, "raw:body")
			if err != nil {
				return fmt.Errorf("get %s: %w", row, err)
			}
			if !bytes.Equal(got, want) {
				return fmt.Errorf("get %s: %d bytes, want the %d written", row, len(got), len(want))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	err = db.View(ctx, func(tx *percolator.Tx) error {
		return tx.Scan(ctx, "", "", "raw:", func(row, col string, value []byte) bool {
			if want := pages[row]; !bytes.Equal(value, want) {
				t.Errorf("scan %s %s: %d bytes, want the %d written", row, col, len(value), len(want))
			}
			seen++
			return true
		})
	})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	if seen != len(pages) {
		t.Errorf("scan saw %d cells, want %d", seen, len(pages))
	}
}
