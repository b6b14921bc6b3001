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

// Init brings the rank graph up to date with every page of db (Refresh on
// each, in transactions of a hundred), drops the cells of pages that block
// rows hold but no longer own (blocks were whole hosts before they were
// split by directory), and deletes the columns of the residual-push
// observer of earlier releases. A table indexed by an earlier release
// needs it once, before the worker runs; on a current table it changes
// nothing. It returns how many pages it changed.
func Init(ctx context.Context, db *percolator.DB) (int, error) {
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

// dropMisplaced deletes the page cells of block rows whose pages belong to
// another block, and notifies those rows so that their next run forgets the
// pages. It returns how many cells it deleted.
func dropMisplaced(ctx context.Context, db *percolator.DB) (int, error) {
	type cell struct{ block, col string }
	var bad []cell
	end := BlockPrefix[:len(BlockPrefix)-1] + string(BlockPrefix[len(BlockPrefix)-1]+1)
	err := db.View(ctx, func(tx *percolator.Tx) error {
		bad = bad[:0]
		return tx.Scan(ctx, BlockPrefix, end, "r", func(b, col string, _ []byte) bool {
			page, ok := strings.CutPrefix(col, colGraph)
			if !ok {
				page, ok = strings.CutPrefix(col, colHash)
			}
			if ok && blockOf(page) != b {
				bad = append(bad, cell{b, col})
			}
			return true
		})
	})
	if err != nil {
		return 0, err
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
