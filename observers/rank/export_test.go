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

// SetSplit sets the pages past which a block splits, the most a split
// moves in its own transaction and the pages a run drains, for tests; it
// returns a function restoring the defaults. No worker may run meanwhile.
func SetSplit(pages, move, drain int) func() {
	p, m, d := maxBlockPages, maxSplitMove, drainBatch
	maxBlockPages, maxSplitMove, drainBatch = pages, move, drain
	return func() { maxBlockPages, maxSplitMove, drainBatch = p, m, d }
}

// SetIgnoreSplits makes Refresh and the runs see every section as one
// block, as a transaction that read a section before it split; it
// returns a function restoring them. No worker may run meanwhile.
func SetIgnoreSplits() func() {
	ignoreSplits = true
	return func() { ignoreSplits = false }
}

// BlockRows returns the number of page cells (colGraph) of every block
// row and the sections that are split (their directory rows), as tx
// reads them. A block row holding a list of leaves is an error.
func BlockRows(ctx context.Context, tx *percolator.Tx) (pages map[string]int, split []string, err error) {
	pages = make(map[string]int)
	var stale []string
	err = tx.Scan(ctx, BlockPrefix, BlockPrefix+"\xff", "r", func(b, col string, _ []byte) bool {
		switch {
		case len(col) > len(colGraph) && col[:len(colGraph)] == colGraph:
			pages[b]++
		case col == colSplit:
			stale = append(stale, b)
		}
		return true
	})
	if err == nil && len(stale) > 0 {
		err = fmt.Errorf("block rows hold leaves: %v", stale)
	}
	if err != nil {
		return nil, nil, err
	}
	err = tx.Scan(ctx, dirPrefix, dirPrefix+"\xff", colSplit, func(r, col string, _ []byte) bool {
		if col == colSplit {
			split = append(split, r[len(dirPrefix):])
		}
		return true
	})
	return pages, split, err
}

// MoveSplitsBack moves the list of leaves of every split section to the
// section's block row, where tables split before directory rows existed
// keep it (see Init).
func MoveSplitsBack(ctx context.Context, db *percolator.DB) error {
	return db.Update(ctx, func(tx *percolator.Tx) error {
		lists := make(map[string][]byte)
		err := tx.Scan(ctx, dirPrefix, dirPrefix+"\xff", colSplit, func(r, col string, v []byte) bool {
			if col == colSplit {
				lists[r[len(dirPrefix):]] = v
			}
			return true
		})
		if err != nil {
			return err
		}
		for s, v := range lists {
			if err := tx.Delete(dirPrefix+s, colSplit); err != nil {
				return err
			}
			if err := tx.Set(BlockPrefix+s, colSplit, v); err != nil {
				return err
			}
		}
		return nil
	})
}

// MaxBlockPages returns the pages past which a block splits.
func MaxBlockPages() int { return maxBlockPages }
