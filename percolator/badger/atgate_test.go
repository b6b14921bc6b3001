package badger

import (
	"context"
	"testing"
	"time"

	"github.com/caffeine-go/caffeine/percolator"
)

// TestScanWaitsForCommitInFlight holds a single-row commit between taking
// its timestamp and writing: a scan that begins meanwhile must wait for it
// and see its row, on both read paths (Badger and the sparse mirror).
func TestScanWaitsForCommitInFlight(t *testing.T) {
	for _, fam := range []string{"d", "p"} { // plain; sparse
		t.Run(fam, func(t *testing.T) {
			s := openSparseScan(t, t.TempDir())
			ctx := context.Background()
			taken, release := make(chan struct{}), make(chan struct{})
			committed := make(chan error, 1)
			go func() {
				_, err := s.CheckAndMutateRowAt(ctx, "r", []percolator.Filter{{Family: fam}},
					func() (uint64, error) { close(taken); return 5, nil },
					func(ts uint64) []percolator.Mutation {
						<-release // the timestamp is taken; the write has not landed
						return []percolator.Mutation{{Op: percolator.SetCell, Family: fam, Column: "c", Ts: ts, Value: []byte("v")}}
					})
				committed <- err
			}()
			<-taken
			scanned := make(chan int, 1)
			go func() {
				n := 0
				err := s.ReadRows(ctx, "", "", func(string, []percolator.Cell) bool { n++; return true }, percolator.Filter{Family: fam})
				if err != nil {
					t.Error(err)
				}
				scanned <- n
			}()
			select {
			case n := <-scanned:
				t.Fatalf("the scan returned (%d rows) while a commit whose timestamp was taken before it was in flight", n)
			case <-time.After(100 * time.Millisecond):
			}
			close(release)
			if err := <-committed; err != nil {
				t.Fatal(err)
			}
			if n := <-scanned; n != 1 {
				t.Errorf("the scan saw %d rows, want the commit's", n)
			}
		})
	}
}
