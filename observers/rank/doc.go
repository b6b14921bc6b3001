// Package rank keeps PageRank current incrementally: one Percolator
// observer ("rank", on the weak column webtable.RankDirty) that moves rank
// along the link graph as small deltas, never recomputing the whole graph.
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
// Residual push with corrections. Each page row keeps its value x
// (webtable.Rank), a sub-ε residual, and what it last pushed: the value X
// and the out-set O, with the invariant that every v in O has received
// d·X/|O| from u in total. A push to v is a cell "rin:"+u+":"+hex(start ts)
// in v's row, written once and deleted by v's run when it absorbs it, so
// pushers never write a cell anyone else writes. One run on u absorbs its
// incoming cells, adds or removes its teleport (1 − d) when it becomes or
// stops being a node, recomputes its out-set, and, when the accumulated
// change reaches ε or the out-set changed, pushes to each old and new
// target the difference between what it owes now and what it gave before.
// When the chain is idle every residual is below ε, and a page's value is
// within about ε·indegree/(1 − d) of the fixed point.
//
// A run announces a change of its value beyond Options.AnnounceThreshold
// (relative) to export (webtable.DocDirty) and to its duplicate cluster's
// election (webtable.DupDirty).
//
// [Batch] recomputes the same model by power iteration over one snapshot,
// [Values] reads the incremental values, and [Compare] lists where they
// disagree.
//
// # Caveats
//
//   - The out-set of u depends on the State and AliasOf of every row its
//     links pass through, not just on u's row. Whoever changes those (the
//     parse observer) must [Touch] every page linking to the changed row,
//     directly or through a redirect chain; the rank observer cannot see
//     that a target changed.
//   - A push notifies its target only when what the source pushed to it
//     since it last notified it reaches min(ε, share/1000); smaller pushes
//     wait in the target's row for its next run. What waits at a page is
//     thus under 0.1% of its rank. Many notifications collapse into one run.
//   - Every push leaves a dead column in the target's row (and so does the
//     notification), and a row scan walks them until percolator GC drops
//     them: run GC regularly, or the runs of much-linked pages slow down.
//   - Rows that stop being pages keep their rank columns (their value
//     drains to about zero); nothing deletes them.
package rank
