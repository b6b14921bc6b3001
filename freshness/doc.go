// Package freshness measures how well a search index keeps up with a
// changing web: the freshness and age of its documents and of search
// results, and the crawl→searchable latency of new content.
//
// # Definitions
//
// After Cho and Garcia-Molina ("Synchronizing a database to improve
// freshness", SIGMOD 2000), for a page whose indexed copy was fetched at f:
//
//   - freshness at t is 1 if the indexed copy equals the live page, else 0.
//     The copy equals the live page iff the page did not change in (f, t].
//   - age at t is 0 if the copy is fresh, else t − c, where c is the first
//     change after f: the first change the index has not seen.
//
// Collection freshness and age at t are the means over the pages with a
// copy in the index at t ([At]). Time averages over an interval ([Over])
// are exact integrals, not samples: between two index updates of a page its
// freshness is a step (1 until c, 0 after) and its age a ramp (t − c after
// c), so each piece is integrated in closed form. They are page-time
// averages: each page weighs as long as it was indexed within the interval.
// Pages that were never indexed have no copy to be fresh or stale; they are
// counted (Snapshot.Missing), not averaged.
//
// The crawl→searchable latency of an index update is IndexedAt − FetchedAt,
// for the updates that brought new content ([Index.Latencies]).
//
// # Ground truth and the index's history
//
// Exact numbers need both sides: a [Truth] says when each page changed (a
// [History] read from a change log, or the changingweb fixture), an [Index]
// says which copy of each page the serving index held when, built from the
// stream of updates it applied ([Event]). Against a deployment without
// ground truth, [Probe] samples indexed documents, refetches the live pages
// and estimates (see Probe's documentation for the estimator).
package freshness
