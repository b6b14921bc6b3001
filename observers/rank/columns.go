package rank

// Block rows and their columns. A block is the set of pages of one host
// section (blockKey: the host and the first directory of the path), or
// of one leaf of a section split by a hash of its rows (directory); its
// row, BlockPrefix + block key, holds everything the rank observer needs
// to solve the block, so one run reads one row.
const (
	// BlockPrefix + block key is a block row. '!' keeps it apart from pages.
	BlockPrefix = "!rank/"
	// dirPrefix + section key is the directory row of a section that was
	// split: its colSplit lists the section's leaves (see directory). A
	// row of its own, not the section's block row: every parse and links
	// run in the section reads it, and the block row is the section's
	// biggest and busiest row.
	dirPrefix = "!rankdir/"

	// colGraph + page row: the page as rank sees it (its standing and its
	// link targets, see graphCell), written when that changes by whoever
	// changed the page's State, AliasOf or Links ([Refresh]). Absent for a
	// page that is neither ok nor a redirect.
	colGraph = "rg:"
	// colHash + page row: an ok page's content hash (webtable.Hash, which
	// names its duplicate cluster), written by [Refresh] when it changes.
	// Apart from colGraph so that a page whose text changed but not its
	// links does not make its block solve again. A change of the hash
	// writes the page's value (webtable.Rank) back unchanged, so it and a
	// concurrent run that writes the value conflict (the run that wins
	// then tells the right cluster's election). Runs do not write this
	// cell: rewriting it on every new value left thousands of dead
	// versions in the block row for each run's scan to skip.
	colHash = "rh:"
	// colTouch + page row: the page's standing changed (it became or
	// stopped being a page, or redirects elsewhere) and the blocks of the
	// pages linking to it have not been told yet; the value is the start
	// timestamp of the change. Written by [Refresh] with the change, told
	// and deleted by the block's next run, which begins after the change
	// committed (see runTouches), or deleted by [Seed], which has every
	// block solve again.
	colTouch = "rt:"
	// colInflow + source block: what the ok pages of the source block give
	// the pages of this block along their links (target row → d·x/outdeg
	// summed over the source's pages), as last sent by the source block's
	// run. A total, not a delta: rewritten in place, never accumulated.
	colInflow = "rx:"
	// colValues: every node's value and the value last written to its row
	// (webtable.Rank), see values.
	colValues = "rank:values"
	// colSent: the blocks this block has an inflow cell in, one per line.
	colSent = "rank:sent"
	// colSplit, in the directory row of a section that was split
	// (dirPrefix + section key): its leaves, one a line (see directory).
	// (Tables split before directory rows existed hold it in the section's
	// block row; Init moves it.)
	colSplit = "rank:split"
)
