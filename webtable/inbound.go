package webtable

import (
	"context"

	"github.com/caffeine-go/caffeine/percolator"
)

// A page's inbound links: the cell InPrefix+S in the page's row for each
// page S linking to it (the links observer writes it, with the anchor
// text). A page that every page of a big site links to (its index, a
// header's link) would hold a cell a linker without bound, so past a
// limit the export observer moves the cells over into rows of their own,
// one a link: InSpillRow(target, source), column InSpill, the anchor text.
// The key space grows, no row does. ScanIn reads both.

const (
	// InSpillPrefix begins the rows of spilled inbound links; InSpillEnd
	// ends them.
	InSpillPrefix = "!in/"
	InSpillEnd    = "!in0"
	// InSpill is the column of a spilled link's row: its anchor text.
	InSpill = "inlink:anchor"
	// InSpilled, in the target's row, marks a row some of whose links are
	// spilled: readers look in the spill rows only then. It sorts before
	// every InPrefix cell of a source (page rows never begin with "!"), so
	// a scan of the row's links meets it first.
	InSpilled = InPrefix + "!spilled"
)

// InSpillRow is the row of the link from source to target once it left
// target's row.
func InSpillRow(target, source string) string { return subRow(InSpillPrefix, target, source) }

// InSpillRange returns the rows of target's spilled links: [start, end).
func InSpillRange(target string) (start, end string) { return subRange(InSpillPrefix, target) }

// ParseInSpillRow returns the target and source of a spilled link's row.
func ParseInSpillRow(row string) (target, source string, ok bool) {
	return parseSubRow(InSpillPrefix, row)
}

// ScanIn calls fn with the source row and anchor text of every link to
// row as tx sees it: the cells in row (in column order), then, if the row
// is marked InSpilled, the spilled ones (in source order), until fn
// returns false. A source found in both
// (which the observers never leave: a move deletes the cell it copies, a
// change of anchor deletes the spilled one) is given once, with the
// anchor of row's cell.
func ScanIn(ctx context.Context, tx *percolator.Tx, row string, fn func(source string, anchor []byte) bool) error {
	var seen map[string]bool // the row's sources, kept once the mark is met: it comes first
	more := true
	err := tx.Scan(ctx, row, row+"\x00", InPrefix, func(_, col string, v []byte) bool {
		if col == InSpilled {
			seen = make(map[string]bool)
			return true
		}
		src := col[len(InPrefix):]
		if seen != nil {
			seen[src] = true
		}
		more = fn(src, v)
		return more
	})
	if err != nil || !more || seen == nil {
		return err
	}
	start, end := InSpillRange(row)
	return tx.Scan(ctx, start, end, InSpill, func(r, _ string, v []byte) bool {
		src := r[len(start):]
		if seen[src] {
			return true
		}
		return fn(src, v)
	})
}
