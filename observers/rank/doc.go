// Package rank keeps PageRank current incrementally: a Percolator
// observer ("rank", on the weak column webtable.RankDirty) that solves the
// link graph block by block (a block is a host, or a section of one),
// never recomputing the whole graph, and its background twin
// ("rank-outside", on webtable.RankOutside) for what a block gets from
// outside it (see [Observers]).
//
// # Model
//
//	PR(p) = (1 − d) + d · Σ_{q→p} PR(q) / outdeg(q),  d = 0.85
//
// over crawled pages only: a node is a page row whose State is "ok". The
// edges of an ok page u are its Links, each mapped to its row, redirects
// followed (State "redirect", AliasOf, at most maxHops hops, loops dropped),
// kept when the final row is ok and is not u, and deduplicated. Links to
// uncrawled or external pages are not edges and do not count in outdeg. A
// dangling page's rank is not redistributed.
//
// # Algorithm
//
// Block Gauss-Seidel with a site's section as the block (BlockRank: most
// links stay within their host, and within a big host mostly within their
// section). A page's block is its host and the first directory of its path
// (com.example:http/docs for http://example.com/docs/a.html), or the host
// alone for a page at the top of its site; a section of more than 4,096
// pages is split by a hash of the page's row (com.example:http/docs#0110,
// see Caveats). Every block has a row,
// BlockPrefix + block key, holding:
//
//   - one cell per page that is ok or a redirect: its standing and its link
//     targets (or redirect target), written by [Refresh] in the
//     transaction that changed the page (the parse observer's); and one
//     with an ok page's content hash, apart, so that a change of text alone
//     does not make the block solve again;
//   - one cell per other block that links into this one: what its pages
//     give this block's pages (target → Σ d·x/outdeg), a total rewritten by
//     that block's runs, never a delta, so nothing accumulates;
//   - the values of its nodes and what was last written to their rows.
//
// A run on a block reads its row (and the cells of pages of other blocks
// its links lead to), solves the block in memory by Gauss-Seidel from the
// last values until no value moves by 1e-9, sends each other block what
// this one now gives it when that moved by more than Options.Epsilon
// (relative), and writes webtable.Rank of the pages whose value moved by
// more than Options.PublishThreshold since it was last written. Many
// notifications of a block collapse into one run, so a bulk load costs a
// few runs per block instead of tens of runs per page, and a change costs a
// run of its block (and of the blocks its effect reaches beyond the
// thresholds). A block's own pages changing is foreground work (rank),
// runs of a block spaced nine times a run's time apart, and so is a send
// that moved a flow by more than Options.UrgentEpsilon (5%); what else it
// gets from outside changing (smaller moves, a page gaining or losing a
// flow, a linked page of another block coming or going) is background
// work (rank-outside), held while the foreground has a backlog and
// gathered for a few seconds otherwise, so that in a bulk crawl a block
// solves once for many such changes. So a page's first value comes with
// its block's foreground run, and what other blocks' pages give it
// reaches its value at most Options.OutsideMaxDelay (a minute in the
// chain) plus the background's backlog later.
//
// When the chain is idle every block solves its equations
// exactly given what it receives, what it receives is within Epsilon of
// what is sent, and what is written is within PublishThreshold of the
// solution: a page's value is within about PublishThreshold +
// Epsilon/(1 − d) of the fixed point. (A flow smaller than a tenth of
// the least PageRank, 1 − d, is sent when it moved by Epsilon of that
// tenth: each block linking into a page may add that much more.)
//
// Writing a page's value tells export when the value as the index shows
// it (webtable.RoundRank) changes, and the election of the page's
// duplicate cluster (the cluster named by the page's hash cell, also when
// that changed since it was last told). A page's first value completes
// its document, so it tells them in the foreground (webtable.DupDirty, as
// does a new cluster, and webtable.DocDirty if the page was elected
// before: else its election, which waits for this value, tells export);
// later values only move it in the ranking, so they tell the background
// observers (webtable.DocLinked, webtable.DupRanked), which a wave of new
// values over a whole site must not put ahead of content changes. They are told in the transaction that writes the value, so a run of theirs
// that read an older value is always followed by another; and a change
// of the page's cluster rewrites the page's value, so it conflicts with a
// concurrent run that would tell the old cluster.
// A later value of a page alone in its cluster at its last election
// (webtable.ClusterSize 1, most pages) tells no election: there is no one
// to elect against. The election that first counts a second member
// rewrites the page's value as it read it, so it conflicts with a rank
// transaction that read the page alone and writes a newer value. Nor
// does a later value of a page no election has counted yet (no
// ClusterSize: the election its first value told, or the one another
// member's first value will tell, reads it); that rank transaction
// deletes the absent ClusterSize, which the election writes, so the two
// conflict when they run together.
//
// [Batch] recomputes the same model by power iteration over one snapshot,
// [Values] reads the incremental values, and [Compare] lists where they
// disagree. [Seed] solves the whole graph of the block rows the same way
// and writes each block's starting point from it (its values, what it
// sends other blocks), so that in a bulk load each block solves once
// instead of round after round as the flows between blocks settle.
//
// # Caveats
//
//   - A block is read in full by every run of the block, so no block
//     holds more than maxBlockPages (4,096) pages: a section past it is
//     split by a hash of the page rows into leaves (extendible hashing,
//     see directory), each a block of its own; a leaf past it splits
//     again. The split moves the block's cells in the run's transaction,
//     or for a bigger block (an earlier release's, or one a bulk load's
//     parse stage filled) writes the leaves alone and the old row's runs
//     drain it, drainBatch pages a run. Finding a page's block reads the
//     section's directory row (one Get a transaction and section; a
//     small row of its own, not the busy block row). Links
//     between the leaves of a section are flows between blocks, so a
//     split section converges over a few more runs than a whole one.
//     Writes are bounded (maxWrites page rows a run; the next run goes on).
//   - The out-set of u depends on the standing of every row its links pass
//     through. Within u's block that is in the block row; when a page's
//     standing changes, [Refresh] marks it in its block row, and the
//     block's next run notifies (webtable.RankOutside) the blocks of the
//     pages linking to it from other blocks, found by its
//     webtable.InPrefix cells (written by the links observer) and, through
//     redirects, webtable.AliasPrefix cells; the links observer notifies
//     the block of a page that links to a page it did not before
//     ([Linked]). Both are needed, and the run must not be the change's own
//     transaction: that one and the links observer's each read what the
//     other writes, and both could commit without seeing the other (write
//     skew), leaving a block that read the old standing unsolved (see
//     runTouches). Whoever changes State, AliasOf, Links or Hash calls
//     [Refresh] in the same transaction, or [Touch] to have the observer
//     do it.
//   - [Init] builds the blocks of a table indexed by an earlier release,
//     whose rank observer kept per-page residuals (and drops their
//     columns), or whose blocks were whole hosts (and moves their pages).
package rank
