package badger

import (
	"context"
	"testing"

	"github.com/caffeine-go/caffeine/percolator"
)

// BenchmarkScanAnsweredNotifications is a scanner's pass over a plain
// family (as the notify group is) where 20,000 notifications were set and
// answered (deleted) and ten are pending, after the compactions that
// Badger runs on its own: with the discard timestamp held below the
// deletions (GC held back, as during a bulk load before
// DB.AdvanceSafePoint) and moved above them (Discard). Held, the pass
// steps over every deletion.
func BenchmarkScanAnsweredNotifications(b *testing.B) {
	const n, pending = 20000, 10
	ctx := context.Background()
	for _, bc := range []struct {
		name    string
		discard bool
	}{{"held", false}, {"discarded", true}} {
		b.Run(bc.name, func(b *testing.B) {
			s := openSparseScan(b, b.TempDir())
			writeDeleted(b, s, "d", n, pending)
			if bc.discard {
				s.Discard(n + 1)
			}
			if err := s.Compactions(); err != nil {
				b.Fatal(err)
			}
			f := percolator.Filter{Family: "d"}
			for b.Loop() {
				got := 0
				err := s.ReadRows(ctx, "", "", func(string, []percolator.Cell) bool { got++; return true }, f)
				if err != nil || got != pending {
					b.Fatal(got, err)
				}
			}
		})
	}
}
