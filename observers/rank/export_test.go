package rank

import (
	"context"
	"fmt"
	"strconv"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// SetMaxWrites sets how many page rows one block run writes, for tests; it
// returns a function restoring the default.
func SetMaxWrites(n int) func() {
	old := maxWrites
	maxWrites = n
	return func() { maxWrites = old }
}

// SetHostBlocks makes every block a whole host, as before blocks were split
// by directory; it returns a function restoring the split. No worker may
// run meanwhile.
func SetHostBlocks() func() {
	blockKey = webtable.HostOfRow
	return func() { blockKey = dirBlockKey }
}

// SetScanFrom sets how many targets in another block make a run read that
// block in one scan, for tests; it returns a function restoring the
// default. No worker may run meanwhile.
func SetScanFrom(n int) func() {
	old := scanFrom
	scanFrom = n
	return func() { scanFrom = old }
}

// Touch asks the rank observer to look at row again, when tx commits: its
// State, AliasOf or Links may have changed, or a row it links to did. It
// costs a run on row and one on its block; a writer that has the page at
// hand calls Refresh instead.
func Touch(tx *percolator.Tx, row string) error {
	return tx.Notify(row, webtable.RankDirty)
}

// Values returns the incremental PageRank of every ok page by row, as the
// observer left it, read in one snapshot. The caller owns the map.
func Values(ctx context.Context, db *percolator.DB) (map[string]float64, error) {
	ranks := make(map[string]float64)
	err := db.View(ctx, func(tx *percolator.Tx) error {
		ok := make(map[string]bool)
		err := scanPages(ctx, tx, webtable.State, func(row string, v []byte) {
			if string(v) == webtable.StateOK {
				ok[row] = true
			}
		})
		if err != nil {
			return err
		}
		var bad error
		err = scanPages(ctx, tx, webtable.Rank, func(row string, v []byte) {
			if !ok[row] {
				return
			}
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil && bad == nil {
				bad = fmt.Errorf("rank: %q %q: %w", row, webtable.Rank, err)
			}
			ranks[row] = f
		})
		if err != nil {
			return err
		}
		if bad != nil {
			return bad
		}
		for row := range ok {
			if _, found := ranks[row]; !found {
				ranks[row] = 0 // not ranked yet
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ranks, nil
}
