package observers

import (
	"context"

	"github.com/caffeine-go/caffeine/percolator"
	"github.com/caffeine-go/caffeine/webtable"
)

// Keeping a page row's inbound links bounded (webtable.ScanIn).

// maxInCells is how many webtable.InPrefix cells of linkers a page row
// keeps; an export run moves those past it into spill rows (a variable so
// that tests can make it small). At about 80 bytes a link, 1,024 is some
// 80 KB.
var maxInCells = 1024

// maxSpillMoves is how many links one run moves at most, so that a row
// that grew far past maxInCells (a bulk load's parse stage publishes every
// link before any export runs) is not one transaction holding them all.
const maxSpillMoves = 5000

// spillIn keeps row's inbound links within maxInCells: it moves the
// cells past the first maxInCells (in column order) into rows of their
// own (webtable.InSpillRow), at most maxSpillMoves a run (notifying
// webtable.DocLinked for the rest), and marks the row
// (webtable.InSpilled). When links went and the row has room, spilled
// ones move back, and the mark goes with the last.
// A row holds at most maxInCells plus the links published between two
// export runs of it: each publication notifies one (webtable.DocLinked).
//
// When it moved nothing and the row has no spilled links, it returns the
// row's links as webtable.ScanIn would (the export's document reads them
// again otherwise: on Bigtable a call), else nil.
func spillIn(ctx context.Context, tx *percolator.Tx, row string) ([]inLink, error) {
	type cell struct {
		col string
		v   []byte
	}
	var over []cell
	var links []inLink
	n, marked := 0, false
	err := tx.Scan(ctx, row, row+"\x00", webtable.InPrefix, func(_, col string, v []byte) bool {
		if col == webtable.InSpilled {
			marked = true
			return true
		}
		if n++; n > maxInCells {
			over = append(over, cell{col, v})
		} else {
			links = append(links, inLink{src: col[len(webtable.InPrefix):], text: string(v)})
		}
		return len(over) <= maxSpillMoves
	})
	if err != nil {
		return nil, err
	}
	if len(over) == 0 {
		if !marked {
			if links == nil {
				links = []inLink{}
			}
			return links, nil
		}
		// Links went: the spilled ones come back while the row has room.
		var back []cell
		rest := false
		start, end := webtable.InSpillRange(row)
		err := tx.Scan(ctx, start, end, webtable.InSpill, func(r, _ string, v []byte) bool {
			if n+len(back) >= maxInCells || len(back) >= maxSpillMoves {
				rest = true
				return false
			}
			back = append(back, cell{r[len(start):], v})
			return true
		})
		if err != nil {
			return nil, err
		}
		for _, c := range back {
			if err := tx.Set(row, webtable.InPrefix+c.col, c.v); err != nil {
				return nil, err
			}
			if err := tx.Delete(webtable.InSpillRow(row, c.col), webtable.InSpill); err != nil {
				return nil, err
			}
		}
		if rest {
			return nil, nil
		}
		return nil, tx.Delete(row, webtable.InSpilled)
	}
	if len(over) > maxSpillMoves {
		over = over[:maxSpillMoves]
		if err := tx.Notify(row, webtable.DocLinked); err != nil {
			return nil, err
		}
	}
	for _, c := range over {
		if err := tx.Set(webtable.InSpillRow(row, c.col[len(webtable.InPrefix):]), webtable.InSpill, c.v); err != nil {
			return nil, err
		}
		if err := tx.Delete(row, c.col); err != nil {
			return nil, err
		}
	}
	if marked {
		return nil, nil
	}
	return nil, tx.Set(row, webtable.InSpilled, nil)
}

// unspill deletes the link from source to target from the spill rows, in
// a transaction that changes or deletes its cell in target's row: the
// cell may have been moved out (spillIn), and the link's anchor is the
// one in the row now, or none. Only marked rows (webtable.InSpilled) have
// spilled links. A move that commits after tx began wrote the row's cell
// too, so one of the two transactions fails and the other's retry sees
// the mark.
func unspill(ctx context.Context, tx *percolator.Tx, target, source string) error {
	if m, err := tx.Get(ctx, target, webtable.InSpilled); err != nil || m == nil {
		return err
	}
	return tx.Delete(webtable.InSpillRow(target, source), webtable.InSpill)
}
