package rank

import (
	"context"
	"strings"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// oldPushPrefix starts the columns of the residual-push rank observer this
// one replaced; Init deletes them with its rank:* columns (rank:residual,
// rank:pushed, rank:seeded, rank:announced).
const oldPushPrefix = "rin:"

// Init moves the list of a split section's leaves from its block row to
// its directory row (moveSplits), brings the rank graph up to date with
// every page of db (Refresh on each, in transactions of a hundred), drops
// the cells of pages that block rows hold but no longer own (blocks were
// whole hosts before they were split by directory), has every block of
// more than maxBlockPages pages split (blocks did not split by size
// before), and deletes the columns of the residual-push observer of
// earlier releases. A table indexed by an earlier release
// needs it once, before the worker runs; on a current table it changes
// nothing. It returns how many pages it changed.
func Init(ctx context.Context, db *percolator.DB) (int, error) {
	if err := moveSplits(ctx, db); err != nil {
		return 0, err
	}
	var rows []string
	err := db.View(ctx, func(tx *percolator.Tx) error {
		return scanPages(ctx, tx, webtable.State, func(row string, _ []byte) { rows = append(rows, row) })
	})
	if err != nil {
		return 0, err
	}
	changed := 0
	for len(rows) > 0 {
		batch := rows[:min(100, len(rows))]
		rows = rows[len(batch):]
		n := 0
		err := db.Update(ctx, func(tx *percolator.Tx) error {
			n = 0
			for _, r := range batch {
				ok, err := Refresh(ctx, tx, r)
				if err != nil {
					return err
				}
				if ok {
					n++
				}
				if err := deleteOld(ctx, tx, r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return changed, err
		}
		changed += n
	}
	n, err := dropMisplaced(ctx, db)
	return changed + n, err
}

// moveSplits moves every colSplit cell of a block row (a section split
// before directory rows held the leaves) to the section's directory row,
// unless that row has one (then it is the newer).
func moveSplits(ctx context.Context, db *percolator.DB) error {
	var sections []string
	end := BlockPrefix[:len(BlockPrefix)-1] + string(BlockPrefix[len(BlockPrefix)-1]+1)
	err := db.View(ctx, func(tx *percolator.Tx) error {
		sections = sections[:0]
		return tx.Scan(ctx, BlockPrefix, end, colSplit, func(b, col string, _ []byte) bool {
			if col == colSplit {
				sections = append(sections, b[len(BlockPrefix):])
			}
			return true
		})
	})
	if err != nil {
		return err
	}
	for _, s := range sections {
		err := db.Update(ctx, func(tx *percolator.Tx) error {
			v, err := tx.Get(ctx, BlockPrefix+s, colSplit)
			if err != nil || v == nil {
				return err
			}
			if cur, err := tx.Get(ctx, dirPrefix+s, colSplit); err != nil {
				return err
			} else if cur == nil {
				if err := tx.Set(dirPrefix+s, colSplit, v); err != nil {
					return err
				}
			}
			return tx.Delete(BlockPrefix+s, colSplit)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// dropMisplaced deletes the page cells of block rows whose pages belong to
// another block, and notifies those rows so that their next run forgets the
// pages. It returns how many cells it deleted.
func dropMisplaced(ctx context.Context, db *percolator.DB) (int, error) {
	type cell struct{ block, col string }
	var bad []cell
	var big []string // rows with more than maxBlockPages pages
	end := BlockPrefix[:len(BlockPrefix)-1] + string(BlockPrefix[len(BlockPrefix)-1]+1)
	err := db.View(ctx, func(tx *percolator.Tx) error {
		bad = bad[:0]
		dir, err := loadDirectory(ctx, tx)
		if err != nil {
			return err
		}
		big = big[:0]
		last, n := "", 0
		err = tx.Scan(ctx, BlockPrefix, end, "r", func(b, col string, _ []byte) bool {
			if b != last {
				last, n = b, 0
			}
			page, ok := strings.CutPrefix(col, colGraph)
			if ok {
				if n++; n == maxBlockPages+1 {
					big = append(big, b)
				}
			}
			if !ok {
				page, ok = strings.CutPrefix(col, colHash)
			}
			if ok && BlockPrefix+dir.loaded(page) != b {
				bad = append(bad, cell{b, col})
			}
			return true
		})
		return err
	})
	if err != nil {
		return 0, err
	}
	// A block grown past maxBlockPages (by an earlier release, which did
	// not split blocks) splits at its next run.
	if len(big) > 0 {
		err = db.Update(ctx, func(tx *percolator.Tx) error {
			for _, b := range big {
				if err := tx.Notify(b, webtable.RankDirty); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	n := len(bad)
	for len(bad) > 0 {
		batch := bad[:min(100, len(bad))]
		bad = bad[len(batch):]
		err := db.Update(ctx, func(tx *percolator.Tx) error {
			for _, c := range batch {
				if err := tx.Delete(c.block, c.col); err != nil {
					return err
				}
				if err := tx.Notify(c.block, webtable.RankDirty); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

func deleteOld(ctx context.Context, tx *percolator.Tx, row string) error {
	var del []string
	err := tx.Scan(ctx, row, row+"\x00", "r", func(_, col string, _ []byte) bool {
		if strings.HasPrefix(col, oldPushPrefix) || strings.HasPrefix(col, "rank:") && col != webtable.Rank && col != webtable.RankDirty {
			del = append(del, col)
		}
		return true
	})
	if err != nil {
		return err
	}
	for _, c := range del {
		if err := tx.Delete(row, c); err != nil {
			return err
		}
	}
	return nil
}
