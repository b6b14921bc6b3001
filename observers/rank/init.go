package rank

import (
	"context"
	"strings"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Columns of a page row kept by the residual-push rank observer this one
// replaced; Init deletes them.
var oldColumns = []string{"rank:residual", "rank:pushed", "rank:seeded", "rank:announced"}

const oldPushPrefix = "rin:"

// Init brings the rank graph up to date with every page of db (Refresh on
// each, in transactions of a hundred), and deletes the columns of the
// residual-push observer of earlier releases. A table indexed by an
// earlier release needs it once, before the worker runs; on a current
// table it changes nothing. It returns how many pages it changed.
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
	return changed, nil
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
